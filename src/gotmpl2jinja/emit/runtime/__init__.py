"""The runtime library: portable Jinja macros that print values exactly as Go does.

May depend on: its own modules, `library` and the families of macros after it
(which depend on `analysis` and `errors`).

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
- Numbers: where the engine's own float-to-string (`x|float|string`) carries Go's shortest
  round-trip digits (Python `repr`, JavaScript `String`; a probe, NATIVE_SHORTEST, asks), only
  the layout differs (`1e-07`, `1e-7`). Rust's `Display` (minijinja) is shortest too but breaks
  a tie between two nearest candidates upward, so minijinja takes the exact path with the C++
  engines (`_exact_float_parts`). `_go_decimal` extracts digits and decimal point from any of
  those layouts; `_go_float` lays them out as Go does. @huggingface/jinja prints an integral
  float with `toFixed(1)`, which gives the *exact* decimal (not the shortest) from 2**53 up;
  `_go_float_parts` then also reads `x|float|int|string` and keeps the shorter digit string.
- Map keys are sorted with `dictsort(case_sensitive=true)` (Go sorts bytewise; jinja2's default
  sort ignores case). Not `d.keys()`: on @huggingface/jinja a key named `keys` shadows the
  method, as `items` does for `d.items` on jinja2 (field reads use `.get`).
  jinja2 and minijinja compare code points (= UTF-8 byte order); JavaScript compares UTF-16
  units, so on @huggingface/jinja keys that differ first at a character in U+E000..U+FFFF
  versus one above U+FFFF sort differently from Go: a documented limit for a map's keys, which
  are sorted inside a `for` (go_less, which orders two strings, walks such a pair instead).
- Tool fields are read by their documented lower-case key (`p.get('description')` in these
  sources, written out as `(p['description'] if 'description' in p else none)`): the
  contract (docs/equivalence-contract.md, "Keys and values are exactly the documented ones")
  and conversation.validate refuse other spellings and nulls outside free JSON, the only
  inputs where Go's case-insensitive, null-skipping decoder would see something else.

API: `MACROS` (name → Macro: params, doc = the contract, source, deps), `macro_source(names)`,
`macro_block(names)` (the same between two comment lines, as the translator pastes it),
`public_macros()`. Public macros:
values — json_string, json_number, print_number, go_fmt_float, go_hex_float, go_bin_float,
go_sharp_float, json_value, print_value, print_slice, print_strings, print_int; tools — json_tools,
json_tool, json_function, json_parameters, json_properties, print_properties, json_property,
json_map_key, print_property, json_property_list, print_property_list, print_property_type,
typescript_type; tool calls (Jinja-side shape of the contract) — json_tool_calls, json_tool_call,
json_call_function, print_tool_calls, print_tool_call, print_tool_call_function, json_arguments,
print_arguments; the template's structs as json — json_message, json_messages; Go's builtins and
fmt — go_pad, go_pad_number, go_pad_string, go_int, go_html, go_query_number, go_len, go_slice,
go_slice_equals, go_slice_len, go_runes, go_truncate, go_fmt_string, go_fmt_int, go_fmt_json,
go_fmt_tool_call, go_fmt_tool_calls, go_fmt_bad_messages, go_fmt_tools, go_fmt_tool,
go_fmt_function, go_fmt_parameters, go_fmt_properties, go_fmt_property, go_eq_json, go_lt_json,
go_less; dates — yesterday_date; a string's characters as numbers, and back — go_query_escape,
go_hex_string, go_escape_runes, go_byte, go_char, go_unicode, go_can_backquote, go_quote.
`gotmpl2jinja runtime --list` prints every contract.

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

from gotmpl2jinja.emit.runtime.library import (
    ADDRESS,
    MACROS,
    MACROS_INTRO,
    MACROS_OUTRO,
    NATIVE_SHORTEST,
    NOT_UTF8,
    SMALL_INT,
    STRING_UNIT,
    Macro,
    UnknownMacroError,
    indent_by_nesting,
    item_or,
    literal,
    macro_block,
    macro_source,
    public_macros,
    sorted_items,
)

# The families of macros, each registering its macros with `_define` when imported. Their order
# is the runtime's order, so it is kept as written (not sorted): it is `MACROS`' order (what
# `public_macros()` and `gotmpl2jinja runtime` list), and of two macros with the same initials
# the one registered first gets the shorter variable prefix (`_go_print` gp_, `go_pad` gp2_),
# which is part of every emitted macro's source.
# isort: off
from gotmpl2jinja.emit.runtime import go_values  # noqa: F401  strings, numbers, any
from gotmpl2jinja.emit.runtime import fmt_floats  # noqa: F401  printf's %e %f %g %x of floats
from gotmpl2jinja.emit.runtime import tool_shapes  # noqa: F401  tools; a call's Arguments, Index
from gotmpl2jinja.emit.runtime import go_strings  # noqa: F401  Go's builtins and fmt on strings
from gotmpl2jinja.emit.runtime import tool_calls  # noqa: F401  tool calls, messages, printf
from gotmpl2jinja.emit.runtime import dates  # noqa: F401  yesterday_date
from gotmpl2jinja.emit.runtime import comparisons  # noqa: F401  eq of decoded JSON
from gotmpl2jinja.emit.runtime import go_runes  # noqa: F401  code points, UTF-8 bytes, escapes
# isort: on

__all__ = [
    "ADDRESS",
    "MACROS",
    "MACROS_INTRO",
    "MACROS_OUTRO",
    "NATIVE_SHORTEST",
    "NOT_UTF8",
    "SMALL_INT",
    "STRING_UNIT",
    "Macro",
    "UnknownMacroError",
    "indent_by_nesting",
    "item_or",
    "literal",
    "macro_block",
    "macro_source",
    "public_macros",
    "sorted_items",
]
