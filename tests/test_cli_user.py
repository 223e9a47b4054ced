"""The command line as a user meets it after `pip install` (issue 49): no checkout defaults
(`sweep` and `flags` ask for FOLDERS like any command with a required argument), `coverage`
skips an unavailable engine with one line as `verify` does, and `--help` lists the developers'
commands apart from the user's."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from gotmpl2jinja.cli.main import DEVELOPER_COMMANDS, cli


@pytest.mark.parametrize("command", ["sweep", "flags"])
def test_without_folders_the_command_asks_for_them(tmp_path: Path, command: str) -> None:
    """In an empty folder, as from a pip install: a usage error (exit 2) naming FOLDERS, never
    a checkout's fixtures/ nor a traceback."""
    done = subprocess.run([sys.executable, "-m", "gotmpl2jinja", command], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        f"Usage: gotmpl2jinja {command} [OPTIONS] FOLDERS...",
        f"Try 'gotmpl2jinja {command} --help' for help.",
        "",
        "Error: Missing argument 'FOLDERS...'.",
    ]


@pytest.mark.parametrize("command", ["sweep", "flags"])
def test_a_missing_folder_is_the_one_wording(tmp_path: Path, command: str) -> None:
    missing = tmp_path / "nowhere"
    result = CliRunner().invoke(cli, [command, str(missing)])
    assert result.exit_code == 1, result.output
    assert result.output == f"{missing}: no such file or directory\n"


def test_flags_still_tables_the_folders_given(tmp_path: Path) -> None:
    template = tmp_path / "chatml.gotmpl"
    template.write_text("{{ range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}"
                        "<|im_end|>\n{{ end }}<|im_start|>assistant\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["flags", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == "| chatml.gotmpl | yes | yes | yes | |"


def test_coverage_skips_an_unavailable_engine_with_one_line_and_writes_the_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every raw engine but jinja2 made unavailable (the same as one not set up here); the
    table is cut to the nullary functions' cells so that the test runs in seconds."""
    from gotmpl2jinja.batch import coverage as covering
    from gotmpl2jinja.engines import registry

    raw = registry.raw_engine_names()
    for name in raw:
        if name != "jinja2":
            spec = registry.ENGINES[name]
            monkeypatch.setitem(registry.ENGINES, name, dataclasses.replace(
                spec, probe=lambda: "not set up here (this test)"))
            monkeypatch.delitem(registry._instances, name, raising=False)
    whole = covering.table
    monkeypatch.setattr(covering, "table", lambda **kw: whole(**kw, groups=()))
    target = tmp_path / "x.md"
    result = CliRunner().invoke(cli, ["coverage", "-o", str(target), "--cases", "1"])
    assert result.exit_code == 0, result.output
    skipped = "; ".join(f"{n} (not set up here (this test))" for n in raw if n != "jinja2")
    lines = result.stderr.splitlines()
    assert lines[0] == f"engines: jinja2; skipped: {skipped}"
    assert [line for line in lines if "skipped" in line] == [lines[0]]  # one line names them
    assert lines[-1] == f"2 cells: 2 exact, 0 refused. Wrote {target}."
    table = target.read_text(encoding="utf-8")
    assert "| `currentDate` |" in table and "| `yesterdayDate` |" in table, table


def test_coverage_with_require_all_engines_refuses_a_missing_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gotmpl2jinja.engines import registry

    spec = registry.ENGINES["minijinja-trim"]
    monkeypatch.setitem(registry.ENGINES, "minijinja-trim", dataclasses.replace(
        spec, probe=lambda: "gone (this test)"))
    monkeypatch.delitem(registry._instances, "minijinja-trim", raising=False)
    result = CliRunner().invoke(cli, ["coverage", "-o", str(tmp_path / "x.md"),
                                      "--require-all-engines"])
    assert result.exit_code == 1
    assert "minijinja-trim: gone (this test)" in result.output
    assert not (tmp_path / "x.md").exists()


def test_help_lists_the_developer_commands_in_their_own_section() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    head, _, developer = result.output.partition("\nDeveloper commands")
    assert developer, result.output
    user = head[head.index("\nCommands:"):]

    def names(section: str) -> set[str]:
        return {line.split()[0] for line in section.splitlines()[1:]
                if line.startswith("  ") and not line.startswith("   ")}

    assert names(developer) == set(DEVELOPER_COMMANDS) == {"coverage", "flags", "sweep"}
    assert {"convert", "verify", "migrate", "compare", "render"} <= names(user)
    assert not names(user) & set(DEVELOPER_COMMANDS)
