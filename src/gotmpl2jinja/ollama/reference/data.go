package main

// The request data as Ollama decodes it (api.Message, api.Tool; api.ToolProperty is in ./api)
// and the conversion to the wrapper types templates see (./template; the contract's tools,
// whose function prints its JSON, in ./template/functionjson) (ollama-semantics.md §5).
// Written from the spec; field names, field order and method sets matter because templates
// print and call them.

import (
	"gotmpl2jinja/reference/api"
	"gotmpl2jinja/reference/template"
	functionjson "gotmpl2jinja/reference/template/functionjson"
)

// ---- request side (what the JSON body decodes into) --------------------------------------

// The body's types are Ollama's, in ./api (Go's decoding errors name them).
type (
	apiMessage  = api.Message
	apiToolCall = api.ToolCall
	apiTool     = api.Tool
)

// ---- template side (ollama-semantics.md §5) ------------------------------------------------

// marshalOrEmpty is the JSON of v, or "" when it cannot be marshalled (Ollama's String()s).
func marshalOrEmpty(v any) string { return template.MarshalOrEmpty(v) }

// toolsForTemplate is `.Tools`: Ollama's templateTools, whose `.Function` prints its JSON
// (functionjson, the contract's choice) or Go's struct syntax (Ollama v0.33).
func toolsForTemplate(tools []apiTool, functionAsJSON bool) any {
	var specs []template.ToolSpec
	if tools != nil {
		specs = make([]template.ToolSpec, len(tools))
	}
	for i, t := range tools {
		fp := t.Function.Parameters
		specs[i] = template.ToolSpec{
			Type: t.Type, Items: t.Items, Name: t.Function.Name,
			Description: t.Function.Description,
			Parameters: template.ParametersSpec{
				Type: fp.Type, Defs: fp.Defs, Items: fp.Items, Required: fp.Required,
				Properties: fp.Properties.ToMap(),
			},
		}
	}
	if functionAsJSON {
		return functionjson.Tools(specs)
	}
	return template.Tools(specs)
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
