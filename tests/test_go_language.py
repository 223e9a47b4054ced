"""Go template constructs that real templates use and that the translation once refused
(issue 41, points 14-17): outer variables read in nested ranges, pipelines ending in a builtin,
`json` of a tool call's function, a field Go cannot evaluate on a tool property. Each expected
output is Go's, written by hand and checked against the reference renderer; every raw engine
renders it from the translation, itself verified against Go on generated conversations."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from everywhere import fails_everywhere, renders_everywhere_as_go, verified  # noqa: E402

from gotmpl2jinja.errors import RenderError  # noqa: E402
from gotmpl2jinja.ollama import reference  # noqa: E402

CALL = {"function": {"name": "f", "arguments": {"a": 1}}}
CALLS = {"messages": [{"role": "user", "content": "q"},
                      {"role": "assistant", "content": "", "tool_calls": [CALL, CALL]},
                      {"role": "tool", "content": "r"},
                      {"role": "assistant", "content": "", "tool_calls": [CALL]}]}


@pytest.mark.parametrize(("source", "want"), [
    # the issue's form: tool calls numbered by their message
    ("{{ range $i, $m := .Messages }}{{ range .ToolCalls }}{{ $i }}{{ end }}{{ end }}",
     "113"),
    ("{{ range $i, $m := .Messages }}{{ range $j, $c := $m.ToolCalls }}"
     "{{ $i }}.{{ $j }}:{{ $c.Function.Name }} {{ end }}{{ end }}", "1.0:f 1.1:f 3.0:f "),
    # through a with, three ranges deep, in a condition, a comparison and printf
    ("{{ range $i, $m := .Messages }}{{ with $m.ToolCalls }}{{ range . }}{{ $i }}{{ $m.Role }}"
     "{{ end }}{{ end }}{{ end }}", "1assistant1assistant3assistant"),
    ("{{ range $i, $m := .Messages }}{{ range $k, $c := .ToolCalls }}{{ range $a, $v := "
     "$c.Function.Arguments }}{{ $i }}{{ $k }}{{ $a }}{{ end }}{{ end }}{{ end }}", "10a11a30a"),
    ("{{ range $i, $m := .Messages }}{{ range .ToolCalls }}{{ if $i }}x{{ end }}"
     "{{ if eq $i 1 }}one{{ end }}{{ printf \"%d-%s;\" $i .Function.Name }}{{ end }}{{ end }}",
     "xone1-f;xone1-f;x3-f;"),
    # the last message, counted from an outer index inside a nested range
    ("{{ range $i, $m := .Messages }}{{ range $m.ToolCalls }}"
     "{{ if eq (len (slice $.Messages $i)) 1 }}last{{ end }}{{ end }}{{ end }}", "last"),
    # an outer index assigned in an inner loop and read after both
    ("{{ $x := 0 }}{{ range $i, $m := .Messages }}{{ range $m.ToolCalls }}{{ $x = $i }}"
     "{{ end }}{{ end }}{{ $x }}", "3"),
    # the outer range calls a template (the loop counts with Jinja's loop object there)
    ('{{ define "r" }}[{{ . }}]{{ end }}{{ range $i, $m := .Messages }}{{ template "r" $i }}'
     "{{ range $m.ToolCalls }}{{ $i }}{{ end }}{{ end }}", "[0][1]11[2][3]3"),
    # and its element, compared (by place in the list, as Go compares pointers) in a nested one
    ('{{ define "r" }}{{ end }}{{ range $m := .Messages }}{{ template "r" 1 }}'
     "{{ range $.Messages }}{{ if eq . $m }}={{ else }}!{{ end }}{{ end }}|{{ end }}",
     "=!!!|!=!!|!!=!|!!!=|"),
])
def test_outer_variables_read_in_nested_ranges(source: str, want: str) -> None:
    """Jinja's `for` body reads the enclosing loops' variables: an outer range's index is its
    own loop variable there (Jinja's `loop` object, rebound by each nested `for`, is never
    read from a nested loop)."""
    renders_everywhere_as_go(source, verified(source, cases=30), CALLS, want)


def test_a_pipeline_ending_in_and_or_passes_its_value_last() -> None:
    """Go passes a piped value as the last argument: `X | or "none"` is `or "none" X` (so
    "none", always), `X | and .Role` is X where the role is set."""
    source = ('{{ range .Messages }}{{ .Content | or "empty" }}|{{ .Content | and .Role }}|'
              "{{ .Thinking | or .Content | and .Role }};{{ end }}"
              '{{ .ThinkLevel | or "none" }}{{ if .System | or .ThinkLevel }}!{{ end }}')
    conv = {"messages": [{"role": "user", "content": "hi"},
                         {"role": "assistant", "content": "", "thinking": "t"}]}
    renders_everywhere_as_go(source, verified(source, cases=30), conv, "empty|hi|hi;empty||t;none")


def test_a_value_piped_into_or_is_evaluated_even_where_or_needs_it_not() -> None:
    """`index .Messages 5 | or "x"` fails in Go (the pipeline's first command), though `or`
    would return "x" without looking at it."""
    source = '{{ index .Messages 5 | or "x" }}'
    conv = {"messages": [{"role": "user", "content": "hi"}]}
    with pytest.raises(RenderError, match="index out of range"):
        reference.render(source, conv)
    fails_everywhere(verified(source, cases=10), conv)


def test_json_and_printing_of_a_tool_calls_function_are_gos() -> None:
    """A tool call's `.Function` (Ollama's templateToolCallFunction: no json tags, so Go's
    field names; its Arguments print as JSON, keys sorted)."""
    source = ("{{ range .Messages }}{{ range .ToolCalls }}{{ json .Function }}|"
              "{{ .Function | json }}|{{ .Function }}|{{ print .Function }};{{ end }}{{ end }}")
    conv = {"messages": [{"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "function": {"name": "get", "index": 2,
                                  "arguments": {"b": [1, "x"], "a": None}}},
        {"function": {"name": "f", "arguments": {}}}]}]}
    get = '{"Index":2,"Name":"get","Arguments":{"a":null,"b":[1,"x"]}}'
    f = '{"Index":0,"Name":"f","Arguments":{}}'
    want = (f'{get}|{get}|{{2 get {{"a":null,"b":[1,"x"]}}}}|{{2 get {{"a":null,"b":[1,"x"]}}}};'
            f"{f}|{f}|{{0 f {{}}}}|{{0 f {{}}}};")
    renders_everywhere_as_go(source, verified(source, cases=60), conv, want)


@pytest.mark.parametrize(("conv", "want"), [
    ({"messages": [{"role": "user", "content": "q"}],
      "tools": [{"type": "function", "function": {"name": "f"}}]},
     '{"name": "f", "required": null}q'),
    ({"messages": [{"role": "user", "content": "q"}], "tools": [
        {"type": "function", "function": {"name": "g", "parameters": {
            "type": "object", "properties": {"a": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "h", "parameters": {
            "type": "object", "required": []}}},
        {"type": "function", "function": {"name": "i", "parameters": {
            "type": "object", "required": ["a"]}}}]},
     '{"name": "g", "required": null}{"name": "h", "required": []}'
     '{"name": "i", "required": ["a"]}q'),
], ids=["no-parameters", "no-required"])
def test_json_of_absent_required_is_null_as_gos_nil_slice(conv: dict, want: str) -> None:
    """A Granite 4 variant prints each tool with printf and json: a tool without `parameters`
    (or parameters without `required`) has a nil Required, which Go's json prints `null`;
    only a given list, even empty, prints as a list."""
    source = ('{{ range .Tools }}{{ printf "{\\"name\\": %q, \\"required\\": %s}" .Function.Name '
              "(json .Function.Parameters.Required) }}{{ end }}"
              "{{ range .Messages }}{{ .Content }}{{ end }}")
    renders_everywhere_as_go(source, verified(source, cases=60), conv, want)


TOOL_PROPERTIES = '{{ range .Tools }}{{ range $k, $p := .Function.Parameters.Properties }}'


def test_a_tool_propertys_required_is_gos() -> None:
    """api.ToolProperty has a Required ([]string): printed and json'd as Go does (`[]` and
    `null` when absent)."""
    source = (f"{{{{ range .Messages }}}}{{{{ .Content }}}}{{{{ end }}}}{TOOL_PROPERTIES}"
              "{{ $k }}={{ $p.Required }}{{ json $p.Required }};{{ end }}{{ end }}")
    conv = {"messages": [{"role": "user", "content": "q"}], "tools": [
        {"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {
                "a": {"type": "object", "properties": {"x": {}, "y": {}}, "required": ["x"]},
                "b": {"type": "string"}}}}}]}
    renders_everywhere_as_go(source, verified(source, cases=60), conv,
                             'q' + 'a=[x]["x"];b=[]null;')


def test_a_field_go_cannot_evaluate_fails_only_the_requests_that_reach_it() -> None:
    """`$p.Foo` (no such field of api.ToolProperty): Go fails the requests whose tools have a
    property, and renders every other."""
    # (the tools first, as a system prompt prints them: what follows the chat loop is the
    # generation prompt's part, which a host's add_generation_prompt=false leaves out)
    source = (f"{TOOL_PROPERTIES}{{{{ $p.Foo }}}}{{{{ end }}}}{{{{ end }}}}"
              "{{ range .Messages }}{{ .Content }}{{ end }}")
    jinja = verified(source, cases=60)
    plain = {"messages": [{"role": "user", "content": "q"}],
             "tools": [{"type": "function", "function": {"name": "f"}}]}
    renders_everywhere_as_go(source, jinja, plain, "q")
    reached = {"messages": [{"role": "user", "content": "q"}], "tools": [
        {"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"a": {"type": "string"}}}}}]}
    with pytest.raises(RenderError, match="can't evaluate field Foo in type api.ToolProperty"):
        reference.render(source, reached)
    fails_everywhere(jinja, reached)


def test_a_tool_propertys_any_of_and_a_key_of_the_properties_map_are_gos() -> None:
    """api.ToolProperty's AnyOf ([]api.ToolProperty: printed in struct syntax, json, ranged,
    measured) and `.name` of the properties map (the map's key; missingkey=zero gives an
    empty property) were refused or failed; Go's bytes."""
    source = (f"{{{{ range .Messages }}}}{{{{ .Content }}}}{{{{ end }}}}{TOOL_PROPERTIES}"
              "{{ $k }}:{{ $p.AnyOf }}|{{ json $p.AnyOf }}|{{ len $p.AnyOf }}|"
              "{{ range $p.AnyOf }}<{{ toTypeScriptType . }}>{{ end }};{{ end }}"
              "{{ with .Function.Parameters.Properties }}{{ .b.Type }}|{{ json .Foo }}{{ end }}"
              "{{ end }}")
    conv = {"messages": [{"role": "user", "content": "q"}], "tools": [
        {"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {
                "a": {"anyOf": [{"type": "string"},
                                {"type": ["integer", "null"], "description": "d"}]},
                "b": {"type": "string", "anyOf": []}}}}}]}
    want = ("q" + "a:[{[] string <nil>  [] <nil> []} {[] [integer null] <nil> d [] <nil> []}]|"
            '[{"type":"string"},{"type":["integer","null"],"description":"d"}]|2|'
            "<string><number | null>;" + "b:[]|[]|0|;" + "string|{}")
    renders_everywhere_as_go(source, verified(source, cases=40), conv, want)


def test_len_of_a_tool_call_argument_is_gos() -> None:
    """`len` of a decoded-JSON value: a string's UTF-8 bytes, a list's or an object's size
    (the translation raised for every one; found by the coverage table on all engines, an
    empty string argument: Go `0`); Go fails on a number, a bool and null."""
    source = ("{{ range .Messages }}{{ range .ToolCalls }}{{ range $k, $v := .Function.Arguments }}"
              "{{ $k }}={{ len $v }};{{ end }}{{ end }}{{ end }}")
    jinja = verified(source, cases=40)
    args = {"s": "héllo", "l": [1, "x", None], "o": {"a": 1, "b": 2}, "e": ""}
    conv = {"messages": [{"role": "assistant", "content": "",
                          "tool_calls": [{"function": {"name": "f", "arguments": args}}]}]}
    renders_everywhere_as_go(source, jinja, conv, "e=0;l=3;o=2;s=6;")
    for value in (1, 1.5, True, None):
        failing = {"messages": [{"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "f", "arguments": {"n": value}}}]}]}
        with pytest.raises(RenderError, match="len of"):
            reference.render(source, failing)
        fails_everywhere(jinja, failing)


@pytest.mark.parametrize(("source", "want"), [
    # a range's index and element assigned in a nested loop, read after it in the body (the
    # Jinja set the loop's own name and read the namespace's, or the reverse)
    ("{{ range $i, $m := .Messages }}{{ range $m.ToolCalls }}{{ $i = 7 }}{{ end }}{{ $i }}"
     "{{ end }}", "0727"),
    ("{{ range $m := .Messages }}{{ range $.Messages }}{{ $m = . }}{{ end }}{{ $m.Role }}|"
     "{{ end }}", "assistant|" * 4),
    # and in the range's else, where it holds the ranged value (found by the generator, seed
    # 23: the namespace was created in the loop's body only)
    ("{{ range $k, $t := .Tools }}{{ range $.Messages }}{{ $k = 9 }}{{ end }}{{ else }}"
     "{{ $k = $k }}{{ len $k }}{{ end }}{{ range .Messages }}{{ .Content }}{{ end }}", "0qr"),
])
def test_a_ranges_own_variables_assigned_in_a_nested_loop(source: str, want: str) -> None:
    renders_everywhere_as_go(source, verified(source, cases=30), CALLS, want)
