"""The typed AST of a Go `text/template`, mirroring Go's `text/template/parse` nodes.

Every later stage (Ollama's parse-time facts, analysis, emit) reads these nodes, so they stay
plain data: no behaviour beyond iteration. Trim markers are already applied by the parser, so a
`Text` holds exactly the bytes Go would write. Positions are 1-based line and column (in bytes
of UTF-8, as Go counts them) of the node's first character in the source.

May depend on: nothing of the project.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, fields


@dataclass(frozen=True)
class Pos:
    """Where a node starts: byte offset, 1-based line, 1-based column (in bytes, like Go)."""

    offset: int = 0
    line: int = 1
    col: int = 1

    def __str__(self) -> str:
        return f"{self.line}:{self.col}"


@dataclass
class Node:
    """Base class; `pos` is keyword-only so subclasses keep their natural field order."""

    pos: Pos = field(default_factory=Pos, kw_only=True, compare=False)

    def children(self) -> Iterator[Node]:
        """The direct child nodes, in source order."""
        for f in fields(self):
            if f.name == "pos":
                continue
            value = getattr(self, f.name)
            if isinstance(value, Node):
                yield value
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, Node):
                        yield item

    def walk(self) -> Iterator[Node]:
        """This node and all its descendants, depth first, in source order."""
        yield self
        for child in self.children():
            yield from child.walk()


# --- lists and text -------------------------------------------------------------------------


@dataclass
class ListNode(Node):
    nodes: list[Node] = field(default_factory=list)


@dataclass
class TextNode(Node):
    """Literal text, trim markers already applied (may be empty after trimming)."""

    text: str = ""


@dataclass
class CommentNode(Node):
    """`{{/* ... */}}`; `text` is the comment including the `/*` `*/` delimiters, as in Go."""

    text: str = ""


# --- pipelines ------------------------------------------------------------------------------


@dataclass
class VariableNode(Node):
    """`$`, `$x`, `$x.Field.Sub`: ident[0] is the variable name including `$`."""

    ident: list[str] = field(default_factory=list)


@dataclass
class CommandNode(Node):
    """One command of a pipeline: a function/method/field followed by arguments."""

    args: list[Node] = field(default_factory=list)


@dataclass
class PipeNode(Node):
    """`$x := cmd1 | cmd2`: `decl` are the declared/assigned variables, `is_assign` is `=`."""

    decl: list[VariableNode] = field(default_factory=list)
    cmds: list[CommandNode] = field(default_factory=list)
    is_assign: bool = False


@dataclass
class ActionNode(Node):
    """`{{ pipeline }}`: prints the pipeline's value unless it declares/assigns variables."""

    pipe: PipeNode = field(default_factory=PipeNode)


# --- operands -------------------------------------------------------------------------------


@dataclass
class DotNode(Node):
    """`.` — the cursor."""


@dataclass
class FieldNode(Node):
    """`.A.B`: ident is ["A", "B"]."""

    ident: list[str] = field(default_factory=list)


@dataclass
class ChainNode(Node):
    """`(pipeline).A.B` or `$x.A` chained after a non-field operand: node, then field names."""

    node: Node = field(default_factory=DotNode)
    field: list[str] = field(default_factory=list)


@dataclass
class IdentifierNode(Node):
    """A function name: `len`, `json`, `and`."""

    ident: str = ""


@dataclass
class NilNode(Node):
    """The untyped `nil`."""


@dataclass
class BoolNode(Node):
    value: bool = False


@dataclass
class NumberNode(Node):
    """A numeric constant. `text` is the source spelling; the flags say which Go types it fits,
    as Go's parse.NumberNode does (a rune literal like 'a' is an int, and a char)."""

    text: str = ""
    is_int: bool = False
    is_uint: bool = False
    is_float: bool = False
    is_complex: bool = False
    int64: int = 0
    uint64: int = 0
    float64: float = 0.0


@dataclass
class StringNode(Node):
    """A string constant: `quoted` is the source spelling, `text` the unquoted value."""

    quoted: str = ""
    text: str = ""


# --- control structures ---------------------------------------------------------------------


@dataclass
class BranchNode(Node):
    """Common shape of if/range/with: `else_list` is None when there is no `{{ else }}`.
    An `{{ else if … }}` / `{{ else with … }}` is an else_list holding a single If/With node,
    exactly as Go builds it."""

    pipe: PipeNode = field(default_factory=PipeNode)
    list: ListNode = field(default_factory=ListNode)
    else_list: ListNode | None = None


@dataclass
class IfNode(BranchNode):
    pass


@dataclass
class RangeNode(BranchNode):
    pass


@dataclass
class WithNode(BranchNode):
    pass


@dataclass
class BreakNode(Node):
    pass


@dataclass
class ContinueNode(Node):
    pass


@dataclass
class TemplateNode(Node):
    """`{{ template "name" pipeline }}` (pipe is None without an argument). A `{{ block }}`
    becomes a TemplateNode plus a definition, as in Go; `from_block` records that."""

    name: str = ""
    pipe: PipeNode | None = None
    from_block: bool = False


@dataclass
class Template:
    """A parsed template set: the root tree plus every `define`d / `block` tree by name.

    `source` is the original text and `name` the file name used in error messages."""

    root: ListNode
    defines: dict[str, ListNode] = field(default_factory=dict)
    source: str = ""
    name: str = "template"

    def trees(self) -> Iterator[tuple[str, ListNode]]:
        """The root (named "") and every definition, like Go's Template.Templates()."""
        yield "", self.root
        yield from self.defines.items()
