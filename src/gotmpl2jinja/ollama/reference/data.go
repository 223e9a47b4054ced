package main

// The request data as Ollama decodes it (api.Message, api.Tool, api.ToolProperty …) and the
// wrapper types templates see (ollama-semantics.md §5). Written from the spec; field names,
// field order and method sets matter because templates print and call them.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"unicode/utf8"
)

// ---- request side (what the JSON body decodes into) --------------------------------------

type imageData []byte

type apiMessage struct {
	Role       string        `json:"role"`
	Content    string        `json:"content"`
	Thinking   string        `json:"thinking,omitempty"`
	Images     []imageData   `json:"images,omitempty"`
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
			Properties *ToolPropertiesMap `json:"properties"`
		} `json:"parameters"`
	} `json:"function"`
}

// PropertyType is a JSON Schema type: a string or an array of strings.
type PropertyType []string

func (pt *PropertyType) UnmarshalJSON(data []byte) error {
	var one string
	if err := json.Unmarshal(data, &one); err == nil {
		*pt = PropertyType{one} // note: null lands here too and gives [""], as in Ollama
		return nil
	}
	var many []string
	if err := json.Unmarshal(data, &many); err != nil {
		return err
	}
	*pt = many
	return nil
}

func (pt PropertyType) MarshalJSON() ([]byte, error) {
	if len(pt) == 1 {
		return json.Marshal(pt[0])
	}
	return json.Marshal([]string(pt))
}

func (pt PropertyType) String() string {
	switch len(pt) {
	case 0:
		return ""
	case 1:
		return pt[0]
	}
	return fmt.Sprintf("%v", []string(pt))
}

// ToolProperty is one JSON Schema property of a tool parameter.
type ToolProperty struct {
	AnyOf       []ToolProperty     `json:"anyOf,omitempty"`
	Type        PropertyType       `json:"type,omitempty"`
	Items       any                `json:"items,omitempty"`
	Description string             `json:"description,omitempty"`
	Enum        []any              `json:"enum,omitempty"`
	Properties  *ToolPropertiesMap `json:"properties,omitempty"`
	Required    []string           `json:"required,omitempty"`
}

// ToTypeScriptType is callable from templates (`{{ $p.ToTypeScriptType }}`).
func (tp ToolProperty) ToTypeScriptType() string {
	if len(tp.AnyOf) > 0 {
		parts := make([]string, 0, len(tp.AnyOf))
		for _, alt := range tp.AnyOf {
			parts = append(parts, alt.ToTypeScriptType())
		}
		return strings.Join(parts, " | ")
	}
	if len(tp.Type) == 0 {
		return "any"
	}
	parts := make([]string, 0, len(tp.Type))
	for _, t := range tp.Type {
		parts = append(parts, typeScriptName(t))
	}
	return strings.Join(parts, " | ")
}

func typeScriptName(jsonType string) string {
	switch jsonType {
	case "string":
		return "string"
	case "number", "integer":
		return "number"
	case "boolean":
		return "boolean"
	case "array":
		return "any[]"
	case "object":
		return "Record<string, any>"
	case "null":
		return "null"
	}
	return "any"
}

// ToolPropertiesMap keeps nested properties in request order (a repeated key keeps its first
// position and takes its last value), so nested `properties` marshal in insertion order.
type ToolPropertiesMap struct {
	keys   []string
	values map[string]ToolProperty
}

func (m *ToolPropertiesMap) UnmarshalJSON(data []byte) error {
	m.keys, m.values = nil, map[string]ToolProperty{}
	return eachMember(data, func(key string, raw json.RawMessage) error {
		var prop ToolProperty
		if err := json.Unmarshal(raw, &prop); err != nil {
			return err
		}
		m.Set(key, prop)
		return nil
	})
}

// argsMap is a tool call's arguments: its keys decoded like Ollama's ordered map decodes them
// (decodeMapKey), its values by encoding/json (numbers are float64, so `-0` stays -0).
type argsMap map[string]any

func (a *argsMap) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		*a = nil
		return nil
	}
	out := argsMap{}
	err := eachMember(data, func(key string, raw json.RawMessage) error {
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

// eachMember calls fn for every member of the JSON object data, in order, with the key decoded
// by decodeMapKey and the value's raw bytes. encoding/json has validated data's syntax already.
func eachMember(data []byte, fn func(string, json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("properties must be a JSON object")
	}
	for dec.More() {
		start := dec.InputOffset()
		if _, err := dec.Token(); err != nil {
			return err
		}
		segment := data[start:dec.InputOffset()] // [white space] [,] [white space] "key"
		quote := bytes.IndexByte(segment, '"')
		key, err := decodeMapKey(segment[quote+1 : len(segment)-1])
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		if err := fn(key, raw); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}

// errKeyEscape is the error Ollama's request decoding fails with on a key escape it refuses.
var errKeyEscape = errors.New("Encountered an invalid escape sequence in a string")

// decodeMapKey turns the raw text of an object key (between its quotes) into the key Ollama's
// ordered map (wk8/go-ordered-map v2.1.8 on buger/jsonparser v1.1.1) gives the arguments of a
// tool call and the properties of a tool. It differs from encoding/json on UTF-16 surrogates:
// a \u escape of a surrogate (high or low) must be followed by six bytes ending in four hex
// digits worth at least DC00, and is combined with them whatever they are (a result past
// U+10FFFF becomes U+FFFD); otherwise the request is refused. A key that is not UTF-8 is
// refused too.
func decodeMapKey(raw []byte) (string, error) {
	if bytes.IndexByte(raw, '\\') >= 0 {
		var out []byte
		for i := 0; i < len(raw); {
			if raw[i] != '\\' {
				out = append(out, raw[i])
				i++
				continue
			}
			if i+1 >= len(raw) {
				return "", errKeyEscape
			}
			switch c := raw[i+1]; c {
			case '"', '\\', '/':
				out = append(out, c)
				i += 2
			case 'b', 'f', 'n', 'r', 't':
				out = append(out, map[byte]byte{'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}[c])
				i += 2
			case 'u':
				r, ok := hex4(raw[i:])
				if !ok {
					return "", errKeyEscape
				}
				size := 6
				if r >= 0xD800 && r <= 0xDFFF {
					low, ok := hex4(raw[i+6:])
					if !ok || low < 0xDC00 {
						return "", errKeyEscape
					}
					r = 0x10000 + (r-0xD800)<<10 + (low - 0xDC00)
					size = 12
				}
				out = utf8.AppendRune(out, r)
				i += size
			default:
				return "", errKeyEscape
			}
		}
		raw = out
	}
	for offset := 0; offset < len(raw); {
		r, size := utf8.DecodeRune(raw[offset:])
		if r == utf8.RuneError && size <= 1 {
			return "", fmt.Errorf("not a valid UTF-8 string (at position %d): %s", offset, raw)
		}
		offset += size
	}
	return string(raw), nil
}

// hex4 reads the four hex digits at in[2:6] (the prefix in[0:2] is not looked at).
func hex4(in []byte) (rune, bool) {
	if len(in) < 6 {
		return 0, false
	}
	var r rune
	for _, c := range in[2:6] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

func (m ToolPropertiesMap) MarshalJSON() ([]byte, error) {
	if m.values == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range m.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(m.values[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Get, Set, Len, All and ToMap exist because templates can call exported methods.
func (m *ToolPropertiesMap) Get(key string) (ToolProperty, bool) {
	if m == nil || m.values == nil {
		return ToolProperty{}, false
	}
	v, ok := m.values[key]
	return v, ok
}

func (m *ToolPropertiesMap) Set(key string, value ToolProperty) {
	if m == nil {
		return
	}
	if m.values == nil {
		m.values = map[string]ToolProperty{}
	}
	if _, seen := m.values[key]; !seen {
		m.keys = append(m.keys, key)
	}
	m.values[key] = value
}

func (m *ToolPropertiesMap) Len() int {
	if m == nil {
		return 0
	}
	return len(m.keys)
}

func (m *ToolPropertiesMap) All() iter.Seq2[string, ToolProperty] {
	return func(yield func(string, ToolProperty) bool) {
		if m == nil {
			return
		}
		for _, k := range m.keys {
			if !yield(k, m.values[k]) {
				return
			}
		}
	}
}

func (m *ToolPropertiesMap) ToMap() map[string]ToolProperty {
	if m == nil || m.values == nil {
		return nil
	}
	out := make(map[string]ToolProperty, len(m.values))
	for k, v := range m.values {
		out[k] = v
	}
	return out
}

// ---- template side (ollama-semantics.md §5) ------------------------------------------------

type templateMessage struct {
	Role       string
	Content    string
	Thinking   string
	Images     []imageData
	ToolCalls  []templateToolCall
	ToolName   string
	ToolCallID string
}

type templateToolCall struct {
	ID       string
	Function templateToolCallFunction
}

type templateToolCallFunction struct {
	Index     int
	Name      string
	Arguments templateArgs
}

// templateArgs prints as compact sorted JSON, `{}` when nil.
type templateArgs map[string]any

func (a templateArgs) String() string {
	if a == nil {
		return "{}"
	}
	return marshalOrEmpty(a)
}

// templateProperties prints as sorted JSON, `{}` when nil.
type templateProperties map[string]ToolProperty

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

func messagesForTemplate(msgs []*apiMessage) []*templateMessage {
	if msgs == nil {
		return nil
	}
	out := make([]*templateMessage, len(msgs))
	for i, m := range msgs {
		var calls []templateToolCall
		for _, c := range m.ToolCalls {
			calls = append(calls, templateToolCall{
				ID: c.ID,
				Function: templateToolCallFunction{
					Index:     c.Function.Index,
					Name:      c.Function.Name,
					Arguments: templateArgs(c.Function.Arguments),
				},
			})
		}
		out[i] = &templateMessage{
			Role: m.Role, Content: m.Content, Thinking: m.Thinking, Images: m.Images,
			ToolCalls: calls, ToolName: m.ToolName, ToolCallID: m.ToolCallID,
		}
	}
	return out
}
