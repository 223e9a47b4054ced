"""The convert command as a user meets it: every input kind, every format, no overwrite, and
one-line errors with a place (never a traceback)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gotmpl2jinja.cli.main import cli
from gotmpl2jinja.emit import translate
from gotmpl2jinja.engines.registry import get_engines
from gotmpl2jinja.ollama.reference import render
from gotmpl2jinja.verify.conversation import jinja_context

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = FIXTURES / "corpus"
CHATML = CORPUS / "ollama" / "template" / "chatml.gotmpl"
SEED = FIXTURES / "seeds" / "002_qwen-style.gotmpl"


def run(*args: str, input: str | None = None):  # noqa: A002 - click's name
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def test_convert_prints_the_translation_byte_for_byte() -> None:
    result = run("convert", str(SEED))
    assert result.exit_code == 0, result.output
    assert result.stdout == translate(SEED.read_text(), name=str(SEED))


def test_convert_reads_standard_input() -> None:
    result = run("convert", "-", input=CHATML.read_text())
    assert result.exit_code == 0
    assert result.stdout == translate(CHATML.read_text(), name="<stdin>")


def test_convert_writes_a_file_and_never_overwrites_without_force(tmp_path: Path) -> None:
    out = tmp_path / "chat_template.jinja"
    first = run("convert", str(CHATML), "-o", str(out))
    assert first.exit_code == 0
    written = out.read_bytes()
    assert written == translate(CHATML.read_text(), name=str(CHATML)).encode()

    out.write_text("keep me")
    refused = run("convert", str(CHATML), "-o", str(out))
    assert refused.exit_code == 1
    assert "already exists" in refused.stderr
    assert out.read_text() == "keep me"

    forced = run("convert", str(CHATML), "-o", str(out), "--force")
    assert forced.exit_code == 0
    assert out.read_bytes() == written


def test_convert_lmstudio_config_carries_template_and_stop_strings(tmp_path: Path) -> None:
    modelfile = tmp_path / "Modelfile"
    modelfile.write_text(
        'FROM m.gguf\nTEMPLATE """' + CHATML.read_text() + '"""\n'
        "PARAMETER stop <|im_start|>\nPARAMETER stop <|im_end|>\n"
    )
    out = tmp_path / "config.json"
    result = run("convert", str(modelfile), "--format", "lmstudio", "-o", str(out))
    assert result.exit_code == 0, result.stderr
    config = json.loads(out.read_text())
    assert config["type"] == "manual"
    assert config["stopStrings"] == ["<|im_start|>", "<|im_end|>"]
    assert "<|im_start|>" in config["jinjaPromptTemplate"]["template"]


def test_convert_modelfile_applies_system_like_ollama(tmp_path: Path) -> None:
    """A Modelfile's SYSTEM reaches the prompt exactly as Ollama's server adds it."""
    modelfile = tmp_path / "Modelfile"
    modelfile.write_text(
        'FROM m.gguf\nTEMPLATE """' + CHATML.read_text() + '"""\nSYSTEM """Be brief."""\n'
    )
    result = run("convert", str(modelfile))
    assert result.exit_code == 0, result.stderr
    conversation = {"messages": [{"role": "user", "content": "Hi"}]}
    expected = render(CHATML.read_text(), conversation, modelfile_system="Be brief.")
    assert "Be brief." in expected
    for engine in get_engines(None):
        assert engine.render(result.stdout, jinja_context(conversation)) == expected, engine.name


def test_convert_invalid_template_is_one_line_with_its_place(tmp_path: Path) -> None:
    bad = tmp_path / "bad.gotmpl"
    bad.write_text("ok\n{{ if .System }}\nno end")
    result = run("convert", str(bad))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"{bad}:")
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_convert_missing_file_says_so() -> None:
    result = run("convert", "no/such/template.gotmpl")
    assert result.exit_code == 1
    assert "no/such/template.gotmpl" in result.stderr
    assert "Traceback" not in result.stderr


def test_convert_non_jinja_format_needs_an_output_path() -> None:
    result = CliRunner().invoke(cli, ["convert", str(CHATML), "--format", "hf"])
    assert result.exit_code == 2
    assert "-o" in result.stderr
