"""Runtime macros for Ollama's tool shapes (tools, parameters, properties and their types)
and for a tool call's Arguments and Index.

May depend on: `emit.runtime.library`.
"""

from __future__ import annotations

from gotmpl2jinja.emit.runtime.library import _define

# ---------------------------------------------------------------------------------------------
# Ollama's tool shapes (ollama-semantics.md §5)
#
# Tools arrive in the contract's strict shape (conversation.validate): exactly the documented
# lower-case keys, no null outside free JSON (`items`, `$defs`, `enum` items). So the macros read
# each field once with `.get` (not `p.items`: on jinja2 a missing `items` is the dict's method)
# instead of decoding keys as Go's case-insensitive, null-skipping json.Unmarshal would.

_define(
    "json_map_key", "mk",
    "Go json of a nested property's key as Ollama's ordered map writes it (wk8/go-ordered-map "
    "through easyjson's string writer): json_string, but U+0008 and U+000C as `\\u0008` and "
    "`\\u000c` where encoding/json writes `\\b` and `\\f`. Top-level property keys and "
    "argument keys are plain Go maps: json_string.",
    # Cut at the two characters (every engine's tojson writes them `\\b` `\\f`), each piece
    # through json_string; the names are the macro's own (minja runs it in its caller's scope).
    """
{%- set mkt -%}
{%- for mka in mk.split(@BS@) -%}
{{- ('\\\\u0008' if not loop.first else '') -}}
{%- for mkb in mka.split(@FF@) -%}
{{- ('\\\\u000c' if not loop.first else '') ~ json_string(mkb)[1:-1] -}}
{%- endfor -%}
{%- endfor -%}
{%- endset -%}
{{- '"' ~ mkt ~ '"' -}}
""",
    ("json_string",),
)

_define(
    "json_property", "p, plain=false",
    "Go json of an api.ToolProperty decoded from the request object `p`: keys anyOf, type, "
    "items, description, enum, properties, required, each omitted when empty; `type` a string "
    "for one element, an array otherwise; nested `properties` in request order, each value a "
    "property; `p` none → `{}`. `plain`: no string inside needs more than tojson (_PLAIN).",
    # One property per call, recursively (anyOf, properties). minja runs a macro in its
    # caller's scope, so a recursive call overwrites the caller's variables: everything read
    # after one comes from the loop variable `q`, and the fields are written into a block
    # (assigned only when it ends), each after a comma, the first comma cut off. Few
    # variables, one name reused: on llama.cpp every call and loop pass copies the scope, and
    # every name read copies a table of built-ins, so a field is tested by one `in` (its value
    # is never null but for free JSON: conversation.validate) and read only when present.
    """
{%- set p = p if p is defined and p is mapping else {} -%}
{%- for q in [p] -%}
{%- set body -%}
{%- if 'anyOf' in q and q['anyOf']|length > 0 -%}
{{- ',"anyOf":[' -}}
{%- for a in q['anyOf'] -%}
{{- (',' if not loop.first else '') ~ json_property(a, plain) -}}
{%- endfor -%}
{{- ']' -}}
{%- endif -%}
{%- if 'type' in q -%}
{%- set v = q['type'] -%}
{%- if v is string -%}{{- ',"type":' ~ @STR(v)@ -}}
{%- elif v|length == 1 -%}{%- set v = v[0] -%}{{- ',"type":' ~ @STR(v)@ -}}
{%- elif v|length > 1 -%}
{{- ',"type":[' -}}
{%- for x in v -%}{{- (',' if not loop.first else '') ~ @STR(x)@ -}}{%- endfor -%}
{{- ']' -}}
{%- endif -%}
{%- endif -%}
{%- set v = q.get('items') -%}
{%- if v is not none -%}{{- ',"items":' ~ json_value(v) -}}{%- endif -%}
{%- if 'description' in q and q['description'] != '' -%}
{%- set v = q['description'] -%}{{- ',"description":' ~ @STR(v)@ -}}
{%- endif -%}
{%- if 'enum' in q and q['enum']|length > 0 -%}
{%- set v = q['enum'] -%}{{- ',"enum":' ~ json_value(v) -}}
{%- endif -%}
{%- if 'properties' in q -%}
{{- ',"properties":{' -}}
{%- for k, x in q['properties']|items -%}
{{- (',' if not loop.first else '') ~ (json_map_key(k) if @BS@ in k or @FF@ in k else @STR(k)@)
    ~ ':' ~ json_property(x, plain) -}}
{%- endfor -%}
{{- '}' -}}
{%- endif -%}
{%- if 'required' in q and q['required']|length > 0 -%}
{{- ',"required":[' -}}
{%- for r in q['required'] -%}{{- (',' if not loop.first else '') ~ @STR(r)@ -}}{%- endfor -%}
{{- ']' -}}
{%- endif -%}
{%- endset -%}
{{- '{' ~ body[1:] ~ '}' -}}
{%- endfor -%}
""",
    ("json_string", "json_value", "json_map_key"),
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
    # variable in scope, and this runs once per tool on every request. One test of the whole
    # tool's tojson (_PLAIN) spares six for each string where none needs Go's own escapes.
    """
{%- set all = fn|tojson -%}{%- set plain = @PLAIN(all)@ -%}
{%- set name = fn.get('name', '') -%}{%- set desc = fn.get('description', '') -%}
{%- set p = fn.get('parameters') -%}
{%- set p = p if p is defined and p is mapping else {} -%}
{%- set type = p.get('type', '') -%}{%- set defs = p.get('$defs') -%}
{%- set items = p.get('items') -%}{%- set req = p.get('required') -%}
{%- set props = p.get('properties') -%}
{{- '{"name":' ~ @STR(name)@ ~ ',"description":' ~ @STR(desc)@
    ~ ',"parameters":{"type":' ~ @STR(type)@ -}}
@PARAMETER_FIELDS@
{%- if props is none -%}{{- ',"properties":null}}' -}}
{%- else -%}
{{- ',"properties":{' -}}
{%- for k, x in @SORTED(props)@ -%}
{{- (',' if not loop.first else '') ~ @STR(k)@ ~ ':' -}}
{%- if x is mapping and 'type' in x and x['type'] is string
    and (x|length == 1 or (x|length == 2 and 'description' in x)) -%}
{%- set t = x['type'] -%}{%- set d = x['description'] if x|length == 2 else '' -%}
{{- '{"type":' ~ @STR(t)@ ~ (',"description":' ~ @STR(d)@ if d != '' else '') ~ '}' -}}
{%- else -%}{{- json_property(x, plain) -}}
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
    # fmt's %v with no width or flag: the field-by-field printing of printf (tool_calls)
    "{{- go_fmt_property(p, 'v', -1, false, -1) -}}",
    ("go_fmt_property",),
)

_define(
    "json_property_list", "ps",
    "Go json of a property's AnyOf ([]api.ToolProperty): `[` json_property joined by `,` `]`; "
    "`null` when absent (Go's nil slice).",
    """
{%- if ps is not defined or ps is none -%}{{- 'null' -}}
{%- else -%}
{{- '[' -}}
{%- for a in ps -%}{{- (',' if not loop.first else '') ~ json_property(a) -}}{%- endfor -%}
{{- ']' -}}
{%- endif -%}
""",
    ("json_property",),
)

_define(
    "print_property_list", "ps",
    "What `{{ $p.AnyOf }}` prints: `[` print_property joined by spaces `]`; `[]` when absent.",
    """
{{- '[' -}}
{%- if ps is defined and ps is not none -%}
{%- for a in ps -%}{{- (' ' if not loop.first else '') ~ print_property(a) -}}{%- endfor -%}
{%- endif -%}
{{- ']' -}}
""",
    ("print_property",),
)

# ---------------------------------------------------------------------------------------------
# tool calls, in the Jinja side's shape:
# {"type", "id"?, "function": {"name", "arguments", "index"?}}
# (their Arguments and Index here; the calls and messages in tool_calls, registered after
# go_strings)

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
