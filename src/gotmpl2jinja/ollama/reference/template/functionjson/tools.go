// Package template (imported as functionjson) holds the contract's tool wrappers: Ollama's
// types under Ollama's names, but `{{ .Function }}` and `{{ .Function.Parameters }}` print
// their JSON (Ollama before v0.14, the intent of ollama#14601). The package is named
// `template`, like Ollama's, because fmt and Go's errors print a type's package name, so
// `%T` and `%#v` print what Ollama's types print.
package template

import (
	"gotmpl2jinja/reference/api"
	base "gotmpl2jinja/reference/template"
)

type templateTools []templateTool

func (t templateTools) String() string { return base.MarshalOrEmpty(t) }

type templateTool struct {
	Type     string               `json:"type"`
	Items    any                  `json:"items,omitempty"`
	Function templateToolFunction `json:"function"`
}

func (t templateTool) String() string { return base.MarshalOrEmpty(t) }

type templateToolFunction struct {
	Name        string                         `json:"name"`
	Description string                         `json:"description"`
	Parameters  templateToolFunctionParameters `json:"parameters"`
}

func (f templateToolFunction) String() string { return base.MarshalOrEmpty(f) }

type templateToolFunctionParameters struct {
	Type       string             `json:"type"`
	Defs       any                `json:"$defs,omitempty"`
	Items      any                `json:"items,omitempty"`
	Required   []string           `json:"required,omitempty"`
	Properties templateProperties `json:"properties"`
}

func (p templateToolFunctionParameters) String() string { return base.MarshalOrEmpty(p) }

type templateProperties map[string]api.ToolProperty

func (p templateProperties) String() string {
	if p == nil {
		return "{}"
	}
	return base.MarshalOrEmpty(p)
}

// Tools is what `.Tools` holds for these request tools (a nil templateTools for none).
func Tools(specs []base.ToolSpec) any {
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
