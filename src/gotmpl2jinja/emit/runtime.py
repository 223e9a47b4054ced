"""The runtime library: portable Jinja macros that print values exactly as Go does.

Why macros: portable Jinja has no filter that writes Go's bytes on every engine — `tojson`
differs per engine (spacing, HTML escaping, key order), numbers print as Python, JavaScript or
Rust would print them, `sort` is case-insensitive by default. The translator pastes the macros a
template needs (`macro_source`) at the top of the emitted template and calls them.

Inputs are what the Jinja side receives under the equivalence contract: values decoded from the
conversation JSON (dict / list / str / int / float / bool / None). Every JSON number reached Go
as a float64, so every number macro first converts with `|float`.

How the macros stay portable (see docs/jinja-portability.md §3):
- Every tag is `{%- … -%}` and every output is a `{{- … -}}` expression, so a macro block renders
  the same with trim_blocks/lstrip_blocks on or off. `macro_source` ends with `-%}`: text the
  translator puts right after it loses its leading whitespace on every engine alike (emit leading
  newlines as `{{ '\\n' }}`).
- Strings are escaped by a `.replace` chain (no `tojson`); control characters are written as
  `\\u00XX` escapes inside Jinja string literals, which jinja2, @huggingface/jinja and minijinja
  all decode.
- Numbers: the engine's own float-to-string (`x|float|string`) always carries the shortest
  round-trip digits (Python `repr`, JavaScript `String`, Rust `Display`), only the layout differs
  (`1e-07`, `1e-7`, `0.0000001`). `_go_decimal` extracts digits and decimal point from any of
  those layouts; `_go_float` lays them out as Go does. @huggingface/jinja prints an integral
  float with `toFixed(1)`, which gives the *exact* decimal (not the shortest) from 2**53 up;
  `_go_float_parts` then also reads `x|float|int|string` and keeps the shorter digit string.
- Map keys are sorted with `dictsort(case_sensitive=true)` (Go sorts bytewise; jinja2's default
  sort ignores case). Not `d.keys()`: on @huggingface/jinja a key named `keys` shadows the
  method, as `items` does for `d.items` on jinja2 (field reads use `.get`).
  jinja2 and minijinja compare code points (= UTF-8 byte order); JavaScript compares UTF-16
  units, so on @huggingface/jinja keys that differ first at a character in U+E000..U+FFFF
  versus one above U+FFFF sort differently from Go. Not fixable portably (string `<` is not
  supported there); documented limit.
- Tool fields are read by their documented lower-case key (`p.get('description')` in these
  sources, written out as `(p['description'] if 'description' in p else none)`): the
  contract (docs/equivalence-contract.md, "Keys and values are exactly the documented ones")
  and conversation.validate refuse other spellings and nulls outside free JSON, the only
  inputs where Go's case-insensitive, null-skipping decoder would see something else.

API: `MACROS` (name → Macro: params, doc = the contract, source, deps), `macro_source(names)`,
`macro_block(names)` (the same between two comment lines, as the translator pastes it),
`public_macros()`. Public macros:
values — json_string, json_number, print_number, json_value, print_value, print_slice,
print_strings, print_int; tools — json_tools, json_tool, json_function, json_parameters,
json_properties, print_properties, json_property, print_property, print_property_type,
typescript_type; tool calls (Jinja-side shape of the contract) — json_tool_calls,
json_tool_call, print_tool_calls, print_tool_call, print_tool_call_function, json_arguments,
print_arguments; the template's structs as json — json_message, json_messages; Go's builtins
and fmt — go_pad, go_pad_string, go_int, go_html, go_query_number, go_len, go_slice,
go_slice_equals, go_slice_len, go_runes, go_truncate, go_fmt_string, go_fmt_int, go_fmt_json,
go_fmt_tool_call, go_fmt_tool_calls; dates — yesterday_date. `gotmpl2jinja runtime --list`
prints every contract.

Numbers on @huggingface/jinja: -0.0 survives (an integral JS number becomes an IntegerValue,
`|float` turns it into FloatValue(-0), printed `-0.0`), and int-vs-float does not matter because
every macro converts with `|float`; integers beyond 2**53 are rounded by JSON.parse exactly as
Go's decoder rounds them.

Not supported (outside the contract, refused by conversation.validate, or corners Go handles
in ways a template cannot see): tool keys in another case and nulls for tool fields (Go's
decoder folds case and skips nulls; the macros read the documented key only); values that Go's
json.Unmarshal refuses for a field (a number for `description`, …): Ollama answers 400; lone
UTF-16 surrogates in strings (Go writes U+FFFD); NaN/Infinity (not JSON).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from gotmpl2jinja.analysis.scopes import DICT_METHODS
from gotmpl2jinja.errors import Gotmpl2JinjaError


class UnknownMacroError(Gotmpl2JinjaError, KeyError):
    """A macro name the runtime does not have (a KeyError too, for `MACROS`-style callers)."""


@dataclass(frozen=True)
class Macro:
    """One Jinja macro of the runtime: its call signature, contract and source."""

    name: str
    params: tuple[str, ...]
    doc: str
    source: str
    deps: tuple[str, ...] = field(default=())
    inner: tuple[str, ...] = field(default=())  # helpers defined inside it, in call order


#: The only escapes every engine decodes alike (llama.cpp refuses `\\u`, `\\x`, `\\0`; minja drops
#: their backslash): every other character, control characters included, is written as itself.
_PORTABLE_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}


def literal(text: str) -> str:
    """A single-quoted Jinja string literal that every engine decodes back to `text`."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == "'":
            out.append("\\'")
        elif ch in _PORTABLE_ESCAPES:
            out.append(_PORTABLE_ESCAPES[ch])
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


#: Enough zeros for any plain (non-exponent) layout of a float64 by `json` or `%v`.
_ZEROS = "'" + "0" * 24 + "'"


_OPENS = re.compile(r"\{%-?\s*(?:if|for|macro)\b")
_CLOSES = re.compile(r"\{%-?\s*(?:endif|endfor|endmacro)\b")
_DEDENTS = re.compile(r"\{%-?\s*(?:else|elif|endif|endfor|endmacro)\b")
_TAG_OPEN = ("{%-", "{{-", "{#-")


def sorted_items(expr: str) -> str:
    """Jinja for the (key, value) pairs of mapping `expr` in Go's key order (bytewise).

    No one spelling sorts bytewise everywhere: `dictsort(case_sensitive=true)` does on jinja2,
    @huggingface/jinja, minijinja and llama.cpp, but minja has no such argument; minja's plain
    `dictsort` is bytewise, jinja2's is not. So the order of a two-key probe decides, on the
    engine itself, which of the two spellings runs (the other is never evaluated there).
    """
    return (f"({expr}|dictsort if ({{'B': 0, 'a': 0}}|dictsort)[0][0] == 'B' "
            f"else {expr}|dictsort(case_sensitive=true))")


def indent_by_nesting(source: str, indent: str = "    ") -> str:
    """`source` re-indented by its if/for/macro nesting, for a reader; output is unchanged.

    Only for Jinja whose every tag trims on both sides (`{%- … -%}`, `{{- … -}}`, `{#- … -#}`),
    as every runtime macro is: the whitespace added sits either next to a trimming tag or inside
    a tag, where no engine prints it. A line that does not start a tag continues the previous
    tag and goes one level deeper.
    """
    out: list[str] = []
    depth = 0
    for raw in source.split("\n"):
        line = raw.strip()
        if not line:
            continue
        if not line.startswith(_TAG_OPEN):
            out.append(indent * (depth + 1) + line)
            continue
        here = depth - 1 if _DEDENTS.match(line) else depth
        out.append(indent * max(here, 0) + line)
        depth += len(_OPENS.findall(line)) - len(_CLOSES.findall(line))
    return "\n".join(out)


def _m(name: str, params: str, body: str) -> str:
    return indent_by_nesting(
        f"{{%- macro {name}({params}) -%}}\n{body.strip()}\n{{%- endmacro -%}}")


#: The probe of "does this engine print floats with their shortest round-trip digits" (Python
#: repr, JavaScript String, Rust Display do; llama.cpp's and minja's fixed six decimals do not).
NATIVE_SHORTEST = "((0.30000000000000004 ~ '')|length) > 12"

#: 10**k as float literals without an exponent (llama.cpp and @huggingface/jinja parse no `1e22`),
#: k = 0..22: every one exact in a float64.
_POW10 = "[" + ", ".join("1" + "0" * k + ".0" for k in range(23)) + "]"
_SAFE = "9007199254740992"  # 2**53

#: The probe of "what does |length count": 1 code points (jinja2, minijinja), 2 UTF-16 units
#: (@huggingface/jinja, whose slices still count code points), 4 UTF-8 bytes (llama.cpp, minja).
STRING_UNIT = "'\U0001F600'|length"
#: U+0080..U+00BF as a literal: on an engine that counts bytes, its odd bytes are the 64 UTF-8
#: continuation bytes (0x80..0xBF), which no literal can write alone.
_CONTINUATIONS = literal("".join(chr(c) for c in range(0x80, 0xC0)))
#: Characters whose UTF-8 holds every byte past ASCII that valid UTF-8 has: the continuation
#: bytes and the lead bytes C2..F4. Where |length counts bytes, a byte is ASCII exactly when
#: it is not in this literal.
_NON_ASCII = literal("".join(chr(c) for c in range(0x80, 0xC0))
                     + "".join(chr(0xC0 + 64 * k) for k in range(29))
                     + "".join(chr(0x800 if k == 0 else 0x1000 * k) for k in range(16))
                     + "".join(chr(c) for c in (0x10000, 0x40000, 0x80000, 0xC0000, 0x100000)))

#: The message a translation raises with where Go would print bytes that are not UTF-8 (a
#: `slice` of a string that cuts a character): no Jinja string can hold them, so the contract
#: asks for this failure there instead (equivalence-contract.md).
NOT_UTF8 = "Go prints bytes that are not UTF-8 here (a slice cuts a character)"

#: The message a translation raises with where Go would print a memory address (a pointer
#: inside a printed value: `{{ .Messages }}`, a tool property's nested properties): it changes
#: from run to run, so no template can print it, and the contract asks for this failure there.
ADDRESS = "Go prints a memory address here (a pointer inside a printed value)"

_SOURCES: dict[str, str] = {}
_DOCS: dict[str, str] = {}
_DEPS: dict[str, tuple[str, ...]] = {}
_PARAMS: dict[str, tuple[str, ...]] = {}


#: Jinja spellings that look like names but are not a macro's variables.
_NOT_LOCAL = {"loop", "true", "false", "none", "not", "and", "or", "in", "is", "if", "else",
              "elif", "endif", "for", "endfor", "set", "macro", "endmacro", "namespace", "range",
              "raise_exception", "strftime_now", "defined"}
_LOCAL_DEFS = re.compile(r"\{%-?\s*(?:set\s+(\w+)\s*=|for\s+(\w+)(?:\s*,\s*(\w+))?\s+in\b)")
_STRING_OR_NAME = re.compile(
    r"\{#.*?#\}|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|(?<![\w.|])([A-Za-z_]\w*)\b(?!\s*=[^=])")
_TEST_OR_FILTER = re.compile(r"(?:\bis\s+(?:not\s+)?|\|\s*)$")


def _abbreviation(name: str) -> str:
    """A short prefix for `name`'s variables: its words' initials (`json_property` → `jp`)."""
    base = "".join(word[0] for word in name.strip("_").split("_"))
    prefix, n = base, 1
    while prefix in _PREFIXES.values() and _PREFIXES.get(name) != prefix:
        n += 1
        prefix = f"{base}{n}"
    _PREFIXES[name] = prefix
    return prefix


_PREFIXES: dict[str, str] = {}


def _own_names(name: str, params: str, body: str) -> tuple[str, str]:
    """Give every parameter and local of macro `name` a name only it uses (`p` → `jp_p`).

    Why: minja (llama.cpp before b7756) runs a macro in its caller's scope, so a callee's
    parameters and `set`s overwrite the caller's variables of the same name. With names of
    their own, macros never clobber each other or the template's variables; a recursive macro
    reads nothing but loop variables (which minja keeps) after calling itself.
    """
    prefix = _abbreviation(name)
    names = {p.strip() for p in params.split(",") if p.strip()}
    for match in _LOCAL_DEFS.finditer(body):
        names |= {g for g in match.groups() if g}
    names -= _NOT_LOCAL

    def rename(match: re.Match[str]) -> str:
        word = match.group(1)
        if word is None or word not in names:
            return match.group(0)
        if _TEST_OR_FILTER.search(body[max(0, match.start() - 8):match.start()]):
            return word
        return f"{prefix}_{word}"

    new_params = ", ".join(f"{prefix}_{p.strip()}" for p in params.split(",") if p.strip())
    body = re.sub(r"(\{%-?\s*set\s+)(\w+)(\s*=)",
                  lambda m: m.group(1) + (f"{prefix}_{m.group(2)}" if m.group(2) in names
                                          else m.group(2)) + m.group(3), body)
    return new_params, _STRING_OR_NAME.sub(rename, body)


#: `m.get('key')` / `m.get('key', default)` of a mapping, as the macros' sources spell it.
_GET = re.compile(r"\b([A-Za-z_]\w*)\.get\(('[^'\\]*')(?:,\s*('[^'\\]*'|\[\]|\{\}|none|0))?\)")


def item_or(base: str, key: str, default: str = "none") -> str:
    """`base.get(key, default)` of a mapping as `(base[key] if key in base else default)`:
    the same value on every engine, without a method call, which jinja2's sandbox checks at
    some twenty times a subscript's cost. Not for a key that names a dict method (`items`):
    minijinja's Python binding finds the method for `'items' in m` and `m['items']`."""
    k = literal(key)
    if key in DICT_METHODS:
        return f"{base}.get({k})" if default == "none" else f"{base}.get({k}, {default})"
    return f"({base}[{k}] if {k} in {base} else {default})"


def _subscript(match: re.Match[str]) -> str:
    """A macro source's `m.get('k', d)`, through `item_or`."""
    return item_or(match.group(1), match.group(2)[1:-1], match.group(3) or "none")


#: `json_string(name)` of a variable, as the macros' sources spell it.
_JSON_STRING_OF_NAME = re.compile(r"\bjson_string\(([A-Za-z_]\w*)\)")


def _json_string_inline(match: re.Match[str]) -> str:
    """`json_string(s)` with its common case in line: a string without one of the six
    characters Go and the engines escape differently is the engine's tojson (a macro call
    costs more than the six tests on jinja2)."""
    s = match.group(1)
    return (f"({s}|tojson if '<' not in {s} and '>' not in {s} and '&' not in {s} and \"'\" not in"
            f" {s} and @LS@ not in {s} and @PS@ not in {s} else json_string({s}))")


#: `json_value(name)` of a variable that is often a string or a small integer (an element of a
#: decoded-JSON container), as the macros' sources spell it: `json_value_of(name)`.
_JSON_VALUE_OF_NAME = re.compile(r"\bjson_value_of\(([A-Za-z_]\w*)\)")


def _json_value_inline(match: re.Match[str]) -> str:
    """`json_value(v)` with strings and small integers in line: on llama.cpp a macro call
    copies every variable in scope, and a number goes through five macros to reach its digits."""
    v = match.group(1)
    return (f"(json_string({v}) if {v} is string else ({v}|string if "
            f"{SMALL_INT.format(v=v, limit='@SAFE@')} else json_value({v})))")


#: `v` is an integer that prints as its own digits in Go's JSON (and, with limit 1000000,
#: in fmt's %v): nonzero (-0.0 reaches @huggingface/jinja as an integer, and Go prints `-0`),
#: and within ±limit (float64 is exact below 2**53; %v switches to `1e+06` at a million).
SMALL_INT = "{v} is integer and {v} != 0 and {v} < {limit} and {v} > 0 - {limit}"


#: What json_parameters and json_function (which writes the parameters out) print between the
#: parameters' `type` and `properties`: `$defs` and `items` unless null, `required` unless empty.
_PARAMETER_FIELDS = """
{%- if defs is not none -%}{{- ',"$defs":' ~ json_value(defs) -}}{%- endif -%}
{%- if items is not none -%}{{- ',"items":' ~ json_value(items) -}}{%- endif -%}
{%- if req is not none and req|length > 0 -%}
{{- ',"required":[' -}}
{%- for r in req -%}{{- (',' if not loop.first else '') ~ json_string(r) -}}{%- endfor -%}
{{- ']' -}}
{%- endif -%}"""


#: Where a macro's body defines its inner helpers (see `_define`).
_INNER = "{#- @INNER@ -#}"
_INNERS: dict[str, tuple[str, ...]] = {}


def _in_call_order(names: Iterable[str], deps: dict[str, tuple[str, ...]]) -> list[str]:
    """`names` and everything they call, each after what it calls."""
    order: list[str] = []

    def visit(name: str) -> None:
        if name not in order:
            for dep in deps[name]:
                visit(dep)
            order.append(name)

    for name in names:
        visit(name)
    return order


def _define(name: str, params: str, doc: str, body: str, deps: tuple[str, ...] = (),
            inner: tuple[str, ...] = ()) -> None:
    """Register a runtime macro. `inner`: helpers (with theirs) that only this macro calls,
    defined inside its body where `_INNER` stands, which is in the branch that needs them.
    Why: on llama.cpp every macro call and every loop step copies every variable in scope, a
    top-level macro included, so a helper at the top costs each render; inside, only the
    calls that use it (all six engines define and call nested macros alike: a probe in
    tests/test_portability.py)."""
    body = body.replace("@PARAMETER_FIELDS@", _PARAMETER_FIELDS)
    body = _JSON_VALUE_OF_NAME.sub(_json_value_inline, body)
    body = _JSON_STRING_OF_NAME.sub(_json_string_inline, body)
    body = body.replace("ZEROS", _ZEROS).replace("@LS@", literal("\u2028"))
    body = body.replace("@PS@", literal("\u2029")).replace("@NATIVE@", NATIVE_SHORTEST)
    body = body.replace("@POW10@", _POW10).replace("@SAFE@", _SAFE)
    body = body.replace("@UNIT@", STRING_UNIT).replace("@U0080@", literal("\u0080"))
    body = body.replace("@CONT@", _CONTINUATIONS).replace("@NON_ASCII@", _NON_ASCII)
    body = body.replace("@NOT_UTF8@", literal(NOT_UTF8)).replace("@ADDRESS@", literal(ADDRESS))
    body = re.sub(r"@SORTED\((\w+)\)@", lambda m: sorted_items(m.group(1)), body)
    body = _GET.sub(_subscript, body)
    params, body = _own_names(name, params, body)
    if inner:
        helpers = _in_call_order(inner, _DEPS)
        assert _INNER in body and all(h.startswith("_") for h in helpers), name
        body = body.replace(_INNER, "\n".join(_SOURCES[h] for h in helpers))
        _INNERS[name] = tuple(helpers)
    _SOURCES[name] = _m(name, params, body)
    _DOCS[name] = doc
    _DEPS[name] = deps
    _PARAMS[name] = tuple(p.strip() for p in params.split(",") if p.strip())


# ---------------------------------------------------------------------------------------------
# strings and numbers

_define(
    "_json_pieces", "s, i",
    "Internal: the inside of Go's JSON string for `s`, split on the i-th of `<` `>` `&` `'` "
    "U+2028 U+2029 and on the rest after it: each piece through the engine's tojson, the "
    "separators as Go writes them (`\\u003c` `\\u003e` `\\u0026` `'` `\\u2028` `\\u2029`).",
    """
{%- if i == 6 -%}{{- (s|tojson)[1:-1] -}}
{%- else -%}
{%- for st in [{'sep': ['<', '>', '&', "'", @LS@, @PS@][i],
    'esc': ['\\\\u003c', '\\\\u003e', '\\\\u0026', "'", '\\\\u2028', '\\\\u2029'][i],
    'next': i + 1}] -%}
{%- for piece in s.split(st['sep']) -%}
{{- (st['esc'] if not loop.first else '') ~ _json_pieces(piece, st['next']) -}}
{%- endfor -%}
{%- endfor -%}
{%- endif -%}
""",
)

_define(
    "json_string", "s",
    "Go json.Marshal of a string: `\"…\"` with `\\\"` `\\\\` `\\n` `\\r` `\\t` `\\b` `\\f`, other "
    "controls as `\\u00xx`, `<` `>` `&` U+2028 U+2029 as `\\u003c` `\\u003e` `\\u0026` `\\u2028` "
    "`\\u2029`; everything else (DEL, `'`, non-ASCII) as is. `s` must be a string.",
    # Every engine's tojson escapes `"`, `\\` and control characters as Go does (`\\n`, `\\b`,
    # `\\u0001`, measured); Go also escapes `<` `>` `&` U+2028 U+2029, and minijinja escapes `<`
    # `>` `&` `'`: strings with one of those six are split on them (_json_pieces).
    """
{%- if '<' not in s and '>' not in s and '&' not in s and "'" not in s and @LS@ not in s
    and @PS@ not in s -%}
{{- s|tojson -}}
{%- else -%}
{#- @INNER@ -#}
{{- '"' ~ _json_pieces(s, 0) ~ '"' -}}
{%- endif -%}
""",
    inner=("_json_pieces",),
)

_define(
    "_go_decimal", "s",
    "Internal: digits of an unsigned decimal as an engine printed it (`1.5e-07`, `1e-7`, "
    "`0.00000015`, `150.0`) → `SIG POINT`: significant digits without leading/trailing zeros "
    "(empty for zero) and the decimal point's position relative to them "
    "(value = 0.SIG × 10^POINT).",
    """
{%- set parts = s.split('e') -%}
{%- set exp = parts[1]|int if parts|length > 1 else 0 -%}
{%- set mp = parts[0].split('.') -%}
{%- set digits = mp[0] ~ (mp[1] if mp|length > 1 else '') -%}
{%- set zl = digits.replace('0', ' ').lstrip() -%}
{{- zl.rstrip().replace(' ', '0') ~ ' '
    ~ ((mp[0]|length) + exp - (digits|length) + (zl|length))|string -}}
""",
)


_define(
    "_go_float_parts", "x",
    "Internal: `SIGN SIG POINT` of float64(x), SIGN `-` or `+`, SIG the shortest round-trip "
    "digits (see _go_decimal). From the engine's own float printing where it is shortest, "
    "else by exact arithmetic (_exact_float_parts).",
    """
{%- if @NATIVE@ -%}
{%- set s = x|float|string -%}
{%- set neg = s.startswith('-') -%}
{%- set a = _go_decimal(s[1:] if neg else s) -%}
{%- set a = a.split(' ') -%}
{%- if 'e' not in s and s.endswith('.0') and a[0]|length > 15 -%}
{%- set t = x|float|int|string -%}
{%- set b = _go_decimal(t[1:] if neg else t) -%}
{%- set b = b.split(' ') -%}
{%- if b[0]|length < a[0]|length -%}{%- set a = b -%}{%- endif -%}
{%- endif -%}
{{- ('-' if neg else '+') ~ ' ' ~ a[0] ~ ' ' ~ a[1] -}}
{%- else -%}
{{- _exact_float_parts(x) -}}
{%- endif -%}
""",
    ("_go_decimal", "_exact_float_parts"),
)

_define(
    "_exact_float_parts", "x",
    "Internal: `SIGN SIG POINT` of float64(x) by exact float arithmetic, for engines that do not "
    "print shortest digits (an integer past 2**53, which llama.cpp cannot add to a float, "
    "is read back from its digits): an integer below 2**53 is its own digits; otherwise the "
    "shortest digit string N (N < 2**53) with N / 10**k == |x| (k = 1..22) or N * 10**k == |x| "
    "is the one Go prints (a single correctly rounded operation on exact operands is exactly the "
    "decoder's rounding, and at most one such N exists per k); any other number (17 "
    "significant digits, below 1e-22, above 2**53 * 1e22) by exact decimal arithmetic "
    "(_shortest_parts).",
    """
{%- set neg = x < 0 or (x == 0 and (x|string)[:1] == '-') -%}
{%- set f = x + 0.0 -%}
{%- set f = ((x ~ '')|float) if f * 0.0 != 0.0 else f -%}
{%- set a = (0 - f) if x < 0 else f -%}
{%- set sign = '-' if neg else '+' -%}
{%- if a == 0 -%}{{- sign ~ '  0' -}}
{%- elif a < @SAFE@ and a == a|int -%}{{- sign ~ ' ' ~ _go_decimal((a|int) ~ '') -}}
{%- else -%}
{%- set pow = @POW10@ -%}
{%- set ns = namespace(digits='', k=0, many=false) -%}
{%- for k in range(1, 23) -%}
{%- if ns.digits == '' and not ns.many -%}
{%- set y = (a * pow[k]) if a < @SAFE@ else (a / pow[k]) -%}
{%- if y < @SAFE@ -%}
{%- set n = (y + 0.5)|int -%}
{%- set hits = namespace(n=0, count=0) -%}
{%- for c in [n - 1, n, n + 1] -%}
{%- if c > 0 and ((a < @SAFE@ and c / pow[k] == a) or (a >= @SAFE@ and c * pow[k] == a)) -%}
{%- set hits.n = c -%}{%- set hits.count = hits.count + 1 -%}
{%- endif -%}
{%- endfor -%}
{%- if hits.count > 1 -%}{%- set ns.many = true -%}
{%- elif hits.count == 1 and a < @SAFE@ -%}
{%- set ns.digits = hits.n ~ '' -%}{%- set ns.k = 0 - k -%}
{%- elif hits.count == 1 -%}{%- set ns.digits = hits.n ~ '' -%}{%- set ns.k = k -%}
{%- endif -%}
{%- endif -%}
{%- endif -%}
{%- endfor -%}
{%- if ns.digits == '' or ns.many -%}
{{- sign ~ ' ' ~ _shortest_parts(a) -}}
{%- else -%}
{%- set d = _go_decimal(ns.digits) -%}
{%- set d = d.split(' ') -%}
{{- sign ~ ' ' ~ d[0] ~ ' ' ~ ((d[1]|int) + ns.k) -}}
{%- endif -%}
{%- endif -%}
""",
    ("_go_decimal", "_shortest_parts"),
)

_define(
    "_big_mul_add", "s, k, c",
    "Internal: the decimal string `s` (digits only) times k plus c, for 0 <= k, c < 10**7, as "
    "a decimal string without leading zeros: chunks of seven digits, every intermediate below "
    "2**53 (llama.cpp computes integers through doubles).",
    """
{%- set ns = namespace(out='', carry=c, end=s|length) -%}
{%- for i in range((((s|length) + 6) / 7)|int) -%}
{%- set lo = ns.end - 7 if ns.end > 7 else 0 -%}
{%- set t = (s[lo:ns.end]|int) * k + ns.carry -%}
{%- set r = t % 10000000 -%}
{%- set ns.carry = ((t - r) / 10000000)|int -%}
{%- set ns.out = ('000000' ~ r)[-7:] ~ ns.out -%}
{%- set ns.end = lo -%}
{%- endfor -%}
{%- set out = (ns.carry ~ ns.out).replace('0', ' ').lstrip().replace(' ', '0') -%}
{{- out if out != '' else '0' -}}
""",
)

_define(
    "_big_scaled", "s, g",
    "Internal: the decimal string `s` times 2**g, as digits: for g >= 0 the integer; for g < 0 "
    "the digits of s * 5**-g, which are those of the value with -g digits after the point.",
    """
{%- set ns = namespace(d=s) -%}
{%- set big = 8388608 if g >= 0 else 9765625 -%}
{%- set small = 2 if g >= 0 else 5 -%}
{%- set n = g if g >= 0 else 0 - g -%}
{%- set per = 23 if g >= 0 else 10 -%}
{%- for i in range(((n - n % per) / per)|int) -%}
{%- set r = _big_mul_add(ns.d, big, 0) -%}{%- set ns.d = r -%}
{%- endfor -%}
{%- for i in range(n % per) -%}
{%- set r = _big_mul_add(ns.d, small, 0) -%}{%- set ns.d = r -%}
{%- endfor -%}
{{- ns.d -}}
""",
    ("_big_mul_add",),
)

_define(
    "_shortest_parts", "a",
    "Internal: `SIG POINT` of the shortest decimal that reads back as float64 a > 0, by Go's "
    "rule (strconv's shortest formatting): the exact decimals of a and of the halfway points to "
    "its neighbours (inclusive when the mantissa is even; the lower gap halved at a power of two "
    "above the smallest exponent), compared digit by digit; where both roundings stay inside, "
    "the nearer (a tie to even). Exact decimal arithmetic on digit strings: for engines that "
    "print no shortest digits.",
    """
{%- set ns = namespace(t=a, e=0, p=[2.0]) -%}
{%- for j in range(9) -%}{%- set ns.p = ns.p + [ns.p[-1] * ns.p[-1]] -%}{%- endfor -%}
{%- for j in [9, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0] -%}
{%- set k = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512][j] -%}
{%- if ns.t >= 9007199254740992 and ns.t / ns.p[j] >= 4503599627370496 -%}
{%- set ns.t = ns.t / ns.p[j] -%}{%- set ns.e = ns.e + k -%}
{%- elif ns.t < 4503599627370496 and ns.t * ns.p[j] < 9007199254740992
    and ns.e - k >= -1074 -%}
{%- set ns.t = ns.t * ns.p[j] -%}{%- set ns.e = ns.e - k -%}
{%- endif -%}
{%- endfor -%}
{%- set mant = ns.t|int -%}
{%- set g = ns.e - 2 -%}
{%- set inclusive = mant % 2 == 0 -%}
{%- set up = _big_mul_add(mant ~ '', 4, 2) -%}
{%- set value = _big_mul_add(mant ~ '', 4, 0) -%}
{%- set low = _big_mul_add((mant - 1) ~ '', 4,
    2 if mant > 4503599627370496 or ns.e == -1074 else 3) -%}
{%- set up = _big_scaled(up, g) -%}
{%- set value = _big_scaled(value, g) -%}
{%- set low = _big_scaled(low, g) -%}
{%- set frac = 0 - g if g < 0 else 0 -%}
{%- set n = up|length -%}
{%- set value = ('0000' ~ value)[-n:] -%}
{%- set low = ('0000' ~ low)[-n:] -%}
{%- set nlow = low.replace('0', ' ').rstrip()|length -%}
{%- set nup = up.replace('0', ' ').rstrip()|length -%}
{%- set nvalue = value.replace('0', ' ').rstrip()|length -%}
{%- set st = namespace(at=-1, how='') -%}
{%- for i in range(n) -%}
{%- if st.at < 0 -%}
{%- set l = low[i:i + 1]|int -%}{%- set d = value[i:i + 1]|int -%}{%- set u = up[i:i + 1]|int -%}
{%- set okdown = l != d or (inclusive and i + 1 == nlow) -%}
{%- set okup = d != u and (inclusive or d + 1 < u or i + 1 < nup) -%}
{%- if okdown or okup -%}
{%- set st.at = i -%}
{%- set st.how = 'near' if okdown and okup else ('down' if okdown else 'up') -%}
{%- endif -%}
{%- endif -%}
{%- endfor -%}
{%- set i = st.at -%}
{%- set prefix = value[:i + 1] -%}
{%- set next = value[i + 1:i + 2]|int if i + 1 < n else 0 -%}
{%- set odd = (value[i:i + 1]|int) % 2 == 1 -%}
{%- set roundup = st.how == 'up' or (st.how == 'near' and (next > 5
    or (next == 5 and (nvalue > i + 2 or odd)))) -%}
{%- set digits = _big_mul_add(prefix, 1, 1) if roundup else prefix -%}
{%- set lead = ('0' if digits == '' else digits) -%}
{%- set d = _go_decimal(lead) -%}
{%- set d = d.split(' ') -%}
{{- d[0] ~ ' ' ~ ((d[1]|int) + n - (i + 1) - frac) -}}
""",
    ("_big_mul_add", "_big_scaled", "_go_decimal"),
)

_define(
    "_go_float", "x, verb",
    "Internal: float64(x) laid out by Go: verb 'json' = encoding/json, anything else = fmt %v. "
    "Fast path (engines that print shortest digits): where Go writes plain decimals (and below "
    "1e15, where every such engine's plain output has the shortest digits, integral ones too) "
    "the engine's string minus `.0` is it.",
    """
{%- set native = @NATIVE@ -%}
{%- set s = (x|float|string) if native else 'e' -%}
{%- set a = (x|float|abs) if native else 0 -%}
{%- if 'e' not in s and ((verb == 'json' and a >= 0.000001 and a < 1000000000000000)
    or (verb != 'json' and a >= 0.0001 and a < 1000000)) -%}
{{- s[:-2] if s.endswith('.0') else s -}}
{%- else -%}
{#- @INNER@ -#}
{%- set f = _go_float_parts(x) -%}
{%- set f = f.split(' ') -%}
{%- set sig = f[1] -%}
{%- set sign = '-' if f[0] == '-' else '' -%}
{%- if sig == '' -%}
{{- sign ~ '0' -}}
{%- else -%}
{%- set point = f[2]|int -%}
{%- set e10 = point - 1 -%}
{%- set j = verb == 'json' -%}
{%- if (j and (e10 < -6 or e10 >= 21)) or (not j and (e10 < -4 or e10 >= 6)) -%}
{%- set ae = (0 - e10) if e10 < 0 else e10 -%}
{{- sign ~ sig[:1] ~ ('.' ~ sig[1:] if sig|length > 1 else '') ~ 'e'
    ~ ('-' if e10 < 0 else '+') ~ ('0' if not j and ae < 10 else '') ~ ae|string -}}
{%- elif point <= 0 -%}
{{- sign ~ '0.' ~ ZEROS[:(0 - point)] ~ sig -}}
{%- elif point >= sig|length -%}
{{- sign ~ sig ~ ZEROS[:(point - sig|length)] -}}
{%- else -%}
{{- sign ~ sig[:point] ~ '.' ~ sig[point:] -}}
{%- endif -%}
{%- endif -%}
{%- endif -%}
""",
    inner=("_go_float_parts",),
)

_define(
    "json_number", "x",
    "Go json.Marshal of float64(x): shortest round-trip digits, no `.0`; exponent form "
    "(`1e-7`, `1e+21`, no zero padding) iff |x| < 1e-6 or |x| >= 1e21; `-0` for -0.0.",
    "{%- if " + SMALL_INT.format(v="x", limit="@SAFE@") + " -%}{{- x|string -}}"
    "{%- else -%}{{- _go_float(x, 'json') -}}{%- endif -%}",
    ("_go_float",),
)

_define(
    "print_number", "x",
    "Go fmt %v of float64(x) (what `{{ . }}` prints for a JSON number): shortest round-trip "
    "digits, exponent form (`1e+06`, `1e-05`, sign and at least two digits) iff the decimal "
    "exponent is < -4 or >= 6 (`999999`, `1.234567e+06`); `-0` for -0.0.",
    "{%- if " + SMALL_INT.format(v="x", limit="1000000") + " -%}{{- x|string -}}"
    "{%- else -%}{{- _go_float(x, 'v') -}}{%- endif -%}",
    ("_go_float",),
)

_define(
    "json_value", "v",
    "Go json.Marshal of a decoded-JSON `any`: null/true/false, numbers as json_number, strings "
    "as json_string, maps with keys sorted bytewise at every depth, compact. An undefined `v` "
    "prints `null` (a nil interface).",
    """
{%- if v is not defined or v is none -%}{{- 'null' -}}
{%- elif v is boolean -%}{{- 'true' if v else 'false' -}}
{%- elif v is string -%}{{- json_string(v) -}}
{%- elif v is number -%}{{- json_number(v) -}}
{%- elif v is mapping -%}
{{- '{' -}}
{%- for k, x in @SORTED(v)@ -%}
{{- (',' if not loop.first else '') ~ json_string(k) ~ ':' ~ json_value_of(x) -}}
{%- endfor -%}
{{- '}' -}}
{%- else -%}
{{- '[' -}}
{%- for x in v -%}{{- (',' if not loop.first else '') ~ json_value_of(x) -}}{%- endfor -%}
{{- ']' -}}
{%- endif -%}
""",
    ("json_string", "json_number"),
)

_define(
    "_go_print", "v",
    "Internal: fmt %v of a decoded-JSON value inside a container (nil → `<nil>`).",
    """
{%- if v is not defined or v is none -%}{{- '<nil>' -}}
{%- elif v is boolean -%}{{- 'true' if v else 'false' -}}
{%- elif v is string -%}{{- v -}}
{%- elif v is number -%}{{- print_number(v) -}}
{%- elif v is mapping -%}
{{- 'map[' -}}
{%- for k, x in @SORTED(v)@ -%}
{{- (' ' if not loop.first else '') ~ k ~ ':' ~ _go_print(x) -}}
{%- endfor -%}
{{- ']' -}}
{%- else -%}
{{- '[' -}}
{%- for x in v -%}{{- (' ' if not loop.first else '') ~ _go_print(x) -}}{%- endfor -%}
{{- ']' -}}
{%- endif -%}
""",
    ("print_number",),
)

_define(
    "print_value", "v",
    "What text/template prints for a decoded-JSON `any` (`{{ $v }}`): strings as is, numbers "
    "as print_number, `true`/`false`, maps `map[k:v k2:v2]` (keys sorted), slices `[a b]`, "
    "`<nil>` for nil inside containers, `<no value>` for nil/undefined at the top.",
    """
{%- if v is not defined or v is none -%}{{- '<no value>' -}}
{%- else -%}{{- _go_print(v) -}}
{%- endif -%}
""",
    ("_go_print",),
)

# ---------------------------------------------------------------------------------------------
# Ollama's tool shapes (ollama-semantics.md §5)
#
# Tools arrive in the contract's strict shape (conversation.validate): exactly the documented
# lower-case keys, no null outside free JSON (`items`, `$defs`, `enum` items). So the macros read
# each field once with `.get` (not `p.items`: on jinja2 a missing `items` is the dict's method)
# instead of decoding keys as Go's case-insensitive, null-skipping json.Unmarshal would.

_define(
    "json_property", "p",
    "Go json of an api.ToolProperty decoded from the request object `p`: keys anyOf, type, "
    "items, description, enum, properties, required, each omitted when empty; `type` a string "
    "for one element, an array otherwise; nested `properties` in request order, each value a "
    "property; `p` none → `{}`.",
    """
{%- set p = p if p is defined and p is mapping else {} -%}
{%- set anyof = p.get('anyOf') -%}{%- set t = p.get('type') -%}{%- set items = p.get('items') -%}
{%- set desc = p.get('description') -%}{%- set enum = p.get('enum') -%}
{%- set props = p.get('properties') -%}{%- set req = p.get('required') -%}
{%- set types = [t] if t is string else (t if t is not none else []) -%}
{%- for st in [{'anyof': anyof, 'types': types, 'item': items, 'desc': desc, 'enum': enum,
    'props': props, 'req': req,
    'has_anyof': anyof is not none and anyof|length > 0, 'has_type': types|length > 0,
    'has_items': items is not none, 'has_desc': desc is not none and desc != '',
    'has_enum': enum is not none and enum|length > 0, 'has_props': props is not none,
    'has_req': req is not none and req|length > 0}] -%}
{{- '{' -}}
{%- if st['has_anyof'] -%}
{{- '"anyOf":[' -}}
{%- for a in st['anyof'] -%}{{- (',' if not loop.first else '') ~ json_property(a) -}}{%- endfor -%}
{{- ']' -}}
{%- endif -%}
{%- if st['has_type'] -%}
{{- (',' if st['has_anyof'] else '') ~ '"type":' -}}
{%- if st['types']|length == 1 -%}{{- json_string(st['types'][0]) -}}
{%- else -%}
{{- '[' -}}
{%- for x in st['types'] -%}{{- (',' if not loop.first else '') ~ json_string(x) -}}{%- endfor -%}
{{- ']' -}}
{%- endif -%}
{%- endif -%}
{%- if st['has_items'] -%}
{{- (',' if st['has_anyof'] or st['has_type'] else '') ~ '"items":' ~ json_value(st['item']) -}}
{%- endif -%}
{%- if st['has_desc'] -%}
{{- (',' if st['has_anyof'] or st['has_type'] or st['has_items'] else '') ~ '"description":'
    ~ json_string(st['desc']) -}}
{%- endif -%}
{%- if st['has_enum'] -%}
{{- (',' if st['has_anyof'] or st['has_type'] or st['has_items'] or st['has_desc'] else '')
    ~ '"enum":' ~ json_value(st['enum']) -}}
{%- endif -%}
{%- if st['has_props'] -%}
{{- (',' if st['has_anyof'] or st['has_type'] or st['has_items'] or st['has_desc']
    or st['has_enum'] else '') ~ '"properties":{' -}}
{%- for k, x in st['props']|items -%}
{{- (',' if not loop.first else '') ~ json_string(k) ~ ':' ~ json_property(x) -}}
{%- endfor -%}
{{- '}' -}}
{%- endif -%}
{%- if st['has_req'] -%}
{{- (',' if st['has_anyof'] or st['has_type'] or st['has_items'] or st['has_desc'] or st['has_enum']
    or st['has_props'] else '') ~ '"required":[' -}}
{%- for r in st['req'] -%}{{- (',' if not loop.first else '') ~ json_string(r) -}}{%- endfor -%}
{{- ']' -}}
{%- endif -%}
{{- '}' -}}
{%- endfor -%}
""",
    ("json_string", "json_value"),
)

_define(
    "json_properties", "props",
    "Go json of the top-level `parameters.properties` (a plain Go map of properties): keys "
    "sorted bytewise, values as json_property; `null` when absent or null. (`{{ .Properties }}` "
    "prints via String(), which gives `{}` for nil: use print_properties.)",
    """
{%- if props is not defined or props is none -%}{{- 'null' -}}
{%- else -%}
{{- '{' -}}
{%- for k, x in @SORTED(props)@ -%}
{{- (',' if not loop.first else '') ~ json_string(k) ~ ':' ~ json_property(x) -}}
{%- endfor -%}
{{- '}' -}}
{%- endif -%}
""",
    ("json_string", "json_property"),
)

_define(
    "print_properties", "props",
    "What `{{ .Function.Parameters.Properties }}` prints (templateProperties.String()): "
    "json_properties, but `{}` when absent or null.",
    """
{%- if props is not defined or props is none -%}{{- '{}' -}}
{%- else -%}{{- json_properties(props) -}}{%- endif -%}
""",
    ("json_properties",),
)

_define(
    "json_parameters", "p",
    "Go json of a tool's `function.parameters` (templateToolFunctionParameters): "
    "`{\"type\":…,[\"$defs\":…,][\"items\":…,][\"required\":[…],]\"properties\":…}`; `$defs` and "
    "`items` omitted when null, `required` when empty, `properties` null when absent; `p` "
    "absent → `{\"type\":\"\",\"properties\":null}`.",
    """
{%- set p = p if p is defined and p is mapping else {} -%}
{%- set defs = p.get('$defs') -%}{%- set items = p.get('items') -%}
{%- set req = p.get('required') -%}
{{- '{"type":' ~ json_string(p.get('type', '')) -}}
@PARAMETER_FIELDS@
{{- ',"properties":' ~ json_properties(p.get('properties')) ~ '}' -}}
""",
    ("json_string", "json_value", "json_properties"),
)

_define(
    "json_function", "fn",
    "Go json of a tool's `function` (templateToolFunction): `{\"name\":…,\"description\":…,"
    "\"parameters\":…}`; description always present (no omitempty since Ollama v0.14).",
    # json_parameters and json_properties written out here, and a property of only `type` (a
    # string) and `description` (most of them) too: on llama.cpp every macro call copies every
    # variable in scope, and this runs once per tool on every request.
    """
{%- set name = fn.get('name', '') -%}{%- set desc = fn.get('description', '') -%}
{%- set p = fn.get('parameters') -%}
{%- set p = p if p is defined and p is mapping else {} -%}
{%- set type = p.get('type', '') -%}{%- set defs = p.get('$defs') -%}
{%- set items = p.get('items') -%}{%- set req = p.get('required') -%}
{%- set props = p.get('properties') -%}
{{- '{"name":' ~ json_string(name) ~ ',"description":' ~ json_string(desc)
    ~ ',"parameters":{"type":' ~ json_string(type) -}}
@PARAMETER_FIELDS@
{%- if props is none -%}{{- ',"properties":null}}' -}}
{%- else -%}
{{- ',"properties":{' -}}
{%- for k, x in @SORTED(props)@ -%}
{{- (',' if not loop.first else '') ~ json_string(k) ~ ':' -}}
{%- if x is mapping and 'type' in x and x['type'] is string
    and (x|length == 1 or (x|length == 2 and 'description' in x)) -%}
{%- set t = x['type'] -%}{%- set d = x['description'] if x|length == 2 else '' -%}
{{- '{"type":' ~ json_string(t) ~ (',"description":' ~ json_string(d) if d != '' else '') ~ '}' -}}
{%- else -%}{{- json_property(x) -}}
{%- endif -%}
{%- endfor -%}
{{- '}}}' -}}
{%- endif -%}
""",
    ("json_string", "json_value", "json_property"),
)

_define(
    "json_tool", "t",
    "Go json of one tool (templateTool, also what `{{ . }}` prints inside `range .Tools`): "
    "`{\"type\":…,[\"items\":…,]\"function\":…}`, items omitted when null.",
    """
{%- set items = t.get('items') -%}
{{- '{"type":' ~ json_string(t.get('type', ''))
    ~ (',"items":' ~ json_value(items) if items is not none else '')
    ~ ',"function":' ~ json_function(t.get('function')) ~ '}' -}}
""",
    ("json_string", "json_value", "json_function"),
)

_define(
    "json_tools", "ts",
    "Go json of the tool list (`{{ .Tools }}` and `{{ json .Tools }}` print the same): `null` "
    "when absent/none, `[]` for an empty list.",
    """
{%- if ts is not defined or ts is none -%}{{- 'null' -}}
{%- else -%}
{{- '[' -}}
{%- for t in ts -%}{{- (',' if not loop.first else '') ~ json_tool(t) -}}{%- endfor -%}
{{- ']' -}}
{%- endif -%}
""",
    ("json_tool",),
)

_define(
    "typescript_type", "p",
    "Ollama's ToolProperty.ToTypeScriptType of a request property: anyOf alternatives joined "
    "by ` | `; else no type → `any`; else each type mapped (string, number|integer→number, "
    "boolean, array→`any[]`, object→`Record<string, any>`, null, other→any) joined by ` | `.",
    """
{%- set p = p if p is defined and p is mapping else {} -%}
{%- set anyof = p.get('anyOf') -%}
{%- if anyof is not none and anyof|length > 0 -%}
{%- for a in anyof -%}{{- (' | ' if not loop.first else '') ~ typescript_type(a) -}}{%- endfor -%}
{%- else -%}
{%- set t = p.get('type') -%}
{%- set types = [t] if t is string else (t if t is not none else []) -%}
{%- if types|length == 0 -%}{{- 'any' -}}
{%- else -%}
{%- for t in types -%}
{{- ' | ' if not loop.first else '' -}}
{%- if t == 'string' or t == 'boolean' or t == 'null' -%}{{- t -}}
{%- elif t == 'number' or t == 'integer' -%}{{- 'number' -}}
{%- elif t == 'array' -%}{{- 'any[]' -}}
{%- elif t == 'object' -%}{{- 'Record<string, any>' -}}
{%- else -%}{{- 'any' -}}{%- endif -%}
{%- endfor -%}
{%- endif -%}
{%- endif -%}
""",
)

_define(
    "print_property_type", "p",
    "What `{{ $p.Type }}` prints (PropertyType.String()) for a request property: `` for no "
    "type, the type for one, `[a b]` for several.",
    """
{%- set t = p.get('type') if p is defined and p is mapping else none -%}
{%- if t is string -%}{{- t -}}
{%- elif t is not none and t|length == 1 -%}{{- t[0] -}}
{%- elif t is not none and t|length > 1 -%}
{{- '[' -}}
{%- for x in t -%}{{- (' ' if not loop.first else '') ~ x -}}{%- endfor -%}
{{- ']' -}}
{%- endif -%}
""",
)

_define(
    "print_slice", "l",
    "What text/template prints for a typed Go slice field (`{{ .Required }}`, `{{ $p.Enum }}`): "
    "`[a b]` with elements as print_value prints them inside containers; `[]` when absent or "
    "null (a nil slice, unlike a nil `any`, which prints `<no value>`).",
    """
{%- if l is not defined or l is none -%}{{- '[]' -}}
{%- else -%}{{- _go_print(l) -}}{%- endif -%}
""",
    ("_go_print",),
)

_define(
    "print_strings", "l",
    "What text/template prints for a Go []string field decoded from the request "
    "(`{{ .Function.Parameters.Required }}`, `{{ $p.Required }}`): `[a b]`, `[]` when absent.",
    """
{{- '[' -}}
{%- if l is defined and l is not none -%}
{%- for x in l -%}{{- (' ' if not loop.first else '') ~ x -}}{%- endfor -%}
{%- endif -%}
{{- ']' -}}
""",
)

_define(
    "print_property", "p",
    "What `{{ $p }}` prints for an api.ToolProperty (no String method, so Go struct syntax): "
    "`{ANYOF TYPE ITEMS DESCRIPTION ENUM PROPERTIES REQUIRED}`, e.g. `{[] string <nil>  [] "
    "<nil> []}`. A property with nested `properties` prints a pointer address in Go "
    "(non-deterministic): the macro raises the contract's ADDRESS failure then.",
    """
{%- set p = p if p is defined and p is mapping else {} -%}
{%- if p.get('properties') is not none -%}
{{- raise_exception(@ADDRESS@) -}}
{%- endif -%}
{%- for q in [p] -%}
{{- '{[' -}}
{%- if q.get('anyOf') is not none -%}
{%- for a in q.get('anyOf') -%}
{{- (' ' if not loop.first else '') ~ print_property(a) -}}
{%- endfor -%}
{%- endif -%}
{{- '] ' ~ print_property_type(q) ~ ' '
    ~ ('<nil>' if q.get('items') is none else _go_print(q.get('items'))) ~ ' '
    ~ q.get('description', '') ~ ' '
    ~ print_slice(q.get('enum')) ~ ' <nil> ' ~ print_strings(q.get('required')) ~ '}' -}}
{%- endfor -%}
""",
    ("print_property_type", "print_slice", "print_strings", "_go_print"),
)

# ---------------------------------------------------------------------------------------------
# tool calls, in the Jinja side's shape:
# {"type", "id"?, "function": {"name", "arguments", "index"?}}

_define(
    "json_arguments", "args",
    "Go json of a tool call's Arguments (`{{ json .Function.Arguments }}`): keys sorted, "
    "`null` when the call had no arguments.",
    "{{- json_value(args) -}}",
    ("json_value",),
)

_define(
    "print_arguments", "args",
    "What `{{ .Function.Arguments }}` prints (templateArgs.String()): json_arguments, but `{}` "
    "when the call had no arguments.",
    """
{%- if args is not defined or args is none -%}{{- '{}' -}}
{%- else -%}{{- json_value(args) -}}{%- endif -%}
""",
    ("json_value",),
)

_define(
    "print_int", "n",
    "A Go int field (a tool call's Index): printed and json-encoded alike, `0` when absent.",
    """
{%- if n is not defined or n is none -%}{{- '0' -}}
{%- else -%}{{- n|int|string -}}{%- endif -%}
""",
)

_define(
    "go_pad", "s, width, minus, zero",
    "Go fmt's padding (fmt.pad): `s` padded with spaces to `width` (-1: none) on the left, or "
    "on the right when `minus`; with zeros when `zero` and not `minus`. Go counts runes: `s` "
    "must be ASCII, which every engine counts alike.",
    """
{%- if s|length >= width -%}{{- s -}}
{%- else -%}
{%- set fill = '0' if zero and not minus else ' ' -%}
{%- set ns = namespace(pad='') -%}
{%- for i in range(width - s|length) -%}{%- set ns.pad = ns.pad ~ fill -%}{%- endfor -%}
{{- s ~ ns.pad if minus else ns.pad ~ s -}}
{%- endif -%}
""",
)

_define(
    "go_query_number", "s",
    "url.QueryEscape of a float64's %v text `s` (digits, `.`, `-`, `e`, `+`): its `+` as `%2B`.",
    "{{- s.replace('+', '%2B') -}}",
)

_define(
    "go_html", "s",
    "Go's html of the string `s` (template.HTMLEscapeString): `&` `'` `<` `>` `\"` as `&amp;` "
    "`&#39;` `&lt;` `&gt;` `&#34;`, and NUL as U+FFFD. No literal can hold a NUL where the "
    "template may fail (llama.cpp cuts messages there), so a NUL is found by tojson (`\\u0000` "
    "once backslashes are gone) and replaced character by character (byte by byte where "
    "|length counts bytes, tojson only of ASCII bytes).",
    """
{%- set e = s.replace('&', '&amp;').replace("'", '&#39;').replace('<', '&lt;')
    .replace('>', '&gt;').replace('"', '&#34;') -%}
{%- if '\\\\u0000' not in (s.replace('\\\\', '')|tojson) -%}{{- e -}}
{%- elif @UNIT@ == 4 -%}
{%- for k in range(e|length) -%}
{%- set b = e[k:k + 1] -%}
{%- if b in @NON_ASCII@ -%}{{- b -}}
{%- else -%}{{- '�' if (b|tojson) == '"\\\\u0000"' else b -}}
{%- endif -%}
{%- endfor -%}
{%- else -%}
{%- for q in range((((e|length) + 63) / 64)|int) -%}
{%- set chunk = e[q * 64:q * 64 + 64] -%}
{%- for r in range(chunk|length) -%}
{%- set c = chunk[r:r + 1] -%}
{{- '�' if (c|tojson) == '"\\\\u0000"' else c -}}
{%- endfor -%}
{%- endfor -%}
{%- endif -%}
""",
)

_define(
    "go_len", "s",
    "Go's len of the string `s`: its UTF-8 bytes, on every engine whatever |length counts "
    "there (the @UNIT@ probe): bytes as they are; code points plus one for each at or past "
    "U+0080, U+0800 and U+10000 (selected by the `ge` test, no |urlencode: minijinja hosts "
    "build without it); UTF-16 units (hf.js) by each code point's range, sorted "
    "(case-sensitively: plain sort folds case) against U+0080 and U+0800.",
    """
{%- set unit = @UNIT@ -%}
{%- if unit == 4 -%}{{- s|length -}}
{%- elif unit == 1 -%}
{%- set chars = s|list -%}
{{- (chars|length) + (chars|select('ge', @U0080@)|list|length)
    + (chars|select('ge', 'ࠀ')|list|length) + (chars|select('ge', '𐀀')|list|length) -}}
{%- else -%}
{%- set ns = namespace(n=0) -%}
{%- for k in range((((s|length) + 63) / 64)|int) -%}
{%- set chunk = s[k * 64:k * 64 + 64] -%}
{%- for j in range(chunk|length) -%}
{%- set c = chunk[j:j + 1] -%}
{%- if c|length == 2 -%}{%- set ns.n = ns.n + 4 -%}
{%- elif c != '' and c != @U0080@
    and ([c, @U0080@]|sort(case_sensitive=true))[0] == c -%}{%- set ns.n = ns.n + 1 -%}
{%- elif c != '' and c != 'ࠀ'
    and ([c, 'ࠀ']|sort(case_sensitive=true))[0] == c -%}{%- set ns.n = ns.n + 2 -%}
{%- elif c != '' -%}{%- set ns.n = ns.n + 3 -%}
{%- endif -%}
{%- endfor -%}
{%- endfor -%}
{{- ns.n -}}
{%- endif -%}
""",
)

_define(
    "_go_char_bytes", "c, unit",
    "Internal: the UTF-8 bytes of the one code point `c` where |length counts code points "
    "(unit 1: compared with U+0080, U+0800 and U+10000, as jinja2 and minijinja compare "
    "strings) or UTF-16 units (unit 2, hf.js, which cannot compare strings: by its range, "
    "sorted case-sensitively against U+0080 and U+0800).",
    """
{%- if unit == 1 -%}
{{- 1 if c < @U0080@ else (2 if c < 'ࠀ' else (3 if c < '𐀀' else 4)) -}}
{%- elif c|length == 2 -%}{{- 4 -}}
{%- elif c != @U0080@ and ([c, @U0080@]|sort(case_sensitive=true))[0] == c -%}{{- 1 -}}
{%- elif c != 'ࠀ' and ([c, 'ࠀ']|sort(case_sensitive=true))[0] == c -%}{{- 2 -}}
{%- else -%}{{- 3 -}}
{%- endif -%}
""",
)

_define(
    "_go_cut", "s, i, j",
    "Internal: where Go's `slice s i j` of a string (`j` none: to the end) cuts, in the "
    "engine's own slice offsets: `start:end`, or `R` (an offset out of range: Go fails) or "
    "`U` (an offset inside a character). Bytes are offsets themselves where |length counts "
    "them (an offset is inside a character when the byte there is a continuation byte, one "
    "of @CONT@'s odd bytes); elsewhere code points are walked to find them.",
    """
{%- set unit = @UNIT@ -%}
{%- set total = go_len(s)|int -%}
{%- set stop = total if j is none else j -%}
{%- if i < 0 or stop < i or stop > total -%}{{- 'R' -}}
{%- elif i == stop -%}{{- '0:0' -}}
{%- elif unit == 4 -%}
{%- set lead = @CONT@[0:1] -%}
{%- set first = s[i:i + 1] -%}
{%- set after = s[stop:stop + 1] -%}
{%- if (first != '' and first != lead and first in @CONT@)
    or (after != '' and after != lead and after in @CONT@) -%}{{- 'U' -}}
{%- else -%}{{- i ~ ':' ~ stop -}}{%- endif -%}
{%- else -%}
{%- set ns = namespace(pos=0, k=0, start=-1, end=-1) -%}
{%- for q in range((((s|length) + 63) / 64)|int) -%}
{%- set chunk = s[q * 64:q * 64 + 64] -%}
{%- for r in range(chunk|length) -%}
{%- set c = chunk[r:r + 1] -%}
{%- if c != '' and ns.pos <= stop -%}
{%- if ns.pos == i -%}{%- set ns.start = ns.k -%}{%- endif -%}
{%- if ns.pos == stop -%}{%- set ns.end = ns.k -%}{%- endif -%}
{%- set size = _go_char_bytes(c, unit)|int -%}
{%- set ns.pos = ns.pos + size -%}
{%- set ns.k = ns.k + 1 -%}
{%- endif -%}
{%- endfor -%}
{%- endfor -%}
{%- if ns.pos == i -%}{%- set ns.start = ns.k -%}{%- endif -%}
{%- if ns.pos == stop -%}{%- set ns.end = ns.k -%}{%- endif -%}
{{- 'U' if ns.start < 0 or ns.end < 0 else ns.start ~ ':' ~ ns.end -}}
{%- endif -%}
""",
    ("go_len", "_go_char_bytes"),
)

_define(
    "go_slice", "s, i, j",
    "Go's `slice s i j` of a string (`j` none: to the end) on byte offsets, on every engine: "
    "Go's failure (raise_exception) out of range, and the contract's failure (NOT_UTF8) "
    "where an offset falls inside a character, since Go prints bytes that are not UTF-8.",
    """
{%- set cut = _go_cut(s, i, j) -%}
{%- if cut == 'R' -%}{{- raise_exception('slice: index out of range') -}}
{%- elif cut == 'U' -%}{{- raise_exception(@NOT_UTF8@) -}}
{%- else -%}
{%- set parts = cut.split(':') -%}
{{- s[parts[0]|int:parts[1]|int] -}}
{%- endif -%}
""",
    ("_go_cut",),
)

_define(
    "go_slice_equals", "s, i, j, other",
    "`T` when Go's `slice s i j` of a string equals the string `other`, else `F`; Go's "
    "failure out of range. A cut inside a character is `F`: bytes that are not UTF-8 equal "
    "no string.",
    """
{%- set cut = _go_cut(s, i, j) -%}
{%- if cut == 'R' -%}{{- raise_exception('slice: index out of range') -}}
{%- elif cut == 'U' -%}{{- 'F' -}}
{%- else -%}
{%- set parts = cut.split(':') -%}
{{- 'T' if s[parts[0]|int:parts[1]|int] == other else 'F' -}}
{%- endif -%}
""",
    ("_go_cut",),
)

_define(
    "go_slice_len", "s, i, j",
    "Go's len of `slice s i j` of a string (`j` none: to the end): its bytes, a cut character "
    "included; Go's failure out of range.",
    """
{%- set total = go_len(s)|int -%}
{%- set stop = total if j is none else j -%}
{%- if i < 0 or stop < i or stop > total -%}{{- raise_exception('slice: index out of range') -}}
{%- else -%}{{- stop - i -}}
{%- endif -%}
""",
    ("go_len",),
)

_define(
    "go_runes", "s",
    "The number of runes (code points) of the string `s`, which Go's fmt pads by, on every "
    "engine: |length where it counts code points; bytes less the 64 kinds of continuation "
    "byte where it counts bytes; code-point slices where it counts UTF-16 units (hf.js).",
    """
{%- set unit = @UNIT@ -%}
{%- if unit == 1 -%}{{- s|length -}}
{%- elif unit == 4 -%}
{%- set ns = namespace(n=s|length) -%}
{%- if ns.n > 0 -%}
{%- for k in range(64) -%}
{%- set ns.n = ns.n - ((s.split(@CONT@[2 * k + 1:2 * k + 2])|length) - 1) -%}
{%- endfor -%}
{%- endif -%}
{{- ns.n -}}
{%- else -%}
{%- set ns = namespace(n=0) -%}
{%- for k in range((((s|length) + 63) / 64)|int) -%}
{%- set chunk = s[k * 64:k * 64 + 64] -%}
{%- for j in range(chunk|length) -%}
{%- if chunk[j:j + 1] != '' -%}{%- set ns.n = ns.n + 1 -%}{%- endif -%}
{%- endfor -%}
{%- endfor -%}
{{- ns.n -}}
{%- endif -%}
""",
)

_define(
    "go_truncate", "s, n",
    "Go fmt's precision of a string (fmt.truncateString): its first `n` runes. Slices count "
    "code points where |length counts code points or UTF-16 units (hf.js); where it counts "
    "bytes, the cut is before the byte that starts rune n + 1 (a byte that is not one of "
    "@CONT@'s continuation bytes starts a rune).",
    """
{%- if @UNIT@ != 4 -%}{{- s[:n] -}}
{%- else -%}
{%- set lead = @CONT@[0:1] -%}
{%- set ns = namespace(count=0, cut=-1) -%}
{%- for k in range(s|length) -%}
{%- set b = s[k:k + 1] -%}
{%- if ns.cut < 0 and (b == lead or b not in @CONT@) -%}
{%- if ns.count == n -%}{%- set ns.cut = k -%}{%- endif -%}
{%- set ns.count = ns.count + 1 -%}
{%- endif -%}
{%- endfor -%}
{{- s if ns.cut < 0 else s[:ns.cut] -}}
{%- endif -%}
""",
)

_define(
    "go_pad_string", "s, width, minus, zero",
    "Go fmt's padding of a string (fmt.padString): `s` padded to `width` runes with spaces on "
    "the left, on the right when `minus`, with zeros when `zero` and not `minus`.",
    """
{%- set n = go_runes(s)|int -%}
{%- if n >= width -%}{{- s -}}
{%- else -%}
{%- set fill = '0' if zero and not minus else ' ' -%}
{%- set ns = namespace(pad='') -%}
{%- for i in range(width - n) -%}{%- set ns.pad = ns.pad ~ fill -%}{%- endfor -%}
{{- s ~ ns.pad if minus else ns.pad ~ s -}}
{%- endif -%}
""",
    ("go_runes",),
)

_define(
    "go_int", "n, verb, flags, width, prec",
    "Go fmt of the int `n` (fmt.fmtInteger) for verb `d` `b` `o` `O` `x` `X`, `flags` the "
    "directive's flags among `#0+- `, `width` and `prec` -1 when absent: digits in the "
    "verb's base, zeros to the precision (or to the width with the `0` flag), the `#` and "
    "`O` prefixes, the sign, then spaces to the width. |n| must be below 2**53.",
    """
{%- set neg = n < 0 -%}
{%- set u = 0 - n if neg else n -%}
{%- set base = {'d': 10, 'b': 2, 'o': 8, 'O': 8, 'x': 16, 'X': 16}[verb] -%}
{%- if prec == 0 and u == 0 -%}{{- go_pad('', width, '-' in flags, false) -}}
{%- else -%}
{%- set ns = namespace(d='', u=u) -%}
{%- if base == 10 -%}{%- set ns.d = u|string -%}
{%- else -%}
{%- for i in range(64) -%}
{%- if ns.u > 0 or i == 0 -%}
{%- set r = ns.u % base -%}
{%- set ns.d = ('0123456789ABCDEF' if verb == 'X' else '0123456789abcdef')[r:r + 1] ~ ns.d -%}
{%- set ns.u = ((ns.u - r) / base)|int -%}
{%- endif -%}
{%- endfor -%}
{%- endif -%}
{%- set sign = '-' if neg else ('+' if '+' in flags else (' ' if ' ' in flags else '')) -%}
{%- set digits = prec if prec >= 0 else (width - (sign|length)
    if '0' in flags and '-' not in flags and width >= 0 else 0) -%}
{%- if digits > ns.d|length -%}{%- set ns.d = go_pad(ns.d, digits, false, true) -%}{%- endif -%}
{%- if '#' in flags and base == 2 -%}{%- set ns.d = '0b' ~ ns.d -%}
{%- elif '#' in flags and base == 8 and ns.d[:1] != '0' -%}{%- set ns.d = '0' ~ ns.d -%}
{%- elif '#' in flags and base == 16 -%}{%- set ns.d = ('0X' if verb == 'X' else '0x') ~ ns.d -%}
{%- endif -%}
{%- if verb == 'O' -%}{%- set ns.d = '0o' ~ ns.d -%}{%- endif -%}
{{- go_pad(sign ~ ns.d, width, '-' in flags, false) -}}
{%- endif -%}
""",
    ("go_pad",),
)

_define(
    "json_tool_call", "c",
    "Go json of a templateToolCall (no json tags, so Go field names): "
    "`{\"ID\":…,\"Function\":{\"Index\":…,\"Name\":…,\"Arguments\":…}}`; takes one entry of "
    "the Jinja side's `message.tool_calls`.",
    """
{%- set fn = c.function if c.function is defined and c.function is not none else {} -%}
{{- '{"ID":' ~ json_string(c.id if c.id is defined and c.id is not none else '')
    ~ ',"Function":{"Index":' ~ print_int(fn.index)
    ~ ',"Name":' ~ json_string(fn.name if fn.name is defined and fn.name is not none else '')
    ~ ',"Arguments":' ~ json_value(fn.arguments) ~ '}}' -}}
""",
    ("json_string", "json_value", "print_int"),
)

_define(
    "json_tool_calls", "calls",
    "Go json of a message's ToolCalls: `null` when none/absent/empty (Ollama builds the slice "
    "by appending, so no calls is a nil slice), else `[…]` of json_tool_call.",
    """
{%- if calls is not defined or calls is none or calls|length == 0 -%}{{- 'null' -}}
{%- else -%}
{{- '[' -}}
{%- for c in calls -%}{{- (',' if not loop.first else '') ~ json_tool_call(c) -}}{%- endfor -%}
{{- ']' -}}
{%- endif -%}
""",
    ("json_tool_call",),
)

_define(
    "json_message", "m",
    "Go json of a *templateMessage (no json tags, so Go field names): `{\"Role\":…,"
    "\"Content\":…,\"Thinking\":…,\"Images\":null,\"ToolCalls\":…,\"ToolName\":…,"
    "\"ToolCallID\":…}`; takes a message as the prelude leaves it: role and content always "
    "there, reasoning_content, tool_calls, name and tool_call_id when given (images are "
    "outside the contract, so always null).",
    """
{{- '{"Role":' ~ json_string(m['role']) ~ ',"Content":' ~ json_string(m['content'])
    ~ ',"Thinking":' ~ json_string(m.get('reasoning_content', '')) ~ ',"Images":null,"ToolCalls":'
    ~ json_tool_calls(m.get('tool_calls', [])) ~ ',"ToolName":' ~ json_string(m.get('name', ''))
    ~ ',"ToolCallID":' ~ json_string(m.get('tool_call_id', '')) ~ '}' -}}
""",
    ("json_string", "json_tool_calls"),
)

_define(
    "json_messages", "ms",
    "Go json of the template's Messages: `[` json_message joined by `,` `]`; `null` when "
    "there are none (Ollama collates them by appending, so no messages is a nil slice).",
    """
{%- if ms|length == 0 -%}{{- 'null' -}}
{%- else -%}
{{- '[' -}}
{%- for m in ms -%}{{- (',' if not loop.first else '') ~ json_message(m) -}}{%- endfor -%}
{{- ']' -}}
{%- endif -%}
""",
    ("json_message",),
)

_define(
    "print_tool_call_function", "fn",
    "What `{{ .Function }}` of a tool call prints (Go struct syntax): `{INDEX NAME ARGS}` with "
    "ARGS as print_arguments, e.g. `{0 get_weather {\"a\":1}}`.",
    """
{%- set fn = fn if fn is defined and fn is not none else {} -%}
{{- '{' ~ print_int(fn.index)
    ~ ' ' ~ (fn.name if fn.name is defined and fn.name is not none else '')
    ~ ' ' ~ print_arguments(fn.arguments) ~ '}' -}}
""",
    ("print_int", "print_arguments"),
)

_define(
    "print_tool_call", "c",
    "What `{{ . }}` of one tool call prints (Go struct syntax): `{ID {INDEX NAME ARGS}}`, e.g. "
    "`{call_1 {0 get_weather {\"a\":1}}}`; an absent id leaves an empty field (`{ {0 f {}}}`).",
    """
{{- '{' ~ (c.id if c.id is defined and c.id is not none else '')
    ~ ' ' ~ print_tool_call_function(c.function) ~ '}' -}}
""",
    ("print_tool_call_function",),
)

_define(
    "print_tool_calls", "calls",
    "What `{{ .ToolCalls }}` prints: `[` print_tool_call joined by spaces `]`; `[]` when none.",
    """
{{- '[' -}}
{%- if calls is defined and calls is not none -%}
{%- for c in calls -%}{{- (' ' if not loop.first else '') ~ print_tool_call(c) -}}{%- endfor -%}
{%- endif -%}
{{- ']' -}}
""",
    ("print_tool_call",),
)


# ---------------------------------------------------------------------------------------------
# printf's %s, %d and %v (with a width and `-`) of composite values: fmt's printValue, every
# field and element printed with the directive's verb and width (a string or number field is
# padded by itself; a verb it does not take prints as %!d(string=…), the value in %v)

_define(
    "go_fmt_string", "s, verb, width, minus",
    "fmt of a string inside a printed value for verb `s`, `v` or `d` (`width` -1: none): the "
    "string padded by runes; for `d` in `%!d(string=…)`.",
    """
{%- set t = go_pad_string(s, width, minus, false) if width >= 0 else s -%}
{{- t if verb != 'd' else '%!d(string=' ~ t ~ ')' -}}
""",
    ("go_pad_string",),
)

_define(
    "go_fmt_int", "n, verb, width, minus",
    "fmt of an int field (a tool call's Index, 0 when absent) for verb `s`, `v` or `d`: its "
    "digits padded; for `s` in `%!s(int=…)`.",
    """
{%- set t = go_pad(print_int(n), width, minus, false) -%}
{{- t if verb != 's' else '%!s(int=' ~ t ~ ')' -}}
""",
    ("go_pad", "print_int"),
)

_define(
    "go_fmt_json", "v, verb, width, minus",
    "fmt of a decoded-JSON value inside a printed value (and at the top, but for nil) for "
    "verb `s`, `v` or `d`: nil `<nil>` (unpadded), a bool or a float64 padded in %v, wrapped "
    "as `%!s(bool=…)` / `%!d(float64=…)` for a verb it does not take; a string as "
    "go_fmt_string; `map[k:v …]` in key order with keys as strings; `[a b]`.",
    """
{%- if v is not defined or v is none -%}{{- '<nil>' -}}
{%- elif v is boolean -%}
{%- set t = go_pad('true' if v else 'false', width, minus, false) -%}
{{- t if verb == 'v' else '%!' ~ verb ~ '(bool=' ~ t ~ ')' -}}
{%- elif v is string -%}{{- go_fmt_string(v, verb, width, minus) -}}
{%- elif v is number -%}
{%- set t = go_pad(print_number(v), width, minus, false) -%}
{{- t if verb == 'v' else '%!' ~ verb ~ '(float64=' ~ t ~ ')' -}}
{%- elif v is mapping -%}
{{- 'map[' -}}
{%- for k, x in @SORTED(v)@ -%}
{{- (' ' if not loop.first else '') ~ go_fmt_string(k, verb, width, minus) ~ ':'
    ~ go_fmt_json(x, verb, width, minus) -}}
{%- endfor -%}
{{- ']' -}}
{%- else -%}
{{- '[' -}}
{%- for x in v -%}{{- (' ' if not loop.first else '') ~ go_fmt_json(x, verb, width, minus) -}}
{%- endfor -%}
{{- ']' -}}
{%- endif -%}
""",
    ("go_fmt_string", "go_pad", "print_number"),
)

_define(
    "go_fmt_tool_call", "c, verb, width, minus",
    "fmt of one templateToolCall for verb `s`, `v` or `d`: `{ID {INDEX NAME ARGS}}`, each "
    "field by itself; ARGS by String() (as a padded string) for `s` and `v`, as a map for `d` "
    "(`map[]` when the call has none).",
    """
{%- set fn = c.function if c.function is defined and c.function is not none else {} -%}
{%- set args = fn.arguments if fn.arguments is defined else none -%}
{%- if verb == 'd' -%}{%- set shown = 'map[]' if args is none else go_fmt_json(args, verb,
    width, minus) -%}
{%- else -%}{%- set shown = go_fmt_string(print_arguments(args), verb, width, minus) -%}
{%- endif -%}
{{- '{' ~ go_fmt_string(c.id if c.id is defined and c.id is not none else '', verb, width, minus)
    ~ ' {' ~ go_fmt_int(fn.index, verb, width, minus) ~ ' '
    ~ go_fmt_string(fn.name if fn.name is defined and fn.name is not none else '', verb, width,
    minus) ~ ' ' ~ shown ~ '}}' -}}
""",
    ("go_fmt_string", "go_fmt_int", "go_fmt_json", "print_arguments"),
)

_define(
    "go_fmt_tool_calls", "calls, verb, width, minus",
    "fmt of a message's ToolCalls for verb `s`, `v` or `d`: `[` go_fmt_tool_call joined by "
    "spaces `]`; `[]` when none.",
    """
{{- '[' -}}
{%- if calls is defined and calls is not none -%}
{%- for c in calls -%}
{{- (' ' if not loop.first else '') ~ go_fmt_tool_call(c, verb, width, minus) -}}
{%- endfor -%}
{%- endif -%}
{{- ']' -}}
""",
    ("go_fmt_tool_call",),
)


# ---------------------------------------------------------------------------------------------
# dates

_define(
    "yesterday_date", "",
    "Ollama's yesterdayDate: the day before strftime_now('%Y-%m-%d') (Go's "
    "`time.Now().AddDate(0, 0, -1)`), as YYYY-MM-DD, by calendar arithmetic: month lengths, "
    "Gregorian leap years, year boundaries. Years 1..9999.",
    """
{%- set today = strftime_now('%Y-%m-%d') -%}
{%- set today = today.split('-') -%}
{%- set y = today[0]|int -%}
{%- set m = today[1]|int -%}
{%- set d = today[2]|int - 1 -%}
{%- if d == 0 -%}
{%- set m = m - 1 -%}
{%- if m == 0 -%}
{%- set y = y - 1 -%}
{%- set m = 12 -%}
{%- endif -%}
{%- set leap = (y % 4 == 0 and y % 100 != 0) or y % 400 == 0 -%}
{%- set d = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1] -%}
{%- endif -%}
{{- ('000' ~ y|string)[-4:] ~ '-' ~ ('0' ~ m|string)[-2:] ~ '-' ~ ('0' ~ d|string)[-2:] -}}
""",
)


MACROS: dict[str, Macro] = {
    name: Macro(name=name, params=_PARAMS[name], doc=_DOCS[name], source=_SOURCES[name],
                deps=_DEPS[name], inner=_INNERS.get(name, ()))
    for name in _SOURCES
}


def _closure(names: Iterable[str]) -> list[str]:
    """The macros named plus everything they call, each after its dependencies."""
    names = list(names)
    for name in names:
        if name not in MACROS:
            known = ", ".join(n for n in MACROS if not n.startswith("_"))
            raise UnknownMacroError(f"unknown runtime macro {name!r}; known: {known}")
    return _in_call_order(names, _DEPS)


def macro_source(names: Iterable[str]) -> str:
    """Jinja source of the macros named and their dependencies, ready to paste at the top.

    Dependencies come first (jinja2 resolves macro names at call time anyway, but a reader
    should meet a macro before its use). The result starts with `{%-` and ends with `-%}`: it
    writes nothing itself and strips whitespace on both sides on every engine.
    """
    return "\n".join(MACROS[name].source for name in _closure(names))


#: The comment lines around the runtime macros in an emitted template.
MACROS_INTRO = ("{#- Go's JSON and printing rules as macros, from gotmpl2jinja.runtime"
                " (generated: do not edit by hand). #}")
MACROS_OUTRO = "{#- The template itself. #}"


def macro_block(names: Iterable[str]) -> str:
    """`macro_source(names)` between MACROS_INTRO and MACROS_OUTRO: what the translator pastes
    at the top of a template ("" when no macro is needed)."""
    names = list(names)
    if not names:
        return ""
    return "\n".join([MACROS_INTRO, macro_source(names), MACROS_OUTRO])


def public_macros() -> list[str]:
    """Names the translator may call (internal helpers start with `_`)."""
    return [name for name in MACROS if not name.startswith("_")]
