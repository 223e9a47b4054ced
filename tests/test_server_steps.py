"""What an Ollama user really gets: the server's steps before Execute and its request decoding
(ollama-semantics.md §8), each checked against the Go reference, and the translated Jinja
reproducing the server's think default on every thinking template of the corpus."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from everywhere import renders_everywhere_as_go

from gotmpl2jinja.batch.sweep import find_inputs
from gotmpl2jinja.emit import translate
from gotmpl2jinja.engines.registry import get_engines
from gotmpl2jinja.errors import ReferenceRendererError
from gotmpl2jinja.ollama.capabilities import capabilities, think_tags
from gotmpl2jinja.ollama.reference import CapabilityRefusal, check_parse, render, render_many
from gotmpl2jinja.syntax.parser import parse
from gotmpl2jinja.verify.conversation import ConversationError, jinja_context, validate
from gotmpl2jinja.verify.harness import verify_template

ROOT = Path(__file__).resolve().parent.parent
ENGINES = ("jinja2", "hfjinja", "minijinja", "minijinja-trim")

THINKS = ("{{ range .Messages }}{{ if .Thinking }}<think>{{ .Thinking }}</think>{{ end }}"
          "{{ .Content }}{{ end }}|{{ .Think }}|{{ .ThinkLevel }}|{{ .IsThinkSet }}")
NO_THINKING = "{{ range .Messages }}{{ .Content }}{{ end }}|{{ .Think }}|{{ .ThinkLevel }}" \
              "|{{ .IsThinkSet }}"
USER = {"messages": [{"role": "user", "content": "U"}]}
TOOLS = [{"type": "function", "function": {"name": "f"}}]


def _corpus() -> dict[str, str]:
    """Every distinct Go template of the corpus and seeds (label of its first copy)."""
    found: dict[str, str] = {}
    for item in find_inputs([ROOT / "fixtures" / "corpus", ROOT / "fixtures" / "seeds"]):
        if item.source is not None:
            found.setdefault(item.source, item.label)
    return {label: source for source, label in found.items()}


CORPUS = _corpus()
THINKING = sorted(label for label, source in CORPUS.items()
                  if "thinking" in check_parse(source).capabilities)


# --- the capabilities Ollama reads from a template --------------------------------------------

def test_the_translator_reads_the_capabilities_go_reads_on_every_corpus_template() -> None:
    assert len(CORPUS) > 100
    for label, source in CORPUS.items():
        verdict = check_parse(source)
        template = parse(source, name=label)
        assert capabilities(template) == verdict.capabilities, label
        assert think_tags(template) == verdict.think_tags, label
    assert len(THINKING) >= 5  # deepseek-r1, qwen3 … and the seed


@pytest.mark.parametrize(("source", "tags"), [
    (THINKS, ("<think>", "</think>")),
    # the nearest list's first and last nodes, trimmed
    ("{{ range .Messages }}\n  <t> {{ .Thinking }} </t>\n{{ end }}", ("<t>", "</t>")),
    # $.Messages is a variable, not a field: no range over Messages for InferTags
    ("{{ range $.Messages }}<think>{{ .Thinking }}</think>{{ end }}", ("", "")),
    # .Thinking outside a range over messages
    ("<think>{{ .Thinking }}</think>{{ .Messages }}", ("", "")),
    # the nearest range is over something else
    ("{{ range .Messages }}{{ range .ToolCalls }}<a>{{ .Thinking }}</a>{{ end }}{{ end }}",
     ("", "")),
    # a first node that is not text leaves the opening tag as it was (empty): no capability
    ("{{ range .Messages }}{{ .Role }}{{ .Thinking }}</think>{{ end }}", ("", "</think>")),
    # … or as an earlier field set it
    ("{{ range .Messages }}<a>{{ .Thinking }}</a>{{ end }}"
     "{{ range .Messages }}{{ .Role }}{{ .Thinking }}</b>{{ end }}", ("<a>", "</b>")),
    # defined templates are not read
    ('{{ define "t" }}{{ range .Messages }}<a>{{ .Thinking }}</a>{{ end }}{{ end }}'
     '{{ template "t" . }}', ("", "")),
    # a trim marker empties a text node: Go has no node there, the action is first
    ("{{ range .Messages }} {{- .Thinking }}</a>{{ end }}", ("", "</a>")),
    # Unicode white space Go trims, and \x1c that Python's strip would trim but Go does not
    ("{{ range .Messages }}\u3000<a>\u00a0{{ .Thinking }}\x1c{{ end }}", ("<a>", "\x1c")),
])
def test_think_tags_are_ollamas_infer_tags(source: str, tags: tuple[str, str]) -> None:
    assert check_parse(source).think_tags == tags
    assert think_tags(parse(source)) == tags


# --- think unset -------------------------------------------------------------------------------

def test_think_unset_is_true_on_a_thinking_template_only() -> None:
    assert render(THINKS, USER) == "U|true|medium|true"
    assert render(THINKS, {**USER, "think": False}) == "U|false||true"
    assert render(THINKS, USER, server=False) == "U|false||false"  # Execute alone
    assert render(NO_THINKING, USER) == "U|false||false"


@pytest.mark.parametrize("label", THINKING)
def test_think_unset_on_every_thinking_template_of_the_corpus(label: str) -> None:
    """Ollama renders a request without think as think=true; the Jinja, given no
    enable_thinking (a Hugging Face caller) or llama-server's enable_thinking=true, renders the
    same bytes on every engine."""
    source = CORPUS[label]
    jinja = translate(source, name=label)
    conversations: list[dict[str, Any]] = [
        USER,
        {"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "U"},
                      {"role": "assistant", "content": "A", "thinking": "T"},
                      {"role": "user", "content": "V"}]},
        {"messages": [{"role": "user", "content": "U"},
                      {"role": "assistant", "content": "A", "thinking": "T"}]},
    ]
    for conv in conversations:
        go = render(source, conv)
        assert go == render(source, {**conv, "think": True}), label
        context = jinja_context(conv)
        assert "enable_thinking" not in context
        for engine in get_engines(ENGINES):
            assert engine.render(jinja, context) == go, (label, engine.name)
            assert engine.render(jinja, {**context, "enable_thinking": True}) == go


def test_some_thinking_template_of_the_corpus_renders_think_unset_differently_from_execute(
) -> None:
    """The default matters: on a real template, Execute with think unset gives other bytes."""
    differing = [label for label in THINKING
                 if render(CORPUS[label], USER) != render(CORPUS[label], USER, server=False)]
    assert differing


# --- capability refusals -----------------------------------------------------------------------

@pytest.mark.parametrize("think", [True, "low", "medium", "high", "max"])
def test_think_on_a_template_that_cannot_think_is_refused(think: bool | str) -> None:
    with pytest.raises(CapabilityRefusal, match="does not support thinking") as refused:
        render(NO_THINKING, {**USER, "think": think})
    assert refused.value.capability == "thinking"
    # as if absent: what the Jinja renders for it
    assert render(NO_THINKING, {**USER, "think": think}, lenient=True) == "U|false||false"
    jinja = translate(NO_THINKING)
    for engine in get_engines(ENGINES):
        assert engine.render(jinja, jinja_context({**USER, "think": think})) == "U|false||false"


def test_think_false_on_a_template_that_cannot_think_is_accepted() -> None:
    assert render(NO_THINKING, {**USER, "think": False}) == "U|false||true"
    jinja = translate(NO_THINKING)
    for engine in get_engines(ENGINES):
        assert engine.render(jinja, jinja_context({**USER, "think": False})) == "U|false||true"


def test_tools_on_a_template_without_tools_are_refused_after_think() -> None:
    with pytest.raises(CapabilityRefusal, match="does not support tools"):
        render(THINKS, {**USER, "tools": TOOLS})
    assert render(THINKS, {**USER, "tools": []}) == "U|true|medium|true"  # none: not refused
    assert render(THINKS, {**USER, "tools": TOOLS}, lenient=True) == "U|true|medium|true"
    # ChatHandler checks thinking first
    with pytest.raises(CapabilityRefusal, match="does not support thinking"):
        render(NO_THINKING, {**USER, "tools": TOOLS, "think": True})
    tool_template = "{{ range .Tools }}{{ .Function.Name }}{{ end }}|" + NO_THINKING
    assert render(tool_template, {**USER, "tools": TOOLS}) == "f|U|false||false"


def test_a_suffix_on_a_template_without_suffix_is_refused() -> None:
    fim = {"prompt": "P", "suffix": "S"}
    with pytest.raises(CapabilityRefusal, match="does not support insert"):
        render("{{ .Prompt }}", fim)
    assert render("{{ .Prompt }}", fim, lenient=True) == "P"
    assert render("{{ .Prompt }}|{{ .Suffix }}", fim) == "P|S"


def test_refusals_come_back_one_by_one_in_a_batch() -> None:
    results = render_many(NO_THINKING, [USER, {**USER, "think": True}, {**USER, "tools": TOOLS}])
    assert results[0] == "U|false||false"
    assert isinstance(results[1], CapabilityRefusal) and results[1].capability == "thinking"
    assert isinstance(results[2], CapabilityRefusal) and results[2].capability == "tools"


def test_verify_counts_refusals_as_their_own_class_and_still_checks_them() -> None:
    result = verify_template(NO_THINKING, cases=60, seed=3, engines=["jinja2"])
    tally = result.counts["jinja2"]
    assert result.ok and tally.refused > 0 and tally.equal > 0
    assert tally.cases == tally.equal + tally.both_failed + tally.refused
    # a Jinja that renders a refused think as set is caught: refusals are compared too
    wrong = translate(NO_THINKING).replace("{%- set think = false %}",
                                           "{%- set think = enable_thinking is defined %}")
    assert wrong != translate(NO_THINKING)
    caught = verify_template(NO_THINKING, wrong, cases=60, seed=3, engines=["jinja2"])
    assert caught.divergences and caught.divergences[0].go_refused == "thinking"


# --- request decoding --------------------------------------------------------------------------

ARGS = ("{{ range .Messages }}{{ range .ToolCalls }}{{ .Function.Arguments }};"
        "{{ json .Function.Arguments }}{{ end }}{{ end }}")
PROPS = "{{ range .Tools }}{{ .Function.Parameters.Properties }}{{ end }}{{ .Messages | len }}"


def _call(arguments: str) -> str:
    return ('{"messages":[{"role":"assistant","content":"","tool_calls":[{"function":'
            '{"name":"f","arguments":' + arguments + '}}]}]}')


def _tool(properties: str) -> str:
    return ('{"messages":[{"role":"user","content":""}],"tools":[{"type":"function",'
            '"function":{"name":"f","parameters":{"type":"object","properties":'
            + properties + '}}}]}')


def test_minus_zero_prints_as_ollama_prints_it_from_the_request_text() -> None:
    text = _call('{"a":-0,"b":-0.0,"c":[-0],"d":0}')
    assert render(ARGS, text) == '{"a":-0,"b":-0,"c":[-0],"d":0};{"a":-0,"b":-0,"c":[-0],"d":0}'
    # a Python dict has no integer -0: the same conversation decoded in Python loses the sign
    assert render(ARGS, json.loads(text)).startswith('{"a":0,')
    tool = _tool('{"x":{"type":"number","enum":[-0,1]},"y":{"type":"object","properties":'
                 '{"z":{"enum":[-0]}}}}')
    assert render(PROPS, tool) == ('{"x":{"type":"number","enum":[-0,1]},'
                                   '"y":{"type":"object","properties":{"z":{"enum":[-0]}}}}1')


@pytest.mark.parametrize("key", [r"\ud800", r"\udc00", r"\ud800x", r"\ud800\u0041",
                                 r"\ud800\ud800"])
def test_a_key_escape_ollamas_ordered_map_refuses_refuses_the_request(key: str) -> None:
    with pytest.raises(ReferenceRendererError, match="invalid escape sequence"):
        render(ARGS, _call('{"' + key + '":1}'))
    with pytest.raises(ReferenceRendererError, match="invalid escape sequence"):
        render(PROPS, _tool('{"' + key + '":{"type":"string"}}'))
    nested = _tool('{"a":{"type":"object","properties":{"' + key + '":{}}}}')
    with pytest.raises(ReferenceRendererError, match="invalid escape sequence"):
        render(PROPS, nested)


@pytest.mark.parametrize(("key", "decoded"), [
    (r"\ud83d\ude00", "\U0001f600"),      # a real pair
    (r"\ud800\ue000", "\U00010400"),      # a "low" past DFFF is combined all the same
    (r"\ud800xxdc00", "\U00010000"),      # the six bytes need not start with \u
    (r"\udbff\uffff", "\ufffd"),          # combined past U+10FFFF
    (r"caf\u00e9", "café"),
])
def test_key_escapes_decode_as_ollamas_ordered_map_decodes_them(key: str, decoded: str) -> None:
    assert render(ARGS, _call('{"' + key + '":1}')) == f'{{"{decoded}":1}};{{"{decoded}":1}}'


def test_a_lone_surrogate_in_a_value_is_u_fffd_for_ollama() -> None:
    assert render(ARGS, _call(r'{"a":"x\ud800y"}')) == '{"a":"x\ufffdy"};{"a":"x\ufffdy"}'
    assert render("{{ range .Messages }}{{ .Content }}{{ end }}",
                  r'{"messages":[{"role":"user","content":"\udc00"}]}') == "\ufffd"


KEYS = ('{{ .Tools }}|{{ json .Tools }}|{{ range .Tools }}{{ printf "%+v" .Function }}{{ end }}'
        '{{ range .Messages }}{{ .Content }}{{ end }}')


@pytest.mark.parametrize(("nested", "written"), [
    ("n\b\f<", "n\\u0008\\u000c\\u003c"),
    ("n\b", "n\\u0008"),  # a tool whose every string tojson writes as Go (the plain path)
])
def test_a_nested_property_key_is_written_by_ollamas_ordered_map(nested: str, written: str
                                                                 ) -> None:
    """A nested `properties` key is written by Ollama's ordered map (wk8/go-ordered-map through
    easyjson's string writer): U+0008 and U+000C as \\u0008 and \\u000c; a top-level property
    key is a plain Go map's, encoding/json's \\b (bytes written by hand from Ollama's code)."""
    conv = {"messages": [{"role": "user", "content": "U"}], "tools": [
        {"type": "function", "function": {"name": "f", "parameters": {"type": "object",
         "properties": {"k\b": {"type": "object", "properties": {nested: {"type": "string"}}}}}}}]}
    props = '{"k\\b":{"type":"object","properties":{"' + written + '":{"type":"string"}}}}'
    function = ('{"name":"f","description":"","parameters":{"type":"object","properties":'
                + props + '}}')
    tools = '[{"type":"function","function":' + function + '}]'
    assert render(KEYS, conv, function_json=False) == (
        f"{tools}|{tools}|{{Name:f Description: Parameters:{{Type:object Defs:<nil> Items:<nil> "
        f"Required:[] Properties:{props}}}}}U")
    renders_everywhere_as_go(KEYS, translate(KEYS), conv, f"{tools}|{tools}|{function}U")


@pytest.mark.parametrize("conv", [
    {"messages": [{"role": "user", "content": "a\ud800"}]},
    {"messages": [{"role": "assistant", "tool_calls": [
        {"function": {"name": "f", "arguments": {"\udc00": 1}}}]}]},
    {"messages": [], "tools": [{"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"\ud800": {"type": "string"}}}}}]},
    {"messages": [{"role": "assistant", "tool_calls": [
        {"function": {"name": "f", "index": 2 ** 63}}]}]},
])
def test_the_contract_refuses_what_ollamas_decoding_changes_or_refuses(conv: dict[str, Any]
                                                                       ) -> None:
    with pytest.raises(ConversationError, match="surrogate|Go's int|wrapped to a negative"):
        validate(conv)


def test_an_index_past_go_int_is_refused_by_go_too() -> None:
    with pytest.raises(ReferenceRendererError, match="does not decode"):
        render(ARGS, '{"messages":[{"role":"assistant","content":"","tool_calls":[{"function":'
                     '{"name":"f","index":9223372036854775808}}]}]}')


# --- images ------------------------------------------------------------------------------------

def test_images_become_img_tags_before_messages_are_merged() -> None:
    template = "{{ range .Messages }}{{ .Role }}:{{ .Content }};{{ end }}"
    conv = {"messages": [
        {"role": "user", "content": "look [img] and [img]", "images": ["aGk=", "aGk=", "aGk="]},
        {"role": "user", "content": "more", "images": ["aGk="]},
        {"role": "assistant", "content": "A"},
        {"role": "user", "content": "[img] x", "images": ["aGk="]},
    ]}
    assert render(template, conv) == (
        "user:[img-2]look [img-0] and [img-1]\n\n[img-3]more;assistant:A;user:[img-4] x;")
    assert render(template, conv, server=False) == (
        "user:look [img] and [img]\n\nmore;assistant:A;user:[img] x;")
    with pytest.raises(ConversationError, match="images are outside the contract"):
        validate(conv)


def test_images_must_be_base64_as_for_ollama() -> None:
    with pytest.raises(ReferenceRendererError, match="does not decode"):
        render("{{ .Messages }}", '{"messages":[{"role":"user","content":"","images":["*"]}]}')


# --- the command line --------------------------------------------------------------------------

def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gotmpl2jinja", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120, check=False)


def test_render_prints_minus_zero_and_todays_date(tmp_path: Path) -> None:
    (tmp_path / "t.gotmpl").write_text(ARGS + "|{{ currentDate }}", encoding="utf-8")
    (tmp_path / "c.json").write_text(_call('{"a":-0}'), encoding="utf-8")
    before = dt.date.today().isoformat()
    done = _cli("render", "t.gotmpl", "c.json", cwd=tmp_path)
    after = dt.date.today().isoformat()
    assert done.returncode == 0, done.stderr
    prefix = '{"a":-0};{"a":-0}|'
    assert done.stdout in (prefix + before, prefix + after)
    pinned = _cli("render", "t.gotmpl", "c.json", "--now", "2026-08-21T12:00:00Z", cwd=tmp_path)
    assert pinned.stdout == prefix + "2026-08-21"


def test_render_reports_a_refusal_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "t.gotmpl").write_text(NO_THINKING, encoding="utf-8")
    (tmp_path / "c.json").write_text('{"messages":[],"think":true}', encoding="utf-8")
    done = _cli("render", "t.gotmpl", "c.json", cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        'Ollama refuses the request (400 "does not support thinking"): think is set (true or '
        "a level) but the template has no thinking capability"]
    executed = _cli("render", "t.gotmpl", "c.json", "--template-only", cwd=tmp_path)
    assert executed.returncode == 0 and executed.stdout == "|true|medium|true"
