"""migrate: real corpus files in a scratch SRC, converted, verified on Go, written and reported.

Verification runs the real harness (Go reference renderer + every engine) with few cases to
stay quick. Items that depend on the translator's progress (legacy templates) are checked for
consistency — refused with the translator's reason, or written and verified — not pinned.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import CORPUS
from test_store import install, layer, manifest_bytes

from gotmpl2jinja.batch import migrate as batch
from gotmpl2jinja.batch.migrate import (
    DIVERGED,
    INVALID_INPUT,
    NOT_TRANSLATABLE,
    VERIFIED,
    WRITE_FAILED,
    MigrateError,
    discover,
    migrate,
)
from gotmpl2jinja.cli.main import cli
from gotmpl2jinja.engines.ollama_jinja import THINKING_DROPPED
from gotmpl2jinja.errors import TranslationError
from gotmpl2jinja.ollama.source import Source

AHNAF = CORPUS / "ahnafnafee__modelfile-syntax" / "syntaxes" / "tests"
UNSLOTH = CORPUS / "unslothai__unsloth" / "modelfiles"
EXAMPLES = CORPUS / "ollama" / "historical" / (
    "examples-modelfiles@e3b090dbc561d86ee2ab5c006fec9c257a3b99f0")
REPLIKATION = CORPUS / "replikation__modelfiles" / "opencode"
CASES = 5


def _copy(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dest)


@pytest.fixture()
def src(tmp_path: Path) -> Path:
    """A small SRC mixing every kind of input, in nested folders."""
    root = tmp_path / "src"
    _copy(AHNAF / "template-qwen.modelfile", root / "ahnaf" / "template-qwen.modelfile")
    _copy(AHNAF / "messages.modelfile", root / "ahnaf" / "messages.modelfile")
    _copy(CORPUS / "ollama" / "template" / "chatml.gotmpl", root / "builtin" / "chatml.gotmpl")
    _copy(EXAMPLES / "modelfile-mario" / "Modelfile", root / "examples" / "mario" / "Modelfile")
    _copy(REPLIKATION / "gemma4__12b-q4", root / "user" / "gemma4__12b-q4")
    _copy(CORPUS / "ollama" / "LICENSE", root / "LICENSE")
    _copy(CORPUS / "ahnafnafee__modelfile-syntax" / "SOURCE.md", root / "SOURCE.md")
    return root


def _by_input(report: batch.MigrationReport) -> dict[str, batch.Item]:
    return {item.input: item for item in report.items}


def _consistent_legacy(item: batch.Item, out: Path) -> None:
    """A `{{ .Prompt }}` template: refused as legacy until the translator supports it."""
    if item.status == NOT_TRANSLATABLE:
        assert item.reason and "legacy" in item.reason
        assert item.output is None
    else:
        assert item.status == VERIFIED and item.output and (out / item.output).is_file()


def test_discover_finds_templates_and_modelfiles_only(src: Path) -> None:
    found = [p.relative_to(src).as_posix() for p in discover(src)]
    assert found == [
        "ahnaf/messages.modelfile", "ahnaf/template-qwen.modelfile", "builtin/chatml.gotmpl",
        "examples/mario/Modelfile", "user/gemma4__12b-q4",
    ]


def test_discover_on_the_ollama_corpus_skips_expected_outputs() -> None:
    """`template/testdata/x.gotmpl/` are folders of extensionless expected outputs."""
    found = discover(CORPUS / "ollama")
    rel = [p.relative_to(CORPUS / "ollama").as_posix() for p in found]
    assert not any("/testdata/" in r for r in rel)
    assert sum(r.startswith("template/") for r in rel) == 20
    assert sum(r.endswith("/Modelfile") for r in rel) == 12
    assert len(rel) == 20 + 18 + 9 + 12


def test_migrate_mixed_folder(src: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = migrate(src, out, cases=CASES)
    items = _by_input(report)
    assert list(items) == [p.relative_to(src).as_posix() for p in discover(src)]

    qwen = items["ahnaf/template-qwen.modelfile"]
    assert (qwen.status, qwen.kind, qwen.cases) == (VERIFIED, "modelfile", CASES)
    assert qwen.output == "ahnaf/template-qwen.modelfile.jinja"
    written = (out / qwen.output).read_text(encoding="utf-8")
    assert "Ollama's Modelfile rule" in written and "You are Qwen, created by Alibaba" in written

    chatml = items["builtin/chatml.gotmpl"]
    assert (chatml.status, chatml.output) == (VERIFIED, "builtin/chatml.jinja")
    assert (out / "builtin" / "chatml.jinja").is_file()

    bad = items["ahnaf/messages.modelfile"]
    assert bad.status == INVALID_INPUT and bad.output is None
    assert bad.reason == ('ahnaf/messages.modelfile:11:14: message role must be one of '
                          '"system", "user", or "assistant"')

    _consistent_legacy(items["examples/mario/Modelfile"], out)
    gemma = items["user/gemma4__12b-q4"]
    _consistent_legacy(gemma, out)
    assert any("no TEMPLATE" in w for w in gemma.warnings)

    assert not report.ok
    assert not (out / "ahnaf" / "messages.modelfile.jinja").exists()


def test_report_files(src: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = migrate(src, out, cases=CASES)
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert data == json.loads(json.dumps(report.to_json()))
    assert data["counts"][INVALID_INPUT] == 1 and data["ok"] is False
    assert sum(data["counts"].values()) == len(data["items"]) == 5
    assert data["command"] == (f"gotmpl2jinja migrate {src} {out} --format jinja --cases {CASES} "
                               "--seed 0 --force")
    md = (out / "report.md").read_text(encoding="utf-8")
    lines = md.splitlines()
    assert lines[0] == "# Migration report"
    assert lines[2] == f"Regenerate: `{data['command']}`"
    assert "| invalid input | 1 | Ollama itself would reject the input" in md
    assert ("| `ahnaf/template-qwen.modelfile` | modelfile | converted+verified | "
            "`ahnaf/template-qwen.modelfile.jinja` |") in lines
    assert any(line.startswith("| `ahnaf/messages.modelfile` |  | invalid input | "
                               "ahnaf/messages.modelfile:11:14: message role") for line in lines)


def test_nothing_is_overwritten_without_force(src: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    migrate(src, out, cases=CASES)
    written = out / "builtin" / "chatml.jinja"
    written.write_text("mine", encoding="utf-8")
    (out / "report.md").write_text("my notes", encoding="utf-8")
    with pytest.raises(MigrateError, match="already exist.*nothing was written.*--force"):
        migrate(src, out, cases=CASES)
    assert written.read_text(encoding="utf-8") == "mine"
    assert (out / "report.md").read_text(encoding="utf-8") == "my notes"
    migrate(src, out, cases=CASES, force=True)
    assert written.read_text(encoding="utf-8").startswith("{#- Translated by gotmpl2jinja")
    assert (out / "report.md").read_text(encoding="utf-8").startswith("# Migration report")


def test_report_alone_is_protected_too(tmp_path: Path) -> None:
    src = tmp_path / "src"
    _copy(CORPUS / "ollama" / "template" / "chatml.gotmpl", src / "chatml.gotmpl")
    report = tmp_path / "docs" / "m.md"
    report.parent.mkdir()
    report.with_suffix(".json").write_text("{}", encoding="utf-8")
    with pytest.raises(MigrateError, match="m.json already exist"):
        migrate(src, tmp_path / "out", cases=CASES, report=report)
    assert not (tmp_path / "out").exists()


def test_untranslatable_is_reported_with_its_place_in_the_modelfile(
        src: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The translator's TEMPLATE position becomes a Modelfile position (TEMPLATE is on line 3
    of template-qwen.modelfile, after `TEMPLATE \"\"\"`, so template 1:4 is Modelfile 3:16)."""
    def refuse(source: Source, bos: object = None) -> str:
        raise TranslationError("nothing like this in Jinja", line=1, col=4, name=source.name)

    monkeypatch.setattr(batch, "convert_source", refuse)
    items = _by_input(migrate(src, tmp_path / "out", cases=CASES))
    item = items["ahnaf/template-qwen.modelfile"]
    assert item.status == NOT_TRANSLATABLE and item.output is None
    assert item.reason == "ahnaf/template-qwen.modelfile:3:16: nothing like this in Jinja"
    assert items["builtin/chatml.gotmpl"].reason == (
        "builtin/chatml.gotmpl:1:4: nothing like this in Jinja")


def test_divergence_is_reported_and_not_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A translation that is wrong by one character is caught by the real harness."""
    src = tmp_path / "src"
    _copy(CORPUS / "ollama" / "template" / "chatml.gotmpl", src / "chatml.gotmpl")
    real = batch.convert_source

    def off_by_one(source: Source, bos: object = None) -> str:
        return real(source).replace("<|im_start|>", "<|im_begin|>", 1)

    monkeypatch.setattr(batch, "convert_source", off_by_one)
    report = migrate(src, tmp_path / "out", cases=CASES)
    item = report.items[0]
    assert item.status == DIVERGED and item.output is None
    assert item.divergence is not None and item.divergence["engine"] == "jinja2"
    assert "<|im_begin|>" in item.divergence["jinja_output"]
    assert not (tmp_path / "out" / "chatml.jinja").exists()
    md = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert "| diverged | 1 | translated, but" in md


def test_lmstudio_and_hf_formats_carry_the_stop_strings(tmp_path: Path) -> None:
    src = tmp_path / "src"
    _copy(UNSLOTH / "qwen-25.Modelfile", src / "qwen-25.Modelfile")
    migrate(src, tmp_path / "lm", fmt="lmstudio", cases=CASES)
    config = json.loads((tmp_path / "lm" / "qwen-25.Modelfile.lmstudio.json").read_text("utf-8"))
    assert config["stopStrings"] == ["<|im_end|>", "<|endoftext|>"]
    assert "Ollama's Modelfile rule" in config["jinjaPromptTemplate"]["template"]
    migrate(src, tmp_path / "hf", fmt="hf", cases=CASES)
    hf = json.loads((tmp_path / "hf" / "qwen-25.Modelfile.tokenizer_config.json")
                    .read_text("utf-8"))
    assert hf["chat_template"] == config["jinjaPromptTemplate"]["template"]


def test_out_inside_src_is_not_migrated_again(tmp_path: Path) -> None:
    src = tmp_path / "src"
    _copy(CORPUS / "ollama" / "template" / "chatml.gotmpl", src / "chatml.gotmpl")
    _copy(CORPUS / "ollama" / "template" / "alpaca.gotmpl", src / "out" / "alpaca.gotmpl")
    report = migrate(src, src / "out", cases=CASES)
    assert [i.input for i in report.items] == ["chatml.gotmpl"]


def _fake_store(root: Path) -> Path:
    template = (CORPUS / "ollama" / "template" / "chatml.gotmpl").read_bytes()
    layers = [layer(root, "model", b"GGUF\x03\x00\x00\x00w"), layer(root, "template", template),
              layer(root, "system", b"Be brief."),
              layer(root, "params", b'{"stop":["<|im_end|>"]}\n')]
    install(root, "manifests/registry.ollama.ai/library/tiny/1b",
            manifest_bytes(root, layers, {"model_format": "gguf"}))
    return root


def test_ollama_store_models_are_migrated(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    store = _fake_store(tmp_path / "models")
    out = tmp_path / "out"
    report = migrate(src, out, cases=CASES, store=str(store))
    (item,) = report.items
    assert (item.input, item.kind, item.status) == ("ollama:tiny:1b", "ollama", VERIFIED)
    assert item.output == "ollama-store/tiny/1b.jinja"
    assert "Be brief." in (out / item.output).read_text(encoding="utf-8")
    assert report.ok


def test_cli_exit_codes_and_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = tmp_path / "good"
    _copy(AHNAF / "template-qwen.modelfile", good / "template-qwen.modelfile")
    runner = CliRunner()
    result = runner.invoke(cli, ["migrate", str(good), str(tmp_path / "o1"), "--cases", "3"])
    assert result.exit_code == 0, result.output
    assert "1 item(s): 1 converted+verified" in result.output

    again = runner.invoke(cli, ["migrate", str(good), str(tmp_path / "o1"), "--cases", "3"])
    assert again.exit_code == 1
    assert "already exist" in again.output and "Traceback" not in again.output

    bad = tmp_path / "bad"
    _copy(AHNAF / "messages.modelfile", bad / "messages.modelfile")
    result = runner.invoke(cli, ["migrate", str(bad), str(tmp_path / "o2"), "--json"])
    assert result.exit_code == 1
    assert json.loads(result.output)["items"][0]["status"] == INVALID_INPUT

    monkeypatch.setenv("OLLAMA_MODELS", str(_fake_store(tmp_path / "models")))
    result = runner.invoke(cli, ["migrate", str(good), str(tmp_path / "o3"), "--cases", "3",
                                 "--ollama-store"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "o3" / "ollama-store" / "tiny" / "1b.jinja").is_file()

    usage = runner.invoke(cli, ["migrate", str(good), str(tmp_path / "o4"), "--format", "gif"])
    assert usage.exit_code == 2


def test_gguf_migration_reports_ollamas_own_jinja_path_per_model(tmp_path: Path) -> None:
    """Issue 40: each model's GGUF is written with the template set, and the report says
    whether Ollama's own Jinja path (engine ollama-jinja) gives the Go path's bytes, naming and
    counting the kinds its conversion makes impossible (the seed's Jinja reads the thinking
    Ollama does not send); a bare template has no GGUF to write into."""
    from gguf import GGUFReader
    from test_formats import kv_values, make_gguf

    root = tmp_path / "models"
    weights = tmp_path / "w.gguf"
    make_gguf(weights)
    seed = (CORPUS.parent / "seeds" / "002_qwen-style.gotmpl").read_bytes()
    install(root, "manifests/registry.ollama.ai/library/qwenish/1b",
            manifest_bytes(root, [layer(root, "model", weights.read_bytes()),
                                  layer(root, "template", seed)], {"model_format": "gguf"}))
    src = tmp_path / "src"
    src.mkdir()
    (src / "bare.gotmpl").write_bytes(seed)
    out = tmp_path / "out"
    report = migrate(src, out, fmt="gguf", cases=60, store=str(root),
                     engines=["jinja2"], skipped={})
    assert report.engines == ["jinja2", "ollama-jinja"]
    bare, model = _by_input(report)["bare.gotmpl"], _by_input(report)["ollama:qwenish:1b"]
    assert model.status == VERIFIED and model.output == "ollama-store/qwenish/1b.gguf"
    assert "<|im_start|>" in str(kv_values(GGUFReader(out / model.output))[
        "tokenizer.chat_template"])
    found = model.ollama_jinja
    assert found is not None and found["same_bytes"] and found["compared"] > 0
    assert found["out_of_scope"][THINKING_DROPPED] > 0
    assert bare.status == WRITE_FAILED and "no GGUF to write into: a bare template" in str(
        bare.reason)
    assert bare.ollama_jinja is not None and bare.ollama_jinja["same_bytes"]
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "## Ollama's own Jinja path" in markdown
    assert f"{THINKING_DROPPED} {found['out_of_scope'][THINKING_DROPPED]}" in markdown
    saved = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert {i["input"]: i["ollama_jinja"]["same_bytes"] for i in saved["items"]} == {
        "bare.gotmpl": True, "ollama:qwenish:1b": True}
