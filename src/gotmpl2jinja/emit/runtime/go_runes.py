"""Runtime macros that read a string's characters as numbers: code points, UTF-8 bytes, and
the escapes Go writes by them (urlquery, printf's %x and %q, js); and back: the character of
a number (printf's %c, %q and %U of an integer).

No engine gives a template a character's code point or bytes directly, so each family of
engines is read its own way (the `'😀'|length` probe tells them apart): where |length counts
bytes (llama.cpp, minja) a byte's value is its place in @NON_ASCII@; on hf.js a code point
comes from tojson(ensure_ascii); on jinja2 and minijinja from halving against
`'%c'|format(n)`; printable ASCII by its place in a literal, and the control characters by
their tojson escape. The way back: `'%c'|format(n)` on jinja2 and minijinja, UTF-8 bytes cut
from @NON_ASCII@ where |length counts bytes, and on hf.js, which has no function for it, a
table of the BMP's characters and one of UTF-16 halves. Every branch is verified against Go on
the engines that take it.

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
    "go_hex_string", "s, verb, width, minus, prec, sharp=false, space=false, zero=false",
    "Go fmt's %x / %X of the string `s` (fmt.fmtSbx): two hex digits for each UTF-8 byte "
    "(`verb` x: lower case), the first `prec` bytes only (-1: all); `space` (% x) puts a "
    "space between bytes, `sharp` (%#x) `0x` before them (before each with `space`); padded "
    "to `width` (-1: none) with spaces, or zeros for `zero` (%0x, not with `-`), an empty "
    "string all padding. Bytes as go_query_escape finds them.",
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
{%- set out = out[:2 * prec] if prec >= 0 else out -%}
{%- if out != '' and (sharp or space) -%}
{%- set head = '0' ~ verb if sharp else '' -%}
{%- set ns = namespace(t='') -%}
{%- for i in range(((out|length) / 2)|int if space else 1) -%}
{%- set ns.t = ns.t ~ (' ' if i > 0 else '') ~ (head if i == 0 or space else '')
    ~ (out[2 * i:2 * i + 2] if space else out) -%}
{%- endfor -%}
{%- set out = ns.t -%}
{%- endif -%}
{{- go_pad(out, width, minus, zero) -}}
""".replace("@UTF8@", _UTF8).replace("@HEX2@", _hex2("b", "0123456789abcdef")),
    ("go_pad", "_go_char_value"),
)

#: Go's escapes of the ASCII characters that js (template.JSEscapeString) and %q
#: (strconv.Quote) do not write as they are, besides control characters by number.
_JS_ASCII = {"\\": "\\\\", "'": "\\'", '"': '\\"', "<": "\\u003C", ">": "\\u003E",
             "&": "\\u0026", "=": "\\u003D"}
_Q_ASCII = {'"': '\\"', "\\": "\\\\"}
_Q_CONTROLS = {7: "\\a", 8: "\\b", 12: "\\f", 10: "\\n", 13: "\\r", 9: "\\t", 11: "\\v"}
#: strconv.QuoteRune's: the quote is `'`, and `"` stays as it is.
_Q_RUNE_ASCII = {"'": "\\'", "\\": "\\\\"}


def _ascii_escape(mode: str) -> str:
    """Jinja for Go's escape of `c` (code point `v`, ASCII) in js, %q of a string (`q`) or
    of a rune (`rune`)."""
    if mode == "js":
        chain = [f"{literal(e)} if c == {literal(ch)}" for ch, e in _JS_ASCII.items()]
        chain.append(f"'\\\\u00' ~ {_hex2('v', '0123456789ABCDEF')} if v < 32")
    else:
        table = _Q_RUNE_ASCII if mode == "rune" else _Q_ASCII
        chain = [f"{literal(e)} if c == {literal(ch)}" for ch, e in table.items()]
        chain += [f"{literal(e)} if v == {n}" for n, e in _Q_CONTROLS.items()]
        chain.append(f"'\\\\x' ~ {_hex2('v', '0123456789abcdef')} if v < 32 or v == 127")
    return "(" + " else ".join(chain) + " else c)"


_define(
    "_go_rune_escape", "r, cp, mode, table",
    "Internal: the character `r` (code point `cp`, past ASCII) as js (`mode` 'js') or %q "
    "('q') writes it: as it is when Go's unicode.IsPrint takes it (an odd number of `table`'s "
    "boundaries at or below `cp`, found by halving; `table` holds them as seven digits each), "
    "else js's `\\\\u%04X`, %q's `\\\\u%04x` or `\\\\U%08x`; %+q ('q+') always by number.",
    """
{%- set b = namespace(lo=0, hi=((table|length) / 7)|int) -%}
{%- for t in range(11) -%}
{%- if b.hi > b.lo -%}
{%- set mid = ((b.lo + b.hi) / 2)|int -%}
{%- if (table[mid * 7:mid * 7 + 7])|int <= cp -%}{%- set b.lo = mid + 1 -%}
{%- else -%}{%- set b.hi = mid -%}{%- endif -%}
{%- endif -%}
{%- endfor -%}
{%- if b.lo % 2 == 1 and mode != 'q+' -%}{{- r -}}
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
    "%q ('q': strconv.Quote, without the quotes; 'q+': QuoteToASCII) escapes it: ASCII by its "
    "own table (a control character by number), a character past ASCII as it is when "
    "unicode.IsPrint takes it (Go's table, runtime.printable; never for 'q+'), else by its "
    "code point. Where |length counts "
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

#: Every character of the BMP past ASCII but the surrogates (U+0080..U+D7FF, U+E000..U+FFFF),
#: in order: on @huggingface/jinja, where nothing makes a character from a number, a code point's
#: character is cut from it (188 KB; every engine reads it as one token, in a branch only hf.js
#: takes).
_BMP = literal("".join(map(chr, range(0x80, 0xD800))) + "".join(map(chr, range(0xE000, 0x10000))))
#: 1,024 characters past the BMP whose UTF-16 halves are every high surrogate (character j's
#: first unit is D800 + j) and every low one (its second, DC00 + j): on hf.js `s[i]` is one
#: UTF-16 unit, and two halves joined are the character.
_PAIRS = literal("".join(chr(0x10000 + j * 1025) for j in range(1024)))
#: The ASCII control characters (U+0000..U+001F) and DEL, in order: the one literal of the
#: runtime that holds control characters (for %c and %#q; a NUL in a template keeps its raises
#: apart, emit.translator).
CONTROL_CHARACTERS = literal("".join(map(chr, range(32))) + "\x7f")
#: The place in @NON_ASCII@ of the byte `b` past ASCII (where |length counts bytes): the inverse
#: of _byte_value.
_BYTE_PLACE = ("(2 * (b - 128) + 1 if b < 192 else 0 if b == 194 else 128 + 2 * (b - 195)"
               " if b < 224 else 186 + 3 * (b - 224) if b < 240 else 234 + 4 * (b - 240))")

_define(
    "_go_rune_text", "v, unit",
    "Internal: the character of the code point `v` (past ASCII, not a surrogate, at most "
    "U+10FFFF): `'%c'|format(v)` where |length counts code points (unit 1); its UTF-8 bytes, "
    "each cut from @NON_ASCII@, where it counts bytes (4); on hf.js (2) cut from a table of "
    "the BMP, or joined from two UTF-16 halves cut from a table of pairs. Written first in a "
    "template, and the table first in it (`leading`).",
    """
{%- if unit == 2 and v < 65536 -%}{{- @BMP@[v - (128 if v < 55296 else 2176)] -}}
{%- elif unit == 1 -%}{{- '%c'|format(v) -}}
{%- elif unit == 4 -%}
{%- for b in @UTF8@ -%}{%- set p = @BYTE_PLACE@ -%}{{- @NON_ASCII@[p:p + 1] -}}{%- endfor -%}
{%- else -%}
{%- set u = v - 65536 -%}
{{- @PAIRS@[2 * ((u / 1024)|int)] ~ @PAIRS@[2 * (u % 1024) + 1] -}}
{%- endif -%}
""".replace("@UTF8@", _UTF8).replace("@BYTE_PLACE@", _BYTE_PLACE).replace("@BMP@", _BMP)
    .replace("@PAIRS@", _PAIRS),
    leading=True,
)

_define(
    "go_char", "n, mode",
    "The rune of the integer `n` as fmt writes it (U+FFFD for a negative number, a surrogate or "
    "one past U+10FFFF): `mode` 'c' as it is (%c), 'q' quoted by strconv.QuoteRune (%q: "
    "printable as it is but `'` and `\\`, else escaped by number), 'q+' by "
    "QuoteRuneToASCII (%+q: past ASCII always by number), 'U' the rune %#U appends (empty "
    "unless n is a rune unicode.IsPrint takes).",
    """
{%- set unit = @UNIT@ -%}
{%- set valid = n >= 0 and n < 1114112 and (n < 55296 or n > 57343) -%}
{%- set v = n if valid else 65533 -%}
{%- if v >= 128 -%}
{%- set c = _go_rune_text(v, unit) if mode != 'q+' else '' -%}
{%- set e = _go_rune_escape(c, v, 'q+' if mode == 'q+' else 'q', @PRINTABLE@) -%}
{{- c if mode == 'c' else c if mode == 'U' and valid and e == c else ''
    if mode == 'U' else "'" ~ e ~ "'" -}}
{%- else -%}
{%- set c = @PRINTABLE_ASCII@[v - 32:v - 31] if v >= 32 and v < 127 else '' -%}
{%- if mode[:1] == 'q' -%}{{- "'" ~ @RUNE_ASCII@ ~ "'" -}}
{%- elif c != '' -%}{{- c -}}
{%- elif mode == 'c' -%}{%- set k = v if v < 32 else 32 -%}{{- @CONTROLS@[k:k + 1] -}}
{%- endif -%}
{%- endif -%}
""".replace("@PRINTABLE@", _PRINTABLE).replace("@PRINTABLE_ASCII@", _PRINTABLE_ASCII)
    .replace("@RUNE_ASCII@", _ascii_escape("rune")).replace("@CONTROLS@", CONTROL_CHARACTERS),
    ("_go_rune_text", "_go_rune_escape"),
)

_define(
    "go_unicode", "n, prec, sharp",
    "fmt's %U of the integer `n` (fmtUnicode): `U+` and its hex digits (upper case, at least "
    "`prec`, 4 at least), a negative number as the uint64 it converts to (its high word from "
    "|n| - 1: @huggingface/jinja's |int floors a negative number where the others truncate); "
    "with `sharp` (%#U) then ` 'c'` when it is a rune unicode.IsPrint takes (go_char).",
    """
{%- if n >= 0 -%}{%- set h = go_int(n, 'X', '', -1, prec if prec > 4 else 4) -%}
{%- else -%}
{%- set hi = 0 - ((0 - n - 1) / 4294967296)|int - 1 -%}
{%- set h = go_int(4294967296 + hi, 'X', '', -1, 8)
    ~ go_int(n - hi * 4294967296, 'X', '', -1, 8) -%}
{%- endif -%}
{%- set c = go_char(n, 'U') if sharp else '' -%}
{{- 'U+' ~ h ~ (" '" ~ c ~ "'" if c != '' else '') -}}
""",
    ("go_int", "go_char"),
)

_define(
    "go_can_backquote", "s",
    "Go's strconv.CanBackquote of the string `s` (%#q backquotes it when true): no backquote, "
    "no control character but the tab, no DEL and no U+FEFF. `1` or `` (empty).",
    """
{%- set ns = namespace(ok=not ('`' in s or @BOM@ in s)) -%}
{%- for k in range(33) -%}
{%- if ns.ok and k != 9 and @CONTROLS@[k:k + 1] in s -%}{%- set ns.ok = false -%}{%- endif -%}
{%- endfor -%}
{{- '1' if ns.ok else '' -}}
""".replace("@CONTROLS@", CONTROL_CHARACTERS).replace("@BOM@", literal("\ufeff")),
)

_define(
    "go_quote", "s, mode",
    "Go fmt's %#q of the string `s` (fmtQ with `#`, after the precision): in backquotes when "
    "go_can_backquote, else quoted by go_escape_runes (`mode` 'q', or 'q+' for %#+q).",
    """
{%- if go_can_backquote(s) -%}{{- '`' ~ s ~ '`' -}}
{%- else -%}{{- '"' ~ go_escape_runes(s, mode) ~ '"' -}}{%- endif -%}
""",
    ("go_can_backquote", "go_escape_runes"),
)
