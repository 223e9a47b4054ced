"""The Hugging Face flags: where a template's "generation prompt" and "closed final turn" are.

Ollama renders the last message as the last one: a chat template's range over `.Messages`
prints, for it, what it prints only because no message follows (the assistant header after a
user message, an assistant turn left open). A Hugging Face host asks for that with
`add_generation_prompt`; without it, the conversation is rendered as Go renders it when another
message follows, cut where that message's turn would begin (`docs/equivalence-contract.md`, the
host's flags). In the Jinja that is two things, decided here from the AST: the loop's "this is
the last message" facts hold only under `add_generation_prompt`, and what the template prints
after that loop is printed only under it. `verify.closed` asks Go the same question (a marked
turn boundary and one more message) so that both are checked, never guessed.

May depend on: `syntax`.
"""

from __future__ import annotations

from dataclasses import dataclass

from gotmpl2jinja.syntax import nodes

#: The role of the message `verify.closed` adds after the conversation (its NEXT_MESSAGE).
NEXT_ROLE = "next-turn"

#: The reason every legacy template gives (it has no range over .Messages).
LEGACY = ("it has no .Messages (Ollama renders each turn with .Prompt and .Response, and the "
          "last turn's openness is its own)")


@dataclass(frozen=True)
class ChatLoop:
    """The range over `.Messages` that prints the turns, and whether output follows it."""

    node: nodes.RangeNode
    #: The loop and the `if .Messages` around it (by id): what is printed after any of them
    #: is the generation prompt's part
    path: frozenset[int] = frozenset()
    #: The `gt` commands that are an if's whole condition in the loop: `gt (len (slice
    #: .Messages $i)) 1` there is "not the last message", which the flags change; elsewhere
    #: (`and (gt …) (index $rest 1)`) it guards reading the next message and stays as it is.
    not_last_tests: frozenset[int] = frozenset()


def is_messages(pipe: nodes.PipeNode) -> bool:
    """`.Messages` or `$.Messages`, alone in the range's pipeline."""
    if len(pipe.cmds) != 1 or len(pipe.cmds[0].args) != 1:
        return False
    arg = pipe.cmds[0].args[0]
    return (isinstance(arg, nodes.FieldNode) and arg.ident == ["Messages"]) \
        or (isinstance(arg, nodes.VariableNode) and arg.ident == ["$", "Messages"])


def prints(node: nodes.Node) -> bool:
    """Whether running `node` may write anything (assignments and comments do not)."""
    for n in node.walk():
        if isinstance(n, nodes.TextNode) and n.text:
            return True
        if isinstance(n, nodes.ActionNode) and not n.pipe.decl:
            return True
        if isinstance(n, nodes.TemplateNode):
            return True
    return False


def chat_loop(template: nodes.Template) -> ChatLoop | str:
    """The template's chat loop, or why the flags cannot be honoured (a sentence)."""
    if not any(isinstance(n, nodes.FieldNode | nodes.VariableNode) and "Messages" in n.ident
               for _, tree in template.trees() for n in tree.walk()):
        return LEGACY
    found: list[tuple[nodes.RangeNode, list[nodes.Node]]] = []

    def visit(lst: nodes.ListNode, chain: list[nodes.Node], defined: bool) -> None:
        for node in lst.nodes:
            if isinstance(node, nodes.RangeNode) and is_messages(node.pipe) \
                    and prints(node.list):
                found.append((node, chain if not defined else [*chain, lst]))
            if isinstance(node, nodes.BranchNode):
                visit(node.list, [*chain, node], defined)
                if node.else_list is not None:
                    visit(node.else_list, [*chain, node], defined)

    visit(template.root, [], False)
    for body in template.defines.values():
        visit(body, [], True)
    if not found:
        return "no range over .Messages prints the turns"
    if len(found) > 1:
        line, col = found[1][0].pos.line, found[1][0].pos.col
        return f"{line}:{col}: more than one range over .Messages prints turns"
    node, chain = found[0]
    where = f"{node.pos.line}:{node.pos.col}: "
    if any(not isinstance(c, nodes.IfNode) or not is_messages(c.pipe) for c in chain):
        return where + ("the range over .Messages is inside a definition, another range, or "
                        "an if or with on something else than .Messages")
    other = _stops_early(node) or _assigns_elsewhere(template, node) \
        or _other_reading(template, node) or _prints_after_last_test(node)
    if other is not None:
        return other
    tests = frozenset(id(branch.pipe.cmds[0]) for branch in node.list.walk()
                      if isinstance(branch, nodes.IfNode) and len(branch.pipe.cmds) == 1
                      and not branch.pipe.decl and branch.pipe.cmds[0].args
                      and isinstance(branch.pipe.cmds[0].args[0], nodes.IdentifierNode)
                      and branch.pipe.cmds[0].args[0].ident == "gt")
    return ChatLoop(node, frozenset(id(n) for n in [*chain, node]), tests)


def _is_messages_node(node: nodes.Node) -> bool:
    return (isinstance(node, nodes.FieldNode) and node.ident == ["Messages"]) \
        or (isinstance(node, nodes.VariableNode) and node.ident == ["$", "Messages"])


def _parents(template: nodes.Template) -> dict[int, nodes.Node]:
    """Each node's parent (by id), over the root and every definition."""
    found: dict[int, nodes.Node] = {}
    for _, tree in template.trees():
        for parent in tree.walk():
            for child in parent.children():
                found[id(child)] = parent
    return found


def _other_reading(template: nodes.Template, loop: nodes.RangeNode) -> str | None:
    """Why the flags cannot be honoured where the template reads the messages other than by
    ranging over them, testing them, or cutting the rest off in the chat loop: the closed
    rendering adds a message there (`verify.closed`), which such a reading would see (a
    message count, the final message's role); None where it does not."""
    parents = _parents(template)
    inside = {id(n) for n in loop.list.walk()}
    rests: set[str] = set()  # variables holding `slice $.Messages $i` in the chat loop
    for n in loop.list.walk():
        if isinstance(n, nodes.PipeNode) and n.decl and len(n.cmds) == 1 \
                and _is_rest(n.cmds[0]):
            rests.update(v.ident[0] for v in n.decl)
    for _, tree in template.trees():
        for n in tree.walk():
            if _is_messages_node(n):
                cmd = parents.get(id(n))
                pipe = parents.get(id(cmd)) if cmd is not None else None
                holder = parents.get(id(pipe)) if pipe is not None else None
                alone = isinstance(cmd, nodes.CommandNode) and len(cmd.args) == 1
                if alone and isinstance(holder, nodes.BranchNode) and holder.pipe is pipe:
                    continue  # ranged over, or tested
                if isinstance(cmd, nodes.CommandNode) and _is_rest(cmd) \
                        and id(cmd) in inside:
                    continue  # the rest of the messages, in the chat loop
                return (f"{n.pos.line}:{n.pos.col}: the template reads .Messages another way "
                        "than ranging over them (a count, a message by its index)")
            if isinstance(n, nodes.CommandNode) and len(n.args) == 2 and id(n) in inside \
                    and isinstance(n.args[0], nodes.IdentifierNode) and n.args[0].ident == "len":
                arg = n.args[1]
                rest = (isinstance(arg, nodes.PipeNode) and len(arg.cmds) == 1
                        and _is_rest(arg.cmds[0])) \
                    or (isinstance(arg, nodes.VariableNode) and arg.ident[0] in rests)
                if rest and not _compared_with_one(n, parents):
                    return (f"{n.pos.line}:{n.pos.col}: the chat loop counts the messages "
                            "left other than to ask whether this is the last one")
    return None


def _assigns_elsewhere(template: nodes.Template, loop: nodes.RangeNode) -> str | None:
    """Why not, where another range over .Messages (before the chat loop, inside it, in a
    definition) assigns a variable other than under a test of the message's role against a
    literal: it also walks the message added after the conversation (role `next-turn`), so
    what it leaves may differ in the closed rendering before the cut (`$r = .Role` ends as
    that message's role). The usual loop that finds the last user message (`if eq .Role
    "user"`) is not such a loop. None where there is none."""
    for _, tree in template.trees():
        for n in tree.walk():
            if isinstance(n, nodes.RangeNode) and n is not loop and is_messages(n.pipe):
                elem = {v.ident[0] for v in n.pipe.decl[-1:]}
                assigned = _unguarded_assignment(n.list, elem, dot_is_elem=True)
                if assigned is not None:
                    return (f"{assigned.pos.line}:{assigned.pos.col}: another range over "
                            ".Messages assigns a variable (it walks the message after the "
                            "conversation too)")
    return None


def _unguarded_assignment(lst: nodes.ListNode | None, elem: set[str], *, dot_is_elem: bool,
                          guarded: bool = False) -> nodes.PipeNode | None:
    """The first assignment in `lst` not inside an if that tests the element's role against
    literals (`eq .Role "user"`, also within `and`)."""
    for n in lst.nodes if lst is not None else ():
        pipe = getattr(n, "pipe", None)
        if isinstance(pipe, nodes.PipeNode) and pipe.is_assign and not guarded:
            return pipe
        if isinstance(n, nodes.IfNode):
            tested = guarded or _tests_role(n.pipe, elem, dot_is_elem)
            found = _unguarded_assignment(n.list, elem, dot_is_elem=dot_is_elem,
                                          guarded=tested) \
                or _unguarded_assignment(n.else_list, elem, dot_is_elem=dot_is_elem,
                                         guarded=guarded)
        elif isinstance(n, nodes.BranchNode):  # with, range: `.` is something else inside
            found = _unguarded_assignment(n.list, elem, dot_is_elem=False, guarded=guarded) \
                or _unguarded_assignment(n.else_list, elem, dot_is_elem=dot_is_elem,
                                         guarded=guarded)
        elif isinstance(n, nodes.ListNode):
            found = _unguarded_assignment(n, elem, dot_is_elem=dot_is_elem, guarded=guarded)
        else:
            found = None
        if found is not None:
            return found
    return None


def _tests_role(pipe: nodes.PipeNode, elem: set[str], dot_is_elem: bool) -> bool:
    """`eq R "a" …` (every literal other than the added message's role) or an `and` with
    such an operand, R being the element's `.Role`."""
    if pipe.decl or len(pipe.cmds) != 1:
        return False
    args = pipe.cmds[0].args
    head = args[0] if args else None
    if not isinstance(head, nodes.IdentifierNode):
        return len(args) == 1 and isinstance(head, nodes.PipeNode) \
            and _tests_role(head, elem, dot_is_elem)
    if head.ident == "and":
        return any(isinstance(a, nodes.PipeNode) and _tests_role(a, elem, dot_is_elem)
                   for a in args[1:])
    if head.ident != "eq" or len(args) < 3:
        return False

    def role(a: nodes.Node) -> bool:
        return (dot_is_elem and isinstance(a, nodes.FieldNode) and a.ident == ["Role"]) \
            or (isinstance(a, nodes.VariableNode) and len(a.ident) == 2
                and a.ident[0] in elem and a.ident[1] == "Role")

    def added(a: nodes.Node) -> str | None:
        """What `a` is for the added message: its role, or a prefix of it (`slice .Role 0
        7`, as Granite tests "control"); None for anything else."""
        if role(a):
            return NEXT_ROLE
        if isinstance(a, nodes.PipeNode) and len(a.cmds) == 1 and not a.decl:
            parts = a.cmds[0].args
            if len(parts) == 4 and isinstance(parts[0], nodes.IdentifierNode) \
                    and parts[0].ident == "slice" and role(parts[1]) \
                    and all(isinstance(x, nodes.NumberNode) and x.is_int for x in parts[2:]):
                start, end = (x.int64 for x in parts[2:])  # type: ignore[union-attr]
                if 0 <= start <= end <= len(NEXT_ROLE):
                    return NEXT_ROLE[start:end]
        return None

    value = added(args[1])
    return value is not None and all(isinstance(a, nodes.StringNode) and a.text != value
                                     for a in args[2:])


def _stops_early(loop: nodes.RangeNode) -> str | None:
    """Why not, where the chat loop has a `break` of its own (not an inner range's): the loop
    may stop before the message added after the conversation, which then has no turn to cut
    at (the closed rendering is not defined); None where it has none."""

    def first_break(lst: nodes.ListNode | None) -> nodes.BreakNode | None:
        for n in lst.nodes if lst is not None else ():
            if isinstance(n, nodes.BreakNode):
                return n
            if isinstance(n, nodes.IfNode | nodes.WithNode):
                found = first_break(n.list) or first_break(n.else_list)
                if found is not None:
                    return found
        return None  # (an inner range's break, even in its else, ends that range only)

    found = first_break(loop.list)
    if found is None:
        return None
    return (f"{found.pos.line}:{found.pos.col}: the chat loop can stop early ({{{{ break }}}}), "
            "before the message after the conversation has a turn")


def _prints_after_last_test(loop: nodes.RangeNode) -> str | None:
    """Why not, where the final message prints something after an if that asks whether it is
    the last one (`if and $last .Thinking` before the content): its closed turn would differ
    from Ollama's before the turn's end, so neither Ollama's prefill (a closed turn cut after
    the content) nor the generation prompt (what Ollama adds after the closed turn) exists
    there; None where every such if comes after what the turn prints."""
    last_vars: set[str] = set()
    for n in loop.list.walk():
        if isinstance(n, nodes.PipeNode) and n.decl and _asks_last(n, last_vars):
            last_vars.update(v.ident[0] for v in n.decl)
    found: list[str] = []

    def visit(lst: nodes.ListNode, gate: nodes.IfNode | None) -> nodes.IfNode | None:
        """Walk `lst` in order with the last test already met (`gate`); the test met by its
        end. An if's branches are alternatives: a test in one does not reach the other."""
        for n in lst.nodes:
            if found:
                break
            if isinstance(n, nodes.IfNode) and _asks_last(n.pipe, last_vars):
                gate = gate or n
            elif isinstance(n, nodes.BranchNode):
                met = [visit(b, gate) for b in (n.list, n.else_list) if b is not None]
                gate = gate or next((m for m in met if m is not None), None)
            elif gate is not None and prints(n):
                found.append(f"{gate.pos.line}:{gate.pos.col}: the last message prints "
                             f"something ({n.pos.line}:{n.pos.col}) after this test of being "
                             "the last one")
        return gate

    visit(loop.list, None)
    return found[0] if found else None


def _asks_last(pipe: nodes.PipeNode, last_vars: set[str]) -> bool:
    """The pipeline compares the messages left with 1, or reads a variable that does."""
    for n in pipe.walk():
        if isinstance(n, nodes.VariableNode) and n.ident and n.ident[0] in last_vars \
                and n not in pipe.decl:
            return True
        if isinstance(n, nodes.CommandNode) and len(n.args) == 3 \
                and isinstance(n.args[0], nodes.IdentifierNode) \
                and n.args[0].ident in ("eq", "gt") and isinstance(n.args[1], nodes.PipeNode) \
                and n.args[1].cmds and n.args[1].cmds[0].args \
                and isinstance(n.args[1].cmds[0].args[0], nodes.IdentifierNode) \
                and n.args[1].cmds[0].args[0].ident == "len":
            return True
    return False


def _is_rest(cmd: nodes.CommandNode) -> bool:
    """`slice .Messages …`: the messages from one on."""
    return len(cmd.args) >= 2 and isinstance(cmd.args[0], nodes.IdentifierNode) \
        and cmd.args[0].ident == "slice" and _is_messages_node(cmd.args[1])


def _compared_with_one(length: nodes.CommandNode, parents: dict[int, nodes.Node]) -> bool:
    """The count is `eq … 1` or `gt … 1`, the last-message tests the flags change."""
    pipe = parents.get(id(length))
    cmd = parents.get(id(pipe)) if pipe is not None else None
    if not isinstance(cmd, nodes.CommandNode) or len(cmd.args) != 3:
        return False
    op, left, right = cmd.args
    return isinstance(op, nodes.IdentifierNode) and op.ident in ("eq", "gt") \
        and left is pipe and isinstance(right, nodes.NumberNode) and right.text == "1"


def honoured(template: nodes.Template) -> str | None:
    """None when the translation honours `add_generation_prompt`, else why not."""
    found = chat_loop(template)
    return found if isinstance(found, str) else None
