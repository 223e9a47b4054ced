"""Runtime macros for Go's eq and lt of a decoded-JSON value (a tool-call argument), by the kind
the value holds, and for Go's order of two strings.

May depend on: `emit.runtime.library`.
"""

from __future__ import annotations

from gotmpl2jinja.emit.runtime.library import AS_FLOAT64, _define

#: The Go kind of a decoded-JSON value `{v}`: n(il), b(ool), s(tring), f(loat64), c(omposite).
_KIND = ("('n' if ({v} is not defined or {v} is none) else ('b' if {v} is boolean else "
         "('s' if {v} is string else ('f' if {v} is number else 'c'))))")


def _kinds(given_a: str | None, given_b: str | None) -> str:
    """Jinja setting `ka` and `kb`, the Go kinds of the macro's `a` and `b`: read from the value
    (_KIND), or, for a side whose parameter `given_*` names, that parameter when it is not ''."""
    def kind(v: str, given: str | None) -> str:
        return (f"{given} if {given} else " if given else "") + _KIND.format(v=v)
    return f"{{%- set ka = {kind('a', given_a)} -%}}{{%- set kb = {kind('b', given_b)} -%}}"


#: Jinja setting `fa` and `fb`: the float64s Go holds for the JSON numbers `a` and `b`.
_FLOATS = AS_FLOAT64.format(v="a", f="fa") + "\n" + AS_FLOAT64.format(v="b", f="fb")

_define(
    "go_eq_json", "a, b, kind",
    "`T` when Go's eq of the decoded-JSON value `a` and `b` holds, else `F`; Go's failure where "
    "it fails. `kind` is b's Go kind when b is not decoded JSON: 'b' bool, 's' string, 'f' "
    "float64, 'i' int (no JSON value has it); '' reads it from b. nil (a JSON null, a missing "
    "key) equals only nil, without an error; values of two kinds, and maps and slices, fail.",
    _kinds(None, "kind") + """
{%- if ka == 'n' or kb == 'n' -%}{{- 'T' if ka == kb else 'F' -}}
{%- elif ka != kb or ka == 'c' -%}{{- raise_exception('incompatible types for comparison') -}}
{%- elif ka == 'f' -%}
""" + _FLOATS + """
{{- 'T' if fa == fb else 'F' -}}
{%- else -%}{{- 'T' if a == b else 'F' -}}
{%- endif -%}
""",
)

_define(
    "go_less", "a, b",
    "`T` when the string `a` sorts before `b` as Go orders strings (bytewise: code point "
    "order), else `F`. String `<` fails on @huggingface/jinja and llama.cpp, so dictsort orders "
    "the pair (bytewise by the probe of sorted_items; read in a `for`: llama.cpp's dictsort "
    "cannot be subscripted). @huggingface/jinja's dictsort orders UTF-16 units, which puts a "
    "code point past U+FFFF before U+E000..U+FFFF; there (its |length counts UTF-16 units, its "
    "slices code points) a pair holding such a code point is walked to its first differing "
    "code points, and where one is past U+FFFF and the other not, they stand in as 'b' and "
    "'a'.",
    """
{%- if a == b -%}{{- 'F' -}}
{%- else -%}
{%- set x = a -%}{%- set y = b -%}
{%- if @UNIT@ == 2 and ((a != '' and a[(a|length) - 1:] == '')
        or (b != '' and b[(b|length) - 1:] == '')) -%}
{%- set ns = namespace(x='', y='') -%}
{%- for i in range((a|length) + 1) -%}
{%- if ns.x == ns.y -%}{%- set ns.x = a[i:i + 1] -%}{%- set ns.y = b[i:i + 1] -%}{%- endif -%}
{%- endfor -%}
{%- set wide = ns.x != '' and ns.y != '' and (ns.x|length) != (ns.y|length) -%}
{%- set x = ('b' if (ns.x|length) == 2 else 'a') if wide else ns.x -%}
{%- set y = ('b' if (ns.y|length) == 2 else 'a') if wide else ns.y -%}
{%- endif -%}
{%- set d = {x: 0, y: 1} -%}
{%- for k, v in @SORTED(d)@ -%}
{%- if loop.first -%}{{- 'T' if v == 0 else 'F' -}}{%- endif -%}
{%- endfor -%}
{%- endif -%}
""",
)

_define(
    "go_lt_json", "a, b, ka, kb",
    "`T` when Go's lt of `a` and `b` holds, `F` when not, where one or both are decoded-JSON "
    "values; Go's failure where it fails. `ka`/`kb`: the Go kind of a side that is not decoded "
    "JSON ('s' string, 'f' float64, 'i' int, 'b' bool), '' to read it from the value. Go orders "
    "two strings (bytewise, go_less) or two float64s; anything else fails: nil, a bool, a map or "
    "a slice, two kinds, and a float64 against an int.",
    _kinds("ka", "kb") + """
{%- if ka != kb or ka not in ['s', 'f'] -%}{{- raise_exception('invalid type for comparison') -}}
{%- elif ka == 's' -%}{{- go_less(a, b) -}}
{%- else -%}
""" + _FLOATS + """
{{- 'T' if fa < fb else 'F' -}}
{%- endif -%}
""",
    ("go_less",),
)
