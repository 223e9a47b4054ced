"""The README as a newcomer meets it (issue 49): at most 250 lines, a two-command quick start
whose sample line is `verify --example`'s own, one example per task with its guide, and a Python
example that prints what the README says it prints. (tests/test_docs.py runs every command the
README shows and checks its links.)"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


README = ROOT.joinpath("README.md").read_text(encoding="utf-8")


def test_the_readme_is_at_most_250_lines() -> None:
    assert len(README.splitlines()) <= 250


@pytest.mark.parametrize(("guide", "commands"), [
    ("docs/guide-hugging-face.md", ["gotmpl2jinja convert $L --gguf $V -o llama3",
                                    "gotmpl2jinja convert ollama:chatml-demo"]),
    ("docs/guide-lm-studio-gguf.md", ["--format lmstudio -o", "--format gguf --gguf $V"]),
    ("docs/guide-check-jinja.md", ["gotmpl2jinja verify fixtures/corpus/ollama/template/chatml."
                                   "gotmpl --jinja mine.jinja"]),
    ("docs/guide-migrate.md", ["gotmpl2jinja migrate mine migrated --ollama-store"]),
    ("docs/guide-compare.md", ["gotmpl2jinja compare $E/template.gotmpl "
                               "$E/gguf_chat_template.jinja"]),
], ids=lambda v: v if isinstance(v, str) else "")
def test_one_example_per_task_with_its_guide(guide: str, commands: list[str]) -> None:
    """Each task of the issue has its command in a console block of the README (which
    tests/test_docs.py runs) and a link to its guide."""
    section = README[README.index("## One example per task"):README.index("## What each command")]
    shown = [line[2:] for line in section.splitlines() if line.startswith("$ ")]
    for command in commands:
        assert any(command in line for line in shown), command
    assert f"]({guide})" in section


def test_the_python_api_example_prints_what_the_readme_shows() -> None:
    section = README[README.index("## From Python"):]
    found = re.search(r"```python\n(.*?)```\n\nprints\n\n```text\n(.*?)```", section, re.S)
    assert found, "the Python API section lost its example or its output"
    code, printed = found.groups()
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout == printed


def quick_start() -> list[str]:
    """The commands of the README's quick start, one per line."""
    readme = ROOT.joinpath("README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Quick start"):]
    found = re.search(r"```sh\n(.*?)```", section, re.S)
    assert found, "the quick start lost its commands"
    return found.group(1).splitlines()


def test_the_quick_start_is_two_commands_the_second_ci() -> None:
    commands = quick_start()
    assert len(commands) == 2 and commands[1] == "bash .ci/run"
    assert commands[0].endswith("gotmpl2jinja verify --example")


def test_the_quick_start_shows_what_verify_example_prints() -> None:
    """The quick start's sample line is the command's own (its refused count had gone stale:
    14 where the command printed 54 once chats without messages were counted as refused), but
    for the path, which is the reader's site-packages there and the checkout here."""
    readme = ROOT.joinpath("README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Quick start"):]
    found = re.search(r"\$ gotmpl2jinja verify --example\n(.*?)```", section, re.S)
    assert found, "the quick start lost its sample output"
    shown = [line for line in found.group(1).splitlines() if line.startswith("qwen-style\t")]
    assert len(shown) == 1, found.group(1)
    done = subprocess.run([sys.executable, "-m", "gotmpl2jinja", "verify", "--example",
                           "--engines", "jinja2,minijinja,minijinja-trim"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    printed = done.stdout.splitlines()
    assert printed[1] == found.group(1).splitlines()[-1]  # "1 template(s): 1 equivalent, 0 not"
    expected, got = shown[0].split("\t"), printed[0].split("\t")
    assert expected[1].endswith("/gotmpl2jinja/examples/qwen-style.gotmpl")
    assert got[1].endswith("/gotmpl2jinja/examples/qwen-style.gotmpl")
    assert expected[:1] + expected[2:] == got[:1] + got[2:]


def _system_python() -> Path | None:
    """A Python on this machine that PEP 668 marks externally managed (None if there is none)."""
    for python in (Path("/usr/bin/python3"), Path("/usr/local/bin/python3")):
        if not python.is_file():
            continue
        stdlib = subprocess.run([str(python), "-c", "import sysconfig; "
                                 "print(sysconfig.get_path('stdlib'))"],
                                capture_output=True, text=True).stdout.strip()
        if stdlib and Path(stdlib, "EXTERNALLY-MANAGED").is_file():
            return python
    return None


@pytest.mark.parametrize("where", ["system Python", "active venv"])
def test_the_quick_start_installs_where_pep_668_refuses_a_bare_pip(
        tmp_path: Path, where: str) -> None:
    """The first command as written, on a machine whose python3 is the system's (PEP 668) and in
    an active virtual environment: pip must run inside an environment, never against the
    system. Offline (no index), so the install itself stops at the build backend; what is
    checked is where pip ran, not the download (done by hand: README, issue 41)."""
    system = _system_python()
    if where == "system Python" and system is None:
        pytest.skip("no externally managed python3 here")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "pyproject.toml").write_bytes(ROOT.joinpath("pyproject.toml").read_bytes())
    env = {"HOME": str(tmp_path), "PIP_NO_INDEX": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
           "PATH": "/usr/local/bin:/usr/bin:/bin"}
    if where == "system Python":
        assert system is not None
        env["PATH"] = f"{system.parent}:{env['PATH']}"
    else:
        venv = Path(sys.prefix)
        assert venv != Path(sys.base_prefix), "the tests run in a virtual environment"
        env.update(PATH=f"{venv / 'bin'}:{env['PATH']}", VIRTUAL_ENV=str(venv))
    first = quick_start()[0].replace(" && gotmpl2jinja verify --example", "")
    done = subprocess.run(["bash", "-c", first], cwd=checkout, env=env, capture_output=True,
                          text=True, timeout=600)
    assert "externally-managed-environment" not in done.stderr
    assert (checkout / ".venv" / "bin" / "python").exists(), done.stderr
    assert "hatchling" in done.stderr  # pip got as far as the build backend, offline
