"""The runtime's machinery: `Macro`, `_define` and the registry `MACROS`, and `macro_source`.

How a macro's source is written (portable literals, placeholders such as `@SORTED(v)@`,
variable names of its own, inner helpers) and how the macros a template needs are
collected (dependencies first) and framed by MACROS_INTRO and MACROS_OUTRO. The macros
themselves are in the family modules next to it, which register them with `_define`.

May depend on: `analysis`, `errors`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from gotmpl2jinja.analysis import DICT_METHODS
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
    return quoted("".join(out), "'")


#: Where @huggingface/jinja would rewrite a string literal before reading it: its preprocessing
#: runs regular expressions over the whole source, literals included. lstrip_blocks drops the
#: spaces and tabs between a line start and `{%`, `{#` or `{-`, and JavaScript starts a line
#: after U+2028 and U+2029 as well (a literal writes \n and \r as escapes, those two as
#: themselves); and every `{% generation %}`/`{% endgeneration %}` is cut out, with the
#: whitespace around it (JavaScript's \s: Python's and U+FEFF). Found by the generator's slow
#: run (seed 15, 2026-12-04: Go text `\u2028 {%`); measured in tests/test_portability.py.
_HFJS_REWRITES = re.compile(r"[\u2028\u2029](?= *\{[#%-])|\{(?=%-?[\s\ufeff]*(?:end)?generation)")


def quoted(body: str, quote: str) -> str:
    """`body` (already escaped for `quote`) as a Jinja string literal; where @huggingface/jinja
    would rewrite it, a concatenation of literals cut there, in parentheses."""
    cuts = [m.end() for m in _HFJS_REWRITES.finditer(body)]
    if not cuts:
        return quote + body + quote
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    return "(" + " ~ ".join(quote + piece + quote for piece in pieces) + ")"


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


#: The probe of "does this engine print floats with Go's shortest round-trip digits": Python
#: repr and JavaScript String do; llama.cpp's and minja's six digits or decimals do not, and
#: neither does Rust's Display (minijinja) where two shortest candidates are equally near: the
#: float 1500904153225761.25 is `…761.2` in Go (the even one) and `…761.3` there.
NATIVE_SHORTEST = ("(((0.30000000000000004 ~ '')|length) > 12"
                   " and (1500904153225761.25 ~ '') == '1500904153225761.2')")

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

#: Every runtime macro by name, in the order `_define` registered it: the order the package
#: imports its families of macros in (see `emit/runtime/__init__.py`).
MACROS: dict[str, Macro] = {}


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
    names = {p.split("=")[0].strip() for p in params.split(",") if p.strip()}
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


#: String `{s}` holds none of the six characters Go and the engines escape differently, so its
#: Go JSON is the engine's tojson.
_TOJSON_IS_GO = ("'<' not in {s} and '>' not in {s} and '&' not in {s} and \"'\" not in {s}"
                 " and @LS@ not in {s} and @PS@ not in {s}")


def _json_string_inline(match: re.Match[str]) -> str:
    """`json_string(s)` with its common case in line: a string without one of the six
    characters Go and the engines escape differently is the engine's tojson (a macro call
    costs more than the six tests on jinja2)."""
    s = match.group(1)
    return f"({s}|tojson if {_TOJSON_IS_GO.format(s=s)} else json_string({s}))"


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

#: `{f}` = float64 of the JSON number `{v}`, as Go decoded it: `{v} + 0.0`, except for an
#: integer past 2**53, which llama.cpp cannot add to a float: that one is read back from its
#: digits.
AS_FLOAT64 = ("{{%- set {f} = {v} + 0.0 -%}}\n"
              "{{%- set {f} = (({v} ~ '')|float) if {f} * 0.0 != 0.0 else {f} -%}}")


def scaled_by_two(*, subnormal_floor: bool) -> str:
    """Jinja setting `ns.t` and `ns.e` so that float64 `a` (> 0) = ns.t * 2**ns.e with ns.t a
    whole number in [2**52, 2**53), by multiplying or dividing by 2**(2**j) (exact on every
    engine, where a decimal scale is not). With `subnormal_floor` the exponent stops at -1074,
    so a subnormal keeps the smaller ns.t it is stored with (its exact decimal, its neighbours);
    without, it is normalised to a leading 1 as strconv's %x writes it."""
    floor = "\n    and ns.e - k >= -1074" if subnormal_floor else ""
    return ("{%- set ns = namespace(t=a, e=0, p=[2.0]) -%}\n"
            "{%- for j in range(9) -%}{%- set ns.p = ns.p + [ns.p[-1] * ns.p[-1]] -%}"
            "{%- endfor -%}\n"
            "{%- for j in [9, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0] -%}\n"
            "{%- set k = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512][j] -%}\n"
            "{%- if ns.t >= 9007199254740992 and ns.t / ns.p[j] >= 4503599627370496 -%}\n"
            "{%- set ns.t = ns.t / ns.p[j] -%}{%- set ns.e = ns.e + k -%}\n"
            f"{{%- elif ns.t < 4503599627370496 and ns.t * ns.p[j] < 9007199254740992{floor} -%}}\n"
            "{%- set ns.t = ns.t * ns.p[j] -%}{%- set ns.e = ns.e - k -%}\n"
            "{%- endif -%}\n"
            "{%- endfor -%}")


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


#: `@PLAIN(t)@`: true when the JSON text t (a value through the engine's `tojson`) holds no
#: character whose Go escape differs from tojson's: none of `<` `>` `&` `'` U+2028 U+2029, and
#: no `\u00` (minijinja writes those four as `\u003c`…; a control character or a literal
#: backslash-u00 only takes the slow path). Then every string inside prints as its `tojson`
#: (`@STR(x)@`): one test for a whole tool instead of six for each of its strings.
_PLAIN = "(" + _TOJSON_IS_GO + " and '\\\\u00' not in {s})"
_STR = "({s}|tojson if plain or " + _TOJSON_IS_GO + " else json_string({s}))"


#: Where a macro's body defines its inner helpers (see `_define`).
_INNER = "{#- @INNER@ -#}"
_INNERS: dict[str, tuple[str, ...]] = {}
#: Macros written before all others (see `_define`'s `leading`).
_LEADING: set[str] = set()


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
            inner: tuple[str, ...] = (), *, leading: bool = False) -> None:
    """Register a runtime macro. `inner`: helpers (with theirs) that only this macro calls,
    defined inside its body where `_INNER` stands, which is in the branch that needs them.
    Why: on llama.cpp every macro call and every loop step copies every variable in scope, a
    top-level macro included, so a helper at the top costs each render; inside, only the
    calls that use it (all six engines define and call nested macros alike: a probe in
    tests/test_portability.py). `leading`: a macro without dependencies that holds a long
    literal, written first: minja's parser searches the rest of the template for each token,
    so every token before a long literal pays for its length (one of 188 KB behind a hundred
    macro lines: 7.5 s to load; measured 2026-12-04)."""
    assert not (leading and deps), name
    body = body.replace("@PARAMETER_FIELDS@", _PARAMETER_FIELDS)
    body = _JSON_VALUE_OF_NAME.sub(_json_value_inline, body)
    body = _JSON_STRING_OF_NAME.sub(_json_string_inline, body)
    body = re.sub(r"@PLAIN\((\w+)\)@", lambda m: _PLAIN.format(s=m.group(1)), body)
    body = re.sub(r"@STR\((\w+)\)@", lambda m: _STR.format(s=m.group(1)), body)
    body = body.replace("ZEROS", _ZEROS).replace("@LS@", literal("\u2028"))
    body = body.replace("@PS@", literal("\u2029")).replace("@BS@", literal("\b"))
    body = body.replace("@FF@", literal("\f")).replace("@NATIVE@", NATIVE_SHORTEST)
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
    if leading:
        _LEADING.add(name)
    MACROS[name] = Macro(name=name, params=_PARAMS[name], doc=_DOCS[name],
                         source=_SOURCES[name], deps=_DEPS[name],
                         inner=_INNERS.get(name, ()))


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
    should meet a macro before its use), and before them the `leading` ones. The result
    starts with `{%-` and ends with `-%}`: it writes nothing itself and strips whitespace on
    both sides on every engine.
    """
    order = _closure(names)
    order = [n for n in order if n in _LEADING] + [n for n in order if n not in _LEADING]
    return "\n".join(MACROS[name].source for name in order)


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
