package api

// The request body's types (api.ChatRequest's parts), under Ollama's names: Go's decoding
// errors name the struct and the Go type that refused a value (`Go struct field
// ChatRequest.messages.content of type string`, `of type []api.Message`), so what Ollama's
// decoder refuses is refused here with the same reason. Written from Ollama's api/types.go at
// fb3076099; field names, tags and the custom decoders are what matter.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
)

// Message is one chat message (api.Message).
type Message struct {
	Role       string      `json:"role"`
	Content    string      `json:"content"`
	Thinking   string      `json:"thinking,omitempty"`
	Images     []ImageData `json:"images,omitempty"`
	ToolCalls  []ToolCall  `json:"tool_calls,omitempty"`
	ToolName   string      `json:"tool_name,omitempty"`
	ToolCallID string      `json:"tool_call_id,omitempty"`
}

// UnmarshalJSON decodes the fields into a fresh message and lower-cases the role.
func (m *Message) UnmarshalJSON(b []byte) error {
	type Alias Message
	var a Alias
	if err := json.Unmarshal(b, &a); err != nil {
		return err
	}
	*m = Message(a)
	m.Role = strings.ToLower(m.Role)
	return nil
}

// ToolCall is a call an assistant message made.
type ToolCall struct {
	ID       string           `json:"id,omitempty"`
	Function ToolCallFunction `json:"function"`
}

// ToolCallFunction is a call's function, index and arguments.
type ToolCallFunction struct {
	Index     int                       `json:"index"`
	Name      string                    `json:"name"`
	Arguments ToolCallFunctionArguments `json:"arguments"`
}

// ToolCallFunctionArguments are a call's arguments: keys decoded as Ollama's ordered map
// decodes them (DecodeMapKey), values by encoding/json (numbers float64, so `-0` stays -0).
type ToolCallFunctionArguments map[string]any

func (a *ToolCallFunctionArguments) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		*a = nil
		return nil
	}
	out := ToolCallFunctionArguments{}
	err := EachMember(data, func(key string, raw json.RawMessage) error {
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

// Tools are the request's tools.
type Tools []Tool

// Tool is one tool the request offers.
type Tool struct {
	Type     string       `json:"type"`
	Items    any          `json:"items,omitempty"`
	Function ToolFunction `json:"function"`
}

// ToolFunction is a tool's function.
type ToolFunction struct {
	Name        string                 `json:"name"`
	Description string                 `json:"description,omitempty"`
	Parameters  ToolFunctionParameters `json:"parameters"`
}

// ToolFunctionParameters is a function's JSON schema.
type ToolFunctionParameters struct {
	Type       string             `json:"type"`
	Defs       any                `json:"$defs,omitempty"`
	Items      any                `json:"items,omitempty"`
	Required   []string           `json:"required,omitempty"`
	Properties *ToolPropertiesMap `json:"properties"`
}

// ThinkValue is `think`: a boolean or a level.
type ThinkValue struct {
	Value any
}

func (t *ThinkValue) UnmarshalJSON(data []byte) error {
	var b bool
	if err := json.Unmarshal(data, &b); err == nil {
		t.Value = b
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		switch s {
		case "high", "medium", "low", "max":
			t.Value = s
			return nil
		}
		return fmt.Errorf("invalid think value: %q (must be \"high\", \"medium\", \"low\", \"max\", true, or false)", s)
	}
	return errors.New("think must be a boolean or string (\"high\", \"medium\", \"low\", \"max\", true, or false)")
}

// Duration is `keep_alive`: seconds as a number, or a Go duration string.
type Duration struct {
	time.Duration
}

func (d *Duration) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	d.Duration = 5 * time.Minute
	switch t := v.(type) {
	case float64:
		if t < 0 {
			d.Duration = time.Duration(math.MaxInt64)
		} else {
			d.Duration = time.Duration(t * float64(time.Second))
		}
	case string:
		parsed, err := time.ParseDuration(t)
		if err != nil {
			return err
		}
		d.Duration = parsed
		if d.Duration < 0 {
			d.Duration = time.Duration(math.MaxInt64)
		}
	default:
		return fmt.Errorf("Unsupported type: '%s'", reflect.TypeOf(v))
	}
	return nil
}
