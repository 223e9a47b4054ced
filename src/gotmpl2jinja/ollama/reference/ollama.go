package main

// Ollama's Template.Parse and Template.Execute (ollama-semantics.md §2–§4, §9), written from the
// spec. Go's own text/template does all the parsing and printing.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/template"
	"text/template/parse"
	"time"

	"gotmpl2jinja/reference/api"
)

// clock is the pinned "now" of the request being served (requests are served one at a time).
var clock = time.Date(2026, 8, 21, 12, 0, 0, 0, time.UTC)

// ollamaFuncs are the four functions Ollama adds to every template.
var ollamaFuncs = template.FuncMap{
	"json": func(v any) string { return marshalOrEmpty(v) },
	"currentDate": func(args ...string) string {
		return clock.Format("2006-01-02")
	},
	"yesterdayDate": func(args ...string) string {
		return clock.AddDate(0, 0, -1).Format("2006-01-02")
	},
	"toTypeScriptType": func(v any) string {
		switch p := v.(type) {
		case api.ToolProperty:
			return p.ToTypeScriptType()
		case *api.ToolProperty:
			if p != nil {
				return p.ToTypeScriptType()
			}
		}
		return "any"
	},
}

// ollamaTemplate is a parsed template plus the parse-time facts Execute needs.
type ollamaTemplate struct {
	id   int64
	tmpl *template.Template
	vars []string

	// caps are the capabilities Ollama reads from the template alone (server/images.go):
	// "tools" and "insert" from Vars(), "thinking" when thinkingTags finds both tags.
	caps []string

	cutDone  bool
	cutRoot  *parse.ListNode // the final-turn tree of the legacy path
	cutPanic string          // non-empty when building the cut panics in Ollama
}

// parseOllama does what Ollama's Parse does: parse with the funcs and missingkey=zero, compute
// Vars (failing like Ollama on a template call without a pipe), append {{ .Response }} when
// neither "messages" nor "response" is used.
func parseOllama(src string) (*ollamaTemplate, error) {
	tmpl, err := template.New("").Option("missingkey=zero").Funcs(ollamaFuncs).Parse(src)
	if err != nil {
		return nil, err
	}
	vars, err := templateVars(tmpl)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(vars, "messages") && !slices.Contains(vars, "response") {
		tmpl.Tree.Root.Nodes = append(tmpl.Tree.Root.Nodes, responseAction())
	}
	return &ollamaTemplate{tmpl: tmpl, vars: vars, caps: templateCapabilities(tmpl, vars)}, nil
}

// templateCapabilities: what Ollama's Capabilities() adds for a Go template (tools when Vars()
// has "tools", insert when it has "suffix", thinking when both think tags are inferred).
func templateCapabilities(tmpl *template.Template, vars []string) []string {
	caps := []string{}
	if slices.Contains(vars, "tools") {
		caps = append(caps, "tools")
	}
	if slices.Contains(vars, "suffix") {
		caps = append(caps, "insert")
	}
	if open, closing := thinkingTags(tmpl.Tree.Root); open != "" && closing != "" {
		caps = append(caps, "thinking")
	}
	return caps
}

func (t *ollamaTemplate) has(capability string) bool { return slices.Contains(t.caps, capability) }

// thinkingTags is Ollama's thinking.InferTags on the root tree: for every field whose first
// identifier is Thinking, when the nearest enclosing range iterates over a pipe that names a
// field starting with Messages, the nearest enclosing list's first and last nodes give the
// opening and closing tags (trimmed text; a node that is not text leaves the previous value).
// Chains and variables are not looked into, nor are {{define}}d templates.
func thinkingTags(root *parse.ListNode) (opening, closing string) {
	var lists []*parse.ListNode
	var ranges []*parse.RangeNode
	var visit func(n parse.Node)
	visitBranch := func(b *parse.BranchNode) {
		if b.Pipe != nil {
			visit(b.Pipe)
		}
		if b.List != nil {
			visit(b.List)
		}
		if b.ElseList != nil {
			visit(b.ElseList)
		}
	}
	visit = func(n parse.Node) {
		switch x := n.(type) {
		case *parse.ListNode:
			lists = append(lists, x)
			for _, c := range x.Nodes {
				visit(c)
			}
			lists = lists[:len(lists)-1]
		case *parse.ActionNode:
			visit(x.Pipe)
		case *parse.IfNode:
			visitBranch(&x.BranchNode)
		case *parse.WithNode:
			visitBranch(&x.BranchNode)
		case *parse.RangeNode:
			ranges = append(ranges, x)
			visitBranch(&x.BranchNode)
			ranges = ranges[:len(ranges)-1]
		case *parse.TemplateNode:
			if x.Pipe != nil {
				visit(x.Pipe)
			}
		case *parse.PipeNode:
			for _, c := range x.Cmds {
				visit(c)
			}
		case *parse.CommandNode:
			for _, a := range x.Args {
				visit(a)
			}
		case *parse.FieldNode:
			if x.Ident[0] != "Thinking" || len(ranges) == 0 || len(lists) == 0 {
				return
			}
			if !pipeNamesField(ranges[len(ranges)-1].Pipe, "Messages") {
				return
			}
			l := lists[len(lists)-1]
			if t, ok := l.Nodes[0].(*parse.TextNode); ok {
				opening = strings.TrimSpace(string(t.Text))
			}
			if t, ok := l.Nodes[len(l.Nodes)-1].(*parse.TextNode); ok {
				closing = strings.TrimSpace(string(t.Text))
			}
		}
	}
	visit(root)
	return opening, closing
}

// pipeNamesField: a field node whose first identifier is name, anywhere in the pipe (through
// nested pipes and commands, not chains).
func pipeNamesField(pipe *parse.PipeNode, name string) bool {
	if pipe == nil {
		return false
	}
	for _, cmd := range pipe.Cmds {
		for _, arg := range cmd.Args {
			switch a := arg.(type) {
			case *parse.FieldNode:
				if a.Ident[0] == name {
					return true
				}
			case *parse.PipeNode:
				if pipeNamesField(a, name) {
					return true
				}
			}
		}
	}
	return false
}

func responseAction() *parse.ActionNode {
	field := &parse.FieldNode{NodeType: parse.NodeField, Ident: []string{"Response"}}
	cmd := &parse.CommandNode{NodeType: parse.NodeCommand, Args: []parse.Node{field}}
	pipe := &parse.PipeNode{NodeType: parse.NodePipe, Cmds: []*parse.CommandNode{cmd}}
	return &parse.ActionNode{NodeType: parse.NodeAction, Pipe: pipe}
}

// templateVars: every field and variable identifier in every template of the set, lower-cased,
// de-duplicated, sorted (§2 Vars()).
func templateVars(tmpl *template.Template) ([]string, error) {
	seen := map[string]bool{}
	for _, t := range tmpl.Templates() {
		for _, n := range t.Root.Nodes {
			if err := collectIdents(n, seen); err != nil {
				return nil, err
			}
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

func collectIdents(n parse.Node, seen map[string]bool) error {
	add := func(idents []string) {
		for _, id := range idents {
			seen[strings.ToLower(id)] = true
		}
	}
	switch n := n.(type) {
	case *parse.ListNode:
		for _, c := range n.Nodes {
			if err := collectIdents(c, seen); err != nil {
				return err
			}
		}
	case *parse.TemplateNode:
		if n.Pipe == nil {
			return errors.New("undefined template specified")
		}
		return collectIdents(n.Pipe, seen)
	case *parse.ActionNode:
		if n.Pipe == nil {
			return errors.New("undefined action in template")
		}
		return collectIdents(n.Pipe, seen)
	case *parse.IfNode:
		return collectBranch(&n.BranchNode, seen)
	case *parse.RangeNode:
		return collectBranch(&n.BranchNode, seen)
	case *parse.WithNode:
		return collectBranch(&n.BranchNode, seen)
	case *parse.PipeNode:
		for _, cmd := range n.Cmds {
			for _, arg := range cmd.Args {
				if err := collectIdents(arg, seen); err != nil {
					return err
				}
			}
		}
	case *parse.FieldNode:
		add(n.Ident)
	case *parse.VariableNode:
		add(n.Ident)
	}
	return nil
}

func collectBranch(b *parse.BranchNode, seen map[string]bool) error {
	if b.Pipe == nil {
		return errors.New("undefined branch")
	}
	if err := collectIdents(b.Pipe, seen); err != nil {
		return err
	}
	for _, l := range []*parse.ListNode{b.List, b.ElseList} {
		if l != nil {
			if err := collectIdents(l, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// values are the request inputs of Execute (Ollama's template.Values).
type values struct {
	Messages     []apiMessage
	Tools        []apiTool
	Prompt       string
	Suffix       string
	Think        bool
	ThinkLevel   string
	IsThinkSet   bool
	FunctionJSON bool
}

// executePath names the branch Execute takes for these values.
func (t *ollamaTemplate) executePath(v *values) string {
	switch {
	case v.Prompt != "" && v.Suffix != "":
		return "suffix"
	case slices.Contains(t.vars, "messages"):
		return "messages"
	}
	return "legacy"
}

// execute renders like Ollama's Template.Execute; nothing is written to w on error.
func (t *ollamaTemplate) execute(w io.Writer, v *values) error {
	system, msgs := collate(v.Messages)
	switch t.executePath(v) {
	case "suffix":
		return t.tmpl.Execute(w, map[string]any{
			"Prompt": v.Prompt, "Suffix": v.Suffix, "Response": "",
			"Think": v.Think, "ThinkLevel": v.ThinkLevel, "IsThinkSet": v.IsThinkSet,
		})
	case "messages":
		return t.tmpl.Execute(w, map[string]any{
			"System":   system,
			"Messages": messagesForTemplate(msgs),
			"Tools":    toolsForTemplate(v.Tools, v.FunctionJSON),
			"Response": "",
			"Think":    v.Think, "ThinkLevel": v.ThinkLevel, "IsThinkSet": v.IsThinkSet,
		})
	}
	return t.executeLegacy(w, v, msgs)
}

// executeLegacy is §9: one full render per completed turn, then the cut template for the last.
func (t *ollamaTemplate) executeLegacy(w io.Writer, v *values, msgs []*apiMessage) error {
	var out bytes.Buffer
	system, prompt, response := "", "", ""
	data := func() map[string]any {
		return map[string]any{
			"System": system, "Prompt": prompt, "Response": response,
			"Think": v.Think, "ThinkLevel": v.ThinkLevel, "IsThinkSet": v.IsThinkSet,
		}
	}
	flush := func() error {
		if err := t.tmpl.Execute(&out, data()); err != nil {
			return err
		}
		system, prompt, response = "", "", ""
		return nil
	}
	for _, m := range msgs {
		switch m.Role {
		case "system":
			if prompt != "" || response != "" {
				if err := flush(); err != nil {
					return err
				}
			}
			system = m.Content
		case "user":
			if response != "" {
				if err := flush(); err != nil {
					return err
				}
			}
			prompt = m.Content
		case "assistant":
			response = m.Content
		}
	}
	root, panicMsg := t.finalTurnTree()
	if panicMsg != "" {
		return fmt.Errorf("panic: %s", panicMsg)
	}
	// The final turn runs on a bare template: no Ollama funcs, no {{define}}d templates.
	final, err := template.New("").AddParseTree("", &parse.Tree{Root: root})
	if err != nil {
		return err
	}
	if err := final.Execute(&out, data()); err != nil {
		return err
	}
	_, err = w.Write(out.Bytes())
	return err
}

// finalTurnTree builds (once) the cut copy of the root: everything after the first field whose
// idents include "Response" is deleted (§9 "The cut"), with Ollama's panic when the cut falls
// inside the first list of a branch that has an else list.
func (t *ollamaTemplate) finalTurnTree() (root *parse.ListNode, panicMsg string) {
	if !t.cutDone {
		t.cutDone = true
		t.cutRoot, t.cutPanic = cutAfterResponse(t.tmpl.Tree.Root.CopyList())
	}
	return t.cutRoot, t.cutPanic
}

func cutAfterResponse(root *parse.ListNode) (out *parse.ListNode, panicMsg string) {
	defer func() {
		if r := recover(); r != nil {
			out, panicMsg = nil, fmt.Sprint(r)
		}
	}()
	c := &responseCutter{}
	return c.visit(root).(*parse.ListNode), ""
}

// responseCutter walks nodes in order (a node before its children). Once a Response field has
// been seen, every node visited afterwards is dropped. The type assertions on the results of
// visiting a branch's lists are deliberate: a dropped else list is a nil node, and asserting it
// to *parse.ListNode panics exactly where Ollama's walker does.
type responseCutter struct{ cut bool }

func (c *responseCutter) drop(n parse.Node) bool {
	if f, ok := n.(*parse.FieldNode); ok && slices.Contains(f.Ident, "Response") {
		c.cut = true
		return false
	}
	return c.cut
}

func (c *responseCutter) visit(n parse.Node) parse.Node {
	if c.drop(n) {
		return nil
	}
	switch n := n.(type) {
	case *parse.ListNode:
		kept := []parse.Node(nil)
		for _, child := range n.Nodes {
			if k := c.visit(child); k != nil {
				kept = append(kept, k)
			}
		}
		n.Nodes = kept
	case *parse.IfNode:
		n.BranchNode = *c.visit(&n.BranchNode).(*parse.BranchNode)
	case *parse.RangeNode:
		n.BranchNode = *c.visit(&n.BranchNode).(*parse.BranchNode)
	case *parse.WithNode:
		n.BranchNode = *c.visit(&n.BranchNode).(*parse.BranchNode)
	case *parse.BranchNode:
		n.List = c.visit(n.List).(*parse.ListNode)
		if n.ElseList != nil {
			n.ElseList = c.visit(n.ElseList).(*parse.ListNode)
		}
	case *parse.ActionNode:
		p := c.visit(n.Pipe)
		if p == nil {
			return nil
		}
		n.Pipe = p.(*parse.PipeNode)
	case *parse.PipeNode:
		var cmds []*parse.CommandNode
		for _, cmd := range n.Cmds {
			var args []parse.Node
			for _, a := range cmd.Args {
				if k := c.visit(a); k != nil {
					args = append(args, k)
				}
			}
			if len(args) == 0 {
				return nil // a command without arguments takes the whole pipe with it
			}
			cmd.Args = args
			cmds = append(cmds, cmd)
		}
		if len(cmds) == 0 {
			return nil
		}
		n.Cmds = cmds
	}
	return n
}

// collate merges consecutive same-role messages (not tool messages) and joins all system
// contents (§4). It works on a copy so the caller's request stays as sent.
func collate(in []apiMessage) (string, []*apiMessage) {
	msgs := slices.Clone(in)
	var systems []string
	var out []*apiMessage
	for i := range msgs {
		m := &msgs[i]
		if m.Role == "system" {
			systems = append(systems, m.Content)
		}
		if n := len(out); n > 0 && out[n-1].Role == m.Role && m.Role != "tool" {
			out[n-1].Content += "\n\n" + m.Content
		} else {
			out = append(out, m)
		}
	}
	return strings.Join(systems, "\n\n"), out
}
