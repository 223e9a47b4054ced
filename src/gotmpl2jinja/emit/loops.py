"""Go's `range` with `break` and `continue` rewritten for Jinja, which has neither on
every engine: the marker nodes and the rewriting of loop bodies.

May depend on: `emit.values`, `syntax`.
"""

from __future__ import annotations

from dataclasses import dataclass

from gotmpl2jinja.emit.values import Expr
from gotmpl2jinja.syntax import nodes

#: A Jinja `for` nested deeper than this (in one template or macro body) makes jinja2 compile
#: Python that CPython refuses: "too many statically nested blocks" (its limit is 20 blocks).
MAX_LOOP_NESTING = 20


@dataclass
class BreakFlag(nodes.Node):
    """Stands where a Go `break` was: sets the loop's "done" flag (see `without_loop_control`)."""


@dataclass
class LoopWith(nodes.WithNode):
    """A `with` whose branches took the rest of a loop body (see `without_loop_control`):
    in its first branch that rest follows a RestoreDot with the same key."""

    key: int = 0


@dataclass
class RestoreDot(nodes.Node):
    """Where the rest of a loop body starts inside a LoopWith's first branch: `.` (and what is
    known true) is again what it was before the `with`."""

    key: int = 0


def counts_itself(node: nodes.RangeNode) -> bool:
    """Whether a range over a slice may walk it by index. Not when its body calls a defined
    template: on minja a macro runs in its caller's scope and may set the element's name,
    which only a loop variable survives."""
    return not any(isinstance(n, nodes.TemplateNode) for n in node.list.walk())


_LOOP_CONTROL = (nodes.BreakNode, nodes.ContinueNode)


def has_loop_control(lst: list[nodes.Node],
                     kinds: tuple[type[nodes.Node], ...] = _LOOP_CONTROL) -> bool:
    """A `break`/`continue` (of `kinds`) of the current loop (nested ranges have their own)."""
    for node in lst:
        if isinstance(node, kinds):
            return True
        if isinstance(node, (nodes.IfNode, nodes.WithNode)):
            lists = [node.list.nodes] + ([node.else_list.nodes] if node.else_list else [])
            if any(has_loop_control(x, kinds) for x in lists):
                return True
    return False


def else_without_break(else_list: nodes.ListNode) -> nodes.ListNode:
    """A range's else list with its `break`s taken out: the parser counts such a break as the
    enclosing range's, but Go's walkRange consumes a break raised anywhere in its own walk, so
    the else list just ends there and the enclosing range goes on (checked against Go). A
    `continue` there does reach the enclosing range: it is left for the emitter to refuse."""
    if not has_loop_control(else_list.nodes, (nodes.BreakNode,)):
        return else_list
    return nodes.ListNode(nodes=without_loop_control(else_list.nodes, else_list=True),
                          pos=else_list.pos)


def without_loop_control(lst: list[nodes.Node], *, else_list: bool = False
                         ) -> list[nodes.Node]:
    """The loop body rewritten without `continue`/`break`: what follows an `if` whose branch
    continues moves into the branches that do not. @huggingface/jinja drops everything an
    iteration printed before a `continue`/`break`, so the emitted Jinja never uses them;
    a `break` becomes a flag that skips the remaining iterations. In a range's else list
    (`else_list`, see `else_without_break`) a `break` only ends the list."""
    kinds: tuple[type[nodes.Node], ...] = (nodes.BreakNode,) if else_list else _LOOP_CONTROL
    out: list[nodes.Node] = []
    for i, node in enumerate(lst):
        if isinstance(node, nodes.ContinueNode) and not else_list:
            return out
        if isinstance(node, nodes.BreakNode):
            if not else_list:
                out.append(BreakFlag(pos=node.pos))
            return out
        if isinstance(node, nodes.IfNode) and has_loop_control(
                node.list.nodes + (node.else_list.nodes if node.else_list else []), kinds):
            rest = lst[i + 1:]
            then = without_loop_control(node.list.nodes + rest, else_list=else_list)
            other = without_loop_control((node.else_list.nodes if node.else_list else [])
                                         + rest, else_list=else_list)
            out.append(nodes.IfNode(
                pipe=node.pipe, list=nodes.ListNode(nodes=then, pos=node.list.pos),
                else_list=nodes.ListNode(nodes=other, pos=node.pos) if other else None,
                pos=node.pos))
            return out
        if isinstance(node, nodes.WithNode) and has_loop_control([node], kinds):
            # as for `if`, but the rest runs with the dot from before the `with`
            rest, key = lst[i + 1:], id(node)
            then = without_loop_control([*node.list.nodes, RestoreDot(key=key, pos=node.pos),
                                         *rest], else_list=else_list)
            other = without_loop_control((node.else_list.nodes if node.else_list else [])
                                         + rest, else_list=else_list)
            out.append(LoopWith(
                pipe=node.pipe, list=nodes.ListNode(nodes=then, pos=node.list.pos),
                else_list=nodes.ListNode(nodes=other, pos=node.pos) if other else None,
                pos=node.pos, key=key))
            return out
        out.append(node)
    return out


def has_break(lst: list[nodes.Node]) -> bool:
    return any(isinstance(n, BreakFlag) or (
        isinstance(n, (nodes.IfNode, nodes.WithNode)) and (has_break(n.list.nodes) or (
            n.else_list is not None and has_break(n.else_list.nodes))))
        for n in lst)


@dataclass
class Loop:
    """A Jinja `for` being emitted: its id, the Go range node and the collection."""

    ident: int
    node: nodes.RangeNode
    collection: Expr
    break_flag: str | None = None
    index: str = "loop.index0"  # the Jinja of the iteration's index (from 0)
    size: str | None = None  # the Jinja of the collection's length, where the loop counts
