"""Runtime macros that read a string's characters as numbers: code points, UTF-8 bytes, and
the escapes Go writes by them (urlquery, printf's %x and %q, js).

No engine gives a template a character's code point or bytes directly, so each family of
engines is read its own way (the `'😀'|length` probe tells them apart): where |length counts
bytes (llama.cpp, minja) a byte's value is its place in @NON_ASCII@; on hf.js a code point
comes from tojson(ensure_ascii); on jinja2 and minijinja from halving against
`'%c'|format(n)`; printable ASCII by its place in a literal, and the control characters (which
no macro source holds) by their tojson escape. Every branch is verified against Go on the
engines that take it.

May depend on: `emit.runtime.library`, `emit.runtime.printable`.
"""

from __future__ import annotations

from gotmpl2jinja.emit.runtime.library import _define, literal
from gotmpl2jinja.emit.runtime.printable import PRINTABLE_BOUNDARIES

#: Printable ASCII (U+0020..U+007E), in order: a character's place in it, found with `split`,
#: is its code point less 32.
_PRINTABLE_ASCII = literal("".join(chr(c) for c in range(0x20, 0x7F)))

#: runtime.printable's boundaries as one text of seven digits each, written as pieces of 98
#: characters joined by `~`: minja reads a list literal, and a string literal, in time that
#: grows with the square of its length (1,480 numbers: 3.7 s; one 10,360-character string:
#: 2.6 s; these pieces: under 0.1 s; measured 2026-12-03).
_DIGITS = "".join(f"{b:07d}" for b in PRINTABLE_BOUNDARIES)
_PRINTABLE = "(" + "\n    ~ ".join(f"'{_DIGITS[i:i + 98]}'"
                                   for i in range(0, len(_DIGITS), 98)) + ")"


def _byte_value(p: str) -> str:
    """Jinja for a byte's value from `p`, its first place in @NON_ASCII@ where |length counts
    bytes: U+0080..U+00BF first (its odd bytes the continuation bytes, its first the lead C2),
    then one character for each lead C3..DF, E0..EF and F0..F4."""
    return (f"(194 if {p} == 0 else 128 + (({p} - 1) / 2)|int if {p} < 128"
            f" else 195 + (({p} - 128) / 2)|int if {p} < 186"
            f" else 224 + (({p} - 186) / 3)|int if {p} < 234 else 240 + (({p} - 234) / 4)|int)")


def _hex2(value: str, digits: str) -> str:
    """Jinja for the two hex digits of the byte `value` (a name) in `digits`' case."""
    return (f"{literal(digits)}[({value} / 16)|int:({value} / 16)|int + 1]"
            f" ~ {literal(digits)}[{value} % 16:{value} % 16 + 1]")


#: The UTF-8 bytes of the code point `v` (past ASCII), as a Jinja list.
_UTF8 = ("([192 + (v / 64)|int, 128 + v % 64] if v < 2048"
         " else [224 + (v / 4096)|int, 128 + ((v / 64)|int) % 64, 128 + v % 64] if v < 65536"
         " else [240 + (v / 262144)|int, 128 + ((v / 4096)|int) % 64,"
         " 128 + ((v / 64)|int) % 64, 128 + v % 64])")

_define(
    "_go_code_point", "c, unit",
    "Internal: the code point of `c`, one character past printable ASCII (DEL or beyond), where "
    "|length counts code points (unit 1) or UTF-16 units (unit 2, hf.js). On hf.js from "
    "tojson(ensure_ascii), its hex digits found by `split` (`|int(base=16)` gives 0 there); "
    "elsewhere by halving the code points against `'%c'|format(n)` (jinja2; minijinja from "
    "2.13, which has neither |urlencode nor ensure_ascii as TGI and mistral.rs build it), the "
    "surrogates skipped.",
    """
{%- if unit == 2 -%}
{%- set e = ((c|tojson(ensure_ascii=true))[3:])|lower -%}
{%- set h = namespace(n=0, m=0) -%}
{%- for d in range(4) -%}
{%- set h.n = h.n * 16 + ('0123456789abcdef'.split(e[d:d + 1])[0])|length -%}
{%- if c|length == 2 -%}
{%- set h.m = h.m * 16 + ('0123456789abcdef'.split(e[d + 6:d + 7])[0])|length -%}
{%- endif -%}
{%- endfor -%}
{{- h.n if c|length == 1 else 65536 + (h.n - 55296) * 1024 + h.m - 56320 -}}
{%- else -%}
{%- set b = namespace(lo=127, hi=55296) if c < '%c'|format(57344)
    else namespace(lo=57344, hi=1114112) -%}
{%- for t in range(21) -%}
{%- if b.hi - b.lo > 1 -%}
{%- set mid = ((b.lo + b.hi) / 2)|int -%}
{%- if c < '%c'|format(mid) -%}{%- set b.hi = mid -%}{%- else -%}{%- set b.lo = mid -%}{%- endif -%}
{%- endif -%}
{%- endfor -%}
{{- b.lo -}}
{%- endif -%}
""",
)

_define(
    "_go_char_value", "c, unit",
    "Internal: the number of `c`, one character (one byte where |length counts bytes, unit "
    "4): printable ASCII by its place in a table; a control character (and NUL) by its tojson "
    "escape; a byte past ASCII by its place in @NON_ASCII@ (its value, not a code point); DEL "
    "and every other character by _go_code_point.",
    """
{%- if c in @PRINTABLE_ASCII@ -%}{{- (@PRINTABLE_ASCII@.split(c)[0])|length + 32 -}}
{%- elif unit == 4 and c in @NON_ASCII@ -%}
{%- set p = (@NON_ASCII@.split(c)[0])|length -%}
{{- @BYTE@ -}}
{%- else -%}
{%- set j = c|tojson -%}
{%- if j[:3] == '"\\\\u' -%}
{%- set e = j[3:7]|lower -%}
{%- set h = namespace(n=0) -%}
{%- for d in range(4) -%}
{%- set h.n = h.n * 16 + ('0123456789abcdef'.split(e[d:d + 1])[0])|length -%}
{%- endfor -%}
{{- h.n -}}
{%- elif j == '"\\\\n"' -%}{{- 10 -}}
{%- elif j == '"\\\\t"' -%}{{- 9 -}}
{%- elif j == '"\\\\r"' -%}{{- 13 -}}
{%- elif j == '"\\\\b"' -%}{{- 8 -}}
{%- elif j == '"\\\\f"' -%}{{- 12 -}}
{%- elif unit == 4 -%}{{- 127 -}}
{%- else -%}
{#- @INNER@ -#}
{{- _go_code_point(c, unit) -}}
{%- endif -%}
{%- endif -%}
""".replace("@BYTE@", _byte_value("p")).replace("@PRINTABLE_ASCII@", _PRINTABLE_ASCII),
    inner=("_go_code_point",),
)

_define(
    "go_query_escape", "s",
    "Go's url.QueryEscape of the string `s` (urlquery): letters, digits and `-_.~` as they "
    "are, a space as `+`, every other UTF-8 byte as `%XX` (byte by byte where |length counts "
    "bytes, else each character's code point written as UTF-8; _go_char_value).",
    """
{%- set unit = @UNIT@ -%}
{%- for k in range((((s|length) + 63) / 64)|int) -%}
{%- set chunk = s[k * 64:k * 64 + 64] -%}
{%- for j in range(chunk|length) -%}
{%- set c = chunk[j:j + 1] -%}
{%- if c == '' -%}
{%- elif c in 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~' -%}{{- c -}}
{%- elif c == ' ' -%}{{- '+' -}}
{%- else -%}
{%- set v = _go_char_value(c, unit)|int -%}
{%- for b in ([v] if v < 128 or unit == 4 else @UTF8@) -%}{{- '%' ~ @HEX2@ -}}{%- endfor -%}
{%- endif -%}
{%- endfor -%}
{%- endfor -%}
""".replace("@UTF8@", _UTF8).replace("@HEX2@", _hex2("b", "0123456789ABCDEF")),
    ("_go_char_value",),
)

_define(
    "go_byte", "s, i",
    "Go's `index s i` of a string: the value of its UTF-8 byte at offset `i` (a uint8), and Go's "
    "failure (raise_exception) out of range. Where |length counts bytes the byte is the "
    "character there; where the first i + 1 characters are ASCII (go_len), the character "
    "i; else the characters are walked, their bytes counted (_go_char_bytes), and the one "
    "holding offset `i` written as UTF-8.",
    """
{%- set unit = @UNIT@ -%}
{%- set head = s[:i + 1] if i >= 0 and i < s|length else '' -%}
{%- if i < 0 or unit == 4 and i >= s|length -%}{{- raise_exception('index out of range') -}}
{%- elif unit == 4 or (head|length == i + 1 and go_len(head)|int == i + 1) -%}
{{- _go_char_value(s[i:i + 1], unit) -}}
{%- else -%}
{%- set ns = namespace(pos=0, b=-1) -%}
{%- for k in range((((s|length) + 63) / 64)|int) -%}
{%- set chunk = s[k * 64:k * 64 + 64] -%}
{%- for j in range(chunk|length) -%}
{%- set c = chunk[j:j + 1] -%}
{%- if c != '' and ns.b < 0 -%}
{%- set size = _go_char_bytes(c, unit)|int -%}
{%- if ns.pos + size > i -%}
{%- set v = _go_char_value(c, unit)|int -%}
{%- set ns.b = ([v] if v < 128 else @UTF8@)[i - ns.pos] -%}
{%- endif -%}
{%- set ns.pos = ns.pos + size -%}
{%- endif -%}
{%- endfor -%}
{%- endfor -%}
{%- if ns.b < 0 -%}{{- raise_exception('index out of range') -}}
{%- else -%}{{- ns.b -}}
{%- endif -%}
{%- endif -%}
""".replace("@UTF8@", _UTF8),
    ("go_len", "_go_char_bytes", "_go_char_value"),
)

_define(
    "go_hex_string", "s, verb, width, minus, prec",
    "Go fmt's %x / %X of the string `s` (fmt.fmtSbx, no flag but `-`): two hex digits for "
    "each UTF-8 byte (`verb` x: lower case), the first `prec` bytes only (-1: all), padded "
    "with spaces to `width` (-1: none). Bytes as go_query_escape finds them.",
    """
{%- set unit = @UNIT@ -%}
{%- set out -%}
{%- for k in range((((s|length) + 63) / 64)|int) -%}
{%- set chunk = s[k * 64:k * 64 + 64] -%}
{%- for j in range(chunk|length) -%}
{%- set c = chunk[j:j + 1] -%}
{%- if c != '' -%}
{%- set v = _go_char_value(c, unit)|int -%}
{%- for b in ([v] if v < 128 or unit == 4 else @UTF8@) -%}{{- @HEX2@ -}}{%- endfor -%}
{%- endif -%}
{%- endfor -%}
{%- endfor -%}
{%- endset -%}
{%- set out = out if verb == 'x' else out|upper -%}
{{- go_pad(out[:2 * prec] if prec >= 0 else out, width, minus, false) -}}
""".replace("@UTF8@", _UTF8).replace("@HEX2@", _hex2("b", "0123456789abcdef")),
    ("go_pad", "_go_char_value"),
)

#: Go's escapes of the ASCII characters that js (template.JSEscapeString) and %q
#: (strconv.Quote) do not write as they are, besides control characters by number.
_JS_ASCII = {"\\": "\\\\", "'": "\\'", '"': '\\"', "<": "\\u003C", ">": "\\u003E",
             "&": "\\u0026", "=": "\\u003D"}
_Q_ASCII = {'"': '\\"', "\\": "\\\\"}
_Q_CONTROLS = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}


def _ascii_escape(mode: str) -> str:
    """Jinja for Go's escape of `c` (code point `v`, ASCII) in js or %q."""
    if mode == "js":
        chain = [f"{literal(e)} if c == {literal(ch)}" for ch, e in _JS_ASCII.items()]
        chain.append(f"'\\\\u00' ~ {_hex2('v', '0123456789ABCDEF')} if v < 32")
    else:
        chain = [f"{literal(e)} if c == {literal(ch)}" for ch, e in _Q_ASCII.items()]
        chain += [f"{literal(e)} if v == {n}" for n, e in _Q_CONTROLS.items()]
        chain.append(f"'\\\\x' ~ {_hex2('v', '0123456789abcdef')} if v < 32 or v == 127")
    return "(" + " else ".join(chain) + " else c)"


_define(
    "_go_rune_escape", "r, cp, mode, table",
    "Internal: the character `r` (code point `cp`, past ASCII) as js (`mode` 'js') or %q "
    "('q') writes it: as it is when Go's unicode.IsPrint takes it (an odd number of `table`'s "
    "boundaries at or below `cp`, found by halving; `table` holds them as seven digits each), "
    "else js's `\\\\u%04X`, %q's `\\\\u%04x` or `\\\\U%08x`.",
    """
{%- set b = namespace(lo=0, hi=((table|length) / 7)|int) -%}
{%- for t in range(11) -%}
{%- if b.hi > b.lo -%}
{%- set mid = ((b.lo + b.hi) / 2)|int -%}
{%- if (table[mid * 7:mid * 7 + 7])|int <= cp -%}{%- set b.lo = mid + 1 -%}
{%- else -%}{%- set b.hi = mid -%}{%- endif -%}
{%- endif -%}
{%- endfor -%}
{%- if b.lo % 2 == 1 -%}{{- r -}}
{%- elif mode == 'js' -%}{{- '\\\\u' ~ go_int(cp, 'X', '', -1, 4) -}}
{%- elif cp < 65536 -%}{{- '\\\\u' ~ go_int(cp, 'x', '', -1, 4) -}}
{%- else -%}{{- '\\\\U' ~ go_int(cp, 'x', '', -1, 8) -}}
{%- endif -%}
""",
    ("go_int",),
)

_define(
    "go_escape_runes", "s, mode",
    "The string `s` escaped rune by rune as Go's js (`mode` 'js': template.JSEscapeString) or "
    "%q ('q': strconv.Quote, without the quotes) escapes it: ASCII by its own table (a "
    "control character by number), a character past ASCII as it is when unicode.IsPrint "
    "takes it (Go's table, runtime.printable), else by its code point. Where |length counts "
    "bytes a rune is decoded from its lead byte and the bytes after it.",
    """
{%- set unit = @UNIT@ -%}
{%- set table = @PRINTABLE@ -%}
{%- set lead = @CONT@[0:1] -%}
{%- set plain = '\\\\\\'"<>&=' if mode == 'js' else '\\\\"' -%}
{%- for k in range((((s|length) + 63) / 64)|int) -%}
{%- set chunk = s[k * 64:k * 64 + 64] -%}
{%- for j in range(chunk|length) -%}
{%- set c = chunk[j:j + 1] -%}
{%- if c == '' or unit == 4 and c != lead and c in @CONT@ -%}
{%- elif c in @PRINTABLE_ASCII@ and c not in plain -%}{{- c -}}
{%- else -%}
{%- set v = _go_char_value(c, unit)|int -%}
{%- if v < 128 -%}{{- @JS_ASCII@ if mode == 'js' else @Q_ASCII@ -}}
{%- elif unit == 4 -%}
{%- set at = k * 64 + j -%}
{%- set n = 2 if v < 224 else 3 if v < 240 else 4 -%}
{%- set cp = namespace(v=v - (192 if n == 2 else 224 if n == 3 else 240)) -%}
{%- for i in range(1, n) -%}
{%- set p = (@NON_ASCII@.split(s[at + i:at + i + 1])[0])|length -%}
{%- set cp.v = cp.v * 64 + @BYTE@ - 128 -%}
{%- endfor -%}
{{- _go_rune_escape(s[at:at + n], cp.v, mode, table) -}}
{%- else -%}{{- _go_rune_escape(c, v, mode, table) -}}
{%- endif -%}
{%- endif -%}
{%- endfor -%}
{%- endfor -%}
""".replace("@BYTE@", _byte_value("p")).replace("@PRINTABLE@", _PRINTABLE)
    .replace("@JS_ASCII@", _ascii_escape("js")).replace("@Q_ASCII@", _ascii_escape("q"))
    .replace("@PRINTABLE_ASCII@", _PRINTABLE_ASCII),
    ("_go_char_value", "_go_rune_escape"),
)
