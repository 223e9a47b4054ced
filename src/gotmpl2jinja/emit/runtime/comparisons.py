"""Runtime macro for Go's eq of a decoded-JSON value (a tool-call argument), by the kind the
value holds.

May depend on: `emit.runtime.library`.
"""

from __future__ import annotations

from gotmpl2jinja.emit.runtime.library import AS_FLOAT64, _define

#: The Go kind of a decoded-JSON value `{v}`: n(il), b(ool), s(tring), f(loat64), c(omposite).
_KIND = ("('n' if ({v} is not defined or {v} is none) else ('b' if {v} is boolean else "
         "('s' if {v} is string else ('f' if {v} is number else 'c'))))")

_define(
    "go_eq_json", "a, b, kind",
    "`T` when Go's eq of the decoded-JSON value `a` and `b` holds, else `F`; Go's failure where "
    "it fails. `kind` is b's Go kind when b is not decoded JSON: 'b' bool, 's' string, 'f' "
    "float64, 'i' int (no JSON value has it); '' reads it from b. nil (a JSON null, a missing "
    "key) equals only nil, without an error; values of two kinds, and maps and slices, fail.",
    "{%- set ka = " + _KIND.format(v="a") + " -%}"
    "{%- set kb = kind if kind else " + _KIND.format(v="b") + " -%}"
    """
{%- if ka == 'n' or kb == 'n' -%}{{- 'T' if ka == kb else 'F' -}}
{%- elif ka != kb or ka == 'c' -%}{{- raise_exception('incompatible types for comparison') -}}
{%- elif ka == 'f' -%}
""" + AS_FLOAT64.format(v="a", f="fa") + "\n" + AS_FLOAT64.format(v="b", f="fb") + """
{{- 'T' if fa == fb else 'F' -}}
{%- else -%}{{- 'T' if a == b else 'F' -}}
{%- endif -%}
""",
)
