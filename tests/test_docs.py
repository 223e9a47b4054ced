"""The documentation says what the code does (issue 49): every command the README and the task
guides show is run and prints what the page shows, every relative link of README.md,
CHANGELOG.md and docs/*.md resolves, and docs/cli.md is the commands' own `--help`.

An example is a ```console block: `$ COMMAND` lines (a heredoc's lines belong to its command),
each followed by what it prints, standard output and standard error as a terminal shows them.
In what a page shows, a line that starts with `…` stands for any number of lines left out
(the page says which), and a line that ends with `…` for a line that starts with the text
before it (an engine list, say, which depends on the engines set up). A command exits 0 unless
its line ends with `# exit N`. Each block runs in one shell, in a fresh folder that holds the
checkout's `fixtures/`, with this environment's `gotmpl2jinja` first on PATH.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The pages whose commands are run: the README and the task guides.
GUIDES = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("docs/guide-*.md"))
RUN_PAGES = ["README.md", *GUIDES]
#: The pages whose relative links must resolve.
LINK_PAGES = ["README.md", "CHANGELOG.md",
              *sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("docs/*.md"))]
#: The quick start's `verify --example` shows a fresh machine's first run (the engines it
#: skips, the Go renderer being built): tests/test_readme.py holds its result line instead.
HELD_ELSEWHERE = {"gotmpl2jinja verify --example"}


@dataclass
class Step:
    command: str  # with a heredoc's lines
    shown: list[str]
    exit_code: int
    line: int  # in the page


def console_blocks(text: str) -> list[list[Step]]:
    """Each ```console block of a page as its steps."""
    blocks: list[list[Step]] = []
    lines = text.splitlines()
    at = 0
    while at < len(lines):
        if lines[at].strip() != "```console":
            at += 1
            continue
        at += 1
        steps: list[Step] = []
        while lines[at].strip() != "```":
            line = lines[at]
            if line.startswith("$ "):
                command, start = [line[2:]], at + 1
                heredoc = re.search(r"<<-?'?(\w+)'?", line)
                if heredoc:
                    while lines[at + 1] != heredoc.group(1):
                        at += 1
                        command.append(lines[at])
                    at += 1
                    command.append(lines[at])
                code = re.search(r"#\s*exit (\d+)", line)
                steps.append(Step("\n".join(command), [], int(code.group(1)) if code else 0,
                                  start))
            else:
                assert steps, f"output before any command, line {at + 1}: {line!r}"
                steps[-1].shown.append(line)
            at += 1
        blocks.append(steps)
    return blocks


def matches(shown: list[str], printed: list[str]) -> bool:
    """Whether the printed lines are what the page shows (`…` lines and `…` ends as above)."""
    if not shown:
        return not printed
    first, rest = shown[0], shown[1:]
    if first.startswith("…"):
        return any(matches(rest, printed[skip:]) for skip in range(len(printed) + 1))
    if not printed:
        return False
    line = printed[0]
    same = line.startswith(first[:-1]) if first.endswith("…") else line == first
    return same and matches(rest, printed[1:])


MARK = "@@gotmpl2jinja-docs-step@@"


def run_block(steps: list[Step], folder: Path) -> list[tuple[str, int]]:
    """Run a block's commands in one shell; each one's output (stdout and stderr in the order
    written) and exit code."""
    script = ["exec 2>&1"]
    for step in steps:
        script += [step.command, f"printf '\\n{MARK}%d\\n' $?"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "100",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", "\n".join(script)], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=1200)
    pieces = done.stdout.split(f"\n{MARK}")
    outputs = [pieces[0]] + [p.partition("\n")[2] for p in pieces[1:-1]]
    codes = [int(p.partition("\n")[0]) for p in pieces[1:]]
    results = list(zip(outputs, codes, strict=True))
    return results


def page_steps(page: str) -> list[Step]:
    """The steps of a page's examples, in the page's order (one shell runs them all, as a
    reader follows the page: a variable set in one block holds in the next)."""
    return [step for steps in console_blocks(ROOT.joinpath(page).read_text(encoding="utf-8"))
            if not any(s.command in HELD_ELSEWHERE for s in steps) for step in steps]


@pytest.mark.parametrize("page", RUN_PAGES)
def test_each_example_prints_what_its_page_shows(tmp_path: Path, page: str) -> None:
    steps = page_steps(page)
    assert steps, f"{page} shows no command"
    tmp_path.joinpath("fixtures").symlink_to(ROOT / "fixtures")
    results = run_block(steps, tmp_path)
    assert len(results) == len(steps)
    stale = []
    for step, (output, code) in zip(steps, results, strict=True):
        printed = output.removesuffix("\n").split("\n") if output else []
        if code != step.exit_code or not matches(step.shown, printed):
            stale.append(f"{page}:{step.line}: $ {step.command}\n(exit {code})\n{output}")
    assert not stale, "\n\n".join(stale)


def test_the_runner_can_tell_a_stale_example() -> None:
    """The matcher itself: elisions stand for what they say, nothing else passes."""
    assert matches(["a", "…  (2 cut)", "d"], ["a", "b", "c", "d"])
    assert matches(["engines: jinja2, …"], ["engines: jinja2, minijinja"])
    assert not matches(["a", "d"], ["a", "b", "d"])
    assert not matches(["engines: jinja2, …"], ["engines: minijinja"])
    assert not matches(["a"], ["a", "b"])
    blocks = console_blocks("```console\n$ echo hi   # exit 3\nhi\n$ cat <<'EOF'\nx\nEOF\nx\n```\n")
    assert [(s.command, s.shown, s.exit_code) for s in blocks[0]] == [
        ("echo hi   # exit 3", ["hi"], 3), ("cat <<'EOF'\nx\nEOF", ["x"], 0)]


def test_the_readme_and_five_task_guides_show_commands() -> None:
    assert len(GUIDES) >= 5, GUIDES
    assert all(page_steps(page) for page in RUN_PAGES)


# ---------------------------------------------------------------------------------------------
# links

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")


def headings_slugs(text: str) -> set[str]:
    """GitHub's anchors of a Markdown page's headings, and its explicit `<a id>` anchors."""
    slugs = set()
    for line in _outside_code(text).splitlines():
        heading = re.match(r"#{1,6}\s+(.*)", line)
        if heading:
            title = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower())
            slugs.add(title.replace(" ", "-"))
    slugs.update(re.findall(r'<a (?:id|name)="([^"]+)"', text))
    return slugs


def _outside_code(text: str) -> str:
    """The page without its fenced code blocks and code spans."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


@pytest.mark.parametrize("page", LINK_PAGES)
def test_every_relative_link_resolves(page: str) -> None:
    source = ROOT / page
    broken = []
    for found in LINK.finditer(_outside_code(source.read_text(encoding="utf-8"))):
        target = found.group(1) or found.group(2)
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        resolved = (source.parent / path) if path else source
        if not resolved.exists():
            broken.append(target)
        elif anchor and resolved.suffix == ".md" and anchor not in headings_slugs(
                resolved.read_text(encoding="utf-8")):
            broken.append(target)
    assert not broken, f"{page}: {broken}"


# ---------------------------------------------------------------------------------------------
# docs/cli.md


def test_the_cli_reference_is_every_commands_own_help() -> None:
    from gotmpl2jinja.cli.reference import COMMAND, reference

    page = ROOT.joinpath("docs", "cli.md").read_text(encoding="utf-8")
    assert page.splitlines()[0].startswith(f"Generated by `{COMMAND}`")
    assert page == reference(), f"docs/cli.md is stale: run `{COMMAND}`"


def test_the_cli_reference_changes_with_a_help(monkeypatch: pytest.MonkeyPatch) -> None:
    """What keeps the page current: a changed --help gives another page."""
    from gotmpl2jinja.cli.main import cli
    from gotmpl2jinja.cli.reference import reference

    before = reference()
    sweep = cli.commands["sweep"]
    monkeypatch.setattr(sweep, "help", (sweep.help or "") + " A sentence added.")
    assert reference() != before
    monkeypatch.undo()
    assert reference() == before
