"""Go template AST → portable, readable Jinja that renders Ollama's exact bytes.

The emitted template carries Ollama's behaviour itself: a short prelude computes Ollama's values
(collated messages, `.System`, the think values) from the contract's variables, then the body
follows the Go template node for node. Expressions are translated by Go type (see
`analysis.GoType`): the type decides how a value prints, compares and tests for truth, so the
Jinja never depends on an engine's own printing of booleans, numbers or none.

Portable dialect only (jinja-portability.md §3): every tag is left-trimmed, every byte of
template text is a string literal inside an expression, so the output does not depend on
trim_blocks/lstrip_blocks. Anything that cannot be expressed faithfully raises
TranslationError naming the construct; a Go execution error becomes `raise_exception`.
"""

from __future__ import annotations

import difflib
import math
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from decimal import Decimal

from gotmpl2jinja.analysis.scopes import (
    FIELDS,
    MAP_VALUES,
    MIXABLE,
    ROOT_FIELDS,
    SLICE_ELEMENTS,
    STRUCTS,
    UNMODELLED_FIELDS,
    Analysis,
    GoType,
    Variable,
    analyze,
    jinja_identifier,
    messages_alike_when_nil,
)
from gotmpl2jinja.emit import runtime
from gotmpl2jinja.emit.gofmt import VALID_VERBS, Verb, parse_printf
from gotmpl2jinja.emit.runtime import item_or, sorted_items
from gotmpl2jinja.errors import TranslationError
from gotmpl2jinja.ollama.capabilities import has_thinking
from gotmpl2jinja.parse import nodes

INDENT = "    "

# Jinja operator precedence, loosest first; an operand looser than its context gets parens.
COND, OR, AND, NOT, COMPARE, ARITH, CONCAT, ATOM = range(8)

#: A message's content as Ollama's template sees it: llama-server passes an empty content as
#: null (a Hugging Face caller passes the string), and Go's is then "".
def content_of(message: str) -> str:
    """The content of the message `message` as Ollama reads it: a content that is not a
    string (llama-server's null for an empty one) is ''."""
    return f"({message}['content'] if {message}['content'] is string else '')"


MESSAGE_CONTENT = content_of("message")

#: The keys of a request's message that Ollama's struct has and that may be left out, each with
#: the value Go's zero prints like (in the order of api.Message's fields).
MESSAGE_DEFAULTS = {"reasoning_content": "''", "tool_calls": "[]", "name": "''",
                    "tool_call_id": "''"}
OPTIONAL_MESSAGE_KEYS = tuple(MESSAGE_DEFAULTS)


def merges_into_previous(at: str, role: str) -> str:
    """Ollama's collate merges message `at` (its role `role`, lower-cased) into the one before
    when their lower-cased roles are equal, tool messages excepted."""
    return f"{at} > 0 and {role} != 'tool' and messages[{at} - 1]['role']|lower == {role}"


def system_join(collated: bool) -> list[str]:
    """Ollama's .System: the content of every system message, joined by a blank line (each is
    written after one, and the first one cut off). After collate every role is in lower case
    already, so only a prelude without it lower-cases them (a filter call per message is dear
    on llama.cpp)."""
    role = "message['role']" if collated else "message['role']|lower"
    return [
        "{#- Ollama's .System: every system message, joined. #}",
        "{%- set system %}",
        "{%- for message in messages %}",
        f"    {{%- if {role} == 'system' %}}",
        f"        {{{{- '\\n\\n' ~ {MESSAGE_CONTENT} }}}}",
        "    {%- endif %}",
        "{%- endfor %}",
        "{%- endset %}",
        "{%- set system = system[2:] %}",
    ]


#: Runtime macros (gotmpl2jinja.emit.runtime) that print Go values exactly.
JSON_MACROS = {
    GoType.STRING: "json_string",
    GoType.TOOLS: "json_tools",
    GoType.TOOL: "json_tool",
    GoType.TOOL_FUNCTION: "json_function",
    GoType.PARAMETERS: "json_parameters",
    GoType.PROPERTIES: "json_properties",
    GoType.PROPERTY: "json_property",
    GoType.ARGS: "json_value",
    GoType.ANY: "json_value",
    GoType.STRINGS: "json_value",
    GoType.ANYS: "json_value",
    GoType.FLOAT: "json_number",
    GoType.TOOL_CALL: "json_tool_call",
    GoType.TOOL_CALLS: "json_tool_calls",
    GoType.MESSAGE: "json_message",
    GoType.MESSAGES: "json_messages",
}


#: The Go types text/template's eq/lt compare by value (its "basic kinds"; ANY may hold one).
BASIC_KINDS = {GoType.STRING, GoType.INT, GoType.FLOAT, GoType.BOOL, GoType.ANY}

#: Go's nil values: a missing key of the root map and a template's nil argument.
NIL_TYPES = {GoType.NIL, GoType.NO_DATA}

#: Go types of one kind that is not basic (struct, pointer, slice, map): eq/lt fail on them
#: by their kind alone, whatever value they hold (ANY, MIXED and CHOICE are known only later).
NON_BASIC = {
    GoType.MESSAGES, GoType.MESSAGE, GoType.TOOL_CALLS, GoType.TOOL_CALL, GoType.CALL_FUNCTION,
    GoType.ARGS, GoType.TOOLS, GoType.TOOL, GoType.TOOL_FUNCTION, GoType.PARAMETERS,
    GoType.PROPERTIES, GoType.PROPERTY, GoType.PROPERTY_TYPE, GoType.STRINGS, GoType.ANYS,
}

#: Struct types whose Go type is not comparable (each holds a map or a slice): eq of two of
#: them fails ("non-comparable type") whatever they hold.
INCOMPARABLE_STRUCTS = {
    GoType.TOOL_CALL, GoType.CALL_FUNCTION, GoType.TOOL, GoType.TOOL_FUNCTION,
    GoType.PARAMETERS, GoType.PROPERTY,
}

#: Slices and maps whose Go nil-ness the contract's variables tell (as the json_* macros
#: print it: `null`): the Jinja test for nil of each. eq of two nil ones is true; of a nil
#: and a non-nil one false; of two non-nil ones an error (slices and maps are not comparable).
NIL_TESTS = {
    GoType.MESSAGES: "{a}|length == 0",
    GoType.TOOL_CALLS: "{c} is not defined or {c} is none or {a}|length == 0",
    GoType.TOOLS: "{c} is not defined or {c} is none",
    GoType.PROPERTIES: "{c} is not defined or {c} is none",
    GoType.ARGS: "{c} is not defined or {c} is none",
}

#: The types eq/ne of two values of one type compares by nil-ness or fails (compare_by_nil).
COMPARED_BY_NIL = INCOMPARABLE_STRUCTS | set(NIL_TESTS)

#: Types with a String() method (Ollama's JSON printers; PropertyType's own): fmt prints
#: String() for %v, %s, %q, %x and %X (handleMethods), formatted as a string.
STRINGERS = {
    GoType.ARGS, GoType.PROPERTIES, GoType.TOOLS, GoType.TOOL, GoType.TOOL_FUNCTION,
    GoType.PARAMETERS, GoType.PROPERTY_TYPE,
}

#: Go's names of the operand types printf prints by themselves (%T, %!d(string=…), EXTRA).
GO_TYPE_NAMES = {GoType.STRING: "string", GoType.INT: "int", GoType.BOOL: "bool",
                 GoType.FLOAT: "float64"}

#: Root fields of the fill-in-the-middle path besides Response and the think values.
FIM_FIELDS = {"Prompt": "prompt", "Suffix": "suffix"}

#: Root fields whose value is the same in the fill-in-the-middle path as in a chat. `.Messages`
#: is not one of them: it is Go's nil there, not an empty list (`len` fails, it prints
#: `<no value>`); see analysis.messages_alike_when_nil for when that cannot show.
PATH_NEUTRAL_FIELDS = {"Response", "Think", "ThinkLevel", "IsThinkSet"}

#: Ollama's fill-in-the-middle condition (`Prompt != "" && Suffix != ""`, §3) on the contract's
#: variables: passed only for a fill-in-the-middle request, and tested for being non-empty too
#: so that a host passing empty strings gets the chat path, as Ollama would.
FIM_CONDITION = "prompt is defined and suffix is defined and prompt and suffix"
#: Its negation, for a template whose fill-in-the-middle rendering is empty.
CHAT_CONDITION = "prompt is not defined or suffix is not defined or not prompt or not suffix"


#: Characters a name may not carry into a Jinja comment as they are: what could close the
#: comment or open a tag on some engine, the escape character itself, and line breaks.
_UNSAFE_IN_COMMENT = set("{}#%\\")


def header_name(name: str) -> str:
    """`name` (a file name, `<stdin>`, `ollama:NAME`) as data for the header comment.

    Nothing from outside the template's text becomes Jinja code: `{`, `}`, `#`, `%`, `\\` and
    every non-printable character are percent-encoded (UTF-8 bytes), so the name can neither
    close the comment nor open a tag. An absolute path, or one climbing with `..`, is cut to
    its last component: the user's directories stay out of published files."""
    if not name.startswith("ollama:"):
        parts = re.split(r"[\\/]", name)
        if name.startswith(("/", "\\", "~")) or re.match(r"[A-Za-z]:", name) or ".." in parts:
            name = parts[-1]
    return "".join(
        ch if ch.isprintable() and ch not in _UNSAFE_IN_COMMENT
        else "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        for ch in name)


def fim_branch(fim_lines: list[str], chat_lines: list[str]) -> list[str]:
    """Wrap a chat rendering with Ollama's fill-in-the-middle path.

    The path depends on the request, not on the template (Ollama takes it whenever prompt and
    suffix are non-empty), so every template needs the branch unless its two renderings cannot
    differ. `fim_lines` are rendered at depth 1, `chat_lines` at depth 0; empty `fim_lines`
    give a single `if` around the chat. The two renderings mostly share their first
    statements (variables, a system block): `merge_paths` writes those once."""
    if not fim_lines:
        return ["{#- Ollama's fill-in-the-middle path: a request with a prompt and a suffix"
                " renders the whole template once, to nothing here. #}",
                f"{{%- if {CHAT_CONDITION} %}}", *(INDENT + line for line in chat_lines),
                "{%- endif %}"]
    merged, shared = merge_paths([line.removeprefix(INDENT) for line in fim_lines], chat_lines,
                                 FIM_CONDITION, CHAT_CONDITION)
    if not shared:
        return ["{#- Ollama's fill-in-the-middle path: a request with a prompt and a suffix"
                " renders the whole template once. #}", *merged]
    return ["{#- Ollama's fill-in-the-middle path (a request with a prompt and a suffix renders"
            " the whole template once) shares this body: what one path alone renders stands in"
            " an if of that path. #}", *merged]


def merge_paths(first: list[str], second: list[str], first_if: str,
                second_if: str) -> tuple[list[str], bool]:
    """Two renderings (lines at depth 0) of which a request takes one, `first` where
    `first_if` holds and `second` where `second_if` (its negation) does, as one: each
    statement both have is written once, the others stand in an `if` of their path. Run on
    either path, the statements are exactly that path's, in its order (no engine scopes a
    `set` inside an `if`); the conditions must not change while it runs. Returns the lines
    and whether any statement was shared."""
    a, b = statements(first), statements(second)
    out: list[str] = []
    shared = False
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        only_a = [INDENT + line for stmt in a[a0:a1] for line in stmt]
        only_b = [INDENT + line for stmt in b[b0:b1] for line in stmt]
        if op == "equal":
            shared = True
            out += [line for stmt in b[b0:b1] for line in stmt]
        elif op == "delete":
            out += [f"{{%- if {first_if} %}}", *only_a, "{%- endif %}"]
        elif op == "insert":
            out += [f"{{%- if {second_if} %}}", *only_b, "{%- endif %}"]
        else:
            out += [f"{{%- if {first_if} %}}", *only_a, "{%- else %}", *only_b, "{%- endif %}"]
    return out, shared


def statements(lines: list[str]) -> list[tuple[str, ...]]:
    """Emitted lines at depth 0 cut into top-level statements, each with its nested lines."""
    out: list[list[str]] = []
    for line in lines:
        closing = line.startswith(("{%- end", "{%- else", "{%- elif"))
        if out and (closing or not line.startswith("{")):  # nested (indented) or a closing tag
            out[-1].append(line)
        else:
            out.append([line])
    return [tuple(stmt) for stmt in out]


@dataclass(frozen=True)
class Expr:
    """A translated Go value: Jinja code plus the Go type that decides its behaviour."""

    code: str
    type: GoType
    prec: int = ATOM
    const: object = None  # the Python value of a Go constant (str/int/float/bool), else None
    is_const: bool = False
    stable: bool = False  # safe to inline where a variable would be read (no later change)
    loop: int | None = None  # id of the loop whose `loop.*` it reads
    maybe_undefined: bool = False  # may be undefined or none (Go: nil map/slice/any)
    revindex: bool = False  # the length of the rest of the collection a loop walks
    slice_of: tuple[Expr, Expr] | None = None  # (collection, start) for `slice x i`
    owner: str | None = None  # code of the struct a field was read from (for String())
    negated: str | None = None  # a tidier Jinja code for `not` of it (`a != b` for `a == b`)
    alts: tuple[GoType, ...] = ()  # the Go types a MIXED value may have
    non_negative: bool = False  # an INT that is never below 0 (a length, a range index …)
    bytes_of: Expr | None = None  # `len` of this runtime string: a UTF-8 byte count (see
    #   Emitter.compare_byte_length; its code is a refusal if used any other way)
    known_bytes: Expr | None = None  # a STRING whose UTF-8 byte length this INT gives exactly
    cut: tuple[str, str, str] | None = None  # a go_slice: its string, start and end codes
    choice: Choice | None = None  # a CHOICE: which operand of an and/or Go's value is

    def wrap(self, prec: int) -> str:
        """The code, parenthesised when looser than the context `prec`."""
        return self.code if self.prec >= prec else f"({self.code})"


@dataclass(frozen=True)
class Choice:
    """The value of an `and`/`or` whose deciding operands have different Go types: Go's value
    is `branches[i][1]` for the first `branches[i][0]` (a Jinja test) that holds, else the last
    one's. Printing, truth and every function lift over the branches (each branch keeps its own
    Go type); any other use of the value is refused, since its code is a refusal."""

    branches: tuple[tuple[str | None, Expr], ...]
    truth: Expr  # Go's truth of the value (Jinja's and/or of the operands' truths)


#: A Jinja `for` nested deeper than this (in one template or macro body) makes jinja2 compile
#: Python that CPython refuses: "too many statically nested blocks" (its limit is 20 blocks).
MAX_LOOP_NESTING = 20


def float_literal(value: float) -> str:
    """A float64 as a Jinja literal every engine reads back as that float: plain decimals
    (minja and llama.cpp cannot parse `1e+21`, @huggingface/jinja reads it as `1e + 21`),
    with the shortest digits that round-trip."""
    if value != 0 and abs(value) < sys.float_info.min:
        # a subnormal: llama.cpp's std::stod refuses its literal, so it is computed, exactly
        # (a whole number of 2**-1074: an integer over 2**52, times the least normal float)
        steps = int(math.ldexp(abs(value), 1074))
        least = format(Decimal(repr(sys.float_info.min)), "f")
        return f"({'-' if value < 0 else ''}{steps}.0 / 4503599627370496.0 * {least})"
    text = repr(value)
    if "e" in text:
        text = format(Decimal(text), "f")
    return text if "." in text else text + ".0"


def const_expr(value: object) -> Expr:
    """A Go constant as a Jinja literal."""
    if isinstance(value, bool):
        return Expr("true" if value else "false", GoType.BOOL, const=value, is_const=True,
                    stable=True)
    if isinstance(value, int):
        return Expr(str(value), GoType.INT, ATOM if value >= 0 else ARITH, const=value,
                    is_const=True, stable=True, non_negative=value >= 0)
    if isinstance(value, float):
        return Expr(float_literal(value), GoType.FLOAT, ATOM if value >= 0 else ARITH,
                    const=value, is_const=True, stable=True)
    assert isinstance(value, str)
    return Expr(quote(value), GoType.STRING, const=value, is_const=True, stable=True)


def _or_minus_one(value: int | None) -> str:
    """A printf width or precision for the runtime macros: -1 when absent."""
    return "-1" if value is None else str(value)


def quote(text: str) -> str:
    """A Jinja string literal for `text` (escapes only what every engine reads the same)."""
    q = "'" if "'" not in text or '"' in text else '"'
    out = text.replace("\\", "\\\\").replace(q, "\\" + q)
    out = out.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return q + out + q


def go_float(value: float) -> str:
    """Go's `%v` of a float64 constant: shortest digits, exponent form iff exp < -4 or >= 6."""
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    exp10 = int(exp_text) if exp_text else 0
    whole, _, frac = mantissa.partition(".")
    if whole != "0":
        point = len(whole) + exp10
    else:
        point = exp10 - (len(frac) - len(frac.lstrip("0")))
    digits = (whole + frac).lstrip("0").rstrip("0") or "0"
    exponent = point - 1
    if exponent < -4 or exponent >= 6:
        m = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{m}e{'+' if exponent >= 0 else '-'}{abs(exponent):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def _go_hex_float(value: float, verb: Verb) -> str:
    """Go's %x/%X of a float64 constant (strconv's 'x' format, shortest): `0x1.8p+00`, the
    mantissa normalised to a leading 1 (subnormals too), the exponent in at least two digits;
    then fmtFloat's sign flags and padding (zeros after the sign)."""
    if value == 0:
        body = "0x0p+00"
    else:
        fraction, exponent = math.frexp(abs(value))  # abs(value) = fraction * 2**exponent
        bits = int(fraction * 2.0**53) - (1 << 52)  # the 52 bits after the leading 1
        digits = f"{bits:013x}".rstrip("0")
        body = f"0x1{'.' + digits if digits else ''}p{'+' if exponent > 0 else '-'}" \
            f"{abs(exponent - 1):02d}"
    negative = math.copysign(1.0, value) < 0
    sign = "-" if negative else "+" if verb.has("+") else " " if verb.has(" ") else ""
    width = verb.width or 0
    if verb.has("0") and not verb.has("-") and width > len(sign + body):
        text = sign + "0" * (width - len(sign + body)) + body
    elif verb.has("-"):
        text = (sign + body).ljust(width)
    else:
        text = (sign + body).rjust(width)
    return text.upper() if verb.verb == "X" else text


def _js_ascii(text: str) -> str | None:
    """Go's JSEscapeString of an ASCII text (None beyond ASCII, where Go asks
    unicode.IsPrint)."""
    if not text.isascii():
        return None
    special = {"\\": "\\\\", "'": "\\'", '"': '\\"', "<": "\\u003C", ">": "\\u003E",
               "&": "\\u0026", "=": "\\u003D"}
    return "".join(special.get(c, f"\\u00{ord(c):02X}" if c < " " else c) for c in text)


def _query_escape(text: str) -> str:
    """Go's url.QueryEscape of a text known here: unreserved bytes kept, space as `+`, every
    other UTF-8 byte as %XX."""
    keep = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")
    return "".join(chr(b) if b in keep else "+" if b == 0x20 else f"%{b:02X}"
                   for b in text.encode("utf-8"))


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


def has_loop_control(lst: list[nodes.Node]) -> bool:
    """A `break`/`continue` of the current loop (nested ranges have their own)."""
    for node in lst:
        if isinstance(node, (nodes.BreakNode, nodes.ContinueNode)):
            return True
        if isinstance(node, (nodes.IfNode, nodes.WithNode)):
            lists = [node.list.nodes] + ([node.else_list.nodes] if node.else_list else [])
            if any(has_loop_control(x) for x in lists):
                return True
    return False


def without_loop_control(lst: list[nodes.Node]) -> list[nodes.Node]:
    """The loop body rewritten without `continue`/`break`: what follows an `if` whose branch
    continues moves into the branches that do not. @huggingface/jinja drops everything an
    iteration printed before a `continue`/`break`, so the emitted Jinja never uses them;
    a `break` becomes a flag that skips the remaining iterations."""
    out: list[nodes.Node] = []
    for i, node in enumerate(lst):
        if isinstance(node, nodes.ContinueNode):
            return out
        if isinstance(node, nodes.BreakNode):
            out.append(BreakFlag(pos=node.pos))
            return out
        if isinstance(node, nodes.IfNode) and has_loop_control(
                node.list.nodes + (node.else_list.nodes if node.else_list else [])):
            rest = lst[i + 1:]
            then = without_loop_control(node.list.nodes + rest)
            other = without_loop_control((node.else_list.nodes if node.else_list else [])
                                         + rest)
            out.append(nodes.IfNode(
                pipe=node.pipe, list=nodes.ListNode(nodes=then, pos=node.list.pos),
                else_list=nodes.ListNode(nodes=other, pos=node.pos) if other else None,
                pos=node.pos))
            return out
        if isinstance(node, nodes.WithNode) and has_loop_control([node]):
            # as for `if`, but the rest runs with the dot from before the `with`
            rest, key = lst[i + 1:], id(node)
            then = without_loop_control([*node.list.nodes, RestoreDot(key=key, pos=node.pos),
                                         *rest])
            other = without_loop_control((node.else_list.nodes if node.else_list else [])
                                         + rest)
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


class Retype(Exception):  # noqa: N818 - a control-flow signal, not an error
    """A variable turned out to hold a string and a struct: emit again with it MIXED."""

    def __init__(self, var_id: int, types: tuple[GoType, ...]) -> None:
        super().__init__(var_id, types)
        self.var_id, self.types = var_id, types


@dataclass
class TemplateMacro:
    """One Go definition (`define`/`block`) as a Jinja macro, for one kind of argument.

    The emitter is type-directed, so a definition called with arguments of different Go types
    becomes one macro per type; a constant argument (or the root map) is folded into the macro,
    which then takes no parameter."""

    go_name: str
    macro: str
    dot: Expr  # what `.` and `$` are inside the definition
    mode: str
    takes_argument: bool
    lines: list[str] = field(default_factory=list)


@dataclass
class TemplateMacros:
    """Definitions requested so far, shared by the emitters of one template (chat, FIM, macros)."""

    by_key: dict[tuple[object, ...], TemplateMacro] = field(default_factory=dict)
    queue: list[TemplateMacro] = field(default_factory=list)

    def taken(self) -> set[str]:
        return {m.macro for m in self.by_key.values()}


@dataclass
class _Scope:
    """A Jinja scope being emitted (the template or one for body)."""

    key: int
    namespace: str | None = None


@dataclass
class Emitter:
    """Walks the Go AST and writes Jinja lines."""

    template: nodes.Template
    analysis: Analysis
    lines: list[str] = field(default_factory=list)
    depth: int = 0
    pending: list[Expr] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)
    dot: Expr = field(default_factory=lambda: Expr("", GoType.ROOT, stable=True))
    values: dict[int, Expr] = field(default_factory=dict)  # id(Variable) -> its Expr
    facts: list[tuple[str, int]] = field(default_factory=list)  # (len code, known > n)
    root_used: set[str] = field(default_factory=set)
    message_fields: set[str] = field(default_factory=set)
    macros: set[str] = field(default_factory=set)
    loop_names: set[str] = field(default_factory=set)
    mode: str = "messages"  # or "fim": Ollama's fill-in-the-middle path (§3)
    truthy: set[str] = field(default_factory=set)  # codes an enclosing `if`/`with` proved true
    templates: TemplateMacros = field(default_factory=TemplateMacros)
    #: Byte-exact string facts where they hold: Jinja code of a string → an ASCII prefix it is
    #: known to start with (see `prefix_test`). Scoped to the branch the guard proves.
    prefixes: dict[str, str] = field(default_factory=dict)
    #: Placeholder codes of values with no exact Jinja (a string's byte count, a run-time
    #: padding): writing one out raises its error, so only exact uses of them get through.
    refusals: dict[str, TranslationError] = field(default_factory=dict)
    #: The dot and truths from before each LoopWith, by key (see RestoreDot).
    outer_dots: dict[int, tuple[Expr, set[str]]] = field(default_factory=dict)
    #: Placeholders (refusals anywhere else) that become their code where they are printed.
    printable: dict[str, str] = field(default_factory=dict)

    # --- errors -----------------------------------------------------------------------------

    def error(self, message: str, node: nodes.Node | None) -> TranslationError:
        if node is None:
            return TranslationError(message, name=self.template.name)
        return TranslationError(message, line=node.pos.line, col=node.pos.col,
                                name=self.template.name)

    def refused(self, error: TranslationError) -> str:
        """A placeholder code for a value Jinja cannot compute: `line`/`flush` raise `error`
        if it reaches the output, so it may only be consumed by code that knows it exactly."""
        key = f"\x00refused{len(self.refusals)}\x00"
        self.refusals[key] = error
        return key

    def printed_only(self, code: str, node: nodes.Node | None) -> Expr:
        """A string in which Go prints a memory address: `code` raises the contract's ADDRESS
        failure where Go prints one, which is right only where the string is printed (Go may
        also store, compare or measure it without failing), so anywhere else it is refused."""
        key = self.refused(self.error(
            "a value in which Go prints a memory address, used other than printed (stored, "
            "compared, measured or tested): not supported", node))
        self.printable[key] = f"({code})"
        return Expr(key, GoType.STRING, ATOM)

    def check_refusals(self, text: str) -> None:
        if "\x00refused" in text:
            for key, error in self.refusals.items():
                if key in text:
                    raise error

    @staticmethod
    def raising(message: str) -> Expr:
        """A Go execution error at this point: Jinja raises when it evaluates this."""
        return Expr(f"raise_exception({quote(message)})", GoType.RAISE)

    # --- output -----------------------------------------------------------------------------

    def line(self, text: str) -> None:
        self.flush()
        self.check_refusals(text)
        self.lines.append(INDENT * self.depth + text)

    def output(self, expr: Expr) -> None:
        if expr.is_const and expr.const == "":
            return
        self.pending.append(expr)

    def flush(self) -> None:
        if not self.pending:
            return
        parts: list[Expr] = []
        for expr in self.pending:
            if parts and expr.is_const and parts[-1].is_const:
                parts[-1] = const_expr(str(parts[-1].const) + str(expr.const))
            else:
                parts.append(expr)
        self.pending = []
        code = " ~ ".join(p.wrap(ATOM) if len(parts) > 1 else p.code for p in parts)
        if "\x00refused" in code:
            for key, printed in self.printable.items():
                code = code.replace(key, printed)
        self.check_refusals(code)
        self.lines.append(INDENT * self.depth + "{{- " + code + " }}")

    # --- statements -------------------------------------------------------------------------

    def emit_list(self, lst: nodes.ListNode) -> None:
        for node in lst.nodes:
            self.emit_node(node)

    def emit_node(self, node: nodes.Node) -> None:
        if isinstance(node, nodes.TextNode):
            if node.text:
                self.output(const_expr(node.text))
        elif isinstance(node, nodes.CommentNode):
            body = node.text
            if body.startswith("/*") and body.endswith("*/"):
                body = body[2:-2]
            body = body.replace("#}", "# }").strip("\n")
            self.line("{#- " + body.strip() + " #}" if "\n" not in body.strip()
                      else "{#-" + body + " #}")
        elif isinstance(node, nodes.ActionNode):
            self.emit_action(node)
        elif isinstance(node, nodes.IfNode):
            self.emit_if(node)
        elif isinstance(node, nodes.RangeNode):
            self.emit_range(node)
        elif isinstance(node, nodes.WithNode):
            self.emit_with(node)
        elif isinstance(node, nodes.TemplateNode):
            self.emit_template_call(node)
        elif isinstance(node, BreakFlag):
            flag = self.loops[-1].break_flag
            self.line(f"{{%- set {flag}.done = true %}}")
        elif isinstance(node, RestoreDot):
            self.dot, truthy = self.outer_dots[node.key]
            self.truthy = set(truthy)
        elif isinstance(node, (nodes.BreakNode, nodes.ContinueNode)):
            raise self.error("break/continue left after rewriting", node)
        elif isinstance(node, nodes.ListNode):
            self.emit_list(node)
        else:
            raise self.error(f"{type(node).__name__}: not supported", node)

    def emit_action(self, node: nodes.ActionNode) -> None:
        pipe = node.pipe
        if not pipe.decl:
            self.output(self.text(self.pipeline(pipe), node))
            return
        value = self.bind(pipe, node)
        if value.type == GoType.RAISE:
            self.output(value)

    def bind(self, pipe: nodes.PipeNode, node: nodes.Node) -> Expr:
        """Set the one variable `pipe` declares or assigns (`$x := …`, `$x = …`, also as the
        pipeline of an `if` or `with`) and return the pipeline's value."""
        if len(pipe.decl) != 1:
            raise self.error("a pipeline declaring two variables is only valid in range", node)
        var = self.analysis.variable(pipe.decl[0])
        value = self.pipeline(pipe)
        if value.type == GoType.RAISE:
            if not pipe.is_assign:  # later reads are unreachable, but must still translate
                self.values[id(var)] = value
            return value
        stored = value
        if value.choice is not None and var.condition_only:
            # only ever tested for truth: Go's truth of the and/or is all it needs to hold
            stored = replace(value.choice.truth, type=GoType.TRUTH)
        if pipe.is_assign:
            self.assign(var, stored, node)
            return value
        self.declare(var, stored, node)
        return self.values[id(var)] if stored is value else value

    def emit_template_call(self, node: nodes.TemplateNode) -> None:
        """`{{ template "name" pipeline }}`: a call of the definition's macro. Go runs the
        definition with `.` and `$` set to the pipeline's value and none of the caller's
        variables, which is what a macro with one parameter is."""
        if self.mode not in ("messages", "fim"):
            raise self.error("template/block in a legacy template: not supported", node)
        if node.pipe is None:
            raise self.error(f"{{{{ template {node.name!r} }}}} without an argument: Ollama "
                             "rejects it", node)
        args = node.pipe.cmds[0].args if len(node.pipe.cmds) == 1 else []
        if len(args) == 1 and isinstance(args[0], nodes.DotNode) and not node.pipe.decl:
            value = self.dot  # `.` itself, the root map included
        else:
            value = self.pipeline(node.pipe)
        if value.type == GoType.RAISE:
            self.output(value)
            return
        if node.name not in self.template.defines:
            self.output(self.raising(f'template: no such template "{node.name}"'))
            return
        folded = value.is_const or value.type == GoType.ROOT
        key: tuple[object, ...] = (node.name, self.mode, value.type, value.maybe_undefined,
                                   repr(value.const) if folded else None)
        entry = self.templates.by_key.get(key)
        if entry is None:
            base = ("fim_" if self.mode == "fim" else "") + "template_" \
                + jinja_identifier(node.name)
            taken = self.templates.taken() | {
                v.jinja_name for v in self.analysis.variables.values()}
            macro, n = base, 2
            while macro in taken:
                macro, n = f"{base}_{n}", n + 1
            if value.type == GoType.NIL:
                # Go hands a nil argument over as no data at all: `.X` of it is <no value>
                value = replace(value, type=GoType.NO_DATA)
            dot = value if folded else Expr("dot", value.type, stable=True,
                                             maybe_undefined=value.maybe_undefined)
            entry = TemplateMacro(node.name, macro, dot, self.mode, not folded)
            self.templates.by_key[key] = entry
            self.templates.queue.append(entry)
        self.output(Expr(f"{entry.macro}({'' if folded else value.code})", GoType.STRING))

    def emit_template_macros(self) -> None:
        """Write the macros of every definition requested so far (and those they request)."""
        while self.templates.queue:
            entry = self.templates.queue.pop(0)
            body = self.template.defines[entry.go_name]
            child = type(self)(self.template, self.analysis, depth=1, mode=entry.mode,
                               templates=self.templates, dot=entry.dot)
            child.values[id(self.analysis.template_args[entry.go_name])] = entry.dot
            child.open_scope(id(body), body)
            child.emit_list(body)
            child.flush()
            self.macros |= child.macros
            self.root_used |= child.root_used
            self.message_fields |= child.message_fields
            param = "dot" if entry.takes_argument else ""
            entry.lines = [
                "{#- Go's {{ define \"" + entry.go_name.replace("#}", "# }") + "\" }}"
                + (f" for a {entry.dot.type.value} argument" if entry.takes_argument else "")
                + ". #}",
                f"{{%- macro {entry.macro}({param}) %}}", *child.lines, "{%- endmacro %}"]

    def declare(self, var: Variable, value: Expr, node: nodes.Node) -> None:
        inline = (
            not var.assigned and value.stable and not var.used_in_deeper_loop
            and (value.loop is None or (self.loops and value.loop == self.loops[-1].ident))
            and value.prec >= COMPARE and len(value.code) <= 60
        )
        if inline:
            self.values[id(var)] = value
            return
        if var.namespace and self._ns_literal(var) is not None:
            pass  # initialised in the namespace() call at the top of its scope
        else:
            self.line(f"{{%- set {var.ref} = {value.code} %}}")
        alts = self.analysis.mixed.get(id(var))
        if alts is not None:
            self.values[id(var)] = Expr(var.ref, GoType.MIXED, alts=alts)
            return
        self.values[id(var)] = Expr(var.ref, value.type, maybe_undefined=value.maybe_undefined)

    def assign(self, var: Variable, value: Expr, node: nodes.Node) -> None:
        current = self.values.get(id(var))
        if current is None:
            raise self.error(f"assignment to {var.go_name} before it has a value", node)
        if current.type == GoType.MIXED and value.type in current.alts:
            pass
        elif current.type != value.type and not (
            var.condition_only and {current.type, value.type} <= {GoType.BOOL, GoType.TRUTH,
                                                                    GoType.STRING, GoType.INT}
        ):
            types = set(current.alts or (current.type,)) | {value.type}
            if GoType.STRING in types and len(types) == 2 and types - {GoType.STRING} <= MIXABLE:
                raise Retype(id(var), tuple(sorted(types, key=lambda t: t.value)))
            raise self.error(
                f"{var.go_name} changes type ({current.type.value} → {value.type.value}); "
                "not supported", node)
        self.line(f"{{%- set {var.ref} = {value.code} %}}")
        mentions = re.compile(rf"(?<![\w.]){re.escape(var.ref)}(?!\w)")
        for code in [c for c in self.prefixes if mentions.search(c)]:
            del self.prefixes[code]  # its string may differ now

    def _ns_literal(self, var: Variable) -> str | None:
        """A namespace variable declared by a literal directly in its scope: its Jinja value."""
        return getattr(var, "ns_literal", None)

    def open_scope(self, key: int, body: nodes.ListNode) -> None:
        """Create the namespace of the Jinja scope starting here, if a loop assigns into it."""
        members = self.analysis.namespaces.get(key)
        if not members:
            return
        ns = self.analysis.namespace_names[key]
        direct = {id(n.pipe.decl[0]): n for n in body.nodes
                  if isinstance(n, nodes.ActionNode) and n.pipe.decl and not n.pipe.is_assign}
        inits = []
        for var in members:
            literal = None
            action = direct.get(id(var.decl))
            if action is not None and len(action.pipe.cmds) == 1 \
                    and len(action.pipe.cmds[0].args) == 1:
                arg = action.pipe.cmds[0].args[0]
                if isinstance(arg, (nodes.StringNode, nodes.BoolNode, nodes.NumberNode)):
                    literal = self.value(arg).code
            var.ns_literal = literal  # type: ignore[attr-defined]
            inits.append(f"{var.jinja_name}={literal if literal is not None else 'none'}")
        self.line(f"{{%- set {ns} = namespace({', '.join(inits)}) %}}")

    def emit_if(self, node: nodes.IfNode) -> None:
        if node.pipe.decl:  # `if $x := …`: $x is set, then its truth decides
            cond = self.truth(self.bind(node.pipe, node))
        else:
            cond = self.condition(node.pipe, node)
        if cond.is_const:
            taken = node.list if cond.const else node.else_list
            if taken is not None:
                self.emit_list(taken)
            return
        self.flush()
        start = len(self.lines)
        self.line(f"{{%- if {cond.code} %}}")
        saved_truthy = set(self.truthy)
        self.truthy |= self.proven_true(node.pipe, cond)
        with self.knowing(self.prefix_guards(node.pipe, holds=True)):
            self.body(node.list)
        self.truthy = saved_truthy
        with self.knowing(self.prefix_guards(node.pipe, holds=False)):
            self.emit_else_chain(node)
        self.tidy_if(start, cond)

    def proven_true(self, pipe: nodes.PipeNode, cond: Expr) -> set[str]:
        """Codes that are truthy where `cond` holds (itself, or each operand of an `and`)."""
        proven = {cond.code} if cond.stable else set()
        cmd = pipe.cmds[0] if len(pipe.cmds) == 1 and not pipe.decl else None
        if cmd is not None and isinstance(cmd.args[0], nodes.IdentifierNode) \
                and cmd.args[0].ident == "and":
            for arg in cmd.args[1:]:
                try:
                    part = self.cond_arg(arg)
                except TranslationError:
                    continue
                if part.stable:
                    proven.add(part.code)
        return proven

    def tidy_if(self, start: int, cond: Expr) -> None:
        """Readability: an `if` with nothing inside goes; an empty then-branch before a plain
        `else` becomes the negated condition (no engine prints anything for either)."""
        block = self.lines[start:]
        pad = block[0][:len(block[0]) - len(block[0].lstrip())]
        if len(block) == 2 and "raise_exception" not in cond.code:
            del self.lines[start:]
            return
        if len(block) > 2 and block[1] == pad + "{%- else %}" and not any(
                line.startswith((pad + "{%- else", pad + "{%- elif")) for line in block[2:]):
            self.lines[start:start + 2] = [f"{pad}{{%- if {self.negate(cond).code} %}}"]

    def emit_else_chain(self, node: nodes.IfNode) -> None:
        else_list = node.else_list
        while else_list is not None:
            chained = else_list.nodes[0] if len(else_list.nodes) == 1 else None
            if isinstance(chained, nodes.IfNode) and not chained.pipe.decl:
                cond = self.condition(chained.pipe, chained)
                if cond.is_const:
                    if cond.const:
                        self.line("{%- else %}")
                        self.body(chained.list)
                        break
                    else_list = chained.else_list
                    continue
                self.line(f"{{%- elif {cond.code} %}}")
                with self.knowing(self.prefix_guards(chained.pipe, holds=True)):
                    self.body(chained.list)
                self.prefixes.update(self.prefix_guards(chained.pipe, holds=False))
                else_list = chained.else_list
                continue
            self.line("{%- else %}")
            self.body(else_list)
            break
        self.line("{%- endif %}")

    def body(self, lst: nodes.ListNode) -> None:
        self.flush()
        self.depth += 1
        self.emit_list(lst)
        self.flush()
        self.depth -= 1

    def emit_with(self, node: nodes.WithNode) -> None:
        # `with $x := …`: $x holds the value in both branches, and `.` in the first
        value = self.bind(node.pipe, node) if node.pipe.decl else self.pipeline(node.pipe)
        truth = self.truth(value)
        saved = self.dot
        if isinstance(node, LoopWith):
            self.outer_dots[node.key] = (saved, set(self.truthy))
        if truth.is_const:
            if truth.const:
                self.dot = value
                self.emit_list(node.list)
                self.dot = saved
            elif node.else_list is not None:
                self.emit_list(node.else_list)
            return
        if value.prec < ATOM or len(value.code) > 40:
            name = self.fresh_name("value")
            self.line(f"{{%- set {name} = {value.code} %}}")
            value = replace(value, code=name, prec=ATOM, slice_of=None)
            truth = self.truth(value)
        self.line(f"{{%- if {truth.code} %}}")
        self.dot = value
        saved_truthy = set(self.truthy)
        if value.stable:
            self.truthy.add(value.code)
        self.body(node.list)
        self.truthy = saved_truthy
        self.dot = saved
        if node.else_list is not None:
            self.line("{%- else %}")
            self.body(node.else_list)
        self.line("{%- endif %}")

    def fresh_name(self, base: str) -> str:
        taken = {v.jinja_name for v in self.analysis.variables.values()} | self.loop_names
        name, n = base, 2
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        self.loop_names.add(name)
        return name

    def emit_range(self, node: nodes.RangeNode) -> None:
        pipe = node.pipe
        bare = nodes.PipeNode(cmds=pipe.cmds, pos=pipe.pos)
        coll = self.pipeline(bare)
        decl = [self.analysis.variable(d) for d in pipe.decl]
        index_var = decl[0] if len(decl) == 2 else None
        elem_var = decl[-1] if decl else None
        loop_id = id(node)
        if coll.type == GoType.RAISE:
            self.output(coll)
            return
        if coll.type == GoType.ANY:
            if index_var is not None:
                raise self.error("range $k, $v over a decoded-JSON value: not supported (its "
                                 "key is a string for a map, an int for a list)", node)
            coll = self.json_elements(coll)
        if coll.type == GoType.INT:
            if index_var is not None:
                raise self.error("range over an integer takes one variable", node)
            elem_type, natural, key_name = GoType.INT, "i", None
            iterable = f"range({coll.code})"
        elif coll.type in SLICE_ELEMENTS:
            elem_type, natural = SLICE_ELEMENTS[coll.type]
            key_name = None
            iterable = (self.concrete(coll) if coll.maybe_undefined else coll).wrap(ATOM)
        elif coll.type in MAP_VALUES:
            elem_type, natural_key, natural = MAP_VALUES[coll.type]
            key_name = natural_key
            iterable = sorted_items(self.concrete(coll).wrap(ATOM))
        elif coll.type in (GoType.NIL, GoType.NO_DATA):
            # ranging over a nil interface or no data: no iterations (Go treats it as empty)
            if node.else_list is not None:
                self.bind_range_else(decl, coll)
                self.emit_list(node.else_list)
            return
        elif coll.type in (GoType.STRING, GoType.FLOAT, GoType.BOOL) or coll.type in STRUCTS:
            # Go: "range can't iterate over …", whatever the value (else branch or not)
            self.output(self.raising(f"range can't iterate over a {coll.type.value}"))
            return
        else:
            raise self.error(f"range over {coll.type.value}: not supported", node)
        elem_name = self.loop_var(elem_var, natural)
        if key_name is not None:
            key_name = self.loop_var(index_var, key_name)
        has_else = node.else_list is not None
        if has_else:
            truth = self.truth(coll)
            self.line(f"{{%- if {truth.code} %}}")
            self.depth += 1
        body_nodes = node.list.nodes
        flag = None
        if has_loop_control(body_nodes):
            try:
                body_nodes = without_loop_control(body_nodes)
            except TranslationError as exc:
                exc.name = self.template.name
                raise
            if has_break(body_nodes):
                flag = self.fresh_name(f"{elem_name}_loop")
                self.line(f"{{%- set {flag} = namespace(done=false) %}}")
        if len(self.loops) >= MAX_LOOP_NESTING:
            raise self.error(f"more than {MAX_LOOP_NESTING} nested range loops: jinja2 cannot "
                             "compile the Jinja (Python's limit on nested blocks)", node)
        saved_dot, saved_facts = self.dot, self.facts
        self.flush()
        header_from, header_depth, plain = len(self.lines), self.depth, iterable
        if key_name is None and coll.type in SLICE_ELEMENTS and counts_itself(node):
            # by index: an index, a last or a length costs a subscript here, where the loop
            # object's attributes cost some twenty on jinja2's sandbox
            if not (coll.stable and iterable.isidentifier()):
                listed = self.fresh_name(f"{elem_name}_list")
                self.line(f"{{%- set {listed} = {iterable} %}}")
                iterable = listed
            at = self.fresh_name(f"{elem_name}_at")
            self.line(f"{{%- for {at} in range({iterable}|length) %}}")
            loop = Loop(loop_id, node, coll, flag, index=at, size=f"{iterable}|length")
            self.depth += 1
            self.line(f"{{%- set {elem_name} = {iterable}[{at}] %}}")
        else:
            head = f"{key_name}, {elem_name}" if key_name else elem_name
            self.line(f"{{%- for {head} in {iterable} %}}")
            loop = Loop(loop_id, node, coll, flag)
            self.depth += 1
        self.loops.append(loop)
        body_from = len(self.lines)
        elem = Expr(elem_name, elem_type, stable=True)
        self.dot = elem
        if elem_var is not None:
            self.values[id(elem_var)] = elem
        if index_var is not None:
            if key_name is not None:
                self.values[id(index_var)] = Expr(key_name, GoType.STRING, stable=True)
            elif index_var.assigned or (index_var.used_in_deeper_loop and loop.size is None):
                name = index_var.jinja_name
                self.line(f"{{%- set {name} = {loop.index} %}}")
                self.values[id(index_var)] = Expr(name, GoType.INT, stable=True,
                                                  non_negative=True)
            else:
                self.values[id(index_var)] = Expr(loop.index, GoType.INT, stable=True,
                                                  loop=loop_id, non_negative=True)
        self.open_scope(loop_id, node.list)
        if flag is not None:
            self.line(f"{{%- if not {flag}.done %}}")
            self.depth += 1
        self.emit_list(nodes.ListNode(nodes=body_nodes))
        self.flush()
        if flag is not None:
            self.depth -= 1
            self.line("{%- endif %}")
        self.depth -= 1
        self.loops.pop()
        self.dot, self.facts = saved_dot, saved_facts
        self.line("{%- endfor %}")
        if loop.size is not None and not any(re.search(rf"\b{loop.index}\b", line)
                                             for line in self.lines[body_from:]):
            # the body never asked for its index: the plain loop reads better
            self.lines[header_from:body_from] = [
                INDENT * header_depth + f"{{%- for {elem_name} in {plain} %}}"]
        if has_else:
            self.depth -= 1
            self.line("{%- else %}")
            assert node.else_list is not None
            self.bind_range_else(decl, coll)
            self.body(node.else_list)
            self.line("{%- endif %}")

    def json_elements(self, value: Expr) -> Expr:
        """What `range` walks in a decoded-JSON value, as a list: a map's values in key order,
        a list itself, nothing for null; Go fails on a string, a number or a bool (before
        any `else`, so the failure comes first here too)."""
        a = value.wrap(COMPARE)
        items = self.fresh_name("json_elements")
        self.line(f"{{%- set {items} = namespace(list=[]) %}}")
        self.line(f"{{%- if {a} is mapping %}}")
        self.depth += 1
        key, element = self.fresh_name("json_key"), self.fresh_name("json_element")
        self.line(f"{{%- for {key}, {element} in {sorted_items(value.wrap(ATOM))} %}}")
        self.line(f"{INDENT}{{%- set {items}.list = {items}.list + [{element}] %}}")
        self.line("{%- endfor %}")
        self.depth -= 1
        self.line(f"{{%- elif {a} is string or {a} is number or {a} is boolean %}}")
        self.line(f"{INDENT}{{{{- raise_exception(\"range can't iterate over this value\") }}}}")
        self.line(f"{{%- elif {a} is not none %}}")
        self.line(f"{INDENT}{{%- set {items}.list = {value.code} %}}")
        self.line("{%- endif %}")
        return Expr(f"{items}.list", GoType.ANYS, ATOM, stable=True)

    def bind_range_else(self, decl: list[Variable], coll: Expr) -> None:
        """In a range's `else`, Go's range variables hold the collection itself (evalPipeline
        pushes the pipeline's value for each declared variable; only iterations set them)."""
        for var in decl:
            if var.go_name != "$_":
                self.values[id(var)] = coll

    def loop_var(self, var: Variable | None, natural: str) -> str:
        if var is not None and var.go_name != "$_":
            self.loop_names.add(var.jinja_name)
            return var.jinja_name
        return self.fresh_name(natural)

    # --- pipelines --------------------------------------------------------------------------

    def pipeline(self, pipe: nodes.PipeNode) -> Expr:
        result: Expr | None = None
        for cmd in pipe.cmds:
            result = self.command(cmd, result)
        if result is None:
            raise self.error("empty pipeline", pipe)
        if result.type == GoType.NIL:
            # Go unwraps a pipeline's nil interface into the invalid value: a field of it (in a
            # variable, or `(.Foo).Bar`) is no value again, not a nil-pointer error
            return replace(result, type=GoType.NO_DATA)
        return result

    def command(self, cmd: nodes.CommandNode, piped: Expr | None) -> Expr:
        head = cmd.args[0]
        if isinstance(head, nodes.IdentifierNode):
            return self.call(head.ident, cmd.args[1:], piped, cmd)
        if isinstance(head, nodes.NilNode):
            return self.raising("nil is not a command")  # Go parses it, and fails running it
        if len(cmd.args) > 1 or piped is not None:
            raise self.error("method calls with arguments are not supported", cmd)
        return self.value(head)

    def condition(self, pipe: nodes.PipeNode, node: nodes.Node) -> Expr:
        """The pipeline as an `if` condition (and/or/not kept as Jinja's own operators)."""
        if len(pipe.cmds) == 1 and not pipe.decl:
            return self.cond_command(pipe.cmds[0])
        return self.truth(self.pipeline(pipe))

    def cond_command(self, cmd: nodes.CommandNode) -> Expr:
        head = cmd.args[0]
        if isinstance(head, nodes.IdentifierNode) and head.ident in ("and", "or") \
                and len(cmd.args) >= 3:
            return self.logic(head.ident, cmd.args[1:], cmd, as_condition=True)
        if isinstance(head, nodes.IdentifierNode) and head.ident == "not" \
                and len(cmd.args) == 2:
            inner = self.cond_arg(cmd.args[1])
            return self.negate(inner)
        if len(cmd.args) == 1 and isinstance(head, nodes.PipeNode) and len(head.cmds) == 1 \
                and not head.decl:
            return self.cond_command(head.cmds[0])
        return self.truth(self.command(cmd, None))

    def cond_arg(self, arg: nodes.Node) -> Expr:
        if isinstance(arg, nodes.PipeNode) and len(arg.cmds) == 1 and not arg.decl:
            return self.cond_command(arg.cmds[0])
        return self.truth(self.value(arg))

    @staticmethod
    def negate(inner: Expr) -> Expr:
        if inner.is_const:
            return const_expr(not inner.const)
        if inner.negated is not None:
            return Expr(inner.negated, GoType.BOOL, COMPARE, stable=inner.stable,
                        loop=inner.loop, negated=inner.code)
        if inner.code.startswith("not ") and inner.prec == NOT:
            return Expr(inner.code[4:], GoType.BOOL, COMPARE, stable=inner.stable,
                        loop=inner.loop)
        return Expr(f"not {inner.wrap(NOT)}", GoType.BOOL, NOT, stable=inner.stable,
                    loop=inner.loop)

    # --- operands ---------------------------------------------------------------------------

    def value(self, node: nodes.Node) -> Expr:
        if isinstance(node, nodes.DotNode):
            if self.dot.type == GoType.ROOT:
                raise self.error("printing or passing the whole root map is not supported",
                                 node)
            return self.dot
        if isinstance(node, nodes.FieldNode):
            return self.fields(self.dot, node.ident, node)
        if isinstance(node, nodes.VariableNode):
            var = self.analysis.variable(node)
            if var.role == "root":
                base = Expr("", GoType.ROOT, stable=True)
            elif var.role == "template_arg":
                base = self.values[id(var)]
            else:
                bound = self.values.get(id(var))
                if bound is None:
                    raise self.error(f"{var.go_name} is used where it has no value", node)
                if bound.loop is not None and (not self.loops or self.loops[-1].ident
                                               != bound.loop):
                    raise self.error(f"{var.go_name} read inside a nested loop", node)
                base = bound
                if base.type == GoType.INT and var.non_negative:
                    base = replace(base, non_negative=True)
            if len(node.ident) == 1 and base.type == GoType.ROOT:
                raise self.error("using `$` itself is not supported", node)
            return self.fields(base, node.ident[1:], node)
        if isinstance(node, nodes.ChainNode):
            return self.fields(self.value(node.node), node.field, node)
        if isinstance(node, nodes.StringNode):
            return const_expr(node.text)
        if isinstance(node, nodes.BoolNode):
            return const_expr(node.value)
        if isinstance(node, nodes.NumberNode):
            if node.is_float and _is_float_syntax(node.text):
                # Go's idealConstant: written with `.eEpP`, a constant is a float64 value
                # (`{{ 1e6 }}` prints 1e+06, `range 1e6` fails), even when it is integral
                return const_expr(node.float64)
            if node.is_int:
                return const_expr(node.int64)
            if node.is_float:
                return const_expr(node.float64)
            raise self.error(f"number {node.text}: not supported", node)
        if isinstance(node, nodes.NilNode):
            return Expr("none", GoType.NIL, const=None, is_const=True, stable=True)
        if isinstance(node, nodes.PipeNode):
            if node.decl:
                raise self.error("declaration inside parentheses: not supported", node)
            return self.pipeline(node)
        if isinstance(node, nodes.IdentifierNode):
            return self.call(node.ident, [], None, node)
        raise self.error(f"{type(node).__name__}: not supported here", node)

    def fields(self, base: Expr, names: list[str], node: nodes.Node) -> Expr:
        expr = base
        for name in names:
            expr = self.field(expr, name, node)
        return expr

    def field(self, base: Expr, name: str, node: nodes.Node) -> Expr:
        t = base.type
        if base.choice is not None:
            return self.lift(base.choice, lambda v: self.field(v, name, node), node)
        if t == GoType.RAISE:
            return base
        if t == GoType.ROOT:
            self.root_used.add(name)
            if name == "Response":
                return const_expr("")
            if self.mode == "fim":
                if name in FIM_FIELDS:
                    return Expr(FIM_FIELDS[name], GoType.STRING, stable=True)
                if name not in ("Think", "ThinkLevel", "IsThinkSet"):
                    return Expr("none", GoType.NIL, const=None, is_const=True, stable=True)
            if name in ROOT_FIELDS:
                code, ftype = ROOT_FIELDS[name]
                return Expr(code, ftype, stable=True, maybe_undefined=(ftype == GoType.TOOLS))
            return Expr("none", GoType.NIL, const=None, is_const=True, stable=True)
        if t == GoType.NIL:
            return self.raising(f"nil pointer evaluating interface {{}}.{name}")
        if t == GoType.NO_DATA:
            return base  # Go: a field of no data is no data again (`<no value>`)
        if t == GoType.MIXED:
            (struct,) = [a for a in base.alts if a != GoType.STRING]
            if struct not in STRUCTS:
                return self.raising(f"can't evaluate field {name} in type {struct.value}")
            on_struct = self.field(replace(base, type=struct, alts=()), name, node)
            fail = quote(f"template: can't evaluate field {name} in type string")
            return Expr(f"{on_struct.wrap(OR)} if {base.code} is mapping else "
                        f"raise_exception({fail})", on_struct.type, COND, stable=base.stable,
                        maybe_undefined=on_struct.maybe_undefined)
        if t in FIELDS and name in FIELDS[t]:
            info = FIELDS[t][name]
            if t == GoType.MESSAGE:
                self.message_fields.add(info.key)
            if info.type == GoType.PROPERTY_TYPE:
                # api.PropertyType is a []string the request gives as a string or a list
                raw = item_or(base.wrap(ATOM), info.key, "none")
                return Expr(f"[{raw}] if {raw} is string else ({raw} or [])", info.type, COND,
                            stable=base.stable, loop=base.loop, owner=base.code)
            if info.default is not None:
                code = item_or(base.wrap(ATOM), info.key, info.default)
            elif info.maybe_missing:
                code = item_or(base.wrap(ATOM), info.key, "none")
            else:
                code = f"{base.wrap(ATOM)}[{quote(info.key)}]"
            return Expr(code, info.type, stable=base.stable, loop=base.loop,
                        maybe_undefined=info.maybe_missing, owner=base.code)
        if name in UNMODELLED_FIELDS.get(t, set()):
            raise self.error(f".{name} of {t.value}: not supported", node)
        if t == GoType.ARGS and name != "String":  # (a method comes before a key)
            # the key's value; missingkey=zero makes a missing one nil
            return self.index_one(base, const_expr(name), node)
        if t == GoType.ANY:  # (Go fails on a field of a nil: a JSON null or a missing key)
            return self.json_key(base, const_expr(name),
                                 f"can't evaluate field {name} in a non-map value")
        if name == "String" and t in (GoType.ARGS, GoType.TOOLS, GoType.PROPERTIES,
                                      GoType.PROPERTY_TYPE, GoType.TOOL):
            return self.text(base, node)
        if name == "ToTypeScriptType" and t == GoType.PROPERTY:
            self.macros.add("typescript_type")
            return Expr(f"typescript_type({base.code})", GoType.STRING, stable=base.stable)
        return self.raising(f"can't evaluate field {name} in type {t.value}")

    def concrete(self, e: Expr) -> Expr:
        """A possibly-absent map/slice as a value that is always there (nil ranges as empty;
        an empty one is falsy too, so `or` swaps it for an equal empty value)."""
        if not e.maybe_undefined:
            return e
        if e.code in self.truthy:
            return replace(e, maybe_undefined=False)
        empty = "{}" if e.type in MAP_VALUES else "[]"
        return Expr(f"{e.wrap(AND)} or {empty}", e.type, OR, stable=e.stable, loop=e.loop)

    # --- Go printing and truth --------------------------------------------------------------

    def text(self, e: Expr, node: nodes.Node | None, *, sprint: bool = False) -> Expr:
        """The string Go's printing of `e` gives (template print, or fmt.Sprint for `print`)."""
        t = e.type
        if e.choice is not None:
            return self.merge(tuple((test, self.text(v, node, sprint=sprint))
                                    for test, v in e.choice.branches), e.choice.truth, node)
        if t == GoType.RAISE:
            return e
        if t == GoType.STRING:
            return e
        if t == GoType.MIXED and (not sprint or GoType.INT in e.alts):
            # (Sprint prints a struct pointer as &{…}, but an int as template printing does)
            (struct,) = [a for a in e.alts if a != GoType.STRING]
            other = self.text(replace(e, type=struct, alts=()), node)
            return Expr(f"{e.code} if {e.code} is string else {other.wrap(COND)}",
                        GoType.STRING, COND, stable=e.stable)
        if t == GoType.MESSAGE and sprint:
            # fmt.Sprint prints the pointer itself: & and the struct syntax
            return self.concat([const_expr("&"), self.text(e, node)])
        if t == GoType.MESSAGE:
            # text/template prints the *templateMessage it points to, in Go struct syntax
            self.macros.add("print_tool_calls")
            role, content, thinking, calls, name, call_id = self.message_struct(e)
            return Expr(f"'{{' ~ {role} ~ ' ' ~ {content} ~ ' ' ~ {thinking} ~ ' [] ' ~ "
                        f"print_tool_calls({calls}) ~ ' ' ~ {name} ~ ' ' ~ "
                        f"{call_id} ~ '}}'", GoType.STRING, CONCAT, stable=e.stable)
        if t in (GoType.TOOL_CALL, GoType.TOOL_CALLS):
            macro = "print_tool_call" if t == GoType.TOOL_CALL else "print_tool_calls"
            self.macros.add(macro)
            return Expr(f"{macro}({e.code})", GoType.STRING)
        if e.is_const:
            if t == GoType.BOOL:
                return const_expr("true" if e.const else "false")
            if t == GoType.INT:
                return const_expr(str(e.const))
            if t == GoType.FLOAT:
                assert isinstance(e.const, float)
                return const_expr(go_float(e.const))
            if t == GoType.NIL:
                return const_expr("<nil>" if sprint else "<no value>")
            if t == GoType.NO_DATA:  # (fmt prints the nil a function receives for it)
                return const_expr("<nil>" if sprint else "<no value>")
        if t == GoType.BOOL:
            return Expr(f"'true' if {e.wrap(OR)} else 'false'", GoType.STRING, COND,
                        stable=e.stable, loop=e.loop)
        if t == GoType.INT:
            return Expr(f"{e.wrap(ATOM)}|string", GoType.STRING, ATOM, stable=e.stable,
                        loop=e.loop)
        if t == GoType.TOOLS:
            self.macros.add("json_tools")
            return Expr(f"json_tools({e.code})", GoType.STRING)
        if t == GoType.PROPERTIES:
            self.macros.add("print_properties")
            return Expr(f"print_properties({e.code})", GoType.STRING)
        if t in (GoType.ARGS, GoType.ANYS, GoType.STRINGS):
            if t == GoType.ARGS:
                self.macros.add("print_arguments")
                return Expr(f"print_arguments({e.code})", GoType.STRING)
            if t == GoType.STRINGS:
                return Expr(f"'[' ~ {e.wrap(ATOM)}|join(' ') ~ ']'", GoType.STRING, CONCAT)
            self.macros.add("print_value")
            return Expr(f"print_value({e.code})", GoType.STRING)
        if t in (GoType.TOOL, GoType.TOOL_FUNCTION, GoType.PARAMETERS):
            macro = JSON_MACROS[t]
            self.macros.add(macro)
            return Expr(f"{macro}({e.code})", GoType.STRING)
        if t == GoType.ANY:
            self.macros.add("print_value")
            if sprint:  # fmt.Sprint of a nil interface is <nil>, not template's <no value>
                a = e.wrap(COMPARE)
                return Expr(f"'<nil>' if {a} is none else print_value({e.code})", GoType.STRING,
                            COND, stable=e.stable, loop=e.loop)
            return Expr(f"print_value({e.code})", GoType.STRING)
        if t == GoType.FLOAT:
            self.macros.add("print_number")
            return Expr(f"print_number({e.code})", GoType.STRING)
        if t == GoType.PROPERTY_TYPE and e.owner is not None:
            self.macros.add("print_property_type")
            return Expr(f"print_property_type({e.owner})", GoType.STRING)
        if t in NIL_TYPES and "raise_exception(" not in e.code:  # nil, whatever its code
            return const_expr("<nil>" if sprint else "<no value>")
        if t == GoType.MESSAGES:
            # fmt prints each *templateMessage of the slice as its memory address: only an
            # empty (or nil) one prints the same bytes twice; elsewhere the contract's failure
            c = self.concrete(e).wrap(ATOM)
            return self.printed_only(
                f"'[]' if {c}|length == 0 else {self.raising(runtime.ADDRESS).code}", node)
        if t == GoType.PROPERTY:  # (Go struct syntax; a nested map's pointer: the failure)
            self.macros.add("print_property")
            return self.printed_only(f"print_property({e.code})", node)
        raise self.error(f"printing a value of Go type {t.value} is not supported", node)

    def message_struct(self, e: Expr) -> tuple[str, str, str, str, str, str]:
        """The codes of the fields of the *templateMessage `e` that Go prints, in its order
        (Role Content Thinking, Images — nil here —, ToolCalls ToolName ToolCallID): all of
        them are read, so the collated messages carry every optional key."""
        self.message_fields.update(OPTIONAL_MESSAGE_KEYS)
        m = e.wrap(ATOM)
        thinking, calls, name, call_id = (item_or(m, key, MESSAGE_DEFAULTS[key])
                                          for key in OPTIONAL_MESSAGE_KEYS)
        return f"{m}['role']", f"{m}['content']", thinking, calls, name, call_id

    def truth(self, e: Expr) -> Expr:
        """An expression whose Jinja truth is Go's truth of `e`."""
        t = e.type
        if e.is_const:
            return const_expr(bool(e.const))
        if e.bytes_of is not None:
            return self.truth(e.bytes_of)  # no bytes exactly when no characters
        if e.cut is not None:  # non-empty bytes, a cut character's included
            self.macros.add("go_slice_equals")
            return Expr(f"go_slice_equals({', '.join(e.cut)}, '') == 'F'", GoType.BOOL, COMPARE,
                        stable=e.stable, loop=e.loop,
                        negated=f"go_slice_equals({', '.join(e.cut)}, '') == 'T'")
        if e.choice is not None:
            return e.choice.truth
        if t in STRUCTS and "raise_exception(" in e.code:
            # always true in Go, but evaluating it may fail (`index .Messages 1`): evaluate it
            return Expr(f"{e.wrap(COMPARE)} is not none", GoType.BOOL, COMPARE,
                        stable=e.stable, loop=e.loop)
        if t in STRUCTS or t == GoType.ROOT:
            return const_expr(True)
        # minja takes an empty mapping as true: a map's truth is spelled as its length
        if t in MAP_VALUES:
            a = e.wrap(ATOM)
            return replace(e, code=f"({a} and {a}|length > 0)", type=GoType.BOOL, prec=ATOM,
                           negated=None)
        if t == GoType.ANY:
            a = e.wrap(ATOM)
            return replace(e, code=f"({a}|length > 0 if {a} is mapping else {a})",
                           type=GoType.BOOL, prec=ATOM, negated=None)
        if e.prec <= COND:  # `{% if a if b else c %}` does not parse
            return replace(e, code=f"({e.code})", prec=ATOM, negated=None)
        return e

    # --- functions --------------------------------------------------------------------------

    def call(self, name: str, arg_nodes: list[nodes.Node], piped: Expr | None,
             node: nodes.Node) -> Expr:
        if name in ("and", "or"):
            nodes_ = list(arg_nodes)
            if piped is not None:
                raise self.error(f"piping into {name}: not supported", node)
            return self.logic(name, nodes_, node, as_condition=False)
        args = [self.value(a) for a in arg_nodes]
        if piped is not None:
            args.append(piped)
        for a in args:
            if a.type == GoType.RAISE:
                return a
        return self.apply(name, args, node)

    def apply(self, name: str, args: list[Expr], node: nodes.Node) -> Expr:
        """Go's function `name` on translated arguments (lifted over an and/or CHOICE)."""
        for i, a in enumerate(args):
            if a.choice is not None:
                return self.lift(a.choice, lambda v, i=i: self.apply(
                    name, [*args[:i], v, *args[i + 1:]], node), node)
        for a in args:
            if a.type == GoType.RAISE:
                return a
        if name not in ("not", "print") and any(a.type == GoType.MIXED for a in args):
            raise self.error(f"{name} of a variable holding values of several Go types: "
                             "not supported", node)
        handler = getattr(self, f"fn_{name}", None)
        if handler is None:
            raise self.error(f"function {name!r}: not supported", node)
        result: Expr = handler(args, node)
        return result

    def lift(self, choice: Choice, step: Callable[[Expr], Expr], node: nodes.Node) -> Expr:
        """`step` applied to each branch of an and/or CHOICE, merged again; Go's truth of the
        result is that of the branch taken, so it is recomputed from the branches."""
        branches = tuple((test, step(v)) for test, v in choice.branches)
        return self.merge(branches, None, node)

    def merge(self, branches: tuple[tuple[str | None, Expr], ...], truth: Expr | None,
              node: nodes.Node) -> Expr:
        """One Expr for "the first branch whose test holds, else the last": a conditional when
        the branches share a Go type (an execution error fits any), else a CHOICE."""
        kinds = {v.type for _, v in branches if v.type != GoType.RAISE}
        if len(branches) == 1:
            return branches[0][1]
        raises = any(v.type == GoType.RAISE for _, v in branches)
        if len(kinds) <= 1 and not (raises and kinds & NIL_TYPES):
            # (a nil is handled as the constant it is: next to an execution error it stays a
            # branch of its own, or the error would be lost)
            result = branches[-1][1]
            for test, v in reversed(branches[:-1]):
                result = Expr(f"{v.wrap(OR)} if {test} else {result.wrap(COND)}",
                              next(iter(kinds)) if kinds else GoType.RAISE, COND,
                              stable=all(x.stable for _, x in branches),
                              maybe_undefined=any(x.maybe_undefined for _, x in branches))
            return result
        if truth is None:
            truth = self.truth(branches[-1][1])
            for test, v in reversed(branches[:-1]):
                t = self.truth(v)
                truth = Expr(f"{t.wrap(OR)} if {test} else {truth.wrap(COND)}", GoType.TRUTH,
                             COND, stable=t.stable and truth.stable)
            truth = replace(truth, code=f"({truth.code})", prec=ATOM) \
                if truth.prec <= COND else truth
        names = ", ".join(sorted(k.value for k in kinds))
        error = self.error(f"an and/or of operands of several Go types ({names}) used this "
                           "way: not supported", node)
        return Expr(self.refused(error), GoType.CHOICE, stable=truth.stable,
                    choice=Choice(branches, truth))

    def logic(self, name: str, arg_nodes: list[nodes.Node], node: nodes.Node, *,
              as_condition: bool) -> Expr:
        """Go's short-circuit and/or. As a condition: Jinja's and/or on truths. As a value:
        the deciding operand (only when all operands share one Go type)."""
        if len(arg_nodes) < 1:
            raise self.error(f"{name} needs arguments", node)
        jinja_op, prec = (" and ", AND) if name == "and" else (" or ", OR)
        truths: list[Expr] = []
        values: list[Expr] = []
        saved_facts = list(self.facts)
        with self.knowing({}):
            return self._logic(name, arg_nodes, node, as_condition, jinja_op, prec, truths,
                               values, saved_facts)

    def _logic(self, name: str, arg_nodes: list[nodes.Node], node: nodes.Node,
               as_condition: bool, jinja_op: str, prec: int, truths: list[Expr],
               values: list[Expr], saved_facts: list[tuple[str, int]]) -> Expr:
        operands: list[nodes.Node | tuple[Expr, str, bool]] = []
        i = 0
        while i < len(arg_nodes):
            prefix = self.prefix_test(arg_nodes[i], arg_nodes[i + 1]) \
                if i + 1 < len(arg_nodes) else None
            if prefix is not None:
                operands.append(prefix)
                i += 2
            else:
                operands.append(arg_nodes[i])
                i += 1
        for arg in operands:
            if isinstance(arg, tuple):
                c = self.starts_with(*arg)
                v: Expr | None = c
                if arg[2] == (name == "or"):
                    # later operands are evaluated only where the string has the prefix
                    self.learn_prefix(arg[0], arg[1])
            else:
                v = self.value(arg) if not as_condition else None
                c = self.cond_arg(arg) if as_condition else self.truth(v)  # type: ignore[arg-type]
            if c.is_const and not truths:
                # a constant operand decides or passes straight on
                if (name == "and") != bool(c.const):
                    self.facts = saved_facts
                    return c if as_condition or v is None else v
                continue
            if c.is_const and (name == "and") == bool(c.const) \
                    and (as_condition or arg is not operands[-1]):
                continue  # (the last operand is Go's value when every other one passes on)
            truths.append(c)
            if v is not None:
                values.append(v)
            if name == "and" and not isinstance(arg, tuple):
                self.learn(arg)
        self.facts = saved_facts
        if not truths:
            if as_condition or isinstance(operands[-1], tuple):
                return const_expr(name == "and")
            return self.value(operands[-1])
        code = jinja_op.join(c.wrap(prec + 1) for c in truths)
        cond = Expr(code, GoType.TRUTH, prec if len(truths) > 1 else truths[0].prec,
                    stable=all(c.stable for c in truths))
        if as_condition:
            return cond if len(truths) > 1 else truths[0]
        if len(values) == 1:
            return values[0]
        types = {v.type for v in values}
        if types == {GoType.BOOL}:
            return Expr(code, GoType.BOOL, prec, stable=cond.stable)
        # value: the first operand that decides, else the last (a CHOICE when their Go types
        # differ: each keeps its own printing, truth and functions)
        branches = tuple(
            (c.wrap(OR) if name == "or" else self.negate(c).wrap(OR), v)
            for v, c in zip(values[:-1], truths[:-1], strict=True)) + ((None, values[-1]),)
        return self.merge(branches, cond if len(truths) > 1 else truths[0], node)

    def learn(self, arg: nodes.Node) -> None:
        """Record `gt (len X) n` / `ge (len X) n` so a later `index X k` needs no bounds check."""
        if not isinstance(arg, nodes.PipeNode) or len(arg.cmds) != 1:
            return
        args = arg.cmds[0].args
        if len(args) != 3 or not isinstance(args[0], nodes.IdentifierNode):
            return
        op = args[0].ident
        if op not in ("gt", "ge") or not isinstance(args[2], nodes.NumberNode):
            return
        left = args[1]
        if not (isinstance(left, nodes.PipeNode) and len(left.cmds) == 1):
            return
        inner = left.cmds[0].args
        if len(inner) != 2 or not isinstance(inner[0], nodes.IdentifierNode) \
                or inner[0].ident != "len":
            return
        try:
            coll = self.value(inner[1])
        except TranslationError:
            return
        if coll.type not in SLICE_ELEMENTS and coll.type not in MAP_VALUES:
            return
        bound = args[2].int64 if op == "gt" else args[2].int64 - 1
        self.facts.append((self.length(coll).code, bound))

    # --- byte-exact strings ------------------------------------------------------------------
    #
    # Go's `len` and `slice` on a string count UTF-8 bytes; Jinja counts characters (minja and
    # llama.cpp count bytes), so neither is portable in general. They are exact where a string
    # is known to start with an ASCII prefix P (n bytes = n characters on every engine):
    #   `and (ge (len X) n) (eq (slice X 0 n) "P")` is X.startswith(P) (Go's `and` stops before
    #   the slice when X is shorter), and `or (lt (len X) n) (ne (slice X 0 n) "P")` its negation;
    #   where that test held, `slice X k` (k <= n) is X[k:], `slice X i j` (j <= n) is P[i:j],
    #   `len X >= k` is true for k <= n and X|length > n for k = n + 1 (one more byte iff one
    #   more character), `len X == n` is X == P. Every string starts with the empty prefix, so
    #   comparing `len X` with 0 is always exact. Anything else is refused.

    def prefix_test(self, first: nodes.Node, second: nodes.Node) -> tuple[Expr, str, bool] | None:
        """(X, P, negated) when `first second` are the two operands of a prefix test."""
        a, b = _command_args(first), _command_args(second)
        if a is None or b is None or len(a) != 3 or len(b) != 3 \
                or not isinstance(a[0], nodes.IdentifierNode) \
                or not isinstance(b[0], nodes.IdentifierNode) or b[0].ident not in ("eq", "ne"):
            return None
        length, count = _command_args(a[1]), a[2]
        if length is None or len(length) != 2 or not _is_ident(length[0], "len") \
                or not isinstance(count, nodes.NumberNode) or not count.is_int:
            return None
        sliced, literal = b[1], b[2]
        if isinstance(sliced, nodes.StringNode):
            sliced, literal = literal, sliced
        parts = _command_args(sliced)
        if not isinstance(literal, nodes.StringNode) or parts is None or len(parts) != 4 \
                or not _is_ident(parts[0], "slice"):
            return None
        start, end, prefix = parts[2], parts[3], literal.text
        if not (isinstance(start, nodes.NumberNode) and start.is_int and start.int64 == 0
                and isinstance(end, nodes.NumberNode) and end.is_int
                and end.int64 == len(prefix) and prefix and prefix.isascii()):
            return None
        bound = {"ge": count.int64, "gt": count.int64 + 1, "lt": count.int64,
                 "le": count.int64 + 1}.get(a[0].ident)
        negated = a[0].ident in ("lt", "le")
        if bound != len(prefix) or negated != (b[0].ident == "ne"):
            return None
        try:
            x, y = self.value(length[1]), self.value(parts[1])
        except TranslationError:
            return None
        if x.type != GoType.STRING or y.type != GoType.STRING or x.code != y.code:
            return None
        return x, prefix, negated

    def starts_with(self, x: Expr, prefix: str, negated: bool) -> Expr:
        code = f"{x.wrap(ATOM)}.startswith({quote(prefix)})"
        test = Expr(code, GoType.BOOL, ATOM, stable=x.stable, loop=x.loop,
                    negated=f"not {code}")
        return self.negate(test) if negated else test

    def learn_prefix(self, x: Expr, prefix: str) -> None:
        """From here on (in the current `knowing` scope) X starts with `prefix`."""
        if len(prefix) > len(self.prefixes.get(x.code, "")):
            self.prefixes[x.code] = prefix

    def known_prefix(self, x: Expr) -> str:
        return self.prefixes.get(x.code, "")

    @contextmanager
    def knowing(self, facts: dict[str, str]) -> Iterator[None]:
        """Prefix facts added for a branch, and everything learnt inside it dropped after."""
        saved = dict(self.prefixes)
        for code, prefix in facts.items():
            if len(prefix) > len(self.prefixes.get(code, "")):
                self.prefixes[code] = prefix
        try:
            yield
        finally:
            self.prefixes = saved

    def prefix_guards(self, pipe: nodes.PipeNode, *, holds: bool) -> dict[str, str]:
        """Prefix facts where the `if` condition `pipe` is true (`holds`) or false: a prefix
        test among the operands of an `and` that is true, or of an `or` that is false."""
        if pipe.decl or len(pipe.cmds) != 1:
            return {}
        return self._guards(pipe.cmds[0].args, holds)

    def _guards(self, args: list[nodes.Node], holds: bool) -> dict[str, str]:
        while len(args) == 1 and _command_args(args[0]) is not None:
            args = _command_args(args[0]) or []
        if not args or not isinstance(args[0], nodes.IdentifierNode):
            return {}
        op, operands = args[0].ident, args[1:]
        if op != ("and" if holds else "or"):
            return {}
        facts: dict[str, str] = {}
        i = 0
        while i < len(operands):
            test = self.prefix_test(operands[i], operands[i + 1]) \
                if i + 1 < len(operands) else None
            if test is not None:
                if test[2] != holds:
                    facts[test[0].code] = test[1]
                i += 2
                continue
            inner = _command_args(operands[i])
            if inner is not None:
                facts.update(self._guards(inner, holds))
            i += 1
        return facts

    def compare_byte_length(self, op: str, a: Expr, b: Expr, node: nodes.Node) -> Expr:
        """`len X` (bytes) against an integer constant, exact only near X's known prefix."""
        if a.bytes_of is None:
            a, b = b, a
            op = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
        x = a.bytes_of
        assert x is not None
        prefix = self.known_prefix(x)
        n = len(prefix)
        counted = Expr(f"{a.wrap(COMPARE)} {op} {b.wrap(COMPARE)}", GoType.BOOL, COMPARE,
                       stable=a.stable and b.stable, loop=a.loop or b.loop)
        if b.bytes_of is not None or not b.is_const or not isinstance(b.const, int) \
                or isinstance(b.const, bool):
            return counted  # the byte count itself (go_len), against whatever b is
        m = b.const
        if op in ("==", "!="):
            if m < n:
                return const_expr(op == "!=")
            if m > n:
                return counted
            equal = Expr(f"{x.wrap(ARITH)} == {quote(prefix)}", GoType.BOOL, COMPARE,
                         stable=x.stable, loop=x.loop,
                         negated=f"{x.wrap(ARITH)} != {quote(prefix)}")
            return equal if op == "==" else self.negate(equal)
        at_least, negated = {">=": (m, False), ">": (m + 1, False), "<": (m, True),
                             "<=": (m + 1, True)}[op]
        if at_least <= n:
            result = const_expr(True)
        elif at_least == n + 1:
            result = Expr(f"{x.wrap(ATOM)}|length > {n}", GoType.BOOL, COMPARE,
                          stable=x.stable, loop=x.loop, negated=f"{x.wrap(ATOM)}|length <= {n}")
        else:
            return counted
        return self.negate(result) if negated else result

    def slice_string(self, s: Expr, bounds: list[Expr], node: nodes.Node) -> Expr:
        """`slice` of a string: byte offsets, exact inside a known ASCII prefix."""
        if not bounds:
            return s
        if len(bounds) > 2 or any(b.type != GoType.INT for b in bounds):
            raise self.error("slice of a string by anything but one or two ints: not "
                             "supported", node)
        if not all(b.is_const for b in bounds):
            return self.cut_string(s, bounds)
        offsets = [int(b.const) for b in bounds]  # type: ignore[call-overload]
        if s.is_const:
            data = str(s.const).encode("utf-8")
            start, end = offsets[0], offsets[1] if len(offsets) == 2 else len(data)
            if not 0 <= start <= end <= len(data):
                return self.raising("slice index out of range")
            try:
                return const_expr(data[start:end].decode("utf-8"))
            except UnicodeDecodeError:
                raise self.error("slice cuts a UTF-8 character of the string in two: Go "
                                 "prints bytes that are not UTF-8", node) from None
        prefix = self.known_prefix(s)
        if len(offsets) == 2 and 0 <= offsets[0] <= offsets[1] <= len(prefix):
            return const_expr(prefix[offsets[0]:offsets[1]])
        if len(offsets) == 1 and 0 <= offsets[0] <= len(prefix):
            if offsets[0] == 0:
                return s
            return Expr(f"{s.wrap(ATOM)}[{offsets[0]}:]", GoType.STRING, ATOM, stable=s.stable,
                        loop=s.loop)
        return self.cut_string(s, bounds)

    def cut_string(self, s: Expr, bounds: list[Expr]) -> Expr:
        """`slice` of a string at byte offsets the translator cannot place: the go_slice
        macro finds them at run time (and fails where Go would print a cut character)."""
        self.macros.add("go_slice")
        end = bounds[1].code if len(bounds) == 2 else "none"
        return Expr(f"go_slice({s.code}, {bounds[0].code}, {end})", GoType.STRING,
                    stable=s.stable and all(b.stable for b in bounds),
                    loop=s.loop or next((b.loop for b in bounds if b.loop), None),
                    cut=(s.code, bounds[0].code, end))

    def compare_cut(self, op: str, a: Expr, b: Expr, node: nodes.Node) -> Expr:
        """`eq`/`ne` of a go_slice: a cut inside a character equals no string (its bytes are
        not UTF-8), so the comparison needs no failure there, only Go's out of range."""
        if a.cut is None:
            a, b = b, a
        if b.cut is not None or b.type != GoType.STRING:
            raise self.error("comparing a slice of a string with another slice: not "
                             "supported", node)
        assert a.cut is not None
        self.macros.add("go_slice_equals")
        s, i, j = a.cut
        call = f"go_slice_equals({s}, {i}, {j}, {b.code})"
        return Expr(f"{call} {'==' if op == '==' else '!='} 'T'", GoType.BOOL, COMPARE,
                    stable=a.stable and b.stable, loop=a.loop or b.loop,
                    negated=f"{call} {'!=' if op == '==' else '=='} 'T'")

    def length(self, coll: Expr) -> Expr:
        if coll.slice_of is not None:
            base, start = coll.slice_of
            if self.is_loop_index_of(base, start):
                loop = self.loops[-1]
                code = "loop.revindex" if loop.size is None else f"{loop.size} - {loop.index}"
                return Expr(code, GoType.INT, ARITH, stable=True, loop=loop.ident,
                            revindex=True)
        return Expr(f"{self.concrete(coll).wrap(ATOM)}|length", GoType.INT, ATOM,
                    stable=coll.stable, loop=coll.loop, non_negative=True)

    def is_loop_index_of(self, base: Expr, start: Expr) -> bool:
        return bool(self.loops) and start.code == self.loops[-1].index \
            and start.loop == self.loops[-1].ident \
            and base.code == self.loops[-1].collection.code

    def fn_not(self, args: list[Expr], node: nodes.Node) -> Expr:
        if len(args) != 1:
            raise self.error("not takes one argument", node)
        return self.negate(self.truth(args[0]))

    def compare(self, op: str, a: Expr, b: Expr, node: nodes.Node) -> Expr:
        ordered = op in ("<", "<=", ">", ">=")
        types = {a.type, b.type}
        if types & NIL_TYPES:
            return self.compare_nil(op, a, b, node)
        if ordered and (types & NON_BASIC or types == {GoType.BOOL}):
            # lt (and le, gt, ge, which call it) takes only numbers and strings: Go fails on
            # a bool or on any value of another kind, before looking at the other operand
            return self.raising("invalid type for comparison")
        if not ordered and a.type == b.type and a.type in COMPARED_BY_NIL:
            return self.compare_by_nil(op, a, b)
        if a.type != b.type:
            if types == {GoType.ANY, GoType.STRING} and not ordered:
                # a JSON null is Go's nil: equal to no string, and no error either
                any_side = a if a.type == GoType.ANY else b
                return Expr(f"{a.wrap(ARITH)} {op} {b.wrap(ARITH)} if {any_side.wrap(COMPARE)} "
                            f"is string else {'false' if op == '==' else 'true'} if "
                            f"{any_side.wrap(COMPARE)} is none else raise_exception("
                            "'incompatible types for comparison')", GoType.BOOL, COND)
            if not types & BASIC_KINDS or GoType.ANY in types:
                # Go compares two non-basic values by nil-ness, or fails on ones it cannot
                # compare (`eq .Tools .Messages`), and a decoded-JSON value by what it holds
                # (`eq .Items $.Messages` is true when both are nil): no Jinja value says which
                raise self.error(f"comparing values of Go types {a.type.value} and "
                                 f"{b.type.value}: not supported", node)
            return self.raising("incompatible types for comparison")
        if a.bytes_of is not None or b.bytes_of is not None:
            return self.compare_byte_length(op, a, b, node)
        if (a.cut is not None or b.cut is not None) and op in ("==", "!="):
            return self.compare_cut(op, a, b, node)
        if a.type not in (GoType.STRING, GoType.INT, GoType.FLOAT, GoType.BOOL):
            raise self.error(f"comparing values of Go type {a.type.value}: not supported", node)
        if ordered and a.type in (GoType.STRING, GoType.BOOL):
            raise self.error(f"ordering {a.type.value} values is not portable Jinja", node)
        if a.is_const and b.is_const:
            result = {"==": a.const == b.const, "!=": a.const != b.const}.get(op)
            if result is None:
                result = eval(f"{a.const!r} {op} {b.const!r}")  # noqa: S307 - two literals
            return const_expr(bool(result))
        if a.revindex and op in ("==", ">") and b.const == 1:
            loop = next(loop for loop in self.loops if loop.ident == a.loop)
            if loop.size is None:
                return Expr("loop.last" if op == "==" else "not loop.last", GoType.BOOL,
                            ATOM if op == "==" else NOT, stable=True, loop=a.loop)
            return Expr(f"{loop.index} + 1 {'==' if op == '==' else '<'} {loop.size}",
                        GoType.BOOL, COMPARE, stable=True, loop=a.loop,
                        negated=f"{loop.index} + 1 {'!=' if op == '==' else '>='} {loop.size}")
        inverse = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}[op]
        return Expr(f"{a.wrap(ARITH)} {op} {b.wrap(ARITH)}", GoType.BOOL, COMPARE,
                    stable=a.stable and b.stable, loop=a.loop or b.loop,
                    negated=f"{a.wrap(ARITH)} {inverse} {b.wrap(ARITH)}")

    @staticmethod
    def nil_test(e: Expr) -> str:
        """The Jinja test for Go's nil of `e`, a slice or map of NIL_TESTS."""
        return NIL_TESTS[e.type].format(c=e.wrap(COMPARE), a=e.wrap(ATOM))

    def compare_by_nil(self, op: str, a: Expr, b: Expr) -> Expr:
        """eq/ne of two values of one Go type that is not comparable: a struct fails; slices
        and maps are compared by nil-ness when either is nil, and fail when neither is."""
        if a.type in INCOMPARABLE_STRUCTS:
            return self.raising("non-comparable type")
        nil_a, nil_b = self.nil_test(a), self.nil_test(b)
        fail = "raise_exception('non-comparable type')"
        if a.code == b.code:  # (one value: nil equals itself)
            return Expr(f"{'true' if op == '==' else 'false'} if {nil_a} else {fail}",
                        GoType.BOOL, COND, stable=a.stable, loop=a.loop)
        both = f"({nil_a}) and ({nil_b})"  # (one of them is nil: equal when both are)
        if op == "!=":
            both = f"not ({both})"
        return Expr(f"{both} if ({nil_a}) or ({nil_b}) else {fail}", GoType.BOOL, COND,
                    stable=a.stable and b.stable, loop=a.loop or b.loop)

    def compare_nil(self, op: str, a: Expr, b: Expr, node: nodes.Node) -> Expr:
        """Go's eq/ne with a nil operand (a missing key, no data, a JSON null): nil equals nil
        and differs from any string, number or bool without an error; ordering nil fails."""
        if op not in ("==", "!="):
            return self.raising("invalid type for comparison")
        other = b if a.type in NIL_TYPES else a
        if other.type in NIL_TYPES:
            return const_expr(op == "==")
        if other.type == GoType.ANY:
            return Expr(f"{other.wrap(COMPARE)} is {'' if op == '==' else 'not '}none",
                        GoType.BOOL, COMPARE, stable=other.stable, loop=other.loop)
        if other.type in NIL_TESTS:  # a slice or map equals nil exactly when it is nil
            test = self.nil_test(other)
            return Expr(test if op == "==" else f"not ({test})", GoType.BOOL,
                        OR if op == "==" else NOT, stable=other.stable, loop=other.loop)
        if other.type in STRUCTS and "raise_exception(" not in other.code:
            return const_expr(op == "!=")  # (a struct, or a pointer to one, is never nil)
        if other.type not in (GoType.STRING, GoType.INT, GoType.FLOAT, GoType.BOOL):
            raise self.error(f"comparing nil with Go type {other.type.value}: not supported",
                             node)
        if other.is_const or "raise_exception(" not in other.code:
            return const_expr(op == "!=")
        # never none, but evaluated: Go fails where evaluating it fails
        return Expr(f"{other.wrap(COMPARE)} is {'' if op == '==' else 'not '}none", GoType.BOOL,
                    COMPARE, stable=other.stable, loop=other.loop)

    def fn_eq(self, args: list[Expr], node: nodes.Node) -> Expr:
        if len(args) < 2:
            raise self.error("eq needs at least two arguments", node)
        parts: list[Expr] = []
        for b in args[1:]:
            p = self.compare("==", args[0], b, node)
            if p.type == GoType.RAISE:
                # Go stops at the first equal operand, and fails at the first it cannot
                # compare only if none before it was equal
                if not parts:
                    return p
                before = self.any_of(parts)
                if before.is_const:
                    return const_expr(True) if before.const else p
                return Expr(f"true if {before.wrap(OR)} else {p.code}", GoType.BOOL, COND,
                            stable=before.stable)
            parts.append(p)
        return self.any_of(parts)

    @staticmethod
    def any_of(parts: list[Expr]) -> Expr:
        """Jinja's `or` of boolean Exprs, constants folded."""
        if len(parts) == 1:
            return parts[0]
        if any(p.is_const and p.const for p in parts):
            return const_expr(True)
        parts = [p for p in parts if not p.is_const]
        if not parts:
            return const_expr(False)
        return Expr(" or ".join(p.wrap(AND) for p in parts), GoType.BOOL, OR,
                    stable=all(p.stable for p in parts))

    def _binary(self, op: str, args: list[Expr], node: nodes.Node) -> Expr:
        if len(args) != 2:
            raise self.error("comparison takes two arguments", node)
        return self.compare(op, args[0], args[1], node)

    def fn_ne(self, args: list[Expr], node: nodes.Node) -> Expr:
        return self._binary("!=", args, node)

    def fn_lt(self, args: list[Expr], node: nodes.Node) -> Expr:
        return self._binary("<", args, node)

    def fn_le(self, args: list[Expr], node: nodes.Node) -> Expr:
        return self._binary("<=", args, node)

    def fn_gt(self, args: list[Expr], node: nodes.Node) -> Expr:
        return self._binary(">", args, node)

    def fn_ge(self, args: list[Expr], node: nodes.Node) -> Expr:
        return self._binary(">=", args, node)

    def fn_len(self, args: list[Expr], node: nodes.Node) -> Expr:
        if len(args) != 1:
            raise self.error("len takes one argument", node)
        a = args[0]
        if a.type == GoType.STRING:
            if a.is_const:
                return const_expr(len(str(a.const).encode("utf-8")))
            if a.known_bytes is not None:
                return a.known_bytes
            if a.cut is not None:  # (its bytes, not a string: a cut character counts too)
                self.macros.add("go_slice_len")
                return Expr(f"go_slice_len({', '.join(a.cut)})|int", GoType.INT, ATOM,
                            stable=a.stable, loop=a.loop, non_negative=True)
            # Go counts UTF-8 bytes; the engines count code points, UTF-16 units or bytes, so
            # the runtime counts them itself (comparisons near a known prefix stay cheaper)
            self.macros.add("go_len")
            return Expr(f"go_len({a.code})|int", GoType.INT, ATOM, stable=a.stable, loop=a.loop,
                        non_negative=True, bytes_of=a)
        if a.type in SLICE_ELEMENTS or a.type in MAP_VALUES:
            return self.length(a)
        return self.raising(f"len of type {a.type.value}")

    def fn_index(self, args: list[Expr], node: nodes.Node) -> Expr:
        if not args:
            raise self.error("index needs an argument", node)
        item = args[0]
        if item.type in NIL_TYPES:
            return self.raising("index of untyped nil")
        for key in args[1:]:
            item = self.index_one(item, key, node)
        return item

    def index_one(self, coll: Expr, key: Expr, node: nodes.Node) -> Expr:
        if coll.type == GoType.RAISE:  # (Go fails evaluating the operand first)
            return coll
        if coll.type in SLICE_ELEMENTS:
            if key.type != GoType.INT:
                return self.raising("cannot index slice with a non-integer")
            elem_type = SLICE_ELEMENTS[coll.type][0]
            base, offset = coll, key
            if coll.slice_of is not None:
                base, start = coll.slice_of
                if key.is_const and key.const == 0:
                    offset = start
                else:
                    offset = Expr(f"{start.wrap(ARITH)} + {key.wrap(CONCAT)}", GoType.INT, ARITH,
                                  stable=start.stable and key.stable,
                                  loop=start.loop or key.loop)
            code = f"{self.concrete(base).wrap(ATOM)}[{offset.code}]"
            length = self.length(coll)
            safe = key.is_const and isinstance(key.const, int) and key.const >= 0 and any(
                fact_code == length.code and bound >= key.const for fact_code, bound in self.facts)
            stable = base.stable and offset.stable
            if safe:
                return Expr(code, elem_type, stable=stable, loop=offset.loop or base.loop)
            if key.is_const and isinstance(key.const, int) and key.const >= 0:
                check = f"{key.code} < {length.wrap(ARITH)}"
            else:
                check = f"{key.wrap(ARITH)} >= 0 and {key.wrap(ARITH)} < {length.wrap(ARITH)}"
            return Expr(f"{code} if {check} else raise_exception('index out of range')",
                        elem_type, COND, stable=stable, loop=offset.loop or base.loop)
        if coll.type == GoType.ARGS:
            if key.type != GoType.STRING:
                return self.raising("map key must be a string")
            c = self.concrete(coll).wrap(ATOM)
            return Expr(f"{c}[{key.code}] if {key.wrap(COMPARE)} in {c} else none", GoType.ANY,
                        COND, stable=coll.stable)
        if coll.type == GoType.NIL:
            return self.raising("index of untyped nil")
        if coll.type in (GoType.INT, GoType.FLOAT, GoType.BOOL) or coll.type in STRUCTS:
            # not an array, slice, string or map (a struct pointer is dereferenced first)
            return self.raising(f"can't index item of type {coll.type.value}")
        if coll.type == GoType.PROPERTIES and key.type != GoType.STRING:
            return self.raising(f"value has type {key.type.value}; should be string")
        if coll.type == GoType.ANY and key.type == GoType.STRING:
            return self.json_key(coll, key, "cannot index with a string")
        if coll.type in (GoType.ANY, GoType.STRING) and key.type == GoType.INT:
            raise self.error(f"index of {coll.type.value} by a number: Go gives one byte of "
                             "the text, as a number, which no portable Jinja computes from a "
                             "character", node)
        raise self.error(f"index of Go type {coll.type.value}: not supported", node)

    @staticmethod
    def json_key(coll: Expr, key: Expr, reason: str) -> Expr:
        """The value of the string `key` in the decoded-JSON value `coll`: a map's value, nil
        when missing (Ollama parses with missingkey=zero); Go fails with `reason` on a list,
        a string, a scalar or nil."""
        c = coll.wrap(COMPARE)
        return Expr(f"({coll.wrap(ATOM)}[{key.code}] if {key.wrap(COMPARE)} in {c} else none) "
                    f"if {c} is mapping else raise_exception({quote(reason)})", GoType.ANY, COND,
                    stable=coll.stable and key.stable, loop=coll.loop)

    def fn_slice(self, args: list[Expr], node: nodes.Node) -> Expr:
        if not args:
            raise self.error("slice needs an argument", node)
        coll, bounds = args[0], args[1:]
        if coll.type == GoType.STRING:
            return self.slice_string(coll, bounds, node)
        if coll.type not in SLICE_ELEMENTS:
            return self.raising(f"can't slice item of type {coll.type.value}")
        if not bounds:
            return coll
        if len(bounds) > 2 or any(b.type != GoType.INT for b in bounds):
            raise self.error("slice with these indexes: not supported", node)
        c = self.concrete(coll).wrap(ATOM)
        start = bounds[0]
        if len(bounds) == 1:
            code = f"{c}[{start.code}:]"
            if self.is_loop_index_of(coll, start):
                return Expr(code, coll.type, stable=True, loop=start.loop,
                            slice_of=(coll, start))
            check = f"{start.wrap(ARITH)} >= 0 and {start.wrap(ARITH)} <= {c}|length"
            return self.nil_sliced(coll, bounds, Expr(
                f"{code} if {check} else raise_exception('slice index out of range')",
                coll.type, COND, stable=coll.stable and start.stable, slice_of=(coll, start)))
        end = bounds[1]
        check = (f"{start.wrap(ARITH)} >= 0 and {start.wrap(ARITH)} <= {end.wrap(ARITH)} and "
                 f"{end.wrap(ARITH)} <= {c}|length")
        return self.nil_sliced(coll, bounds, Expr(
            f"{c}[{start.code}:{end.code}] if {check} else "
            "raise_exception('slice index out of range')", coll.type, COND,
            stable=coll.stable and start.stable and end.stable))

    def nil_sliced(self, coll: Expr, bounds: list[Expr], sliced: Expr) -> Expr:
        """Go slices a nil slice [0:0] to nil again (`json` prints null, not []); any other
        bounds fail as for an empty one."""
        if not coll.maybe_undefined or coll.code in self.truthy:
            return sliced
        zero = " and ".join(f"{b.wrap(COMPARE)} == 0" for b in bounds if not (
            b.is_const and b.const == 0))
        nil = f"({coll.code} is not defined or {coll.code} is none)"
        if any(b.is_const and b.const != 0 for b in bounds):
            return sliced
        return Expr(f"none if {nil}{' and ' + zero if zero else ''} else {sliced.wrap(COND)}",
                    coll.type, COND, stable=sliced.stable, maybe_undefined=True)

    def concat(self, parts: list[Expr]) -> Expr:
        merged: list[Expr] = []
        for p in parts:
            if p.is_const and p.const == "":
                continue
            if merged and p.is_const and merged[-1].is_const:
                merged[-1] = const_expr(str(merged[-1].const) + str(p.const))
            else:
                merged.append(p)
        if not merged:
            return const_expr("")
        if len(merged) == 1:
            return merged[0]
        return Expr(" ~ ".join(p.wrap(ATOM) for p in merged), GoType.STRING, CONCAT,
                    stable=all(p.stable for p in merged))

    def fn_print(self, args: list[Expr], node: nodes.Node) -> Expr:
        parts: list[Expr] = []
        for i, a in enumerate(args):
            if a.type == GoType.MIXED and GoType.INT not in a.alts:
                raise self.error("print of a variable holding a string or a struct: not "
                                 "supported", node)
            if i > 0 and a.type != GoType.STRING and args[i - 1].type != GoType.STRING:
                if {GoType.ANY, GoType.MIXED} & {a.type, args[i - 1].type}:
                    raise self.error("print spacing of a value whose Go type is known only at "
                                     "run time: not supported", node)
                parts.append(const_expr(" "))
            parts.append(self.text(a, node, sprint=True))
        return self.concat(parts)

    def fn_println(self, args: list[Expr], node: nodes.Node) -> Expr:
        parts: list[Expr] = []
        for i, a in enumerate(args):
            if i > 0:
                parts.append(const_expr(" "))
            parts.append(self.text(a, node, sprint=True))
        parts.append(const_expr("\n"))
        return self.concat(parts)

    def fn_printf(self, args: list[Expr], node: nodes.Node) -> Expr:
        if not args or not args[0].is_const or args[0].type != GoType.STRING:
            raise self.error("printf needs a constant format string", node)
        fmt = str(args[0].const)
        operands = list(args[1:])
        parts: list[Expr] = []
        padding: Expr | None = None
        width: Expr | None = None
        for item in parse_printf(fmt):
            if isinstance(item, str):
                parts.append(const_expr(item))
            elif item.verb == "":
                parts.append(const_expr("%!(NOVERB)"))
            elif item.indexed:
                raise self.error(f"printf {fmt!r}: an explicit argument index "
                                 f"({item.source!r}): not supported", node)
            elif item.star:
                if padding is not None or item.source != "%*s" or len(operands) < 2:
                    raise self.error(f"printf {fmt!r}: only one `%*s` is supported", node)
                width = operands.pop(0)
                padding = self.star_padding(width, operands.pop(0), fmt, node)
                parts.append(padding)
            elif not operands:
                parts.append(const_expr(f"%!{item.verb}(MISSING)"))
            else:
                parts.append(self.printf_verb(item, operands.pop(0), fmt, node))
        if operands:
            parts.append(self.printf_extra(operands, fmt, node))
        result = self.concat(parts)
        if padding is None or width is None:
            return result
        if any(not p.is_const for p in parts if p is not padding):
            return result  # its length is not known either
        fixed = sum(len(str(p.const).encode("utf-8")) for p in parts if p is not padding)
        bad = len("%!(BADWIDTH)")  # Go's fmt for a width beyond ±1e6
        if width.is_const:
            count = int(width.const)  # type: ignore[call-overload]
            return replace(result, known_bytes=const_expr(
                fixed + (count if count <= 1_000_000 else bad)))
        w = width.wrap(ARITH)
        plus = f" + {fixed}" if fixed else ""
        return replace(result, known_bytes=Expr(
            f"{w}{plus} if {w} <= 1000000 else {fixed + bad}", GoType.INT, COND,
            stable=width.stable, loop=width.loop, non_negative=True))

    def printf_verb(self, verb: Verb, arg: Expr, fmt: str, node: nodes.Node) -> Expr:
        """One directive of printf on its operand, as Go's (*pp).printArg prints it."""
        type_name = GO_TYPE_NAMES.get(arg.type)
        if arg.type in (GoType.NIL, GoType.NO_DATA) and arg.is_const:
            if verb.verb in "vT":  # padded like a string; any other verb: %!d(<nil>)
                return self.padded(const_expr("<nil>"), verb, zero=True)
            return const_expr(f"%!{verb.verb}(<nil>)")
        if type_name is None:
            if verb.verb == "v" and verb.plain:  # fmt's %v is what Sprint prints
                return self.text(arg, node, sprint=True)
            if arg.type in STRINGERS and verb.verb in "vs" and not verb.has("#"):
                # String(), then width and precision as for a string (`+` means nothing there)
                return self.printf_value(replace(verb, flags=verb.flags.replace("+", "")),
                                         self.text(arg, node, sprint=True), "string", fmt,
                                         node, sharp_v=False)
            if verb.verb in "sdv" and set(verb.flags) <= {"-"} and verb.precision is None:
                composite = self.printf_composite(verb, arg, node)
                if composite is not None:
                    return composite
            raise self.error(f"printf verb %{verb.verb} with a {arg.type.value} operand: "
                             "not supported", node)
        if verb.verb == "T":
            return self.padded(const_expr(type_name), verb, zero=True)
        if verb.verb not in VALID_VERBS[type_name]:
            # badVerb: %!d(string=…), the value printed by %v with the directive's flags
            inner = self.printf_value(replace(verb, verb="v"), arg, type_name, fmt, node,
                                      sharp_v=False)
            return self.concat([const_expr(f"%!{verb.verb}({type_name}="), inner,
                                const_expr(")")])
        if verb.verb == "v":  # `#` and `+` become Go-syntax and field-name printing
            sharp_v = verb.has("#")
            verb = replace(verb, flags=verb.flags.replace("#", "").replace("+", ""))
            return self.printf_value(verb, arg, type_name, fmt, node, sharp_v=sharp_v)
        return self.printf_value(verb, arg, type_name, fmt, node, sharp_v=False)

    def printf_composite(self, verb: Verb, arg: Expr, node: nodes.Node) -> Expr | None:
        """%s, %d or %v (a width and `-` at most) of a decoded-JSON value, a message, its tool
        calls or one call, as fmt's printValue prints them (runtime.go_fmt_*); None for the
        others (a pointer inside prints its address, or a type name of Go's package)."""
        t, c = arg.type, arg.code
        params = (f"{runtime.literal(verb.verb)}, {-1 if verb.width is None else verb.width}, "
                  f"{'true' if verb.has('-') else 'false'}")
        if t == GoType.ANY:  # at the top, nil is printArg's: padded <nil> for %v, else %!s(<nil>)
            self.macros.add("go_fmt_json")
            nil = (self.padded(const_expr("<nil>"), verb, zero=False) if verb.verb == "v"
                   else const_expr(f"%!{verb.verb}(<nil>)"))
            return Expr(f"{nil.code} if {arg.wrap(COMPARE)} is none else "
                        f"go_fmt_json({c}, {params})", GoType.STRING, COND, stable=arg.stable,
                        loop=arg.loop)
        if t == GoType.ARGS and verb.verb == "d":  # (String() is only for %s and %v)
            self.macros.add("go_fmt_json")
            return Expr(f"'map[]' if {arg.wrap(COMPARE)} is not defined or "
                        f"{arg.wrap(COMPARE)} is none else go_fmt_json({c}, {params})",
                        GoType.STRING, COND, stable=arg.stable, loop=arg.loop)
        if t in (GoType.TOOL_CALL, GoType.TOOL_CALLS):
            macro = "go_fmt_tool_call" if t == GoType.TOOL_CALL else "go_fmt_tool_calls"
            self.macros.add(macro)
            return Expr(f"{macro}({c}, {params})", GoType.STRING, stable=arg.stable,
                        loop=arg.loop)
        if t == GoType.MESSAGE:  # the pointer at the top: & and the struct, field by field
            self.macros.update(("go_fmt_string", "go_fmt_tool_calls"))
            role, content, thinking, calls, name, call_id = self.message_struct(arg)
            fields = [*(f"go_fmt_string({f}, {params})" for f in (role, content, thinking)),
                      "'[]'", f"go_fmt_tool_calls({calls}, {params})",
                      *(f"go_fmt_string({f}, {params})" for f in (name, call_id))]
            return Expr("'&{' ~ " + " ~ ' ' ~ ".join(fields) + " ~ '}'", GoType.STRING, CONCAT,
                        stable=arg.stable)
        if t == GoType.MESSAGES and verb.verb == "v":  # each element's address, padded
            return self.text(arg, node)
        if t == GoType.MESSAGES:
            raise self.error(f"printf %s or %d of {t.value}: Go prints each message's "
                             "address, or its Go type's name (`%!s(*template.templateMessage="
                             "…)`), which only Ollama's source decides", node)
        if t == GoType.PROPERTY:
            raise self.error(f"printf %s or %d of {t.value}: Go prints its nested "
                             "properties' pointer (an address), or its Go type's name "
                             "(`%!s(*api.ToolPropertiesMap=<nil>)`), which only Ollama's "
                             "source decides", node)
        return None

    def printf_value(self, verb: Verb, arg: Expr, type_name: str, fmt: str, node: nodes.Node,
                     *, sharp_v: bool) -> Expr:
        """A verb that is valid for the operand's type (fmtBoolean, fmtInteger, fmtString)."""
        unsupported = self.error(f"printf {fmt!r}: {verb.source!r} of a {type_name}: not "
                                 "supported", node)
        if type_name == "bool":
            return self.padded(self.text(arg, node, sprint=True), verb, zero=True)
        if type_name == "int" and verb.verb in "dvboOxX":
            if verb.plain and verb.verb in "dv":
                return self.text(arg, node, sprint=True)
            if arg.is_const and abs(int(arg.const)) >= 2**53:  # type: ignore[call-overload]
                raise unsupported
            self.macros.add("go_int")
            code = (f"go_int({arg.code}, {runtime.literal(verb.verb.replace('v', 'd'))}, "
                    f"{runtime.literal(verb.flags)}, {_or_minus_one(verb.width)}, "
                    f"{_or_minus_one(verb.precision)})")
            return Expr(code, GoType.STRING, stable=arg.stable, loop=arg.loop)
        if type_name == "string" and verb.verb in "vs" and not sharp_v:
            if verb.precision is not None:  # the first runes, then the padding
                if arg.is_const:
                    arg = const_expr(str(arg.const)[:verb.precision])
                else:
                    self.macros.add("go_truncate")
                    arg = Expr(f"go_truncate({arg.code}, {verb.precision})", GoType.STRING,
                               stable=arg.stable, loop=arg.loop)
            if verb.width is None:
                return arg
            if arg.is_const:  # (a constant's runes are its characters)
                return self.padded(arg, verb, zero=True)
            self.macros.add("go_pad_string")
            return Expr(f"go_pad_string({arg.code}, {verb.width}, "
                        f"{'true' if verb.has('-') else 'false'}, "
                        f"{'true' if verb.has('0') else 'false'})", GoType.STRING,
                        stable=arg.stable, loop=arg.loop)
        if type_name == "float64" and verb.verb == "v" and verb.plain:
            return self.text(arg, node, sprint=True)
        if type_name == "float64" and verb.verb == "v" and set(verb.flags) <= {"-"} \
                and verb.precision is None:  # %v's digits, padded (`0` would pad after a sign)
            return self.padded(self.text(arg, node, sprint=True), verb, zero=False)
        if type_name == "float64" and arg.is_const and verb.verb in "xX" \
                and verb.precision is None and not verb.has("#"):
            return const_expr(_go_hex_float(float(arg.const), verb))  # type: ignore[arg-type]
        if type_name == "float64" and arg.is_const and verb.verb in "fFeE" \
                and not verb.has("#"):
            # a constant, formatted here: C's %f/%e, like Go's, round the exact binary value
            # half to even, and take the same flags, width and precision (6 by default)
            spec = "%" + verb.flags + ("" if verb.width is None else str(verb.width)) \
                + ("" if verb.precision is None else f".{verb.precision}") + verb.verb.lower()
            text = spec % float(arg.const)  # type: ignore[arg-type]
            return const_expr(text.upper() if verb.verb == "E" else text)
        raise unsupported

    def padded(self, text: Expr, verb: Verb, *, zero: bool) -> Expr:
        """`text` (ASCII, or a constant) padded to the directive's width as fmt.pad does
        (by runes); `zero`: the `0`
        flag pads with zeros (strings and booleans; numbers pad their digits themselves)."""
        if verb.width is None:
            return text
        minus, zeros = verb.has("-"), zero and verb.has("0")
        if text.is_const:
            s = str(text.const)
            fill = ("0" if zeros and not minus else " ") * max(0, verb.width - len(s))
            return const_expr(s + fill if minus else fill + s)
        self.macros.add("go_pad")
        return Expr(f"go_pad({text.code}, {verb.width}, {'true' if minus else 'false'}, "
                    f"{'true' if zeros else 'false'})", GoType.STRING, stable=text.stable,
                    loop=text.loop)

    def printf_extra(self, operands: list[Expr], fmt: str, node: nodes.Node) -> Expr:
        """Operands printf did not use: Go appends %!(EXTRA int=1, string=a)."""
        parts: list[Expr] = [const_expr("%!(EXTRA ")]
        for i, arg in enumerate(operands):
            if i:
                parts.append(const_expr(", "))
            if arg.type in (GoType.NIL, GoType.NO_DATA) and arg.is_const:
                parts.append(const_expr("<nil>"))
                continue
            type_name = GO_TYPE_NAMES.get(arg.type)
            if type_name is None:
                raise self.error(f"printf {fmt!r}: an extra {arg.type.value} operand: not "
                                 "supported", node)
            parts += [const_expr(f"{type_name}="), self.text(arg, node, sprint=True)]
        parts.append(const_expr(")"))
        return self.concat(parts)

    def star_padding(self, width: Expr, text: Expr, fmt: str, node: nodes.Node) -> Expr:
        """`%*s` of "" with an int width: spaces to a width known only at run time. Jinja
        cannot write them portably, but their number is exact (Go pads to the width; a width
        beyond ±1e6 prints %!(BADWIDTH) instead, a negative one pads to its absolute value,
        hence the non-negative requirement). Only the `len` of the result is translated:
        granite's counter idiom `len (printf "a%*s" $n "")`, which is $n + 1."""
        if width.type != GoType.INT or not width.non_negative:
            raise self.error(f"printf {fmt!r}: `%*s` needs a width that is provably a "
                             "non-negative int (a length, a range index, or a variable only "
                             "ever set to those)", node)
        if not (text.is_const and text.const == ""):
            raise self.error(f"printf {fmt!r}: `%*s` of anything but \"\": not supported",
                             node)
        error = self.error(f"printf {fmt!r}: `%*s` pads to a width known only at run time, "
                           "which portable Jinja cannot write (only the length of the result "
                           "is translated)", node)
        return Expr(self.refused(error), GoType.STRING, stable=width.stable, loop=width.loop)

    def fn_html(self, args: list[Expr], node: nodes.Node) -> Expr:
        """Go's html: one string as it is, anything else through fmt.Sprint (a nil becomes
        `<no value>` first, as evalArgs's printableValue makes it), then HTML-escaped."""
        if len(args) == 1 and args[0].type == GoType.STRING:
            text = args[0]
        elif len(args) == 1 and args[0].type not in GO_TYPE_NAMES \
                and not (args[0].type in NIL_TYPES and args[0].is_const):
            a = args[0]
            if a.type == GoType.ANY:  # a nil interface is <no value>, as printableValue says
                self.macros.add("print_value")
                text = Expr(f"'<no value>' if {a.wrap(COMPARE)} is none else "
                            f"print_value({a.code})", GoType.STRING, COND, stable=a.stable)
            else:  # printableValue takes the struct a pointer points to: template printing
                text = self.text(a, node, sprint=a.type != GoType.MESSAGE)
        else:
            text = self.sprint_of_scalars(args, node, "html")
        if text.is_const:
            escaped = str(text.const)
            for raw, entity in (("&", "&amp;"), ("'", "&#39;"), ("<", "&lt;"), (">", "&gt;"),
                                ('"', "&#34;"), ("\x00", "\ufffd")):
                escaped = escaped.replace(raw, entity)
            return const_expr(escaped)
        self.macros.add("go_html")
        return Expr(f"go_html({text.code})", GoType.STRING, stable=text.stable, loop=text.loop)

    def sprint_of_scalars(self, args: list[Expr], node: nodes.Node, name: str) -> Expr:
        """evalArgs' text of strings, numbers, booleans and constant nils (`<no value>`, as
        printableValue makes a nil): fmt.Sprint of them; any other operand is refused."""
        parts: list[Expr] = []
        for a in args:
            if a.type in NIL_TYPES and a.is_const:
                parts.append(const_expr("<no value>"))
            elif a.type in GO_TYPE_NAMES:
                parts.append(a)
            else:
                raise self.error(f"{name} of a {a.type.value}: not supported", node)
        return self.fn_print(parts, node)

    def fn_js(self, args: list[Expr], node: nodes.Node) -> Expr:
        """Go's js (JSEscapeString of evalArgs' text): exact where the text is known to be
        ASCII (numbers, booleans, nil, constants), since Go escapes a non-ASCII character it
        cannot print by its code point, which portable Jinja has no way to read."""
        return self.escaped(args, node, "js", _js_ascii, lambda e, t: e)

    def fn_urlquery(self, args: list[Expr], node: nodes.Node) -> Expr:
        """Go's urlquery (url.QueryEscape of evalArgs' text): exact for numbers, booleans, nil
        and constants; a string known only at run time would need its UTF-8 bytes."""

        def at_run_time(e: Expr, t: GoType) -> Expr:
            if t != GoType.FLOAT:  # digits, `-`, true/false: nothing to escape
                return e
            self.macros.add("go_query_number")  # (an exponent's `+`)
            return Expr(f"go_query_number({e.code})", GoType.STRING, stable=e.stable,
                        loop=e.loop)

        return self.escaped(args, node, "urlquery", _query_escape, at_run_time)

    def escaped(self, args: list[Expr], node: nodes.Node, name: str,
                constant: Callable[[str], str | None],
                at_run_time: Callable[[Expr, GoType], Expr]) -> Expr:
        """evalArgs' text of `args` (one string as it is, else fmt.Sprint with a nil as
        `<no value>`) escaped: `constant` escapes a constant text (None: it cannot), and
        `at_run_time` one number's or boolean's text."""
        if len(args) == 1 and args[0].type in (GoType.INT, GoType.FLOAT, GoType.BOOL) \
                and not args[0].is_const:
            return at_run_time(self.text(args[0], node, sprint=True), args[0].type)
        if all(a.is_const and (a.type in GO_TYPE_NAMES or a.type in NIL_TYPES) for a in args):
            text = self.sprint_of_scalars(args, node, name)
            assert text.is_const
            result = constant(str(text.const))
            if result is not None:
                return const_expr(result)
        raise self.error(f"{name} of a value known only at run time (or holding characters "
                         f"beyond ASCII): Go escapes by a character's code point or UTF-8 bytes, "
                         f"which no portable Jinja reads", node)

    def fn_call(self, args: list[Expr], node: nodes.Node) -> Expr:
        """No value of Ollama's data model is a function: Go's `call` always fails."""
        if not args:
            return self.raising("wrong number of args for call: want at least 1 got 0")
        return self.raising("error calling call: not a function")

    def fn_json(self, args: list[Expr], node: nodes.Node) -> Expr:
        if len(args) != 1:
            raise self.error("json takes one argument", node)
        a = args[0]
        if a.is_const:
            if a.type == GoType.NIL:
                return const_expr("null")
            if a.type == GoType.BOOL:
                return const_expr("true" if a.const else "false")
            if a.type == GoType.INT:
                return const_expr(str(a.const))
        if a.type == GoType.BOOL:
            return self.text(a, node)
        if a.type == GoType.INT:
            return self.text(a, node)
        if a.type in NIL_TYPES and "raise_exception(" not in a.code:
            return const_expr("null")  # (nil, whatever its code)
        if a.type == GoType.ARGS:
            self.macros.add("json_arguments")
            return Expr(f"json_arguments({a.code})", GoType.STRING)
        if a.type in (GoType.MESSAGE, GoType.MESSAGES):
            # every field of the struct is in the JSON: the collated messages must carry them
            self.message_fields.update(OPTIONAL_MESSAGE_KEYS)
        macro = JSON_MACROS.get(a.type)
        if macro is None:
            raise self.error(f"json of Go type {a.type.value}: not supported", node)
        self.macros.add(macro)
        return Expr(f"{macro}({a.code})", GoType.STRING)

    def fn_currentDate(self, args: list[Expr], node: nodes.Node) -> Expr:  # noqa: N802
        if any(a.type != GoType.STRING for a in args):
            return self.raising("currentDate takes string arguments")
        return Expr("strftime_now('%Y-%m-%d')", GoType.STRING)

    def fn_yesterdayDate(self, args: list[Expr], node: nodes.Node) -> Expr:  # noqa: N802
        if any(a.type != GoType.STRING for a in args):
            return self.raising("yesterdayDate takes string arguments")
        self.macros.add("yesterday_date")
        return Expr("yesterday_date()", GoType.STRING)

    def fn_toTypeScriptType(self, args: list[Expr], node: nodes.Node) -> Expr:  # noqa: N802
        if len(args) != 1:
            raise self.error("toTypeScriptType takes one argument", node)
        if args[0].type != GoType.PROPERTY:
            return const_expr("any")
        self.macros.add("typescript_type")
        return Expr(f"typescript_type({args[0].code})", GoType.STRING)

    # --- the whole template -----------------------------------------------------------------

    def body_lines(self) -> list[str]:
        """The template body (after its root namespace, if any) as Jinja lines."""
        self.open_scope(0, self.template.root)
        self.emit_list(self.template.root)
        self.flush()
        return self.lines

    def run(self) -> str:
        body = self.body_lines()
        self.emit_template_macros()
        if self.root_used - PATH_NEUTRAL_FIELDS - {"Messages"} \
                or not messages_alike_when_nil(self.template):
            # The request may take Ollama's fill-in-the-middle path, where .System, .Tools and
            # .Messages do not exist and .Prompt/.Suffix do: a second rendering of the body.
            fim = Emitter(self.template, self.analysis, depth=1, mode="fim",
                          templates=self.templates)
            fim_body = fim.body_lines()
            fim.emit_template_macros()
            self.macros |= fim.macros
            self.root_used |= fim.root_used
            body = fim_branch(fim_body, body)
        definitions = [line for entry in self.templates.by_key.values() for line in entry.lines]
        return "\n".join(self.header() + self.prelude() + definitions + body)

    def header(self) -> list[str]:
        lines = [
            f"{{#- Translated by gotmpl2jinja from {header_name(self.template.name)}, an Ollama "
            "Go template.",
            "    Renders byte for byte what Ollama renders, under gotmpl2jinja's equivalence",
            "    contract (variables: messages, tools, enable_thinking, reasoning_effort). #}",
        ]
        if self.macros:
            lines.append(runtime.macro_block(sorted(self.macros)))
        return lines

    def collate(self, system: bool) -> list[str]:
        """Ollama's collate (roles lower-cased, consecutive messages of one role except tool
        merged) and .System (every system message, joined).

        Most requests need no change: a first pass only marks what collate might change (in
        a block `set`, so no namespace is read), with the roles joined into one string (a
        filter call is dear on llama.cpp, a loop step on jinja2): a role not in lower case, two
        like roles in a row (a substring, for the three roles that merge), and in one loop a
        content that is not a string or a role other than system, user, assistant and tool
        (an unknown role could hide a pair from the substrings, so it takes the long way);
        where it marks nothing the request's own list is used. Otherwise one
        pass copies nothing where nothing changes: the list is cut and joined only around a
        merge or a message that changes (a role to lower-case, a content that is not a
        string), never rebuilt message by message (a Jinja list grows only by copying)."""
        optional = [key for key in OPTIONAL_MESSAGE_KEYS if key in self.message_fields]
        fields = ["'role': role", f"'content': {MESSAGE_CONTENT}",
                  *(f"'{key}': {item_or('message', key, MESSAGE_DEFAULTS[key])}"
                    for key in optional)]
        merged = ["'role': role",
                  f"'content': previous['content'] ~ '\\n\\n' ~ {MESSAGE_CONTENT}",
                  *(f"'{key}': previous['{key}']" for key in optional)]
        changes = "message['content'] is not string or message['role'] != role"
        lines = [
            "{#- Ollama's collate: roles lower-cased, consecutive messages of one role (except"
            " tool) merged. The request's list is kept where that changes nothing, else cut"
            " only around what changes. #}",
            "{%- set collated_roles = '\\n' ~ messages|map(attribute='role')|join('\\n\\n')"
            " ~ '\\n' %}",
            "{%- set collated_marks %}",
            "{%- if collated_roles|lower != collated_roles"
            " or '\\nsystem\\n\\nsystem\\n' in collated_roles"
            " or '\\nuser\\n\\nuser\\n' in collated_roles"
            " or '\\nassistant\\n\\nassistant\\n' in collated_roles %}",
            "    {{- 'x' }}",
            "{%- else %}",
            "    {%- for collated_message in messages %}",
            "        {%- if collated_message['content'] is not string"
            " or collated_message['role'] not in"
            " ['system', 'user', 'assistant', 'tool'] %}",
            "            {{- 'x' }}",
            "        {%- endif %}",
            "    {%- endfor %}",
            "{%- endif %}",
            "{%- endset %}",
            "{%- if collated_marks %}",
            *(INDENT + line for line in [
                "{%- set collated = namespace(messages=[], start=0, group=none) %}",
                "{%- for collated_at in range(messages|length) %}",
                "    {%- set message = messages[collated_at] %}",
                "    {%- set role = message['role']|lower %}",
                f"    {{%- set merges = {merges_into_previous('collated_at', 'role')} %}}",
                "    {%- set merged_next = collated_at + 1 < messages|length and role != 'tool'"
                " and messages[collated_at + 1]['role']|lower == role %}",
                "    {%- if merges %}",
                "        {%- set previous = collated.group %}",
                "        {%- set collated.group = {" + ", ".join(merged) + "} %}",
                f"    {{%- elif merged_next or {changes} %}}",
                "        {%- set collated.messages = collated.messages"
                " + messages[collated.start:collated_at] %}",
                "        {%- set collated.group = {" + ", ".join(fields) + "} %}",
                "    {%- endif %}",
                f"    {{%- if not merged_next and (merges or {changes}) %}}",
                "        {%- set collated.messages = collated.messages + [collated.group] %}",
                "        {%- set collated.start = collated_at + 1 %}",
                "    {%- endif %}",
                "{%- endfor %}",
                "{%- set messages = collated.messages + messages[collated.start:] %}",
            ]),
            "{%- endif %}",
        ]
        if system:
            lines += system_join(collated=True)
        return lines

    def prelude(self) -> list[str]:
        lines: list[str] = []
        used = self.root_used
        if "Messages" in used:
            lines += self.collate("System" in used)
        elif "System" in used:
            lines += system_join(collated=False)
        if used & {"Think", "ThinkLevel", "IsThinkSet"}:
            lines += think_prelude(used, has_thinking(self.template))
        return lines


def think_prelude(used: set[str], thinking: bool) -> list[str]:
    """Ollama's think values after its server's steps (equivalence contract): on a template
    with the thinking capability an absent think is true; on one without it, a true think or a
    level is refused by Ollama and rendered here as if absent, so only false is seen."""
    lines: list[str] = []
    if thinking:
        lines.append("{#- Ollama's think values: the template can think, so think defaults"
                     " to true. #}")
        if "Think" in used or "ThinkLevel" in used:
            lines.append("{%- set think = enable_thinking is not defined or enable_thinking %}")
        if "ThinkLevel" in used:
            lines.append("{%- set think_level = reasoning_effort if reasoning_effort is defined"
                         " else 'medium' if think else '' %}")
        if "IsThinkSet" in used:
            lines.append("{%- set is_think_set = true %}")
        return lines
    lines.append("{#- Ollama's think values: the template cannot think, so Ollama refuses a true"
                 " think (rendered as if absent) and only false is set. #}")
    if "Think" in used:
        lines.append("{%- set think = false %}")
    if "ThinkLevel" in used:
        lines.append("{%- set think_level = '' %}")
    if "IsThinkSet" in used:
        lines.append("{%- set is_think_set = enable_thinking is defined"
                     " and not enable_thinking %}")
    return lines


def _command_args(node: nodes.Node) -> list[nodes.Node] | None:
    """The arguments of `node` when it is a parenthesised single command, like `(len .Role)`."""
    if isinstance(node, nodes.PipeNode) and not node.decl and len(node.cmds) == 1:
        return node.cmds[0].args
    return None


def _is_float_syntax(text: str) -> bool:
    """text/template's test for a float constant: `.eEpP` in it, not a hex int or a rune."""
    body = text.lstrip("+-")
    if body.startswith("'"):
        return False
    if body[:2] in ("0x", "0X"):
        return "p" in body or "P" in body
    return any(c in body for c in ".eEpP")


def _is_ident(node: nodes.Node, name: str) -> bool:
    return isinstance(node, nodes.IdentifierNode) and node.ident == name


def uses_messages(template: nodes.Template) -> bool:
    """Ollama's Vars() test (§2): the template takes the messages path."""
    from gotmpl2jinja.ollama import facts as ollama

    return bool(ollama.uses_messages(template))


def emit(template: nodes.Template) -> str:
    """Jinja for a parsed template, messages or legacy path (raises TranslationError when
    unfaithful)."""
    return _without_nul_near_a_raise(template, _emit(template))


def _without_nul_near_a_raise(template: nodes.Template, jinja: str) -> str:
    """Refuse Jinja that holds a NUL character and can raise. A NUL has no portable escape,
    so it is written raw; llama.cpp's engine quotes the source around a failing call in its
    error message and hands the message on as a C string, cut at the NUL: the template's
    `raise_exception` then cannot be told from an engine error (found by the template
    generator: `\x00{{- .Messages.Foo -}}`)."""
    if "\x00" not in jinja or "raise_exception(" not in jinja:
        return jinja
    for _, tree in template.trees():
        for node in tree.walk():
            if isinstance(node, (nodes.TextNode, nodes.StringNode)) and "\x00" in node.text:
                raise TranslationError(
                    "text holding a NUL character, in a template that can fail: llama.cpp's "
                    "engine cuts its error message at the NUL (its raise_exception could not be "
                    "told from an engine error): not supported",
                    name=template.name, line=node.pos.line, col=node.pos.col)
    return jinja


def _emit(template: nodes.Template) -> str:
    if not uses_messages(template):
        from gotmpl2jinja.emit.legacy import translate_legacy  # the per-turn path (§9)

        return translate_legacy(template, template.name)
    analysis = analyze(template)
    last: Retype | None = None
    for _ in range(8):
        try:
            return Emitter(template, analysis).run()
        except Retype as retype:
            last = retype
            if analysis.mixed.get(retype.var_id) == retype.types:  # no progress: give up here
                break
            analysis.mixed[retype.var_id] = retype.types
    var = next((v for v in analysis.variables.values()
                if last is not None and id(v) == last.var_id), None)
    where = var.decl.pos if var is not None and var.decl is not None else None
    raise TranslationError(
        f"{var.go_name if var else 'a variable'} holds values of several Go types in a way "
        "not supported", name=template.name, line=where.line if where else None,
        col=where.col if where else None)


def translate(source: str, name: str = "template") -> str:
    """Go template source → equivalent Jinja source."""
    from gotmpl2jinja.parse.parser import parse

    return emit(parse(source, name=name))
