"""Ollama's fill-in-the-middle path (ollama-semantics.md §3) in the translated Jinja: taken for
any template when the request has a prompt and a suffix; the whole template (never cut) with
Prompt, Suffix, an empty Response and the think values, every other key missing."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest

from gotmpl2jinja.emit import translate
from gotmpl2jinja.emit.legacy import fim_branch, translate_legacy
from gotmpl2jinja.emit.paths import FIM_CONDITION
from gotmpl2jinja.engines.registry import get_engines, is_raised
from gotmpl2jinja.errors import Gotmpl2JinjaError
from gotmpl2jinja.ollama.modelfile import parse_modelfile
from gotmpl2jinja.ollama.reference import CapabilityRefusal
from gotmpl2jinja.ollama.reference import render as ollama_render
from gotmpl2jinja.syntax.parser import parse
from gotmpl2jinja.verify.conversation import jinja_context

#: The contract's Go side: Ollama's server steps, and a request Ollama refuses for a capability
#: (think on these templates that cannot think) rendered as if the refused option were absent.
render = functools.partial(ollama_render, lenient=True)

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "corpus"
LEGACY = next((CORPUS / "ollama" / "historical").glob("legacy-builtin-templates@*"))
ENGINES = ("jinja2", "hfjinja", "minijinja", "minijinja-trim")

FIM_REQUESTS: list[dict[str, Any]] = [
    {"prompt": "def add(a, b):\n    ", "suffix": "\n    return c"},
    {"prompt": "P", "suffix": "S", "think": True},
    {"prompt": "P", "suffix": "S", "think": False},
    {"prompt": "<|x|> 'q' \"d\" {{ }}", "suffix": "é\t", "think": "low"},
]
CHATS: list[dict[str, Any]] = [
    {"messages": []},
    {"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]},
]


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


def renders(jinja: str, conversation: dict[str, Any]) -> set[str]:
    """The outputs of every engine (one element when they agree)."""
    context = jinja_context(conversation)
    return {engine.render(jinja, context) for engine in get_engines(ENGINES)}


def legacy(source: str) -> str:
    return translate_legacy(parse(source), "template")


# --- legacy templates -------------------------------------------------------------------------

CODELLAMA_STYLE = ("{{ if .Suffix }}<PRE> {{ .Prompt }} <SUF>{{ .Suffix }} <MID>"
                   "{{ else }}[INST] {{ .Prompt }} [/INST]{{ end }}")


@pytest.mark.parametrize(("conversation", "expected"), [
    ({"prompt": "a", "suffix": "b"}, "<PRE> a <SUF>b <MID>"),
    ({"messages": [{"role": "user", "content": "U"}]}, "[INST] U [/INST]"),
    ({"messages": [{"role": "user", "content": "U"}, {"role": "assistant", "content": "A"},
                   {"role": "user", "content": "V"}]}, "[INST] U [/INST]A[INST] V [/INST]"),
])
def test_a_legacy_infill_template_by_hand(conversation: dict[str, Any], expected: str) -> None:
    assert render(CODELLAMA_STYLE, conversation) == expected
    assert renders(legacy(CODELLAMA_STYLE), conversation) == {expected}


def test_the_fim_root_map_by_hand() -> None:
    source = ("{{ .System }}|{{ .Prompt }}|{{ .Suffix }}|{{ .Response }}|{{ .Think }}"
              "|{{ .ThinkLevel }}|{{ .IsThinkSet }}|{{ .Tools }}")
    request = {"prompt": "P", "suffix": "X", "think": "high"}
    assert ollama_render(source, request, server=False) == (
        "<no value>|P|X||true|high|true|<no value>")  # Execute's root map
    with pytest.raises(CapabilityRefusal, match="does not support thinking"):
        ollama_render(source, request)  # the template cannot think: Ollama answers 400
    expected = "<no value>|P|X||false||false|<no value>"  # as if think were absent
    assert render(source, request) == expected
    assert renders(legacy(source), request) == {expected}
    refused_false = {"prompt": "P", "suffix": "X", "think": False}  # false is never refused
    assert ollama_render(source, refused_false) == "<no value>|P|X||false||true|<no value>"
    assert renders(legacy(source), refused_false) == {"<no value>|P|X||false||true|<no value>"}


def test_fim_renders_the_whole_template_not_the_cut() -> None:
    source = "<{{ .Prompt }}>{{ .Response }}<{{ .Suffix }}>"
    request = {"prompt": "P", "suffix": "X"}
    assert render(source, request) == "<P><X>"
    assert renders(legacy(source), request) == {"<P><X>"}
    # while a chat's final turn is cut after .Response
    chat = {"messages": [{"role": "user", "content": "U"}]}
    assert render(source, chat) == "<U>"
    assert renders(legacy(source), chat) == {"<U>"}


@pytest.mark.parametrize("name", sorted(p.stem for p in LEGACY.glob("*.gotmpl")))
def test_legacy_builtins_take_the_fim_path_like_go(name: str) -> None:
    """None of them names .Suffix: Ollama's Execute still takes the path for the request."""
    source = _read(LEGACY / f"{name}.gotmpl")
    jinja = legacy(source)
    for request in FIM_REQUESTS + CHATS:
        assert renders(jinja, request) == {render(source, request)}, request


@pytest.mark.parametrize("source", [
    # found by the template generator (seed 20): Go binds a range's variables to the list
    # before it iterates, so its else prints nil (`<no value>`) on this path, `[]` in a chat
    '{{- $x := "" -}}{{- range $x := .Messages -}}{{- else -}}a{{- $x -}}{{- end -}}',
    "{{ range $i, $m := .Messages }}{{ else }}{{ $m }}|{{ $i }}{{ end }}",
])
def test_a_range_variable_read_in_its_else_takes_the_fim_path_like_go(source: str) -> None:
    jinja = translate(source)
    request = {"prompt": "P", "suffix": "S"}
    assert render(source, request).endswith("<no value>")
    assert renders(jinja, request) == {render(source, request)}
    assert renders(jinja, {"messages": []}) == {render(source, {"messages": []})}


def test_a_range_assigning_earlier_variables_is_refused_with_its_place() -> None:
    # Go sets $x to the list, then to each element, and it keeps the last after the loop
    with pytest.raises(Gotmpl2JinjaError, match=r"^template:1:14: range assigning to variables"):
        translate("{{ $x := 1 }}{{ range $x = .Messages }}{{ end }}{{ $x }}")


def test_empty_prompt_or_suffix_from_a_host_means_the_chat_path() -> None:
    """Ollama's condition is prompt != "" && suffix != "": a host that passes empty strings gets
    the chat rendering (the contract itself never passes them)."""
    jinja = legacy(CODELLAMA_STYLE)
    chat = jinja_context({"messages": [{"role": "user", "content": "U"}]})
    for prompt, suffix in (("", "x"), ("x", ""), ("", "")):
        context = {**chat, "prompt": prompt, "suffix": suffix}
        for engine in get_engines(ENGINES):
            assert engine.render(jinja, context) == "[INST] U [/INST]"


def test_fim_branch_wraps_chat_lines() -> None:
    lines = fim_branch(["    {{- 'fim:' ~ prompt ~ suffix }}"], ["{{- 'chat' }}"])
    assert lines[1] == f"{{%- if {FIM_CONDITION} %}}"
    assert lines[-1] == "{%- endif %}"
    jinja = "\n".join(lines)
    assert renders(jinja, {"prompt": "a", "suffix": "b"}) == {"fim:ab"}
    assert renders(jinja, {"messages": []}) == {"chat"}


def test_fim_branch_writes_what_both_paths_share_once() -> None:
    shared = ["{%- set x = 'x' %}", "{%- if x %}", "    {{- x }}", "{%- endif %}"]
    fim = [*shared, "{{- 'fim:' ~ prompt ~ suffix }}", "{{- '.' }}"]
    chat = [*shared, "{%- set y = 'chat' %}", "{{- y }}", "{{- '.' }}"]
    lines = fim_branch([f"    {line}" for line in fim], chat)
    assert "shares this body" in lines[0]
    assert lines[1:5] == shared  # written once, before the paths part
    assert lines.count("{{- '.' }}") == 1  # and the common end once too
    jinja = "\n".join(lines)
    assert renders(jinja, {"prompt": "a", "suffix": "b"}) == {"xfim:ab."}
    assert renders(jinja, {"messages": []}) == {"xchat."}


def test_seed_translation_writes_its_preamble_once() -> None:
    source = (Path(__file__).resolve().parent.parent / "fixtures" / "seeds"
              / "002_qwen-style.gotmpl").read_text(encoding="utf-8")
    jinja = translate(source, name="seed")
    assert jinja.count("Reasoning effort is set to low.") == 1
    assert jinja.count("set ns = namespace(") == 1


# --- messages-path templates of the corpus that name .Suffix (translated by emit) -------------


def _suffix_templates() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in sorted((CORPUS / "huggingface__huggingface.js" / "entries").glob(
            "*/template.gotmpl")):
        if "Suffix" in _read(path):
            found[f"hf/{path.parent.name}"] = _read(path)
    for path in sorted((CORPUS / "unslothai__unsloth" / "modelfiles").glob("*.Modelfile")):
        text = _read(path).replace("{__FILE_LOCATION__}", "model.gguf")
        template = parse_modelfile(text.replace("{__EOS_TOKEN__}", "</s>")).template
        if template is not None and "Suffix" in template:
            found[f"unsloth/{path.stem}"] = template
    return found


def test_the_corpus_has_infill_templates() -> None:
    assert len(_suffix_templates()) == 6


@pytest.mark.parametrize("key", sorted(_suffix_templates()))
def test_corpus_infill_templates_match_go(key: str) -> None:
    source = _suffix_templates()[key]
    jinja = translate(source, name=key)
    for request in FIM_REQUESTS + CHATS:
        assert renders(jinja, request) == {render(source, request)}, request


# --- the messages path: the fill-in-the-middle root map has no Messages, System or Tools -------


def _go_and_engines(source: str, conversation: dict[str, Any],
                    extra: dict[str, Any] | None = None) -> None:
    """Go's bytes (or Go's failure, then every engine raises) on all four engines."""
    try:
        want: str | None = render(source, conversation)
    except Gotmpl2JinjaError:
        want = None
    jinja = translate(source)
    context = {**jinja_context(conversation), **(extra or {})}
    for engine in get_engines(ENGINES):
        try:
            got: str | Exception = engine.render(jinja, context)
        except Gotmpl2JinjaError as exc:
            got = exc
        if want is None:
            assert isinstance(got, Exception) and is_raised(got), (engine.name, got)
        else:
            assert got == want, engine.name


_R = "{{ range .Messages }}{{ end }}"  # names .Messages: the messages path

#: Every root field the fill-in-the-middle map lacks, through every operation that can tell Go's
#: nil from a chat's value: print, truth, len, range, index, slice, eq/ne, json, printf.
FIM_ROOT_SOURCES = [
    "{{ len .Messages }}",  # Go: "len of nil pointer" (a chat without messages prints 0)
    "{{ eq (len .Messages) 0 }}",
    "{{ if gt (len .Messages) 0 }}x{{ end }}",
    "{{ range .Messages }}x{{ else }}E{{ end }}",
    "{{ index .Messages 0 }}",
    "{{ if .Messages }}T{{ else }}F{{ end }}{{ with .Messages }}W{{ else }}N{{ end }}",
    "{{ not .Messages }}{{ if and .Messages (gt (len .Messages) 1) }}x{{ end }}",
    "{{ range $i, $m := .Messages }}{{ $i }}{{ end }}{{ .Messages.Foo }}",
    "{{ $n := len .Messages }}{{ $n }}",
    _R + "{{ .System }}|{{ print .System }}|{{ json .System }}|{{ if .System }}T{{ end }}",
    _R + '{{ eq .System "" }}|{{ ne .System "" }}|{{ eq .System "" "S" }}',
    _R + "{{ eq .System .Prompt }}|{{ eq .ThinkLevel .System }}|{{ eq .Think .Tools }}",
    _R + "{{ eq 1 .Tools }}|{{ ne .Foo 1 }}|{{ eq .Foo .Bar }}",
    _R + '{{ lt .Foo 1 }}',
    _R + '{{ printf "%v|%s|%q|%s" .Prompt .Suffix .Foo .System }}',
    _R + '{{ with .System }}[{{ . }}]{{ else }}none{{ end }}{{ .System.X }}',
    _R + "{{ .Tools }}|{{ json .Tools }}|{{ if .Tools }}T{{ else }}F{{ end }}",
    _R + "{{ len .Tools }}",
    _R + "{{ range .Tools }}x{{ else }}E{{ end }}{{ with .Tools }}{{ json . }}{{ end }}",
    _R + "{{ index .Tools 0 }}",
    _R + "{{ index .Tools }}",  # Go: index of untyped nil, even without an index
    _R + "{{ slice .Tools 0 }}",  # a chat's nil tools slice to nil again: null, not []
    _R + "{{ json (slice .Tools 0 0) }}|{{ len (slice .Tools 0) }}",
    _R + "{{ range slice .Tools 0 }}{{ .Function.Name }}{{ end }}|{{ slice .Tools 1 }}",
    _R + "{{ .Prompt }}|{{ .Suffix }}|{{ .Response }}|{{ json .Suffix }}"
    '|{{ eq .Prompt "" }}',
    _R + '{{ define "x" }}<{{ . }}>{{ end }}{{ template "x" .System }}{{ template "x" .Tools }}',
    _R + '{{ define "x" }}<{{ .System }}>{{ end }}{{ template "x" . }}',
    # a declaration that fails in the fill-in-the-middle path (llama-guard3's first line)
    "{{ $last := len (slice .Messages 1) }}{{ $m := index .Messages $last }}{{ $m.Role }}",
]


@pytest.mark.parametrize("source", FIM_ROOT_SOURCES)
def test_fim_root_map_matches_go_on_the_messages_path(source: str) -> None:
    for request in [*FIM_REQUESTS[:2], {"messages": []}, CHATS[1]]:
        _go_and_engines(source, request)


@pytest.mark.parametrize(("prompt", "suffix"), [("", "x"), ("x", ""), ("", "")])
@pytest.mark.parametrize("source", [
    "{{ len .Messages }}|{{ range .Messages }}{{ .Content }}{{ end }}",
    _R + "{{ if .Suffix }}<PRE>{{ .Prompt }}<SUF>{{ .Suffix }}{{ else }}{{ .System }}{{ end }}",
])
def test_empty_prompt_or_suffix_means_the_chat_path_on_the_messages_path(
        source: str, prompt: str, suffix: str) -> None:
    """A host that passes empty strings gets the chat rendering, as Ollama's condition says."""
    _go_and_engines(source, CHATS[1], {"prompt": prompt, "suffix": suffix})


@pytest.mark.parametrize("name", ["chatml", "llama3-instruct", "mistral-instruct", "phi-3"])
def test_builtins_without_a_fim_body_render_the_fim_path_like_go(name: str) -> None:
    """They read .Messages only where nil and empty look alike (range, truth), so the chat body
    serves the fill-in-the-middle path too: no second copy of it."""
    source = _read(CORPUS / "ollama" / "template" / f"{name}.gotmpl")
    jinja = translate(source)
    assert FIM_CONDITION not in jinja and "suffix" not in jinja
    for request in FIM_REQUESTS:
        assert renders(jinja, request) == {render(source, request)}, request
