"""The capabilities Ollama reads from a template alone (ollama-semantics.md §8).

Ollama's server refuses a request that needs a capability the model lacks, and turns an absent
`think` into `true` for a model with the thinking capability. For a Go template the capabilities
come from its syntax: tools when `Vars()` has "tools", insert when it has "suffix", thinking
when `thinking.InferTags` finds an opening and a closing tag. The translator needs the thinking
capability at translation time (the Jinja cannot ask Ollama at render time), so it is computed
here on our AST; tests check it against the Go reference's answer on every corpus template.

May depend on: `ollama.facts`, `syntax`.
"""

from __future__ import annotations

from gotmpl2jinja.ollama.facts import vars as ollama_vars
from gotmpl2jinja.syntax import nodes as n

#: Go's unicode.IsSpace (what strings.TrimSpace trims); Python's str.strip trims more.
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007" \
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _names_field(pipe: n.PipeNode | None, name: str) -> bool:
    """A field whose first identifier is `name` anywhere in `pipe` (nested pipes, no chains)."""
    if pipe is None:
        return False
    for cmd in pipe.cmds:
        for arg in cmd.args:
            if isinstance(arg, n.FieldNode) and arg.ident and arg.ident[0] == name:
                return True
            if isinstance(arg, n.PipeNode) and _names_field(arg, name):
                return True
    return False


def think_tags(template: n.Template) -> tuple[str, str]:
    """Ollama's `thinking.InferTags` on the root tree: for each `.Thinking` field under a range
    over a pipe naming `.Messages` (the nearest range), the nearest enclosing list's first and
    last nodes, when they are text, give the trimmed opening and closing tags (a node that is
    not text keeps the previous value). Defined templates, chains and variables are not read."""
    tags = ["", ""]
    lists: list[n.ListNode] = []
    ranges: list[n.RangeNode] = []

    def branch(node: n.BranchNode) -> None:
        visit(node.pipe)
        visit(node.list)
        if node.else_list is not None:
            visit(node.else_list)

    def visit(node: n.Node | None) -> None:
        if isinstance(node, n.ListNode):
            lists.append(node)
            for child in node.nodes:
                visit(child)
            lists.pop()
        elif isinstance(node, n.ActionNode):
            visit(node.pipe)
        elif isinstance(node, n.RangeNode):
            ranges.append(node)
            branch(node)
            ranges.pop()
        elif isinstance(node, n.BranchNode):
            branch(node)
        elif isinstance(node, n.TemplateNode):
            visit(node.pipe)
        elif isinstance(node, n.PipeNode):
            for cmd in node.cmds:
                for arg in cmd.args:
                    visit(arg)
        elif isinstance(node, n.FieldNode):
            if not (node.ident and node.ident[0] == "Thinking" and ranges and lists):
                return
            if not _names_field(ranges[-1].pipe, "Messages"):
                return
            # Go's lexer emits no empty text node; ours may keep one where a trim emptied it
            kept = [c for c in lists[-1].nodes if not (isinstance(c, n.TextNode) and not c.text)]
            first, last = kept[0], kept[-1]
            if isinstance(first, n.TextNode):
                tags[0] = first.text.strip(_GO_SPACE)
            if isinstance(last, n.TextNode):
                tags[1] = last.text.strip(_GO_SPACE)

    visit(template.root)
    return tags[0], tags[1]


def has_thinking(template: n.Template) -> bool:
    """Ollama gives the template the thinking capability (both think tags inferred)."""
    opening, closing = think_tags(template)
    return bool(opening and closing)


def capabilities(template: n.Template) -> frozenset[str]:
    """"tools", "insert" and "thinking" as Ollama's Capabilities() reads them from a template."""
    names = set(ollama_vars(template))
    found = set()
    if "tools" in names:
        found.add("tools")
    if "suffix" in names:
        found.add("insert")
    if has_thinking(template):
        found.add("thinking")
    return frozenset(found)
