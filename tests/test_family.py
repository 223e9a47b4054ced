"""Ollama's steps by the model's family, parser and config (ollama-semantics.md §8 "By family"),
in the reference renderer (bytes written by hand from Ollama's code at fb30760) and in the
translation on every engine; a chat without messages, which Ollama does not render; and the
commands' answers to a family's template and to a RENDERER."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from everywhere import renders_everywhere
from test_store import install, layer, manifest_bytes

from gotmpl2jinja.cli.main import cli
from gotmpl2jinja.emit import translate
from gotmpl2jinja.engines.registry import get_engines, raw_engine_names
from gotmpl2jinja.ollama.family import ModelFacts, facts_for_family, family_steps
from gotmpl2jinja.ollama.reference import CapabilityRefusal, NotRendered, render
from gotmpl2jinja.verify.conversation import jinja_context

ROOT = Path(__file__).resolve().parent.parent
GPT_OSS = ROOT / "fixtures" / "corpus" / "unslothai__unsloth" / "modelfiles" / "gpt-oss.Modelfile"

VALUES = "|{{ .Think }}|{{ .ThinkLevel }}|{{ .IsThinkSet }}"
#: Cannot think by its text (no .Thinking under a range over .Messages); harmony's markers.
HARMONY = ("<|start|>{{ range .Messages }}[{{ .Role }}:{{ .Content }}]{{ end }}<|end|>"
           + VALUES)
NAMES = "{{ range .Tools }}{{ .Function.Name }};{{ end }}" + HARMONY
PLAIN = "{{ range .Messages }}[{{ .Role }}:{{ .Content }}]{{ end }}" + VALUES
USER = [{"role": "user", "content": "U"}]


def _family(template: str, name: str) -> dict[str, Any]:
    return family_steps(template, facts_for_family(name)).payload()


# --- gpt-oss and harmony -----------------------------------------------------------------------

def test_gpt_oss_thinks_with_levels_whatever_its_template_says() -> None:
    gpt_oss = _family(PLAIN, "gpt-oss")
    assert render(PLAIN, {"messages": USER}, family=gpt_oss) == "[user:U]|true|medium|true"
    assert render(PLAIN, {"messages": USER, "think": "low"}, family=gpt_oss) \
        == "[user:U]|true|low|true"
    # no harmony markers: "max" stays "max"
    assert render(PLAIN, {"messages": USER, "think": "max"}, family=gpt_oss) \
        == "[user:U]|true|max|true"
    # the template alone cannot think: Ollama refuses a level, an absent think stays unset
    assert render(PLAIN, {"messages": USER}) == "[user:U]|false||false"
    with pytest.raises(CapabilityRefusal, match="does not support thinking"):
        render(PLAIN, {"messages": USER, "think": "low"})


def test_harmony_maps_max_to_high_and_renames_tools() -> None:
    harmony = _family(NAMES, "gpt-oss")
    assert render(HARMONY, {"messages": USER, "think": "max"}, family=harmony) \
        == "<|start|>[user:U]<|end|>|true|high|true"
    tools = [{"type": "function", "function": {"name": name}}
             for name in ("get-weather now", "get_weather_now", "9x", "python", "é!", "")]
    assert render(NAMES, {"messages": USER, "tools": tools}, family=harmony) == (
        "get_weather_now;get_weather_now_2;_9x;python;é;;<|start|>[user:U]<|end|>"
        "|true|medium|true")


def test_the_gpt_oss_translation_honours_reasoning_effort_on_every_engine() -> None:
    steps = family_steps(HARMONY, facts_for_family("gpt-oss"))
    jinja = translate(HARMONY, family=steps)
    for think, level in ((None, "medium"), ("low", "low"), ("high", "high"), ("max", "high")):
        conv: dict[str, Any] = {"messages": USER}
        if think is not None:
            conv["think"] = think
        want = f"<|start|>[user:U]<|end|>|true|{level}|true"
        assert render(HARMONY, conv, family=steps.payload()) == want
        renders_everywhere(jinja, conv, want)
    off = {"messages": USER, "think": False}
    assert render(HARMONY, off, family=steps.payload()) == "<|start|>[user:U]<|end|>|false||true"
    renders_everywhere(jinja, off, "<|start|>[user:U]<|end|>|false||true")


# --- qwen3 and deepseek-r1 ---------------------------------------------------------------------

EARLIER = [
    {"role": "user", "content": "U"},
    {"role": "assistant", "content": " \u3000\x85\v\f<think>T</think>\n\u2028 A"},
    {"role": "assistant", "content": "<thi"},  # the start of the tag only: emptied
    {"role": "assistant", "content": "\x1c<think>a</think>b"},  # \x1c is not Go white space
    {"role": "assistant", "content": "\ufeff<think>a</think>b"},  # nor is U+FEFF
    {"role": "assistant", "content": "<think>never closed"},
    {"role": "user", "content": "V"},
    {"role": "assistant", "content": "<think>x</think>y"},  # after the last user: kept
]
STRIPPED = ("[user:U][assistant:A\n\n\n\n\x1c<think>a</think>b\n\n\ufeff<think>a</think>b\n\n]"
            "[user:V][assistant:<think>x</think>y]|false||false")


@pytest.mark.parametrize("name", ["qwen3", "deepseek-r1"])
def test_earlier_thinking_is_stripped_for_qwen3_and_deepseek_r1(name: str) -> None:
    steps = family_steps(PLAIN, facts_for_family(name))
    assert steps.strip_think and not steps.capabilities
    conv = {"messages": EARLIER}
    assert render(PLAIN, conv, family=steps.payload()) == STRIPPED
    assert render(PLAIN, conv).startswith("[user:U][assistant: \u3000")  # not without it
    renders_everywhere(translate(PLAIN, family=steps), conv, STRIPPED)


LEGACY = ("{{ if .System }}<s>{{ .System }}</s>{{ end }}{{ if .Prompt }}<u>{{ .Prompt }}</u>"
          "{{ end }}<a>{{ .Response }}</a>")


def test_earlier_thinking_is_stripped_on_the_legacy_path_too() -> None:
    """filterThinkTags runs before Execute whatever path the template takes."""
    steps = family_steps(LEGACY, facts_for_family("qwen3"))
    conv = {"messages": [{"role": "user", "content": "U"},
                         {"role": "assistant", "content": "<think>x</think>y"},
                         {"role": "user", "content": "V"}]}
    want = "<u>U</u><a>y</a><u>V</u><a>"
    assert render(LEGACY, conv, family=steps.payload()) == want
    renders_everywhere(translate(LEGACY, family=steps), conv, want)


def test_deepseek_r1_goes_by_the_model_name_qwen3_by_the_family() -> None:
    assert family_steps(PLAIN, ModelFacts(model="deepseek-r1")).strip_think
    assert not family_steps(PLAIN, ModelFacts(family="deepseek-r1")).strip_think
    assert family_steps(PLAIN, ModelFacts(family="qwen3", model="x")).strip_think
    assert not family_steps(PLAIN, ModelFacts(family="qwen2")).strip_think


# --- PARSER and the config's capabilities -------------------------------------------------------

def test_a_parser_grants_its_capabilities() -> None:
    thinking = family_steps(PLAIN, ModelFacts(parser="qwen3-thinking")).payload()
    assert render(PLAIN, {"messages": USER, "think": "high"}, family=thinking) \
        == "[user:U]|true|high|true"
    tools = [{"type": "function", "function": {"name": "f"}}]
    coder = family_steps(PLAIN, ModelFacts(parser="qwen3-coder")).payload()
    assert render(PLAIN, {"messages": USER, "tools": tools}, family=coder) \
        == "[user:U]|false||false"
    with pytest.raises(CapabilityRefusal, match="does not support tools"):
        render(PLAIN, {"messages": USER, "tools": tools})
    unknown = family_steps(PLAIN, ModelFacts(parser="no-such-parser"))
    assert not unknown


# --- a chat without messages --------------------------------------------------------------------

def test_a_chat_without_messages_is_not_rendered_by_ollama() -> None:
    """ChatHandler answers a request without messages by loading the model (done reason
    "load"), after its capability checks and whatever the Modelfile would add."""
    with pytest.raises(NotRendered, match='done reason "load"') as info:
        render(PLAIN, {"messages": []}, modelfile_system="S")
    assert info.value.capability == "load"
    with pytest.raises(NotRendered):
        render(PLAIN, {})
    with pytest.raises(CapabilityRefusal, match="does not support thinking"):
        render(PLAIN, {"messages": [], "think": True})
    # Execute's answer, which a Jinja host renders for an empty list (the contract's lenient
    # convention), and fill-in-the-middle, which has no messages at all
    assert render(PLAIN, {"messages": []}, lenient=True) == "|false||false"
    assert render(PLAIN, {"messages": []}, server=False) == "|false||false"
    assert render("{{ .Prompt }}|{{ .Suffix }}", {"prompt": "P", "suffix": "S"}) == "P|S"


def test_render_says_a_chat_without_messages_is_not_rendered(tmp_path: Path) -> None:
    template = tmp_path / "t.gotmpl"
    template.write_text(PLAIN, encoding="utf-8")
    empty = tmp_path / "c.json"
    empty.write_text('{"messages": []}', encoding="utf-8")
    result = CliRunner().invoke(cli, ["render", str(template), str(empty)])
    assert result.exit_code == 1
    assert 'only loads the model (done reason "load")' in result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


# --- the commands --------------------------------------------------------------------------------

def _gpt_oss_store(tmp_path: Path, config: dict[str, Any]) -> Path:
    from gotmpl2jinja.ollama.modelfile import parse_modelfile

    template = parse_modelfile(GPT_OSS.read_bytes(), name="gpt-oss.Modelfile").template
    root = tmp_path / "models"
    layers = [layer(root, "model", b"GGUF\x03\x00\x00\x00fake weights"),
              layer(root, "template", template.encode())]
    install(root, "manifests/registry.ollama.ai/library/gpt-oss/20b",
            manifest_bytes(root, layers, config))
    return root


def test_convert_an_installed_gpt_oss_honours_reasoning_effort(tmp_path: Path) -> None:
    root = _gpt_oss_store(tmp_path, {"model_format": "gguf", "model_family": "gptoss"})
    out = tmp_path / "chat_template.jinja"
    result = CliRunner().invoke(cli, ["convert", "ollama:gpt-oss:20b", "--models", str(root),
                                      "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    assert "--family" not in result.stderr  # the family is known from the config
    assert "checked: renders what Ollama renders" in result.stderr  # family applied on both
    jinja = out.read_text(encoding="utf-8")
    conv = {"messages": USER}
    for engine in get_engines(raw_engine_names()):
        for think, level in (("high", "high"), ("max", "high"), ("low", "low"), (None, "medium")):
            context = jinja_context({**conv, **({"think": think} if think else {})})
            assert f"Reasoning: {level}" in engine.render(jinja, context), (engine.name, think)


def test_a_plain_family_template_prints_one_notice(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["convert", "--no-check", str(GPT_OSS)])
    assert result.exit_code == 0, result.stderr
    notices = [line for line in result.stderr.splitlines() if "--family" in line]
    assert len(notices) == 1 and notices[0].endswith("say so with --family gpt-oss")
    assert "reasoning_effort" not in result.stdout.split("think_level", 1)[-1].split("\n")[0]
    said = CliRunner().invoke(cli, ["convert", "--no-check", "--family", "gpt-oss", str(GPT_OSS)])
    assert said.exit_code == 0, said.stderr
    assert "--family" not in said.stderr
    assert "reasoning_effort == 'max'" in said.stdout
    bad = CliRunner().invoke(cli, ["convert", "--no-check", "--family", "gptos", str(GPT_OSS)])
    assert bad.exit_code == 1 and "unknown family 'gptos'" in bad.stderr


@pytest.mark.parametrize("command", [["convert"], ["verify", "--cases", "1"], ["render"]])
def test_a_renderer_modelfile_is_refused_naming_the_renderer(tmp_path: Path,
                                                             command: list[str]) -> None:
    modelfile = tmp_path / "Modelfile"
    modelfile.write_text("FROM qwen3-coder:30b\nRENDERER qwen3-coder\nPARSER qwen3-coder\n"
                         "TEMPLATE {{ .Prompt }}\n", encoding="utf-8")
    args = [*command, str(modelfile)]
    if command == ["render"]:
        conversation = tmp_path / "c.json"
        conversation.write_text(json.dumps({"messages": USER}), encoding="utf-8")
        args.append(str(conversation))
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    said = result.stdout + result.stderr  # verify reports a file's error on its own line
    assert "RENDERER 'qwen3-coder'" in said and "built-in" in said
    assert "Traceback" not in said


def test_an_installed_model_with_a_renderer_is_refused(tmp_path: Path) -> None:
    root = _gpt_oss_store(tmp_path, {"model_family": "gptoss", "renderer": "gpt-oss"})
    result = CliRunner().invoke(cli, ["convert", "ollama:gpt-oss:20b", "--models", str(root)])
    assert result.exit_code == 1
    assert "RENDERER 'gpt-oss'" in result.stderr and "Traceback" not in result.stderr


def test_the_modelfile_command_prints_the_renderer(tmp_path: Path) -> None:
    modelfile = tmp_path / "Modelfile"
    modelfile.write_text("FROM x\nRENDERER qwen3-coder\nTEMPLATE {{ .Prompt }}\n",
                         encoding="utf-8")
    result = CliRunner().invoke(cli, ["modelfile", str(modelfile), "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["renderer"] == "qwen3-coder"
    assert "warning: RENDERER 'qwen3-coder': Ollama renders this model with that built-in" \
        in result.stderr


def test_verify_and_render_take_the_family(tmp_path: Path) -> None:
    template = tmp_path / "harmony.gotmpl"
    template.write_text(HARMONY, encoding="utf-8")
    conversation = tmp_path / "c.json"
    conversation.write_text(json.dumps({"messages": USER, "think": "max"}), encoding="utf-8")
    runner = CliRunner()
    said = runner.invoke(cli, ["render", "--family", "gpt-oss", str(template), str(conversation)])
    assert said.exit_code == 0, said.stderr
    assert said.stdout == "<|start|>[user:U]<|end|>|true|high|true"
    refused = runner.invoke(cli, ["render", str(template), str(conversation)])
    assert refused.exit_code == 1 and "does not support thinking" in refused.stderr
    checked = runner.invoke(cli, ["verify", "--family", "gpt-oss", "--cases", "20",
                                  "--engines", "jinja2", str(template)])
    assert checked.exit_code == 0, checked.stdout + checked.stderr


def test_a_modelfile_parser_reaches_both_sides(tmp_path: Path) -> None:
    """PARSER alone keeps the template (Ollama still renders it) and grants its parser's
    capabilities: qwen3-thinking's thinking makes an absent think true, on Go and in the Jinja."""
    modelfile = tmp_path / "Modelfile"
    modelfile.write_text(f"FROM x.gguf\nPARSER qwen3-thinking\nTEMPLATE \"\"\"{PLAIN}\"\"\"\n",
                         encoding="utf-8")
    conversation = tmp_path / "c.json"
    conversation.write_text(json.dumps({"messages": USER}), encoding="utf-8")
    runner = CliRunner()
    rendered = runner.invoke(cli, ["render", str(modelfile), str(conversation)])
    assert rendered.exit_code == 0, rendered.stderr
    assert rendered.stdout == "[user:U]|true|medium|true"
    converted = runner.invoke(cli, ["convert", "--no-bos", str(modelfile)])
    assert converted.exit_code == 0, converted.stderr
    assert "checked: renders what Ollama renders" in converted.stderr
    renders_everywhere(converted.stdout, {"messages": USER}, "[user:U]|true|medium|true")
