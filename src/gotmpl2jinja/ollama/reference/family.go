package main

// The steps Ollama's server takes by the model's family, parser and config rather than by its
// template (ollama-semantics.md §8 "By family"). The Python side (ollama/family.py) decides from
// the model's config which of them hold; this file applies them to a request.

import (
	"fmt"
	"strings"
	"unicode"
)

// familySteps are the rules that hold for the model a request is rendered for.
type familySteps struct {
	// Capabilities granted besides the template's own: "thinking", "tools", "insert" (from
	// the gpt-oss family, the PARSER's built-in parser, the config's capabilities).
	Capabilities []string `json:"capabilities"`
	// HarmonyLevels: a gpt-oss model whose template has harmony's <|start|> and <|end|>
	// markers (shouldUseHarmony): a think level "max" is "high".
	HarmonyLevels bool `json:"harmony_levels"`
	// HarmonyTools: the harmony parser reads the output (such a model without a PARSER, or
	// PARSER harmony): it renames the request's tools before the template sees them.
	HarmonyTools bool `json:"harmony_tools"`
	// StripThink: family qwen3 or a model named deepseek-r1: the <think>…</think> block is
	// taken out of every assistant message before the last user message.
	StripThink bool `json:"strip_think"`
}

func (f *familySteps) grants(capability string) bool {
	if f == nil {
		return false
	}
	for _, c := range f.Capabilities {
		if c == capability {
			return true
		}
	}
	return false
}

// harmonyBuiltins keep their names: harmony knows them as built-in tools.
var harmonyBuiltins = map[string]bool{
	"browser.open": true, "browser.search": true, "browser.find": true, "python": true,
}

// harmonyName is the name the harmony parser gives a tool: space, '-' and '.' become '_',
// anything but letters, digits, '_' and '$' is dropped, an empty result is "unnamed", a leading
// digit gets a '_' before it; a name already given gets "_2", "_3"… after it.
func harmonyName(name string, taken map[string]bool) string {
	if harmonyBuiltins[name] {
		taken[name] = true
		return name
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == ' ' || r == '-' || r == '.':
			b.WriteByte('_')
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '$':
			b.WriteRune(r)
		}
	}
	base := b.String()
	if base == "" {
		base = "unnamed"
	}
	if unicode.IsDigit(rune(base[0])) { // the first byte, as Ollama reads it
		base = "_" + base
	}
	candidate := base
	for n := 2; taken[candidate]; n++ {
		candidate = fmt.Sprintf("%s_%d", base, n)
	}
	taken[candidate] = true
	return candidate
}

// renameHarmonyTools gives each tool with a name the harmony parser's name for it (a copy).
func renameHarmonyTools(tools []apiTool) []apiTool {
	if len(tools) == 0 {
		return tools
	}
	out := make([]apiTool, len(tools))
	copy(out, tools)
	taken := map[string]bool{}
	for i := range out {
		if out[i].Function.Name != "" {
			out[i].Function.Name = harmonyName(out[i].Function.Name, taken)
		}
	}
	return out
}

// stripThink takes the <think>…</think> block out of the assistant messages before the last
// user message, as Ollama's thinking parser reads a whole content at once: white space
// (unicode.IsSpace) before the opening tag and after the closing tag goes too; a content that
// is only white space or the start of "<think>" becomes empty, as does one whose block never
// closes; a content that does not start with the tag is kept whole.
func stripThink(msgs []apiMessage) []apiMessage {
	last := -1
	for i, m := range msgs {
		if m.Role == "user" {
			last = i
		}
	}
	out := make([]apiMessage, len(msgs))
	copy(out, msgs)
	for i := range out {
		if out[i].Role == "assistant" && i < last {
			out[i].Content = afterThinking(out[i].Content)
		}
	}
	return out
}

func afterThinking(content string) string {
	const opening, closing = "<think>", "</think>"
	trimmed := strings.TrimLeftFunc(content, unicode.IsSpace)
	if !strings.HasPrefix(trimmed, opening) {
		if strings.HasPrefix(opening, trimmed) {
			return ""
		}
		return content
	}
	_, after, _ := strings.Cut(trimmed, opening)
	_, rest, found := strings.Cut(after, closing)
	if !found {
		return ""
	}
	return strings.TrimLeftFunc(rest, unicode.IsSpace)
}
