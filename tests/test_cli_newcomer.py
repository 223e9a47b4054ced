"""The command line as a newcomer meets it (issue 41): every command reads its INPUT the same
way, words a missing file the same way, places errors as FILE:LINE:COL, refuses the same
conversations, checks its output before working, and says what it did once."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from gotmpl2jinja.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
CHATML = ROOT / "fixtures" / "corpus" / "ollama" / "template" / "chatml.gotmpl"
HELLO = {"messages": [{"role": "user", "content": "Hi"}]}
NOW = "2026-08-21T12:00:00Z"
#: A Modelfile whose TEMPLATE starts on line 3, column 13, with a SYSTEM line Ollama's server
#: puts first when the conversation has no system message.
MODELFILE = ('FROM llama3\n'
             'SYSTEM "Be brief."\n'
             'TEMPLATE """{{ range .Messages }}<{{ .Role }}>{{ .Content }}\n{{ end }}"""\n')


def run(*args: str, input: str | None = None) -> Result:  # noqa: A002 - click's name
    return CliRunner().invoke(cli, list(args), input=input)


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def no_traceback(result: Result) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert "Traceback" not in result.output


# ---------------------------------------------------------------------------------------------
# 1. render reads a Modelfile as convert and verify do


def test_render_reads_a_modelfile_with_its_system_rule(tmp_path: Path) -> None:
    modelfile = tmp_path / "Modelfile"
    modelfile.write_text(MODELFILE)
    conv = write_json(tmp_path / "c.json", HELLO)
    result = run("render", str(modelfile), str(conv), "--now", NOW)
    # Ollama: the SYSTEM line leads (no system message in the conversation), then the turns
    assert result.exit_code == 0, result.output
    assert result.stdout == "<system>Be brief.\n<user>Hi\n"


def test_render_as_template_reads_the_whole_file(tmp_path: Path) -> None:
    modelfile = tmp_path / "Modelfile"
    modelfile.write_text(MODELFILE)
    conv = write_json(tmp_path / "c.json", HELLO)
    result = run("render", "--as", "template", str(modelfile), str(conv), "--now", NOW)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith('FROM llama3\nSYSTEM "Be brief."\nTEMPLATE """<user>Hi\n')


# ---------------------------------------------------------------------------------------------
# 5. a null content is refused by every command that reads a conversation


def test_render_refuses_a_null_content(tmp_path: Path) -> None:
    conv = write_json(tmp_path / "c.json", {"messages": [{"role": "user", "content": None}]})
    result = run("render", str(CHATML), str(conv))
    assert result.exit_code == 1
    assert result.stderr == "conversation: messages[0].content: must be a string, not null\n"
    no_traceback(result)


# ---------------------------------------------------------------------------------------------
# 6. one wording for a missing file; FILE:LINE:COL for Go's syntax errors too


@pytest.mark.parametrize("args", [
    ("parse", "{missing}"), ("render", "{missing}", "{conv}"), ("render", "{chatml}", "{missing}"),
    ("convert", "{missing}"), ("verify", "{missing}"), ("modelfile", "{missing}"),
    ("sweep", "{missing}"), ("migrate", "{missing}", "{out}"),
], ids=lambda a: " ".join(a[:1] + tuple(x.strip("{}") for x in a[1:])))
def test_a_missing_file_is_worded_one_way(tmp_path: Path, args: tuple[str, ...]) -> None:
    missing = tmp_path / "missing.gotmpl"
    values = {"missing": str(missing), "conv": str(write_json(tmp_path / "c.json", HELLO)),
              "chatml": str(CHATML), "out": str(tmp_path / "out")}
    result = run(*[a.format(**values) for a in args])
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines()[-1] == f"{missing}: no such file or directory"
    no_traceback(result)


def test_render_places_a_go_syntax_error(tmp_path: Path) -> None:
    template = tmp_path / "bad.gotmpl"
    template.write_text("hello\n{{ .Prompt }")
    conv = write_json(tmp_path / "c.json", HELLO)
    rendered = run("render", str(template), str(conv))
    converted = run("convert", str(template))
    assert rendered.exit_code == converted.exit_code == 1
    assert rendered.stderr == converted.stderr
    assert rendered.stderr.startswith(f"{template}:2:12: ")


def test_render_places_a_syntax_error_in_the_modelfile(tmp_path: Path) -> None:
    modelfile = tmp_path / "Modelfile"
    modelfile.write_text('FROM x\n\nTEMPLATE """a\n {{ .Prompt }\n"""\n')
    conv = write_json(tmp_path / "c.json", HELLO)
    result = run("render", str(modelfile), str(conv))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"{modelfile}:4:13: ")


# ---------------------------------------------------------------------------------------------
# 12. --help: whole summaries, and every option says what it does


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name, command in group.commands.items():
        found.append((prefix + name, command))
        if isinstance(command, click.Group):
            found.extend(_commands(command, prefix + name + " "))
    return found


def test_top_level_help_does_not_cut_summaries() -> None:
    result = run("--help")
    assert result.exit_code == 0
    commands = result.stdout.split("Commands:")[1]
    assert "..." not in commands and "…" not in commands
    for name, command in _commands(cli):
        if " " not in name:  # the summary is the docstring's first sentence, whole
            first = " ".join(command.get_short_help_str(limit=10_000).split())
            assert first.endswith("."), (name, first)
            assert first in " ".join(commands.split()), name


@pytest.mark.parametrize("name", [n for n, _ in _commands(cli)])
def test_every_option_has_help(name: str) -> None:
    command = dict(_commands(cli))[name]
    bare = [p.name for p in command.params
            if isinstance(p, click.Option) and not p.hidden and not p.help]
    assert bare == [], f"{name}: options without help text: {bare}"


# ---------------------------------------------------------------------------------------------
# 10. engines install says each step once (an engine and its -server context share a driver)


def test_a_shared_setup_step_runs_and_reports_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from gotmpl2jinja.engines import registry

    lines: list[str] = []

    def build(progress: Callable[[str], None]) -> None:
        progress("cpp: ready (driver)")

    specs = {name: registry.EngineSpec(name, lambda: None, lambda: None, build)  # type: ignore[arg-type,return-value]
             for name in ("cpp", "cpp-server")}
    monkeypatch.setattr(registry, "ENGINES", specs)
    states, failed = registry.setup_engines(None, lines.append)
    assert lines == ["cpp: ready (driver)"]
    assert states == {"cpp": None, "cpp-server": None} and failed == []


def test_a_shared_setup_step_that_fails_fails_both(monkeypatch: pytest.MonkeyPatch) -> None:
    from gotmpl2jinja.engines import registry

    lines: list[str] = []

    def build(progress: Callable[[str], None]) -> None:
        raise registry.EngineError("no compiler")

    specs = {name: registry.EngineSpec(name, lambda: None, lambda: "not built", build)  # type: ignore[arg-type,return-value]
             for name in ("cpp", "cpp-server")}
    monkeypatch.setattr(registry, "ENGINES", specs)
    _, failed = registry.setup_engines(None, lines.append)
    assert lines == ["cpp: setup failed: no compiler"]
    assert failed == ["cpp", "cpp-server"]
