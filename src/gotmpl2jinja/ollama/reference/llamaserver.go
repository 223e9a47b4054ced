package main

// Op "llama_server_body": the /v1/chat/completions body Ollama's llama-server client sends for
// a chat request on its Jinja path (Ollama fb30760, llm/llama_server.go: the chat request, its
// messages and tool calls, the template kwargs), as far as the prompt depends on it. Written
// from that code's behaviour, so that the engine context `ollama-jinja` hands llama-server's
// chat code the very request Ollama builds, with Go's own JSON encoding of every value:
//
//   - each message: role, tool_call_id and name (the tool name) only when not empty,
//     tool_calls only when there are some, content always; a message's thinking is not sent;
//   - each tool call: id (omitted when empty), index (always), type "function", the name, and
//     the arguments as the JSON text Go marshals from Ollama's ordered map (request order at
//     the top level, `{}` when absent);
//   - tools: Ollama's api.Tools as Go marshals them, only when the list is not empty;
//   - chat_template_kwargs only when think is set: enable_thinking, and reasoning_effort when
//     think is a level. (The caller applies the capability default to think first.)
//
// Sampling options and `stream` are left out: llama-server's prompt does not depend on them.

import (
	"bytes"
	"encoding/json"
	"strings"

	"gotmpl2jinja/reference/api"
)

type bodyToolCall struct {
	ID       string           `json:"id,omitempty"`
	Index    int              `json:"index"`
	Type     string           `json:"type"`
	Function bodyCallFunction `json:"function"`
}

type bodyCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type bodyMessage struct {
	Role       string         `json:"role"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Name       string         `json:"name,omitempty"`
	ToolCalls  []bodyToolCall `json:"tool_calls,omitempty"`
	Content    string         `json:"content"`
}

type chatBody struct {
	Messages           []bodyMessage  `json:"messages"`
	Tools              []apiTool      `json:"tools,omitempty"`
	ChatTemplateKwargs map[string]any `json:"chat_template_kwargs,omitempty"`
}

// rawArguments keeps each tool call's arguments as sent, for their order.
type rawArguments struct {
	Messages []struct {
		ToolCalls []struct {
			Function struct {
				Arguments json.RawMessage `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
}

// orderedArguments is Go's JSON of Ollama's ordered argument map: keys in request order (a
// repeated key keeps its first place, its last value), each value decoded by encoding/json
// (numbers as float64, nested objects as Go maps) and marshalled again.
func orderedArguments(raw json.RawMessage) (string, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return "{}", nil
	}
	var keys []string
	values := map[string]json.RawMessage{}
	err := api.EachMember(raw, func(key string, value json.RawMessage) error {
		var decoded any
		if err := json.Unmarshal(value, &decoded); err != nil {
			return err
		}
		encoded, err := json.Marshal(decoded)
		if err != nil {
			return err
		}
		if _, seen := values[key]; !seen {
			keys = append(keys, key)
		}
		values[key] = encoded
		return nil
	})
	if err != nil {
		return "", err
	}
	var out strings.Builder
	out.WriteByte('{')
	for i, key := range keys {
		if i > 0 {
			out.WriteByte(',')
		}
		name, _ := json.Marshal(key)
		out.Write(name)
		out.WriteByte(':')
		out.Write(values[key])
	}
	out.WriteByte('}')
	return out.String(), nil
}

// llamaServerBody builds the body for one conversation given as JSON text.
func llamaServerBody(raw json.RawMessage) caseResult {
	var conv conversation
	if err := json.Unmarshal(raw, &conv); err != nil {
		return caseResult{Kind: "request",
			Error: "the request does not decode as Ollama would decode it: " + err.Error()}
	}
	var args rawArguments
	if err := json.Unmarshal(raw, &args); err != nil {
		return caseResult{Kind: "request", Error: err.Error()}
	}
	body := chatBody{Messages: []bodyMessage{}}
	for i, msg := range conv.Messages {
		out := bodyMessage{Role: strings.ToLower(msg.Role), ToolCallID: msg.ToolCallID,
			Name: msg.ToolName, Content: msg.Content}
		for j, call := range msg.ToolCalls {
			arguments, err := orderedArguments(args.Messages[i].ToolCalls[j].Function.Arguments)
			if err != nil {
				return caseResult{Kind: "request", Error: err.Error()}
			}
			out.ToolCalls = append(out.ToolCalls, bodyToolCall{
				ID: call.ID, Index: call.Function.Index, Type: "function",
				Function: bodyCallFunction{Name: call.Function.Name, Arguments: arguments},
			})
		}
		body.Messages = append(body.Messages, out)
	}
	if len(conv.Tools) > 0 {
		body.Tools = conv.Tools
	}
	if conv.Think != nil && conv.Think.Value != nil {
		enabled := false
		kwargs := map[string]any{}
		switch v := conv.Think.Value.(type) {
		case bool:
			enabled = v
		case string:
			enabled = true // every level Ollama accepts enables thinking
			kwargs["reasoning_effort"] = v
		}
		kwargs["enable_thinking"] = enabled
		body.ChatTemplateKwargs = kwargs
	}
	var text bytes.Buffer
	enc := json.NewEncoder(&text)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return caseResult{Kind: "request", Error: err.Error()}
	}
	out := strings.TrimSuffix(text.String(), "\n")
	return caseResult{OK: true, Output: &out}
}

// llamaServerBodies answers op "llama_server_body": one body per conversation of the batch.
func llamaServerBodies(req *request) response {
	results := make([]caseResult, len(req.Conversations))
	for i, raw := range req.Conversations {
		results[i] = llamaServerBody(raw)
	}
	return response{ID: req.ID, OK: true, Results: results}
}
