package main

// The request data as Ollama decodes it (api.Message, api.Tool; api.ToolProperty is in ./api)
// and the wrapper types templates see (messages and calls in ./template) (ollama-semantics.md §5). Written from the spec; field names,
// field order and method sets matter because templates print and call them.

import (
	"bytes"
	"encoding/json"

	"gotmpl2jinja/reference/api"
	"gotmpl2jinja/reference/template"
)

// ---- request side (what the JSON body decodes into) --------------------------------------

type apiMessage struct {
	Role       string        `json:"role"`
	Content    string        `json:"content"`
	Thinking   string        `json:"thinking,omitempty"`
	Images     []api.ImageData `json:"images,omitempty"`
	ToolCalls  []apiToolCall `json:"tool_calls,omitempty"`
	ToolName   string        `json:"tool_name,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
}

type apiToolCall struct {
	ID       string `json:"id,omitempty"`
	Function struct {
		Index     int     `json:"index"`
		Name      string  `json:"name"`
		Arguments argsMap `json:"arguments"` // numbers decode as float64, like Ollama
	} `json:"function"`
}

type apiTool struct {
	Type     string `json:"type"`
	Items    any    `json:"items,omitempty"`
	Function struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		Parameters  struct {
			Type       string             `json:"type"`
			Defs       any                `json:"$defs,omitempty"`
			Items      any                `json:"items,omitempty"`
			Required   []string           `json:"required,omitempty"`
			Properties *api.ToolPropertiesMap `json:"properties"`
		} `json:"parameters"`
	} `json:"function"`
}

// argsMap is a tool call's arguments: its keys decoded like Ollama's ordered map decodes them
// (api.DecodeMapKey), its values by encoding/json (numbers are float64, so `-0` stays -0).
type argsMap map[string]any

func (a *argsMap) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		*a = nil
		return nil
	}
	out := argsMap{}
	err := api.EachMember(data, func(key string, raw json.RawMessage) error {
		var value any
		if err := json.Unmarshal(raw, &value); err != nil {
			return err
		}
		out[key] = value
		return nil
	})
	if err != nil {
		return err
	}
	*a = out
	return nil
}

// ---- template side (ollama-semantics.md §5) ------------------------------------------------

// templateProperties prints as sorted JSON, `{}` when nil.
type templateProperties map[string]api.ToolProperty

func (p templateProperties) String() string {
	if p == nil {
		return "{}"
	}
	return marshalOrEmpty(p)
}

// templateTool is generic over the function type so that `{{ .Function }}` can print either
// JSON (functionJSON, the contract's choice) or Go struct syntax (functionStruct, Ollama v0.33).
type templateTool[F any] struct {
	Type     string `json:"type"`
	Items    any    `json:"items,omitempty"`
	Function F      `json:"function"`
}

func (t templateTool[F]) String() string { return marshalOrEmpty(t) }

type templateTools[F any] []templateTool[F]

func (t templateTools[F]) String() string { return marshalOrEmpty(t) }

// functionStruct / parametersStruct have no String(): they print as Go structs (Ollama HEAD).
type functionStruct struct {
	Name        string           `json:"name"`
	Description string           `json:"description"`
	Parameters  parametersStruct `json:"parameters"`
}

type parametersStruct struct {
	Type       string             `json:"type"`
	Defs       any                `json:"$defs,omitempty"`
	Items      any                `json:"items,omitempty"`
	Required   []string           `json:"required,omitempty"`
	Properties templateProperties `json:"properties"`
}

// functionJSON / parametersJSON are the same shapes with String() = their JSON.
type functionJSON struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  parametersJSON `json:"parameters"`
}

func (f functionJSON) String() string { return marshalOrEmpty(f) }

type parametersJSON parametersStruct

func (p parametersJSON) String() string { return marshalOrEmpty(p) }

func marshalOrEmpty(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

func toolsForTemplate(tools []apiTool, functionAsJSON bool) any {
	if functionAsJSON {
		return convertTools(tools, func(p parametersStruct, name, desc string) functionJSON {
			return functionJSON{Name: name, Description: desc, Parameters: parametersJSON(p)}
		})
	}
	return convertTools(tools, func(p parametersStruct, name, desc string) functionStruct {
		return functionStruct{Name: name, Description: desc, Parameters: p}
	})
}

func convertTools[F any](tools []apiTool, mk func(parametersStruct, string, string) F) templateTools[F] {
	if tools == nil {
		return nil
	}
	out := make(templateTools[F], len(tools))
	for i, t := range tools {
		fp := t.Function.Parameters
		params := parametersStruct{
			Type:       fp.Type,
			Defs:       fp.Defs,
			Items:      fp.Items,
			Required:   fp.Required,
			Properties: templateProperties(fp.Properties.ToMap()),
		}
		out[i] = templateTool[F]{
			Type:     t.Type,
			Items:    t.Items,
			Function: mk(params, t.Function.Name, t.Function.Description),
		}
	}
	return out
}

func messagesForTemplate(msgs []*apiMessage) []*template.Message {
	if msgs == nil {
		return nil
	}
	out := make([]*template.Message, len(msgs))
	for i, m := range msgs {
		var calls []template.ToolCall
		for _, c := range m.ToolCalls {
			calls = append(calls, template.ToolCall{
				ID: c.ID,
				Function: template.ToolCallFunction{
					Index:     c.Function.Index,
					Name:      c.Function.Name,
					Arguments: template.Args(c.Function.Arguments),
				},
			})
		}
		out[i] = &template.Message{
			Role: m.Role, Content: m.Content, Thinking: m.Thinking, Images: m.Images,
			ToolCalls: calls, ToolName: m.ToolName, ToolCallID: m.ToolCallID,
		}
	}
	return out
}
