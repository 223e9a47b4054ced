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
# 5. a null content is read as Ollama's decoder reads it: "" (issue 47)


def test_render_reads_a_null_content_as_ollama_does(tmp_path: Path) -> None:
    conv = write_json(tmp_path / "c.json", {"messages": [{"role": "user", "content": None}]})
    result = run("render", str(CHATML), str(conv))
    assert result.exit_code == 0, result.output
    assert result.stdout == "<|im_start|>user\n<|im_end|>\n<|im_start|>assistant\n"
    assert result.stderr == ""
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


@pytest.mark.parametrize("args", [
    ("verify", "{chatml}", "--jinja", "{missing}"),
    ("convert", "{chatml}", "--tokenizer-config", "{missing}"),
    ("compare", "--corpus", "{missing}"),
], ids=lambda a: " ".join(a[:1] + a[2:3]))
def test_a_missing_file_given_to_an_option_is_worded_the_same(
        tmp_path: Path, args: tuple[str, ...]) -> None:
    """A bad option value is a usage error (exit 2, checked with the other options before any
    work), in the same words."""
    missing = tmp_path / "missing.gotmpl"
    result = run(*[a.format(missing=missing, chatml=CHATML) for a in args])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[-1].endswith(f"': {missing}: no such file or directory")
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
    monkeypatch.setattr(registry, "TOOLS", {})
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
    monkeypatch.setattr(registry, "TOOLS", {})
    _, failed = registry.setup_engines(None, lines.append)
    assert lines == ["cpp: setup failed: no compiler"]
    assert failed == ["cpp", "cpp-server"]


# ---------------------------------------------------------------------------------------------
# 3. an output that cannot be written is said before any work, with one exit code per problem

#: A template that does not parse: its error on stderr would mean the output was checked only
#: after reading and translating.
UNCLOSED = "{{ if .Messages }}oops"


@pytest.mark.parametrize("args, code, message", [
    (("-o", "{tmp}/newdir/"), 1, "cannot write {tmp}/newdir/: directory {tmp}/newdir does not "
                                 "exist"),
    (("-o", "{tmp}/nodir/sub/x.jinja"), 1, "cannot write {tmp}/nodir/sub/x.jinja: directory "
                                           "{tmp}/nodir/sub does not exist"),
    (("-o", "{tmp}/existing.jinja"), 1, "{tmp}/existing.jinja already exists (use --force to "
                                        "overwrite it)"),
    (("--format", "hf", "-o", "{tmp}"), 1, "{tmp}/tokenizer_config.json already exists; --force "
                                           "updates it in place (chat_template, and the BOS keys "
                                           "when known; every other key is kept)"),
    (("--format", "lmstudio", "-o", "{tmp}"), 1, "{tmp} is a directory; give the lmstudio "
                                                 "output a file name"),
    (("--format", "lmstudio"), 2, "Error: --format lmstudio writes a file: give it -o PATH"),
    (("--format", "lmstudio", "-o", "-"), 2, "Error: --format lmstudio writes a file: give it "
                                             "-o PATH"),
], ids=["new dir/", "missing parent", "existing", "hf existing", "lmstudio dir", "lmstudio",
        "lmstudio -o -"])
def test_convert_checks_its_output_before_translating(
        tmp_path: Path, args: tuple[str, ...], code: int, message: str) -> None:
    (tmp_path / "existing.jinja").write_text("keep")
    (tmp_path / "tokenizer_config.json").write_text('{"bos_token": "<s>"}')
    template = tmp_path / "unclosed.gotmpl"
    template.write_text(UNCLOSED)
    result = run("convert", str(template), *[a.format(tmp=tmp_path) for a in args])
    assert result.exit_code == code, result.output
    assert result.stderr.splitlines()[-1] == message.format(tmp=tmp_path)
    assert "EOF" not in result.stderr and "checked" not in result.stderr  # never translated
    assert (tmp_path / "existing.jinja").read_text() == "keep"
    assert (tmp_path / "tokenizer_config.json").read_text() == '{"bos_token": "<s>"}'


def test_convert_dash_o_dash_is_standard_output(tmp_path: Path) -> None:
    plain = run("convert", str(CHATML), "--no-check")
    dashed = run("convert", str(CHATML), "--no-check", "-o", "-")
    assert plain.exit_code == dashed.exit_code == 0
    assert dashed.stdout == plain.stdout and dashed.stdout.startswith("{#-")
    assert not Path("-").exists()


# ---------------------------------------------------------------------------------------------
# 4. an empty template is said to be empty


@pytest.mark.parametrize("text, words", [("", "the template is empty"),
                                         ("\n  \n", "the template holds only whitespace")])
def test_an_empty_template_is_a_warning(tmp_path: Path, text: str, words: str) -> None:
    template = tmp_path / "empty.gotmpl"
    template.write_text(text)
    converted = run("convert", str(template), "--no-check")
    assert converted.exit_code == 0
    assert f"warning: {template}: {words}" in converted.stderr
    verified = run("verify", str(template), "--engines", "jinja2", "--cases", "1")
    assert verified.exit_code == 0, verified.output
    assert f"warning: {template}: {words}" in verified.stderr


def test_a_modelfile_with_a_template_is_not_empty(tmp_path: Path) -> None:
    modelfile = tmp_path / "Modelfile"
    modelfile.write_text(MODELFILE)
    result = run("convert", str(modelfile), "--no-check")
    assert result.exit_code == 0 and "empty" not in result.stderr


# ---------------------------------------------------------------------------------------------
# 7. convert's check is bounded by --timeout, as verify's is

GO_LOOP = "{{ range 10000000000000 }}{{ end }}{{ .Prompt }}"


def test_convert_check_stops_at_its_timeout(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from gotmpl2jinja.verify import check

    monkeypatch.setattr(check, "check_engines", lambda: ["jinja2"])
    template = tmp_path / "loop.gotmpl"
    template.write_text(GO_LOOP)
    result = run("convert", str(template), "--timeout", "0.5")
    assert result.exit_code == 1, result.output
    assert "rendering did not finish within" in result.stderr
    assert result.stdout == ""
    no_traceback(result)


@pytest.mark.parametrize("seconds", ["0", "-1", "86401", "nan"])
def test_convert_timeout_is_checked_like_verifys(seconds: str) -> None:
    converted = run("convert", str(CHATML), "--timeout", seconds)
    verified = run("verify", str(CHATML), "--timeout", seconds)
    assert converted.exit_code == verified.exit_code == 2
    assert converted.stderr.splitlines()[-1] == verified.stderr.splitlines()[-1]


# ---------------------------------------------------------------------------------------------
# 8. a Jinja template given where a Go template is expected is named as such

JINJA = "{%- for m in messages %}{{ m.content }}{% endfor %}"


@pytest.mark.parametrize("command, text", [
    ("convert", JINJA), ("parse", JINJA), ("verify", JINJA), ("render", JINJA),
    ("convert", "{{ bos_token }}{{ messages[0]['content'] }}"),
    ("convert", "{{ message.content }}"),
    ("convert", "{#- a Jinja comment -#}{{ bos_token }}"),
])
def test_jinja_input_is_said_to_be_jinja(tmp_path: Path, command: str, text: str) -> None:
    template = tmp_path / "chat_template.jinja"
    template.write_text(text)
    args = [str(template)]
    if command == "render":
        args.append(str(write_json(tmp_path / "c.json", HELLO)))
    result = run(command, *args)
    assert result.exit_code == 1
    assert f"{template}:1:" in result.output
    assert ("this looks like a Jinja template (it has Jinja's {% … %} tags or syntax): "
            "gotmpl2jinja takes Ollama's Go templates") in result.output
    no_traceback(result)


@pytest.mark.parametrize("text", ["{{ if .Messages }}", "{{ .Messages.content }",
                                  "{{ $m.Content }}", "{{ json .Tools }"])
def test_a_go_syntax_error_without_jinja_syntax_has_no_jinja_hint(tmp_path: Path,
                                                                  text: str) -> None:
    template = tmp_path / "bad.gotmpl"
    template.write_text(text)
    result = run("convert", str(template))
    assert result.exit_code == 1 and "Jinja" not in result.stderr


# ---------------------------------------------------------------------------------------------
# 9. runtime-differs per engine, with the cases each compared


def test_runtime_differs_is_per_engine_with_the_compared_count() -> None:
    from gotmpl2jinja.batch.files import summary_line
    from gotmpl2jinja.verify.outcomes import EngineTally, VerifyResult

    counts = {"jinja2": EngineTally(cases=200, equal=200),
              "llamacpp-server": EngineTally(cases=200, equal=56,
                                             runtime_differs={"prefill": 100, "developer": 44}),
              "minja-server": EngineTally(cases=200, equal=7, runtime_differs={"prefill": 193})}
    result = VerifyResult(name="t", cases=200, engines=list(counts), counts=counts)
    line = summary_line(result, "t.gotmpl")
    assert ("\truntime-differs=llamacpp-server:144 (compared 56 of 200),"
            "minja-server:193 (compared 7 of 200)\t") in line


# ---------------------------------------------------------------------------------------------
# 11. the Ollama store has one name and one meaning on every command

STORE_COMMANDS = ["convert", "render", "parse", "modelfile", "migrate"]


@pytest.mark.parametrize("name", STORE_COMMANDS)
def test_the_store_option_is_one_option(name: str) -> None:
    command = cli.commands[name]
    option = next(p for p in command.params if "--ollama-store" in getattr(p, "opts", ()))
    assert isinstance(option, click.Option) and not option.hidden
    assert option.help is not None and option.help.startswith(
        "Ollama's models directory, where ollama:NAME and a Modelfile's FROM are looked up "
        "(alone: $OLLAMA_MODELS, else ~/.ollama/models).")
    shown = [o for p in command.params if isinstance(p, click.Option) and not p.hidden
             for o in p.opts if "store" in o or "models" in o]
    assert shown == ["--ollama-store"]


def _tiny_store(root: Path) -> Path:
    from test_store import install, layer, manifest_bytes

    layers = [layer(root, "template", CHATML.read_bytes())]
    install(root, "manifests/registry.ollama.ai/library/tiny/latest",
            manifest_bytes(root, layers, {"model_format": "gguf"}))
    return root


@pytest.mark.parametrize("args", [
    ("convert", "ollama:tiny", "--no-check", "--ollama-store", "{store}"),
    ("convert", "ollama:tiny", "--no-check", "--models", "{store}"),  # the old name, hidden
    ("modelfile", "ollama:tiny", "--ollama-store", "{store}"),
    ("modelfile", "tiny", "--store"),  # the old flag: reads $OLLAMA_MODELS
    ("parse", "ollama:tiny", "--ollama-store", "{store}"),
    ("convert", "ollama:tiny", "--no-check", "--ollama-store"),  # alone: $OLLAMA_MODELS
], ids=lambda a: " ".join(a))
def test_every_command_reads_the_store_the_same_way(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]) -> None:
    store = _tiny_store(tmp_path / "models")
    monkeypatch.setenv("OLLAMA_MODELS", str(store))
    result = run(*[a.format(store=store) for a in args])
    assert result.exit_code == 0, result.output
    if args[0] == "modelfile":
        assert result.stdout == CHATML.read_text()
    elif args[0] == "parse":
        assert "Field .Messages" in result.stdout
    else:
        assert "<|im_start|>" in result.stdout


def test_render_reads_an_installed_model(tmp_path: Path) -> None:
    store = _tiny_store(tmp_path / "models")
    conv = write_json(tmp_path / "c.json", HELLO)
    by_store = run("render", "ollama:tiny", str(conv), "--ollama-store", str(store), "--now", NOW)
    by_file = run("render", str(CHATML), str(conv), "--now", NOW)
    assert by_store.exit_code == by_file.exit_code == 0, by_store.output
    assert by_store.stdout == by_file.stdout


# ---------------------------------------------------------------------------------------------
# 2. a second interrupt does not print a traceback (Ctrl-C twice, or `timeout -s INT`)

CPP = ["llamacpp", "minja", "llamacpp-server", "minja-server"]


def _group_gone(pgid: int, patience: float = 20.0) -> bool:
    """Whether no process of the group is left (waiting for the kernel to reap them)."""
    import os
    import time

    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_a_second_interrupt_ends_the_command_without_a_traceback() -> None:
    """SIGINT to the command, then to its whole process group a few milliseconds later, while
    the C++ engines run: what `timeout -s INT` does. Before the fix, 5 tries in 8 printed
    `Exception ignored in atexit callback … KeyboardInterrupt`; the race is in the exit, so the
    test tries several times (the sleeps only place the signals; nothing here is timed).

    The command starts with SIGINT at its default, as a terminal's foreground job has it: a
    runner that started the tests in the background of a script has SIGINT ignored, the
    command inherits that and rightly ignores the interrupt (as Python itself does), and the
    test would wait out its 100,000 cases."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from gotmpl2jinja.engines.registry import ENGINES

    missing = [n for n in CPP if ENGINES[n].unavailable() is not None]
    if missing:
        pytest.skip(f"needs the C++ engines ({', '.join(missing)} unavailable)")
    for attempt in range(5):
        proc = subprocess.Popen(
            [sys.executable, "-m", "gotmpl2jinja", "verify", "--example", "--cases", "100000",
             "--engines", ",".join(CPP)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, start_new_session=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        try:
            started = subprocess.run(["pgrep", "-c", "-P", str(proc.pid)], capture_output=True,
                                     text=True)
            while int(started.stdout.strip() or 0) < 5 and proc.poll() is None:  # Go + 4
                time.sleep(0.2)
                started = subprocess.run(["pgrep", "-c", "-P", str(proc.pid)],
                                         capture_output=True, text=True)
            time.sleep(1.0)  # rendering now
            os.kill(proc.pid, signal.SIGINT)
            time.sleep(0.002 + 0.004 * attempt)
            try:
                os.killpg(proc.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
            err = proc.communicate(timeout=120)[1]
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        assert "Traceback" not in err and "Exception ignored" not in err, err
        assert _group_gone(proc.pid), "a child outlived the command"
