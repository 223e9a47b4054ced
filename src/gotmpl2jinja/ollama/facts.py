"""Ollama's parse-time facts about a template (ollama-semantics.md §2 and §9).

Ollama decides how to render from the template's syntax alone: `Vars()` (every field and
variable name, lower-cased) picks the messages or the legacy path and whether a
`{{ .Response }}` is appended; the legacy path's final turn renders a *cut* copy of the root
(`deleteNode`). These functions reproduce those decisions on our AST so the translator can
follow exactly the path Ollama takes.

May depend on: `errors`, `syntax`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Literal

from gotmpl2jinja.errors import RenderError, TemplateSyntaxError
from gotmpl2jinja.syntax import nodes as n


class OllamaTemplateError(TemplateSyntaxError):
    """Go parses the template but Ollama's `Parse` rejects it (its `Vars()` fails)."""


class CutPanicError(RenderError):
    """Ollama's legacy final turn panics: the cut fell inside the `if`/`with`/`range` list of a
    branch that has an `{{ else }}`, and `deleteNode` type-asserts the deleted else list
    (`interface conversion: parse.Node is nil, not *parse.ListNode`). Ollama answers the
    request with an error; there is no prompt to reproduce."""


def _identifiers(node: n.Node, name: str) -> list[str]:
    """Ollama's `Identifiers`: field and variable names, walking pipes, lists and branches
    (not chains, function names or literals)."""
    if isinstance(node, n.ListNode):
        out: list[str] = []
        for child in node.nodes:
            out.extend(_identifiers(child, name))
        return out
    if isinstance(node, n.TemplateNode):
        if node.pipe is None:
            raise OllamaTemplateError(
                f"undefined template specified: Ollama rejects {{{{ template {node.name!r} }}}}"
                " without an argument (write {{ template \"…\" . }})",
                line=node.pos.line, col=node.pos.col, name=name)
        return _identifiers(node.pipe, name)
    if isinstance(node, n.ActionNode):
        return _identifiers(node.pipe, name)
    if isinstance(node, n.BranchNode):
        out = _identifiers(node.pipe, name)
        out.extend(_identifiers(node.list, name))
        if node.else_list is not None:
            out.extend(_identifiers(node.else_list, name))
        return out
    if isinstance(node, n.PipeNode):
        out = []
        for cmd in node.cmds:
            for arg in cmd.args:
                out.extend(_identifiers(arg, name))
        return out
    if isinstance(node, (n.FieldNode, n.VariableNode)):
        return list(node.ident)
    return []


def vars(template: n.Template) -> list[str]:  # noqa: A001 - Ollama's name for it
    """Ollama's `Vars()`: identifiers of every tree (defines too), lower-cased, sorted, unique.
    Raises OllamaTemplateError where Ollama's `Parse` fails."""
    names: set[str] = set()
    for _tree_name, tree in template.trees():
        for node in tree.nodes:
            names.update(ident.lower() for ident in _identifiers(node, template.name))
    return sorted(names)


def uses_messages(template: n.Template) -> bool:
    """Purely syntactic: any `.Messages`/`.messages`/`$.Messages` anywhere, even never run."""
    return "messages" in vars(template)


def execute_path(template: n.Template) -> Literal["messages", "legacy"]:
    """Which of Ollama's chat paths renders this template (the suffix/FIM path depends on the
    request, not the template)."""
    return "messages" if uses_messages(template) else "legacy"


def appends_response(template: n.Template) -> bool:
    """Ollama appends `{{ .Response }}` when Vars() has neither "messages" nor "response"."""
    found = vars(template)
    return "messages" not in found and "response" not in found


def with_response(template: n.Template) -> n.Template:
    """A copy of the template as Ollama holds it after `Parse`: with the `{{ .Response }}`
    action appended to the root when `appends_response` says so (idempotent)."""
    result = copy.deepcopy(template)
    if appends_response(template):
        lines = template.source.split("\n")
        end = n.Pos(len(template.source.encode("utf-8", "surrogatepass")), len(lines),
                    len(lines[-1].encode("utf-8", "surrogatepass")) + 1)
        field = n.FieldNode(["Response"], pos=end)
        pipe = n.PipeNode(cmds=[n.CommandNode([field], pos=end)], pos=end)
        result.root.nodes.append(n.ActionNode(pipe, pos=end))
    return result


@dataclass
class _CutState:
    cut: bool = False


def _doomed(node: n.Node, state: _CutState) -> bool:
    """deleteNode's predicate: the first `.Response` field starts the cut and is kept;
    every node visited after it is deleted."""
    if isinstance(node, n.FieldNode) and "Response" in node.ident:
        state.cut = True
        return False
    return state.cut


def _walk(node: n.Node, state: _CutState) -> n.Node | None:
    if _doomed(node, state):
        return None
    if isinstance(node, n.ListNode):
        kept = [c for c in (_walk(child, state) for child in node.nodes) if c is not None]
        node.nodes = kept
        return node
    if isinstance(node, n.BranchNode):
        # Only the lists are walked: the condition pipe never triggers the cut.
        body = _walk(node.list, state)
        assert isinstance(body, n.ListNode)  # visited before any cut inside it
        node.list = body
        if node.else_list is not None:
            else_list = _walk(node.else_list, state)
            if else_list is None:
                raise CutPanicError(
                    "Ollama panics on this template in the legacy path: the {{ .Response }} "
                    "cut falls inside a branch that has an {{ else }} (deleteNode: "
                    "interface conversion: parse.Node is nil, not *parse.ListNode)",
                    line=node.pos.line, col=node.pos.col)
            assert isinstance(else_list, n.ListNode)
            node.else_list = else_list
        return node
    if isinstance(node, n.ActionNode):
        pipe = _walk(node.pipe, state)
        if pipe is None:
            return None
        assert isinstance(pipe, n.PipeNode)
        node.pipe = pipe
        return node
    if isinstance(node, n.PipeNode):
        commands: list[n.CommandNode] = []
        for cmd in node.cmds:
            args = [a for a in (_walk(arg, state) for arg in cmd.args) if a is not None]
            if not args:
                return None  # one emptied command removes the whole pipe (and its action)
            cmd.args = args
            commands.append(cmd)
        if not commands:
            return None
        node.cmds = commands
        return node
    return node  # chains, variables, templates, text… are never walked into


def cut(template: n.Template) -> tuple[n.Template, bool]:
    """The template Ollama executes for the legacy path's final turn: `with_response`, then a
    deep copy of the root with everything after the first `.Response` field deleted.

    Returns (cut template, whether a `.Response` field triggered the cut). The result has no
    defines (Ollama builds it with `AddParseTree`, so `{{ template }}` calls fail there, and it
    has none of Ollama's functions either). Raises CutPanicError where Ollama panics.
    """
    full = with_response(template)
    state = _CutState()
    root = _walk(full.root, state)
    assert isinstance(root, n.ListNode)  # the root is visited first, before any cut
    return n.Template(root=root, defines={}, source=template.source, name=template.name), \
        state.cut
