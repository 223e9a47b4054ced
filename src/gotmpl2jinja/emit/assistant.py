"""Where an assistant turn prints the assistant's own text: the `{% generation %}` blocks.

transformers' `return_assistant_tokens_mask` (TRL's `assistant_only_loss`) masks the text a
chat template renders inside `{% generation %}…{% endgeneration %}`. Ollama's template prints
the assistant's content, thinking and tool calls from the message's own fields in its chat loop;
this module finds, in the AST, the actions that do so in a branch where the message is known to
be the assistant's (`if eq .Role "assistant"`): `{{ .Content }}`, `{{ .Thinking }}` and the
`range .ToolCalls`; a `{{ .Content }}`/`{{ .Thinking }}` printed for any role (ChatML's
`<|{{ .Role }}|>{{ .Content }}`) is marked under a test of the message's role in the Jinja.
Where such a field is printed another way (also through a variable holding
it), or where the role is not known there, the blocks cannot be decided and the option is
refused (a sentence). A variable holding one may be tested: conditions print nothing.

May depend on: `syntax`, `emit.generation`.
"""

from __future__ import annotations

from gotmpl2jinja.emit.generation import is_messages, prints
from gotmpl2jinja.syntax import nodes

#: The message fields whose printed text is the assistant's own.
OWN_FIELDS = ("Content", "Thinking", "ToolCalls")
ASSISTANT, OTHER, UNKNOWN = "assistant", "other", "unknown"


#: Why the blocks cannot be decided: (line, column, reason); line 0 where there is no place.
Refusal = tuple[int, int, str]


#: The nodes whose output is the assistant's own text, by id: None where the message is known
#: to be the assistant's there, else the message's `.Role` (a node to test in the Jinja: the
#: block is written under `role == 'assistant'`, the same output without it otherwise).
Blocks = dict[int, "nodes.FieldNode | nodes.VariableNode | None"]


def generation_nodes(template: nodes.Template) -> Blocks | Refusal:
    """The nodes whose output is the assistant's own text, or why they cannot be decided."""
    found_loop = _chat_loop(template)
    if isinstance(found_loop, tuple):
        return found_loop
    loop = found_loop
    var = loop.pipe.decl[-1].ident[0] if loop.pipe.decl else None
    found: Blocks = {}
    refusal: list[Refusal] = []
    held: set[str] = set()  # variables holding (or computed from) the assistant's text

    def own_field(n: nodes.Node, dot_is_message: bool) -> str | None:
        if isinstance(n, nodes.FieldNode) and dot_is_message and n.ident[:1] \
                and n.ident[0] in OWN_FIELDS:
            return n.ident[0]
        if isinstance(n, nodes.VariableNode) and var is not None and n.ident[:1] == [var] \
                and len(n.ident) > 1 and n.ident[1] in OWN_FIELDS:
            return n.ident[1]
        if isinstance(n, nodes.VariableNode) and n.ident[:1] and n.ident[0] in held:
            return "$"
        if isinstance(n, nodes.DotNode) and dot_is_message:
            return "."
        return None

    def reads_own(node: nodes.Node, dot_is_message: bool) -> nodes.Node | None:
        for n in node.walk():
            if own_field(n, dot_is_message) is not None:
                return n
        return None

    def plain(pipe: nodes.PipeNode, dot_is_message: bool, fields: tuple[str, ...]) -> bool:
        return not pipe.decl and len(pipe.cmds) == 1 and len(pipe.cmds[0].args) == 1 \
            and own_field(pipe.cmds[0].args[0], dot_is_message) in fields

    def role_of(arg: nodes.Node) -> nodes.FieldNode | nodes.VariableNode:
        """`.Role` of the message whose field `arg` reads."""
        if isinstance(arg, nodes.VariableNode):
            return nodes.VariableNode(ident=[arg.ident[0], "Role"], pos=arg.pos)
        return nodes.FieldNode(ident=["Role"], pos=arg.pos)

    def refuse(n: nodes.Node, why: str) -> None:
        if not refusal:
            refusal.append((n.pos.line, n.pos.col, why))

    def role_test(pipe: nodes.PipeNode, dot_is_message: bool) -> tuple[str, bool] | None:
        """(role, equal) for `eq .Role "x"` / `ne .Role "x"` (either order)."""
        if pipe.decl or len(pipe.cmds) != 1 or len(pipe.cmds[0].args) != 3:
            return None
        op, a, b = pipe.cmds[0].args
        if not isinstance(op, nodes.IdentifierNode) or op.ident not in ("eq", "ne"):
            return None
        if isinstance(a, nodes.StringNode):
            a, b = b, a
        is_role = (isinstance(a, nodes.FieldNode) and dot_is_message and a.ident == ["Role"]) \
            or (isinstance(a, nodes.VariableNode) and var is not None
                and a.ident == [var, "Role"])
        if not is_role or not isinstance(b, nodes.StringNode):
            return None
        return b.text, op.ident == "eq"

    def visit(lst: nodes.ListNode, role: str, dot_is_message: bool) -> None:
        for n in lst.nodes:
            if refusal:
                return
            if isinstance(n, nodes.ActionNode):
                if n.pipe.decl:
                    if role != OTHER and reads_own(n.pipe, dot_is_message) is not None:
                        held.update(v.ident[0] for v in n.pipe.decl)
                elif role == ASSISTANT and plain(n.pipe, dot_is_message, OWN_FIELDS[:2]):
                    found[id(n)] = None
                elif role == UNKNOWN and plain(n.pipe, dot_is_message, OWN_FIELDS[:2]):
                    found[id(n)] = role_of(n.pipe.cmds[0].args[0])
                elif role != OTHER and (at := reads_own(n.pipe, dot_is_message)) is not None:
                    refuse(at, "a message's content, thinking or tool calls are printed here "
                           "other than as {{ .Content }} or {{ .Thinking }} of the message")
            elif isinstance(n, nodes.IfNode):
                if role != OTHER and n.pipe.decl \
                        and reads_own(n.pipe, dot_is_message) is not None:
                    held.update(v.ident[0] for v in n.pipe.decl)
                test = role_test(n.pipe, dot_is_message)
                then_role, else_role = role, role
                if test is not None:
                    name, equal = test
                    match = ASSISTANT if name == "assistant" else OTHER
                    miss = OTHER if name == "assistant" else role
                    then_role, else_role = (match, miss) if equal else (miss, match)
                visit(n.list, then_role, dot_is_message)
                if n.else_list is not None:
                    visit(n.else_list, else_role, dot_is_message)
            elif isinstance(n, nodes.RangeNode) and role == ASSISTANT \
                    and plain(n.pipe, dot_is_message, ("ToolCalls",)) and n.else_list is None:
                found[id(n)] = None
            elif isinstance(n, nodes.BranchNode):  # with, other ranges: the dot changes
                if role != OTHER and (at := reads_own(n.pipe, dot_is_message)) is not None:
                    refuse(at, "a message's content, thinking or tool calls are read here "
                           "other than as {{ .Content }}, {{ .Thinking }} or a range over "
                           ".ToolCalls of a message known to be the assistant's")
                visit(n.list, role, False)
                if n.else_list is not None:
                    visit(n.else_list, role, dot_is_message)
            elif isinstance(n, nodes.TemplateNode) and role != OTHER:
                refuse(n, "a template called in the chat loop may print the message's text "
                       "(a {% generation %} block inside a macro would be misplaced)")
            elif isinstance(n, nodes.ListNode):
                visit(n, role, dot_is_message)

    visit(loop.list, UNKNOWN, True)
    if refusal:
        return refusal[0]
    if not found:
        return (loop.pos.line, loop.pos.col, "the chat loop prints no {{ .Content }} "
                "of a message known to be the assistant's")
    return found


def _chat_loop(template: nodes.Template) -> nodes.RangeNode | Refusal:
    """The one range over `.Messages` that prints, outside definitions and other ranges (a
    `{% generation %}` block inside a macro would be placed in the macro's own output)."""
    found: list[nodes.RangeNode] = []

    def visit(lst: nodes.ListNode) -> None:
        for n in lst.nodes:
            if isinstance(n, nodes.RangeNode) and is_messages(n.pipe) and prints(n.list):
                found.append(n)
            elif isinstance(n, nodes.IfNode | nodes.WithNode):
                visit(n.list)
                if n.else_list is not None:
                    visit(n.else_list)

    visit(template.root)
    if len(found) != 1:
        return 0, 0, ("no range over .Messages prints the turns at the template's top level"
                      if not found else "more than one range over .Messages prints turns")
    return found[0]
