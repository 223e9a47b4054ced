"""Ollama's fill-in-the-middle path (ollama-semantics.md §3) in the translated Jinja: taken for
any template when the request has a prompt and a suffix; the whole template (never cut) with
Prompt, Suffix, an empty Response and the think values, every other key missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gotmpl2jinja.conversation import jinja_context
from gotmpl2jinja.emit import translate
from gotmpl2jinja.engines import get_engines
from gotmpl2jinja.legacy import FIM_CONDITION, fim_branch, translate_legacy
from gotmpl2jinja.modelfile import parse_modelfile
from gotmpl2jinja.parser import parse
from gotmpl2jinja.reference import render

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
    expected = "<no value>|P|X||true|high|true|<no value>"
    assert render(source, request) == expected
    assert renders(legacy(source), request) == {expected}


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
