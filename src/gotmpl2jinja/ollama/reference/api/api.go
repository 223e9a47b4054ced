package api

// The request types of Ollama's api package that templates see inside tools (api.ToolProperty,
// api.PropertyType, api.ToolPropertiesMap). Written from the spec; they live in a package named
// `api` because fmt prints a type's package name (`%!s(*api.ToolPropertiesMap=<nil>)`), and
// field names, field order and method sets matter because templates print and call them.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"unicode/utf8"
)

// ImageData is an image's bytes (images are outside the contract: always nil here).
type ImageData []byte

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
// position and takes its last value), so nested `properties` marshal in insertion order. Like
// Ollama's, it holds one pointer to its ordered map: fmt prints a non-nil one as an address.
type ToolPropertiesMap struct {
	om *orderedMap
}

type orderedMap struct {
	keys   []string
	values map[string]ToolProperty
}

func (m *ToolPropertiesMap) UnmarshalJSON(data []byte) error {
	m.om = &orderedMap{values: map[string]ToolProperty{}}
	return EachMember(data, func(key string, raw json.RawMessage) error {
		var prop ToolProperty
		if err := json.Unmarshal(raw, &prop); err != nil {
			return err
		}
		m.Set(key, prop)
		return nil
	})
}

// EachMember calls fn for every member of the JSON object data, in order, with the key decoded
// by DecodeMapKey and the value's raw bytes. encoding/json has validated data's syntax already.
func EachMember(data []byte, fn func(string, json.RawMessage) error) error {
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
		key, err := DecodeMapKey(segment[quote+1 : len(segment)-1])
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

// DecodeMapKey turns the raw text of an object key (between its quotes) into the key Ollama's
// ordered map (wk8/go-ordered-map v2.1.8 on buger/jsonparser v1.1.1) gives the arguments of a
// tool call and the properties of a tool. It differs from encoding/json on UTF-16 surrogates:
// a \u escape of a surrogate (high or low) must be followed by six bytes ending in four hex
// digits worth at least DC00, and is combined with them whatever they are (a result past
// U+10FFFF becomes U+FFFD); otherwise the request is refused. A key that is not UTF-8 is
// refused too.
func DecodeMapKey(raw []byte) (string, error) {
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
	if m.om == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range m.om.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeOrderedKey(&b, k)
		b.WriteByte(':')
		vb, err := json.Marshal(m.om.values[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// writeOrderedKey writes key k as Ollama's ordered map writes its keys (wk8/go-ordered-map
// v2.1.8 through mailru/easyjson v0.7.7's string writer), not as encoding/json does: the two
// differ only on U+0008 and U+000C, which that writer spells `\u0008` and `\u000c` where
// encoding/json (since Go 1.22) writes `\b` and `\f`. The rest is as encoding/json: `\"`,
// `\\`, `\n`, `\r`, `\t`, other controls as `\u00xx`, `<` `>` `&` U+2028 U+2029 escaped.
// (Keys are UTF-8 here: DecodeMapKey refuses any other.)
func writeOrderedKey(b *bytes.Buffer, k string) {
	const hexDigits = "0123456789abcdef"
	b.WriteByte('"')
	for _, r := range k {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == '<' || r == '>' || r == '&':
			b.WriteString(`\u00`)
			b.WriteByte(hexDigits[r>>4])
			b.WriteByte(hexDigits[r&0xf])
		case r == '\u2028' || r == '\u2029':
			b.WriteString(`\u202`)
			b.WriteByte(hexDigits[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// Get, Set, Len, All and ToMap exist because templates can call exported methods.
func (m *ToolPropertiesMap) Get(key string) (ToolProperty, bool) {
	if m == nil || m.om == nil {
		return ToolProperty{}, false
	}
	v, ok := m.om.values[key]
	return v, ok
}

func (m *ToolPropertiesMap) Set(key string, value ToolProperty) {
	if m == nil {
		return
	}
	if m.om == nil {
		m.om = &orderedMap{values: map[string]ToolProperty{}}
	}
	if _, seen := m.om.values[key]; !seen {
		m.om.keys = append(m.om.keys, key)
	}
	m.om.values[key] = value
}

func (m *ToolPropertiesMap) Len() int {
	if m == nil || m.om == nil {
		return 0
	}
	return len(m.om.keys)
}

func (m *ToolPropertiesMap) All() iter.Seq2[string, ToolProperty] {
	return func(yield func(string, ToolProperty) bool) {
		if m == nil || m.om == nil {
			return
		}
		for _, k := range m.om.keys {
			if !yield(k, m.om.values[k]) {
				return
			}
		}
	}
}

func (m *ToolPropertiesMap) ToMap() map[string]ToolProperty {
	if m == nil || m.om == nil {
		return nil
	}
	out := make(map[string]ToolProperty, len(m.om.values))
	for k, v := range m.om.values {
		out[k] = v
	}
	return out
}
