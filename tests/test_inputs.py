"""inputs: every kind of input read into a Source, and the Modelfile preamble proved on Go.

The preamble is checked against the reference renderer's own Modelfile rule (Go, not a Python
imitation): for each conversation, Ollama's rendering with `modelfile_system` /
`modelfile_messages` must equal every engine's rendering of the converted template.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st
from test_store import install, layer, manifest_bytes

from gotmpl2jinja.emit.preamble import (
    convert_source,
    jinja_string,
    modelfile_preamble,
    with_preamble,
)
from gotmpl2jinja.engines.registry import DEFAULT_NOW, get_engines, raw_engine_names
from gotmpl2jinja.errors import ModelfileError
from gotmpl2jinja.ollama.modelfile import parse_modelfile
from gotmpl2jinja.ollama.source import DEFAULT_TEMPLATE, InputError, Source, load_source
from gotmpl2jinja.ollama.store import StoreError
from gotmpl2jinja.verify.conversation import jinja_context
from gotmpl2jinja.verify.goside import go_renderer
from gotmpl2jinja.verify.harness import verify_template

UNSLOTH = CORPUS / "unslothai__unsloth" / "modelfiles"
AHNAF = CORPUS / "ahnafnafee__modelfile-syntax" / "syntaxes" / "tests"
REPLIKATION = CORPUS / "replikation__modelfiles" / "opencode"
EXAMPLES = CORPUS / "ollama" / "historical" / (
    "examples-modelfiles@e3b090dbc561d86ee2ab5c006fec9c257a3b99f0")
QWEN_MODELFILE = AHNAF / "template-qwen.modelfile"


def _qwen_template() -> str:
    return parse_modelfile(QWEN_MODELFILE.read_bytes(), name="q").template or ""


# ---------------------------------------------------------------------------------------------
# Reading each kind of input


def test_template_file_is_read_byte_for_byte() -> None:
    path = CORPUS / "ollama" / "template" / "chatml.gotmpl"
    source = load_source(str(path))
    assert source.kind == "template"
    assert source.template == path.read_bytes().decode("utf-8")
    assert (source.system, source.messages, source.stop, source.warnings) == (None, [], [], [])
    assert not source.has_modelfile_rule


def test_unsloth_modelfile_gives_template_system_and_stop() -> None:
    path = UNSLOTH / "qwen-25.Modelfile"
    source = load_source(str(path))
    assert source.kind == "modelfile"
    assert source.template.startswith("{{- if .Messages }}\n{{- if or .System .Tools }}")
    assert source.template.endswith("{{ .Response }}{{ if .Response }}<|im_end|>{{ end }}")
    assert source.system == "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
    assert source.stop == ["<|im_end|>", "<|endoftext|>"]
    assert source.messages == []


def test_extensionless_modelfile_is_detected_by_content() -> None:
    """replikation's files have no suffix and start with a comment block; FROM names a model."""
    source = load_source(str(REPLIKATION / "gemma4__12b-q4"))
    assert source.kind == "modelfile"
    assert source.template == DEFAULT_TEMPLATE
    assert any("no TEMPLATE" in w and "'gemma4:12b-it-q4_K_M'" in w and "{{ .Prompt }}" in w
               for w in source.warnings)


def test_ollama_example_modelfile_keeps_system_newlines() -> None:
    source = load_source(str(EXAMPLES / "modelfile-mario" / "Modelfile"))
    assert source.system == "\nYou are Mario from super mario bros, acting as an assistant.\n"
    assert source.template == DEFAULT_TEMPLATE


def test_messages_modelfile_error_has_its_place() -> None:
    """ahnafnafee's messages.modelfile has a `robot` role on purpose (line 11)."""
    with pytest.raises(ModelfileError) as info:
        load_source(str(AHNAF / "messages.modelfile"))
    assert str(info.value).startswith(f"{AHNAF / 'messages.modelfile'}:11:")
    assert "message role must be one of" in str(info.value)


def test_messages_are_read_from_the_valid_part(tmp_path: Path) -> None:
    text = (AHNAF / "messages.modelfile").read_text(encoding="utf-8")
    valid = text.split("# Invalid role")[0]
    path = tmp_path / "Modelfile"
    path.write_text(valid, encoding="utf-8")
    source = load_source(str(path))
    assert source.system == "You are a math tutor. Explain step by step."
    assert source.messages == [
        {"role": "user", "content": "What is 2 + 2?"},
        {"role": "assistant", "content": "2 + 2 = 4."},
        {"role": "user", "content": "If I have 3 apples and buy 2 more, how many do I have?"},
        {"role": "assistant", "content": "You have 3 + 2 = 5 apples."},
    ]


def test_dropped_characters_are_warned(tmp_path: Path) -> None:
    path = tmp_path / "x.Modelfile"
    path.write_text('FROM m\nTEMPLATE """a\u00a0b{{ .Prompt }}"""\n', encoding="utf-8")
    source = load_source(str(path))
    assert source.template == "ab{{ .Prompt }}"
    assert any("U+00A0" in w and "dropped" in w for w in source.warnings)


def test_empty_template_and_system_count_as_absent(tmp_path: Path) -> None:
    """create.go sets a layer only for a non-empty value."""
    path = tmp_path / "Modelfile"
    path.write_text('FROM ./m.gguf\nTEMPLATE ""\nSYSTEM ""\n', encoding="utf-8")
    source = load_source(str(path))
    assert source.template == DEFAULT_TEMPLATE
    assert source.system is None and not source.has_modelfile_rule


def test_template_suffix_wins_over_modelfile_look(tmp_path: Path) -> None:
    path = tmp_path / "odd.gotmpl"
    path.write_text("SYSTEM {{ .System }}", encoding="utf-8")
    assert load_source(str(path)).kind == "template"


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


def test_stdin_template(monkeypatch: pytest.MonkeyPatch) -> None:
    data = (CORPUS / "ollama" / "template" / "chatml.gotmpl").read_bytes()
    _stdin(monkeypatch, data)
    source = load_source("-")
    assert (source.name, source.kind, source.template) == ("<stdin>", "template",
                                                           data.decode("utf-8"))


def test_stdin_modelfile(monkeypatch: pytest.MonkeyPatch) -> None:
    _stdin(monkeypatch, QWEN_MODELFILE.read_bytes())
    source = load_source("-")
    assert source.kind == "modelfile" and source.name == "<stdin>"
    assert source.template == _qwen_template()
    assert source.stop == ["<|im_start|>", "<|im_end|>"]


def test_bad_inputs_are_sentences(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        load_source(str(tmp_path / "missing.gotmpl"))
    with pytest.raises(InputError, match="is a directory"):
        load_source(str(tmp_path))
    bad = tmp_path / "bad.gotmpl"
    bad.write_bytes(b"ok\nab\xffc")
    with pytest.raises(InputError) as info:
        load_source(str(bad))
    assert str(info.value) == f"{bad}:2:3: not valid UTF-8 (byte 0xff); save the template as UTF-8"
    with pytest.raises(InputError, match="give a model name"):
        load_source("ollama:")


# ---------------------------------------------------------------------------------------------
# Installed models (a fake store laid out as Ollama lays it out, see test_store.py)


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    root = tmp_path / "models"
    layers = [
        layer(root, "model", b"GGUF\x03\x00\x00\x00fake weights"),
        layer(root, "template", _qwen_template().encode()),
        layer(root, "system", "You are Gemma — kind.".encode()),
        layer(root, "params", b'{"stop":["<end_of_turn>"],"temperature":1}\n'),
        layer(root, "messages", b'[{"role":"user","content":"hi"},'
                                b'{"role":"assistant","content":"hello"}]\n'),
    ]
    install(root, "manifests/registry.ollama.ai/library/gemma4/12b-it-q4_K_M",
            manifest_bytes(root, layers, {"model_format": "gguf"}))
    bare = [layer(root, "model", b"GGUF\x03\x00\x00\x00bare")]
    install(root, "manifests-v2/ollama.com/library/bare/latest",
            manifest_bytes(root, bare, {"renderer": "qwen3-coder"}))
    return root


def test_ollama_model_from_store(store: Path) -> None:
    source = load_source("ollama:gemma4:12b-it-q4_K_M", models_dir=store)
    assert source.kind == "ollama" and source.name == "ollama:gemma4:12b-it-q4_K_M"
    assert source.template == _qwen_template()
    assert source.system == "You are Gemma — kind."
    assert source.messages == [{"role": "user", "content": "hi"},
                               {"role": "assistant", "content": "hello"}]
    assert source.stop == ["<end_of_turn>"]


def test_ollama_model_without_template_and_with_renderer(store: Path) -> None:
    """Ollama renders a model with a RENDERER by built-in Go code: nothing to translate."""
    with pytest.raises(InputError, match="RENDERER 'qwen3-coder': Ollama renders this model "
                                         "with its built-in 'qwen3-coder' renderer"):
        load_source("ollama:bare", models_dir=store)


def test_missing_model_is_a_store_error(store: Path) -> None:
    with pytest.raises(StoreError, match="is not installed"):
        load_source("ollama:qwen3:8b", models_dir=store)


def test_modelfile_from_installed_model_inherits_its_layers(store: Path) -> None:
    """replikation's gemma4 Modelfile has no TEMPLATE: `ollama create` keeps the base's."""
    source = load_source(str(REPLIKATION / "gemma4__12b-q4"), models_dir=store)
    assert source.template == _qwen_template()
    assert source.system == "You are Gemma — kind."
    assert source.messages[0] == {"role": "user", "content": "hi"}
    assert source.stop == ["<end_of_turn>"]
    assert not any("no TEMPLATE" in w for w in source.warnings)


# ---------------------------------------------------------------------------------------------
# The preamble


def test_no_rule_no_preamble() -> None:
    assert modelfile_preamble(None, []) == ""
    assert modelfile_preamble("", []) == ""
    assert with_preamble("", "{{- 'x' }}") == "{{- 'x' }}"


def test_preamble_reads_as_intended() -> None:
    text = modelfile_preamble("Be brief.", [{"role": "user", "content": "it's"}])
    assert text.splitlines() == [
        "{#- Ollama's Modelfile rule (chat only, not fill-in-the-middle): SYSTEM comes first "
        "unless the conversation starts with a system message; the MESSAGE lines come before "
        "the conversation. #}",
        "{%- set modelfile_messages = [] %}",
        "{%- set modelfile_messages = modelfile_messages + [{'role': 'user', 'content': "
        "'it\\'s'}] %}",
        "{%- set modelfile_system = [{'role': 'system', 'content': 'Be brief.'}] %}",
        "{%- set modelfile_messages = (modelfile_system if messages|length == 0 or "
        "(messages[0].role|lower) != 'system' else []) + modelfile_messages %}",
        "{%- set messages = messages if (prompt is defined and suffix is defined and prompt "
        "and suffix) else (modelfile_messages + messages) %}",
    ]


def test_preamble_goes_after_the_translated_header() -> None:
    source = load_source(str(QWEN_MODELFILE))
    jinja = convert_source(source)
    assert jinja.startswith("{#- Translated by gotmpl2jinja")
    header_end = jinja.index("#}") + 2
    assert jinja[header_end:].startswith("\n{#- Ollama's Modelfile rule")
    assert jinja.count("Ollama's Modelfile rule") == 1


def test_with_preamble_protects_a_leading_newline_of_the_body() -> None:
    """A body starting with text gets `{{ '' }}`, so trim_blocks cannot eat its newline."""
    preamble = modelfile_preamble("S", [])
    jinja = with_preamble(preamble, "\nA{{ messages[0].content }}")
    for engine in get_engines(raw_engine_names()):
        assert engine.render(jinja, {"messages": []}, now=DEFAULT_NOW) == "\nAS", engine.name


@pytest.mark.parametrize("text", [
    "plain", "it's \"quoted\"", "back\\slash \\n not a newline", "line\nbreak\r\nCRLF\rCR\ttab",
    "{{ .Prompt }} {% if %} {# c #} -}} {%- x -%}", "\x00\x01\x1b\x7f\x85\u2028é😀",
])
def test_jinja_string_round_trips_on_every_engine(text: str) -> None:
    template = "{{- " + jinja_string(text) + " }}"
    for engine in get_engines(raw_engine_names()):
        assert engine.render(template, {}, now=DEFAULT_NOW) == text, engine.name


CONVERSATIONS: list[dict[str, Any]] = [
    {"messages": []},
    {"messages": [{"role": "user", "content": "Hello"}]},
    {"messages": [{"role": "system", "content": "Mine"}, {"role": "user", "content": "Hello"}]},
    {"messages": [{"role": "System", "content": "Upper"}, {"role": "user", "content": "Hi"}]},
    {"messages": [{"role": "user", "content": "a"}, {"role": "system", "content": "late"}]},
    {"messages": [{"role": "assistant", "content": "prefill"}]},
    {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"},
                  {"role": "tool", "content": "t"}, {"role": "user", "content": "q2"}]},
    {"prompt": "def f(", "suffix": "return x"},
]


def _math_tutor(tmp_path: Path) -> Source:
    """The valid part of ahnafnafee's messages.modelfile with the qwen template."""
    text = (AHNAF / "messages.modelfile").read_text(encoding="utf-8").split("# Invalid role")[0]
    template = QWEN_MODELFILE.read_text(encoding="utf-8").split("PARAMETER")[0]
    path = tmp_path / "Modelfile"
    path.write_text(text + template.replace("FROM ./qwen2.5-7b-instruct-q4_k_m.gguf", ""),
                    encoding="utf-8")
    return load_source(str(path))


def _assert_equivalent(source: Source, conversations: list[dict[str, Any]]) -> None:
    jinja = convert_source(source)
    render = go_renderer(source).as_lenient()  # a refused think renders as if absent
    for conv in conversations:
        expected = render(source.template, conv, DEFAULT_NOW)
        for engine in get_engines(raw_engine_names()):
            got = engine.render(jinja, jinja_context(conv), now=DEFAULT_NOW)
            assert got == expected, (engine.name, conv)


def test_system_and_messages_match_ollama_on_every_engine(tmp_path: Path) -> None:
    source = _math_tutor(tmp_path)
    assert source.system and len(source.messages) == 4
    _assert_equivalent(source, CONVERSATIONS)


def test_the_rule_really_changes_the_prompt(tmp_path: Path) -> None:
    """Guard against a vacuous proof: without the preamble the outputs differ from Ollama's."""
    source = _math_tutor(tmp_path)
    from gotmpl2jinja.emit import translate

    bare = translate(source.template, name="bare")
    conv = CONVERSATIONS[1]
    expected = go_renderer(source)(source.template, conv, DEFAULT_NOW)
    assert "You are a math tutor" in expected and "What is 2 + 2?" in expected
    engine = get_engines(["jinja2"])[0]
    assert engine.render(bare, jinja_context(conv), now=DEFAULT_NOW) != expected


def test_system_only_modelfile_matches_ollama(tmp_path: Path) -> None:
    _assert_equivalent(load_source(str(QWEN_MODELFILE)), CONVERSATIONS)


def test_converted_modelfile_passes_the_harness() -> None:
    """The harness's random conversations (incl. fill-in-the-middle) on the unsloth qwen file."""
    source = load_source(str(UNSLOTH / "qwen-25.Modelfile"))
    result = verify_template(source.template, convert_source(source), cases=25,
                             render=go_renderer(source), name="qwen-25")
    assert result.cases == 25
    assert result.ok, [d.diff for d in result.divergences]


_ROLES = st.sampled_from(["system", "user", "assistant"])


@settings(max_examples=15)
@given(system=st.one_of(st.none(), st.text(max_size=12)),
       lines=st.lists(st.tuples(_ROLES, st.text(max_size=8)), max_size=3),
       conv_roles=st.lists(st.sampled_from(["system", "user", "assistant", "tool", "SYSTEM"]),
                           max_size=3))
def test_any_rule_matches_ollama(system: str | None, lines: list[tuple[str, str]],
                                 conv_roles: list[str]) -> None:
    source = Source(name="h", template=_qwen_template(), kind="modelfile", system=system,
                    messages=[{"role": r, "content": c} for r, c in lines])
    conv = {"messages": [{"role": r, "content": f"m{i}"} for i, r in enumerate(conv_roles)]}
    _assert_equivalent(source, [conv])


@pytest.mark.parametrize("modelfile", [
    UNSLOTH / "alpaca.Modelfile",
    UNSLOTH / "tinyllama.Modelfile",
])
def test_preamble_composes_with_the_legacy_translation(modelfile: Path) -> None:
    """Legacy (`.Prompt`) Modelfiles with SYSTEM: Ollama's per-turn path sees the same
    rewritten messages, so the preamble works in front of the legacy translation too."""
    from gotmpl2jinja.emit.legacy import translate_legacy
    from gotmpl2jinja.syntax.parser import parse

    source = load_source(str(modelfile))
    assert source.system
    legacy = translate_legacy(parse(source.template, name=source.name), source.name)
    jinja = with_preamble(modelfile_preamble(source.system, source.messages), legacy)
    result = verify_template(source.template, jinja, cases=20, render=go_renderer(source))
    assert result.ok, [d.diff for d in result.divergences]
    conv = CONVERSATIONS[1]  # not vacuous: Ollama prints the Modelfile SYSTEM here
    assert source.system in go_renderer(source)(source.template, conv, DEFAULT_NOW)
