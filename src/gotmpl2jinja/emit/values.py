"""The values the emitter's parts share: a translated expression (`Expr`) with its Go type,
literals printed as Go prints them, and the sets of Go types each rule is keyed on.

May depend on: `analysis`, `emit.gofmt`, `emit.runtime` (how a literal is written), `errors`,
`syntax`.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from gotmpl2jinja.analysis import (
    GoType,
    Variable,
)
from gotmpl2jinja.emit.gofmt import Verb
from gotmpl2jinja.emit.runtime.library import quoted
from gotmpl2jinja.errors import TranslationError
from gotmpl2jinja.syntax import nodes

INDENT = "    "

# Jinja operator precedence, loosest first; an operand looser than its context gets parens.
COND, OR, AND, NOT, COMPARE, ARITH, CONCAT, ATOM = range(8)


#: Runtime macros (gotmpl2jinja.emit.runtime) that print Go values exactly.
JSON_MACROS = {
    GoType.STRING: "json_string",
    GoType.TOOLS: "json_tools",
    GoType.TOOL: "json_tool",
    GoType.TOOL_FUNCTION: "json_function",
    GoType.PARAMETERS: "json_parameters",
    GoType.PROPERTIES: "json_properties",
    GoType.PROPERTY: "json_property",
    GoType.PROPERTY_LIST: "json_property_list",
    GoType.ARGS: "json_value",
    GoType.ANY: "json_value",
    GoType.STRINGS: "json_value",
    GoType.ANYS: "json_value",
    GoType.IMAGES: "json_value",
    GoType.FLOAT: "json_number",
    GoType.TOOL_CALL: "json_tool_call",
    GoType.CALL_FUNCTION: "json_call_function",
    GoType.TOOL_CALLS: "json_tool_calls",
    GoType.MESSAGE: "json_message",
    GoType.MESSAGES: "json_messages",
}


#: The Go types text/template's eq/lt compare by value (its "basic kinds"; ANY may hold one).
BASIC_KINDS = {GoType.STRING, GoType.INT, GoType.UINT8, GoType.FLOAT, GoType.BOOL, GoType.ANY}

#: Go's nil values: a missing key of the root map and a template's nil argument.
NIL_TYPES = {GoType.NIL, GoType.NO_DATA}

#: Go types of one kind that is not basic (struct, pointer, slice, map): eq/lt fail on them
#: by their kind alone, whatever value they hold (ANY, MIXED and CHOICE are known only later).
NON_BASIC = {
    GoType.MESSAGES, GoType.MESSAGE, GoType.TOOL_CALLS, GoType.TOOL_CALL, GoType.CALL_FUNCTION,
    GoType.ARGS, GoType.TOOLS, GoType.TOOL, GoType.TOOL_FUNCTION, GoType.PARAMETERS,
    GoType.PROPERTIES, GoType.PROPERTY, GoType.PROPERTY_TYPE, GoType.STRINGS, GoType.ANYS,
    GoType.IMAGES, GoType.PROPERTY_LIST,
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

#: eq/ne operands compared with a decoded-JSON value by the kind it holds (go_eq_json); a
#: string has its own, inline rule.
JSON_COMPARED = {GoType.ANY, GoType.INT, GoType.FLOAT, GoType.BOOL}

#: Types with a String() method (Ollama's JSON printers; PropertyType's own): fmt prints
#: String() for %v, %s, %q, %x and %X (handleMethods), formatted as a string.
STRINGERS = {
    GoType.ARGS, GoType.PROPERTIES, GoType.TOOLS, GoType.TOOL, GoType.TOOL_FUNCTION,
    GoType.PARAMETERS, GoType.PROPERTY_TYPE,
}

#: Go's names of the operand types printf prints by themselves (%T, %!d(string=…), EXTRA).
GO_TYPE_NAMES = {GoType.STRING: "string", GoType.INT: "int", GoType.BOOL: "bool",
                 GoType.FLOAT: "float64", GoType.UINT8: "uint8"}

#: Go's integer types here: an int, and the uint8 `index` of a string gives; eq and lt compare
#: them by value whatever their signs, and fmt prints both as digits.
INTEGERS = {GoType.INT, GoType.UINT8}


#: Runtime macros that raise Go's failure (an offset out of range) inside them, where no
#: `raise_exception(` shows in the calling code.
FAILING_CALLS = re.compile(r"\b(?:go_slice|go_slice_len|go_slice_equals|go_byte)\(")


@dataclass(frozen=True)
class Expr:
    """A translated Go value: Jinja code plus the Go type that decides its behaviour."""

    code: str
    type: GoType
    prec: int = ATOM
    const: object = None  # the Python value of a Go constant (str/int/float/bool), else None
    is_const: bool = False
    stable: bool = False  # safe to inline where a variable would be read (no later change)
    loop: int | None = None  # id of the loop it is of (its index, a `loop.*`): see
    #   Emitter.readable_here
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
    position: Expr | None = None  # a MESSAGE's index in the collated messages, where known
    #   (eq of two messages: Go compares their pointers)
    unwrapped: bool = False  # an ANY a pipeline ended with: Go unwraps the interface, so a
    #   nil there is the invalid value, whose fields are nil again (a range's element is not)

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
    # a negative number in parentheses: llama.cpp cannot parse a unary minus right after `if`
    # or `else` (`{% if -1 > 0 %}`), and `(-1)` reads alike everywhere
    if isinstance(value, int):
        return Expr(str(value) if value >= 0 else f"({value})", GoType.INT, ATOM, const=value,
                    is_const=True, stable=True, non_negative=value >= 0)
    if isinstance(value, float):
        text = float_literal(value)
        return Expr(text if not text.startswith("-") else f"({text})", GoType.FLOAT, ATOM,
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
    return quoted(out, q)


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


class Retype(Exception):  # noqa: N818 - a control-flow signal, not an error
    """A variable turned out to hold a string and a struct: emit again with it MIXED."""

    def __init__(self, var_id: int, types: tuple[GoType, ...]) -> None:
        super().__init__(var_id, types)
        self.var_id, self.types = var_id, types


def retype_refusal(last: Retype | None, variables: Iterable[Variable],
                   name: str) -> TranslationError:
    """The refusal where emitting again with a variable MIXED made no progress (on the
    messages path and the legacy one alike): the variable, at its declaration."""
    var = next((v for v in variables if last is not None and id(v) == last.var_id), None)
    where = var.decl.pos if var is not None and var.decl is not None else None
    return TranslationError(
        f"{var.go_name if var else 'a variable'} holds values of several Go types in a way "
        "not supported", name=name, line=where.line if where else None,
        col=where.col if where else None)


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
class Computed(nodes.Node):
    """A value already translated, standing as an operand node: the value piped into `and`/
    `or` (Go passes it as their last operand), which take their operands as nodes so as to
    evaluate each only where Go does."""

    expr: Expr | None = None


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
