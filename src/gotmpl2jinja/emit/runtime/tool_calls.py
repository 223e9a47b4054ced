"""Runtime macros for tool calls and messages as Go writes them: json, struct syntax, and
printf's %s, %d and %v of composite values.

May depend on: `emit.runtime.library`.
"""

from __future__ import annotations

from gotmpl2jinja.emit.runtime.library import _define

# ---------------------------------------------------------------------------------------------
# tool calls, in the Jinja side's shape:
# {"type", "id"?, "function": {"name", "arguments", "index"?}}
# (their Arguments and Index, json_arguments, print_arguments and print_int, in tool_shapes)

_define(
    "json_tool_call", "c",
    "Go json of a templateToolCall (no json tags, so Go field names): "
    "`{\"ID\":…,\"Function\":{\"Index\":…,\"Name\":…,\"Arguments\":…}}`; takes one entry of "
    "the Jinja side's `message.tool_calls`.",
    """
{{- '{"ID":' ~ json_string(c.id if c.id is defined and c.id is not none else '')
    ~ ',"Function":' ~ json_call_function(c.function) ~ '}' -}}
""",
    ("json_string", "json_call_function"),
)

_define(
    "json_call_function", "fn",
    "Go json of a tool call's templateToolCallFunction (no json tags, so Go field names): "
    "`{\"Index\":…,\"Name\":…,\"Arguments\":…}`; takes a tool call's `function`.",
    """
{%- set f = fn if fn is defined and fn is not none else {} -%}
{{- '{"Index":' ~ print_int(f.index)
    ~ ',"Name":' ~ json_string(f.name if f.name is defined and f.name is not none else '')
    ~ ',"Arguments":' ~ json_value(f.arguments) ~ '}' -}}
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
# printf's %s, %d, %v, %f, %e and %g (with a width, a precision and `-`) of composite values:
# fmt's printValue, every field and element printed with the directive's verb, width and
# precision (a string or number field is padded by itself; a verb it does not take prints as
# %!d(string=…), the value in %v with the same width and precision). `prec` -1: none.

_define(
    "go_fmt_string", "s, verb, width, minus, prec, flags=''",
    "fmt of a string inside a printed value for a verb of `sdvfFeEgGxXq` (`width`, `prec` -1: "
    "none; `flags` the directive's others of `+#0 `): its first `prec` runes padded to `width` "
    "runes (with zeros for `0`), quoted by strconv.Quote for `q` (go_escape_runes; `+` in "
    "ASCII, `#` backquoted where it can be, go_quote); for `x` and `X` its first `prec` UTF-8 "
    "bytes in hex, padded (go_hex_string, with `#` and ` `); for a verb other than `s`, `v` or "
    "`q` in `%!d(string=…)`.",
    """
{%- set zero = '0' in flags and not minus -%}
{%- if verb in 'xX' -%}{{- go_hex_string(s, verb, width, minus, prec, '#' in flags, ' ' in flags,
    zero) -}}
{%- else -%}
{%- set t = go_truncate(s, prec) if prec >= 0 else s -%}
{%- if verb == 'q' -%}
{%- set mode = 'q+' if '+' in flags else 'q' -%}
{%- set t = go_quote(t, mode) if '#' in flags else '"' ~ go_escape_runes(t, mode) ~ '"' -%}
{%- endif -%}
{%- set t = go_pad_string(t, width, minus, zero) if width >= 0 else t -%}
{{- t if verb in 'svq' else '%!' ~ verb ~ '(string=' ~ t ~ ')' -}}
{%- endif -%}
""",
    ("go_truncate", "go_pad_string", "go_hex_string", "go_escape_runes", "go_quote"),
)

_define(
    "go_fmt_int", "n, verb, width, minus, prec, flags=''",
    "fmt of an int field (a tool call's Index, 0 when absent) for a verb of "
    "`sdvfFeEgGxXqcUoOb`: its digits, zero-filled to `prec` (none at all for 0 with `prec` "
    "0), padded; in hex, octal or binary for `x`, `X`, `o`, `O`, `b` (go_int); its rune for "
    "`c`, quoted for `q` (go_char), `U+` and its hex for `U` (go_unicode), padded by runes; "
    "for another verb in `%!s(int=…)`. `flags`, the directive's others of `+#0 `, go to "
    "go_int (also for `d`, `v` and a bad verb's value), `+` quotes in ASCII, `#` gives %U "
    "its rune, `0` pads %c and %q with zeros.",
    """
{%- set v = n if n is defined and n is not none else 0 -%}
{%- if flags -%}
{%- set all = flags ~ ('-' if minus else '') -%}
{%- set t = go_int(v, 'd', all, width, prec) -%}
{{- go_int(v, verb, all, width, prec) if verb in 'xXoOb' else t if verb in 'dv'
    else go_pad_string(go_char(v, 'q+' if verb == 'q' and '+' in flags else verb) if verb in 'cq'
    else go_unicode(v, prec, '#' in flags), width, minus, '0' in flags and verb != 'U')
    if verb in 'cqU' else '%!' ~ verb ~ '(int=' ~ t ~ ')' -}}
{%- else -%}
{%- set d = print_int(n) -%}
{%- if prec >= 0 -%}
{%- set neg = d[:1] == '-' -%}
{%- set a = d[1:] if neg else d -%}
{%- set d = ('-' if neg else '')
    ~ go_pad('' if prec == 0 and a == '0' else a, prec, false, true) -%}
{%- endif -%}
{%- set t = go_pad(d, width, minus, false) -%}
{{- go_int(v, verb, '-' if minus else '', width, prec) if verb in 'xXoOb'
    else go_pad_string(go_char(v, verb) if verb in 'cq' else go_unicode(v, prec, false), width,
    minus, false) if verb in 'cqU'
    else t if verb in 'dv' else '%!' ~ verb ~ '(int=' ~ t ~ ')' -}}
{%- endif -%}
""",
    ("go_pad", "print_int", "go_int", "go_char", "go_unicode", "go_pad_string"),
)

_define(
    "go_fmt_json", "v, verb, width, minus, prec, flags=''",
    "fmt of a decoded-JSON value inside a printed value (and at the top, but for nil) for a "
    "verb of `sdvfFeEgGotcUOxXb`, `flags` the directive's others of `+#0 ` (fmt applies them "
    "to each value inside): nil `<nil>` (unpadded), a bool padded, a float64 by go_fmt_float "
    "(%v is %g), go_hex_float (%x) or go_bin_float (%b), then `#` (go_sharp_float), its sign "
    "and padding (go_pad_number), wrapped as `%!s(bool=…)` / `%!d(float64=…)` for a verb it "
    "does not take; a string as go_fmt_string; `map[k:v …]` in key order with keys as "
    "strings; `[a b]`.",
    """
{%- set zero = '0' in flags and not minus -%}
{%- if v is not defined or v is none -%}{{- '<nil>' -}}
{%- elif v is boolean -%}
{%- set t = go_pad('true' if v else 'false', width, minus, zero) -%}
{{- t if verb in 'vt' else '%!' ~ verb ~ '(bool=' ~ t ~ ')' -}}
{%- elif v is string -%}{{- go_fmt_string(v, verb, width, minus, prec, flags) -}}
{%- elif v is number -%}
{%- set fv = verb in 'fFeEgGxXb' -%}
{%- set g = verb if fv else 'g' -%}
{%- set t = go_hex_float(v, verb, prec) if verb in 'xX' else go_bin_float(v) if verb == 'b'
    else go_fmt_float(v, g, prec if prec >= 0 else (6 if verb in 'fFeE' else 0 - 1))
    if fv or prec >= 0 else print_number(v) -%}
{%- set t = go_sharp_float(t, g, prec) if '#' in flags and verb != 'b' else t -%}
{%- set t = go_pad_number(t, '+' in flags, ' ' in flags, width, minus, zero) -%}
{{- t if fv or verb == 'v' else '%!' ~ verb ~ '(float64=' ~ t ~ ')' -}}
{%- elif v is mapping -%}
{{- 'map[' -}}
{%- for k, x in @SORTED(v)@ -%}
{{- (' ' if not loop.first else '') ~ go_fmt_string(k, verb, width, minus, prec, flags) ~ ':'
    ~ go_fmt_json(x, verb, width, minus, prec, flags) -}}
{%- endfor -%}
{{- ']' -}}
{%- else -%}
{{- '[' -}}
{%- for x in v -%}{{- (' ' if not loop.first else '')
    ~ go_fmt_json(x, verb, width, minus, prec, flags) -}}
{%- endfor -%}
{{- ']' -}}
{%- endif -%}
""",
    ("go_fmt_string", "go_pad", "go_pad_number", "print_number", "go_fmt_float", "go_hex_float",
     "go_bin_float", "go_sharp_float"),
)

_define(
    "go_fmt_tool_call", "c, verb, width, minus, prec, bare=false, flags='', names=false",
    "fmt of one templateToolCall for a verb of `sdvfFeEgGxXq`: `{ID {INDEX NAME ARGS}}`, "
    "each field by itself; ARGS by String() (as a string) for `s`, `v`, `x`, `X`, `q`, as a "
    "map for the others and when `bare` (inside a bad verb's value fmt calls no String "
    "method; `map[]` when the call has none). `flags` (the directive's others of `+#0 `) go "
    "to every field; `names` (%+v) writes each field's name before it: "
    "`{ID:… Function:{Index:… Name:… Arguments:…}}`.",
    """
{%- set fn = c.function if c.function is defined and c.function is not none else {} -%}
{%- set args = fn.arguments if fn.arguments is defined else none -%}
{%- if bare or verb not in 'svxXq' -%}
{%- set shown = 'map[]' if args is none else go_fmt_json(args, verb, width, minus, prec,
    flags) -%}
{%- else -%}{%- set shown = go_fmt_string(print_arguments(args), verb, width, minus, prec,
    flags) -%}
{%- endif -%}
{{- '{' ~ ('ID:' if names else '') ~ go_fmt_string(c.id if c.id is defined and c.id is not none
    else '', verb, width, minus, prec, flags)
    ~ (' Function:{Index:' if names else ' {') ~ go_fmt_int(fn.index, verb, width, minus, prec,
    flags) ~ (' Name:' if names else ' ')
    ~ go_fmt_string(fn.name if fn.name is defined and fn.name is not none else '', verb, width,
    minus, prec, flags) ~ (' Arguments:' if names else ' ') ~ shown ~ '}}' -}}
""",
    ("go_fmt_string", "go_fmt_int", "go_fmt_json", "print_arguments"),
)

_define(
    "go_fmt_tool_calls", "calls, verb, width, minus, prec, bare=false, flags='', names=false",
    "fmt of a message's ToolCalls for verb `s`, `v` or `d`: `[` go_fmt_tool_call joined by "
    "spaces `]`; `[]` when none.",
    """
{{- '[' -}}
{%- if calls is defined and calls is not none -%}
{%- for c in calls -%}
{{- (' ' if not loop.first else '') ~ go_fmt_tool_call(c, verb, width, minus, prec, bare, flags,
    names) -}}
{%- endfor -%}
{%- endif -%}
{{- ']' -}}
""",
    ("go_fmt_tool_call",),
)

_define(
    "go_fmt_bad_messages", "msgs, verb, width, minus, prec, flags=''",
    "fmt of `.Messages` ([]*templateMessage) for a verb a pointer does not take (not `vpbodxX`): "
    "`[` each message as `%!s(*template.templateMessage=&{…})` joined by spaces `]`, the "
    "struct by `v` with the directive's width, precision and flags (`flags`: its others of "
    "`+#0 `) and no String method (badVerb).",
    # minja runs a macro in its caller's scope: the prefix is read before the calls, `m` is a
    # loop variable.
    """
{%- set bad_prefix = '%!' ~ verb ~ '(*template.templateMessage=&{' -%}
{{- '[' -}}
{%- for m in msgs -%}
{{- (' ' if not loop.first else '') ~ bad_prefix
    ~ go_fmt_string(m['role'], 'v', width, minus, prec, flags) ~ ' '
    ~ go_fmt_string(m['content'], 'v', width, minus, prec, flags) ~ ' '
    ~ go_fmt_string(m.get('reasoning_content', ''), 'v', width, minus, prec, flags) ~ ' [] '
    ~ go_fmt_tool_calls(m.get('tool_calls', []), 'v', width, minus, prec, true, flags) ~ ' '
    ~ go_fmt_string(m.get('name', ''), 'v', width, minus, prec, flags) ~ ' '
    ~ go_fmt_string(m.get('tool_call_id', ''), 'v', width, minus, prec, flags) ~ '})' -}}
{%- endfor -%}
{{- ']' -}}
""",
    ("go_fmt_string", "go_fmt_tool_calls"),
)

# ---------------------------------------------------------------------------------------------
# printf's %d, %o, %f, %e, %g, %c, %U (with a width, `-`, and a precision but for %d and %o) of
# the tool shapes, and %s of a property: none has a String method for those verbs, so
# fmt's printValue writes each struct field by field, every string and number with the verb
# (go_fmt_string, go_fmt_json: a []string prints as a list of strings does), a nil `any` as
# `<nil>`, a nil slice as `[]`, a nil map as `map[]`, and a property's nested-properties pointer
# as fmtPointer does: when nil 0 for %d and %o, else `%!f(*api.ToolPropertiesMap=<nil>)` (the
# type's name is Ollama's package's), and its address when set (the contract's ADDRESS failure). An
# api.ToolProperty has no String method at all, so `{{ $p }}` (print_property) is its %v.

_define(
    "go_fmt_property", "p, verb, width, minus, prec, flags='', names=false",
    "fmt of an api.ToolProperty for verb `d`, `o`, `b`, `O`, `t`, `s`, `v`, `c`, `U` or "
    "`fFeEgG` (width -1: none): "
    "`{[ANYOF…] [TYPE…] ITEMS DESCRIPTION [ENUM…] 0 [REQUIRED…]}`, e.g. `{[] "
    "[%!d(string=string)] <nil> %!d(string=) [] 0 []}`; for `s` and `v` TYPE by its String "
    "method; the nil nested-properties pointer as fmtPointer prints it: a number for `d`, "
    "`o`, `b`, `x`, `X` (zero-filled to the precision), `<nil>` for `v`, else the bad verb "
    "with its type's name (`%!f(*api.ToolPropertiesMap=<nil>)`), `<nil>` padded in each; "
    "nested `properties` make Go print an address: raises ADDRESS. `flags` (the directive's "
    "others of `+#0 `) go to every field, as fmt hands them on; `names` (%+v) writes each "
    "field's name before it (`{AnyOf:[] Type:string Items:<nil> …}`).",
    # minja runs a macro in its caller's scope: after the recursive call (anyOf) only the loop
    # variable `q` is read (see json_property).
    """
{%- set p = p if p is defined and p is mapping else {} -%}
{%- if p.get('properties') is not none -%}
{{- raise_exception(@ADDRESS@) -}}
{%- endif -%}
{%- for q in [p] -%}
{{- ('{AnyOf:[' if names else '{[') -}}
{%- for a in q.get('anyOf', []) -%}
{{- (' ' if not loop.first else '') ~ go_fmt_property(a, verb, width, minus, prec, flags,
    names) -}}
{%- endfor -%}
{%- set t = q.get('type', []) -%}
{{- (('] Type:' if names else '] ') ~ go_fmt_string(print_property_type(q), verb, width, minus,
    prec, flags) if verb in 'svqxX' else '] ' ~ go_fmt_json([t] if t is string else t, verb,
    width, minus, prec, flags)) ~ (' Items:' if names else ' ')
    ~ go_fmt_json(q.get('items'), verb, width, minus, prec, flags) ~ (' Description:' if names
    else ' ') ~ go_fmt_string(q.get('description', ''), verb, width, minus, prec, flags)
    ~ (' Enum:' if names else ' ') ~ go_fmt_json(q.get('enum', []), verb, width, minus, prec,
    flags) ~ (' Properties:' if names else ' ')
    ~ (go_int(0, verb, flags ~ ('-' if minus else ''), width, prec) if verb in 'dobxX'
    else (go_pad('<nil>', width, minus, '0' in flags and not minus)
    if verb == 'v' else '%!' ~ verb ~ '(*api.ToolPropertiesMap=' ~ go_pad('<nil>', width, minus,
    '0' in flags and not minus) ~ ')')) ~ (' Required:' if names else ' ')
    ~ go_fmt_json(q.get('required', []), verb, width, minus, prec, flags) ~ '}' -}}
{%- endfor -%}
""",
    ("go_fmt_string", "go_fmt_json", "go_pad", "print_property_type", "go_int"),
)

_define(
    "go_fmt_properties", "props, verb, width, minus, prec, flags=''",
    "fmt of templateProperties (a Go map) for a verb of go_fmt_property but `s` and `v`: "
    "`map[KEY:PROPERTY …]`, keys sorted bytewise, each printed with the verb; `map[]` when "
    "absent or null.",
    """
{{- 'map[' -}}
{%- if props is defined and props is not none -%}
{%- for k, x in @SORTED(props)@ -%}
{{- (' ' if not loop.first else '') ~ go_fmt_string(k, verb, width, minus, prec, flags) ~ ':'
    ~ go_fmt_property(x, verb, width, minus, prec, flags) -}}
{%- endfor -%}
{%- endif -%}
{{- ']' -}}
""",
    ("go_fmt_string", "go_fmt_property"),
)

_define(
    "go_fmt_parameters", "p, verb, width, minus, prec, flags=''",
    "fmt of templateToolFunctionParameters for a verb of go_fmt_properties: `{TYPE DEFS "
    "ITEMS [REQUIRED…] PROPERTIES}`.",
    """
{%- set p = p if p is defined and p is mapping else {} -%}
{%- set props = p.get('properties') -%}
{{- '{' ~ go_fmt_string(p.get('type', ''), verb, width, minus, prec, flags) ~ ' '
    ~ go_fmt_json(p.get('$defs'), verb, width, minus, prec, flags) ~ ' '
    ~ go_fmt_json(p.get('items'), verb, width, minus, prec, flags) ~ ' '
    ~ go_fmt_json(p.get('required', []), verb, width, minus, prec, flags) ~ ' '
    ~ go_fmt_properties(props, verb, width, minus, prec, flags) ~ '}' -}}
""",
    ("go_fmt_string", "go_fmt_json", "go_fmt_properties"),
)

_define(
    "go_fmt_function", "fn, verb, width, minus, prec, flags=''",
    "fmt of templateToolFunction for a verb of go_fmt_properties: `{NAME DESCRIPTION PARAMETERS}`.",
    """
{%- set fn = fn if fn is defined and fn is mapping else {} -%}
{%- set p = fn.get('parameters') -%}
{{- '{' ~ go_fmt_string(fn.get('name', ''), verb, width, minus, prec, flags) ~ ' '
    ~ go_fmt_string(fn.get('description', ''), verb, width, minus, prec, flags) ~ ' '
    ~ go_fmt_parameters(p, verb, width, minus, prec, flags) ~ '}' -}}
""",
    ("go_fmt_string", "go_fmt_parameters"),
)

_define(
    "go_fmt_tool", "t, verb, width, minus, prec, flags=''",
    "fmt of templateTool for a verb of go_fmt_properties: `{TYPE ITEMS FUNCTION}`.",
    """
{%- set f = t.get('function') -%}
{{- '{' ~ go_fmt_string(t.get('type', ''), verb, width, minus, prec, flags) ~ ' '
    ~ go_fmt_json(t.get('items'), verb, width, minus, prec, flags) ~ ' '
    ~ go_fmt_function(f, verb, width, minus, prec, flags) ~ '}' -}}
""",
    ("go_fmt_string", "go_fmt_json", "go_fmt_function"),
)

_define(
    "go_fmt_tools", "ts, verb, width, minus, prec, flags=''",
    "fmt of templateTools for a verb of go_fmt_properties: `[` go_fmt_tool joined by "
    "spaces `]`; `[]` when none.",
    """
{{- '[' -}}
{%- if ts is defined and ts is not none -%}
{%- for t in ts -%}
{{- (' ' if not loop.first else '') ~ go_fmt_tool(t, verb, width, minus, prec, flags) -}}
{%- endfor -%}
{%- endif -%}
{{- ']' -}}
""",
    ("go_fmt_tool",),
)
