package template

// The tool wrappers templates see as `.Tools` (ollama-semantics.md §5), named as Ollama names
// them so that `printf "%T"`, `%#v` and Go's execution errors print `template.templateTools`
// and its parts as Ollama v0.33 does. As in Ollama, `{{ .Function }}` and its `.Parameters`
// have no String(): they print in Go's struct syntax. The contract's choice (they print their
// JSON) is the same types with that one method more, in ./functionjson.

import (
	"encoding/json"

	"gotmpl2jinja/reference/api"
)

// ToolSpec is one request tool in the terms the conversion reads (Ollama's api.Tool).
type ToolSpec struct {
	Type        string
	Items       any
	Name        string
	Description string
	Parameters  ParametersSpec
}

// ParametersSpec is a tool's function.parameters as the request decoded them.
type ParametersSpec struct {
	Type       string
	Defs       any
	Items      any
	Required   []string
	Properties map[string]api.ToolProperty
}

// templateTools prints as its JSON.
type templateTools []templateTool

func (t templateTools) String() string { return MarshalOrEmpty(t) }

// templateTool prints as its JSON.
type templateTool struct {
	Type     string               `json:"type"`
	Items    any                  `json:"items,omitempty"`
	Function templateToolFunction `json:"function"`
}

func (t templateTool) String() string { return MarshalOrEmpty(t) }

type templateToolFunction struct {
	Name        string                         `json:"name"`
	Description string                         `json:"description"`
	Parameters  templateToolFunctionParameters `json:"parameters"`
}

type templateToolFunctionParameters struct {
	Type       string             `json:"type"`
	Defs       any                `json:"$defs,omitempty"`
	Items      any                `json:"items,omitempty"`
	Required   []string           `json:"required,omitempty"`
	Properties templateProperties `json:"properties"`
}

// templateProperties prints as sorted JSON, `{}` when nil.
type templateProperties map[string]api.ToolProperty

func (p templateProperties) String() string {
	if p == nil {
		return "{}"
	}
	return MarshalOrEmpty(p)
}

// Tools is what `.Tools` holds for these request tools (a nil templateTools for none).
func Tools(specs []ToolSpec) any {
	if specs == nil {
		return templateTools(nil)
	}
	out := make(templateTools, len(specs))
	for i, s := range specs {
		p := s.Parameters
		out[i] = templateTool{Type: s.Type, Items: s.Items, Function: templateToolFunction{
			Name: s.Name, Description: s.Description,
			Parameters: templateToolFunctionParameters{
				Type: p.Type, Defs: p.Defs, Items: p.Items, Required: p.Required,
				Properties: templateProperties(p.Properties),
			},
		}}
	}
	return out
}

// MarshalOrEmpty is a String() of Ollama's: the JSON, or "" when it cannot be marshalled.
func MarshalOrEmpty(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
