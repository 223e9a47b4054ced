package template

// The wrappers Ollama's template package gives templates for messages and tool calls
// (ollama-semantics.md §5). They live in a package named `template` because fmt prints a type's
// package name (`%!s(*template.templateMessage=&{…})`); the exported aliases let the renderer
// build them while the types keep Ollama's unexported names.

import (
	"encoding/json"

	"gotmpl2jinja/reference/api"
)

// Message, ToolCall, ToolCallFunction and Args name the unexported types for the renderer.
type (
	Message          = templateMessage
	ToolCall         = templateToolCall
	ToolCallFunction = templateToolCallFunction
	Args             = templateArgs
)

type templateMessage struct {
	Role       string
	Content    string
	Thinking   string
	Images     []api.ImageData
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
	b, _ := json.Marshal(a) // (its values are JSON's own: Marshal cannot fail)
	return string(b)
}

