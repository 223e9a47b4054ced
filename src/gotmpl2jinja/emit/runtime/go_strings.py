"""Runtime macros for Go's builtins and fmt on strings and ints: padding, html, len, slice,
runes, a string's precision, integer verbs.

May depend on: `emit.runtime.library`.
"""

from __future__ import annotations

from gotmpl2jinja.emit.runtime.library import _define

# ---------------------------------------------------------------------------------------------
# Go's builtins and fmt on strings and ints

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
    "go_pad_number", "s, plus, space, width, minus, zero",
    "Go fmt's sign and padding of a float's text `s` (fmtFloat): a `-` it has, else `+` for "
    "`plus` or a space for `space`; padded with spaces to `width` (-1: none), on the right for "
    "`minus`, or with zeros between the sign and the digits for `zero`.",
    """
{%- set neg = s[:1] == '-' -%}
{%- set sign = '-' if neg else '+' if plus else ' ' if space else '' -%}
{%- set body = s[1:] if neg else s -%}
{%- if zero and width > (sign ~ body)|length -%}{{- sign ~ go_pad(body, width - sign|length, false,
    true) -}}
{%- else -%}{{- go_pad(sign ~ body, width, minus, false) -}}{%- endif -%}
""",
    ("go_pad",),
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
