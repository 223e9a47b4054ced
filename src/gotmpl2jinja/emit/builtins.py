"""The functions a template can call, one entry each: Go's builtins and Ollama's own, by the
name a template calls them, to the Emitter method that translates a call (`and` and `or`
are not here: they decide which operands run, so `Expressions.call` reads them itself).

May depend on: the Emitter's parts (`emit.comparisons`, `emit.strings`, `emit.printing`,
`emit.printf`) and `emit.values`.
"""

from __future__ import annotations

from collections.abc import Callable

from gotmpl2jinja.emit.comparisons import Comparisons
from gotmpl2jinja.emit.printf import Printf
from gotmpl2jinja.emit.printing import Printing
from gotmpl2jinja.emit.strings import Strings
from gotmpl2jinja.emit.values import Expr

#: name → method(emitter, translated arguments, call node) → the call's Expr.
BUILTINS: dict[str, Callable[..., Expr]] = {
    # text/template's builtins (Go's funcs.go)
    "not": Comparisons.fn_not,
    "eq": Comparisons.fn_eq,
    "ne": Comparisons.fn_ne,
    "lt": Comparisons.fn_lt,
    "le": Comparisons.fn_le,
    "gt": Comparisons.fn_gt,
    "ge": Comparisons.fn_ge,
    "len": Strings.fn_len,
    "index": Strings.fn_index,
    "slice": Strings.fn_slice,
    "print": Printing.fn_print,
    "println": Printing.fn_println,
    "printf": Printf.fn_printf,
    "html": Printing.fn_html,
    "js": Printing.fn_js,
    "urlquery": Printing.fn_urlquery,
    "call": Printing.fn_call,
    # Ollama's template functions (template/template.go funcs)
    "json": Printing.fn_json,
    "currentDate": Printing.fn_currentDate,
    "yesterdayDate": Printing.fn_yesterdayDate,
    "toTypeScriptType": Printing.fn_toTypeScriptType,
}
