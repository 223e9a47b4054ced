"""Issue 16: what someone who only ran `pip install` meets — engines optional and named, no
traceback, no hang, no orphan process, no overwritten or partial output. One test (or a few
parametrised cases) per defect the issue lists."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from gotmpl2jinja.cli import common as cli_module
from gotmpl2jinja.cli.main import cli
from gotmpl2jinja.engines import registry as engine_registry

ROOT = Path(__file__).resolve().parent.parent
CHATML = ROOT / "fixtures" / "corpus" / "ollama" / "template" / "chatml.gotmpl"
HELLO = {"messages": [{"role": "user", "content": "Hi"}]}
#: A Go template that runs for ever (ten trillion empty iterations).
GO_LOOP = "{{ range 10000000000000 }}{{ end }}"
#: A Jinja template that runs for ever on every engine (10**10 iterations of nothing).
JINJA_LOOP = ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}"
              "{% endfor %}")


def run(*args: str, input: str | bytes | None = None, env: dict[str, str] | None = None
        ) -> Result:  # noqa: A002 - click's name
    return CliRunner().invoke(cli, list(args), input=input, env=env)


def no_traceback(result: Result) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        repr(result.exception)
    assert "Traceback" not in result.output


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def cli_process(*args: str, timeout: float = 60, **kwargs: Any) -> subprocess.CompletedProcess:
    """The real command in a child process (timeouts and signals need a real process); the
    `timeout` only guards against a hang, it asserts nothing about speed."""
    return subprocess.run([sys.executable, "-m", "gotmpl2jinja", *args], capture_output=True,
                          text=True, timeout=timeout, **kwargs)


# ---------------------------------------------------------------------------------------------
# Engines: listed with their state, optional, named in every verdict


def test_engines_lists_every_engine_with_its_state() -> None:
    result = run("engines")
    assert result.exit_code == 0, result.output
    for name in engine_registry.ENGINES:
        assert any(line.startswith(name + " ") and "available" in line
                   for line in result.stdout.splitlines()), result.stdout
    assert "Go reference renderer:" in result.stdout


def test_registry_entries_carry_probe_and_setup() -> None:
    spec = engine_registry.ENGINES["hfjinja"]
    assert spec.setup is engine_registry.install_hfjinja
    assert spec.unavailable() is None  # node and @huggingface/jinja are there in the tests
    assert engine_registry.ENGINES["jinja2"].setup is None


def test_hfjinja_without_node_is_skipped_and_named(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no node here
    monkeypatch.setattr(engine_registry, "_instances",
                        {k: v for k, v in engine_registry._instances.items() if k != "hfjinja"})
    assert engine_registry.hfjinja_unavailable() == \
        "node not found on PATH (install Node.js 18 or later)"
    listing = run("engines")
    assert "hfjinja          unavailable: node not found on PATH" in listing.stdout
    result = run("verify", str(CHATML), "--cases", "5")
    assert result.exit_code == 0, result.output
    assert "skipped: hfjinja (node not found on PATH" in result.stderr
    others = [name for name in engine_registry.default_engine_names() if name != "hfjinja"]
    assert f"engines={','.join(others)}\t" in result.stdout
    strict = run("verify", str(CHATML), "--cases", "5", "--require-all-engines")
    assert strict.exit_code == 1 and "hfjinja: node not found" in strict.output
    no_traceback(strict)
    named = run("verify", str(CHATML), "--cases", "5", "--engines", "hfjinja")
    assert named.exit_code == 1 and "hfjinja: node not found" in named.output
    as_json = run("verify", str(CHATML), "--cases", "5", "--json")
    (data,) = json.loads(as_json.stdout)
    assert data["engines"] == others
    assert data["skipped"] == {"hfjinja": "node not found on PATH (install Node.js 18 or later)"}
    out = tmp_path / "migrated"
    migrated = run("migrate", str(CHATML), str(out), "--cases", "2")
    assert migrated.exit_code == 0, migrated.output
    assert "skipped: hfjinja (node not found" in migrated.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["engines"] == others
    assert list(report["skipped_engines"]) == ["hfjinja"]
    assert (f"on the Jinja engines {', '.join(others)} (skipped, unavailable here: "
            "hfjinja — node not found on PATH") in (out / "report.md").read_text()
    table = tmp_path / "sweep.md"
    swept = run("sweep", str(CHATML), "--cases", "2", "--exhaustive", "0", "-o", str(table))
    assert swept.exit_code == 0, swept.output
    assert (f"Engines: {', '.join(sorted(others))}; skipped hfjinja (node not found on "
            "PATH") in table.read_text()


FAKE_NPM = """#!/bin/sh
# A stand-in for npm: records its arguments, installs a package.json like the real package's.
echo "$@" > npm-args
mkdir -p node_modules/@huggingface/jinja
printf '{"name": "@huggingface/jinja", "version": "0.5.11"}' \
    > node_modules/@huggingface/jinja/package.json
"""


def test_engines_install_runs_npm_into_the_user_cache(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(FAKE_NPM)
    npm.chmod(npm.stat().st_mode | stat.S_IXUSR)
    cache = tmp_path / "cache"
    messages: list[str] = []
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GOTMPL2JINJA_CACHE": str(cache)}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        engine_registry.install_hfjinja(messages.append)
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    package = cache / "node" / "package.json"
    assert json.loads(package.read_text())["dependencies"] == {"@huggingface/jinja": "0.5.11"}
    assert (cache / "node" / "node_modules/@huggingface/jinja/package.json").is_file()
    assert (cache / "node" / "npm-args").read_text().split()[0] == "install"
    assert messages[0].startswith("hfjinja: npm install @huggingface/jinja@0.5.11 into ")
    assert messages[-1] == f"hfjinja: installed in {cache / 'node'}"
    assert [p.name for p in cache.iterdir()] == ["node"]  # no temporary folder left


def test_engines_install_without_npm_says_so(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("GOTMPL2JINJA_CACHE", str(tmp_path / "cache"))
    with pytest.raises(engine_registry.EngineError, match="needs npm"):
        engine_registry.install_hfjinja(lambda _: None)


def test_go_build_announces_itself(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from gotmpl2jinja.ollama.reference import binary, driver

    monkeypatch.setenv("GOTMPL2JINJA_CACHE", str(tmp_path))
    monkeypatch.setattr(binary, "PACKAGED_DIR", tmp_path / "bin")  # none packaged (a wheel's)

    def fake_build(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess:
        Path(argv[argv.index("-o") + 1]).write_bytes(b"binary")
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(driver.subprocess, "run", fake_build)
    notes: list[str] = []
    binary = driver.ensure_binary(progress=notes.append)
    assert binary.read_bytes() == b"binary"
    assert notes[0].startswith("building the Go reference renderer into ")
    assert notes[1].startswith("built the Go reference renderer in ")
    notes.clear()
    driver.ensure_binary(progress=notes.append)
    assert notes == []  # built once


def test_verify_the_shipped_example_from_any_directory(tmp_path: Path) -> None:
    example = cli_module.EXAMPLE
    assert example.is_file() and example.is_relative_to(Path(engine_registry.__file__).parents[1])
    done = cli_process("verify", "--example", "--cases", "10", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    every = engine_registry.default_engine_names()  # all set up here (.ci/run installs them)
    assert f"engines={','.join(every)}\t" in done.stdout
    assert done.stdout.endswith("1 template(s): 1 equivalent, 0 not\n")
    assert done.stderr.startswith(f"engines: {', '.join(every)}\n")


# ---------------------------------------------------------------------------------------------
# Tracebacks


def test_huge_integer_in_a_conversation_is_one_line(tmp_path: Path) -> None:
    conv = tmp_path / "c.json"
    conv.write_text('{"messages": [{"role": "user", "content": "x"}], "tools": [{"type": '
                    '"function", "function": {"name": "f", "parameters": {"type": "object", '
                    '"properties": {}, "x": ' + "9" * 5000 + "}}}]}")
    result = run("render", str(CHATML), str(conv))
    assert result.exit_code == 1
    assert "a number this tool cannot read" in result.output and "4300 digits" in result.output
    no_traceback(result)


def test_convert_hf_onto_a_config_with_a_huge_integer(tmp_path: Path) -> None:
    config = tmp_path / "tokenizer_config.json"
    original = '{"model_max_length": ' + "1" * 5000 + "}"
    config.write_text(original)
    result = run("convert", str(CHATML), "--format", "hf", "-o", str(config), "--force")
    assert result.exit_code == 1
    assert f"{config} is not valid JSON this tool can update" in result.output
    no_traceback(result)
    assert config.read_text() == original


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "0", "-1", "1e6"])
def test_render_timeout_must_be_positive_and_finite(tmp_path: Path, value: str) -> None:
    conv = write_json(tmp_path / "c.json", HELLO)
    result = run("render", str(CHATML), str(conv), "--timeout", value)
    assert result.exit_code == 2, result.output
    assert "is not a number of seconds above 0 and at most 86400" in result.output
    no_traceback(result)


def test_render_timeout_ends_a_looping_template(tmp_path: Path) -> None:
    go = tmp_path / "loop.gotmpl"
    go.write_text(GO_LOOP)
    conv = write_json(tmp_path / "c.json", HELLO)
    done = cli_process("render", str(go), str(conv), "--timeout", "1")
    assert done.returncode == 1
    assert done.stderr == "rendering did not finish within 1 s (the Go renderer was restarted)\n"


def damaged_store(root: Path, manifest: Any) -> Path:
    path = root / "manifests/registry.ollama.ai/library/broken/latest"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(manifest))
    (root / "blobs").mkdir()
    return root


DAMAGED = {
    "manifest is an array": ([1, 2], "must hold a JSON object, not list"),
    "layers is a string": ({"layers": "abc"}, "'layers' must be an array of objects"),
    "layers are numbers": ({"layers": [1, 2]}, "'layers' must be an array of objects"),
    "config is a string": ({"config": "x", "layers": []}, "'config' must be an object"),
    "numeric digest": ({"layers": [{"mediaType": "application/vnd.ollama.image.template",
                                    "digest": 7}]}, "invalid blob digest 7"),
    "numeric config digest": ({"config": {"digest": 7}, "layers": []}, "invalid blob digest 7"),
    "manifest list of a string": ({"mediaType": "application/vnd.ollama.manifest.list.v2+json",
                                   "manifests": "x"}, "'manifests' must be an array"),
}


@pytest.mark.parametrize("case", DAMAGED, ids=list(DAMAGED))
def test_a_damaged_store_is_a_sentence_in_convert_and_migrate(tmp_path: Path, case: str) -> None:
    manifest, message = DAMAGED[case]
    store = damaged_store(tmp_path / "store", manifest)
    result = run("convert", "ollama:broken", "--models", str(store))
    assert result.exit_code == 1 and message in result.output, result.output
    no_traceback(result)
    src = tmp_path / "src"
    src.mkdir()
    out = tmp_path / "out"
    migrated = run("migrate", str(src), str(out), "--ollama-store", str(store), "--cases", "2",
                   "--json")
    no_traceback(migrated)
    assert migrated.exit_code == 1
    (item,) = json.loads((out / "report.json").read_text())["items"]
    assert item["input"] == "ollama:broken:latest" and item["status"] == "invalid input"
    assert message in item["reason"]
    assert (out / "report.md").is_file()


# ---------------------------------------------------------------------------------------------
# Hangs


def test_a_looping_jinja_file_times_out_on_every_engine(tmp_path: Path) -> None:
    jinja = tmp_path / "loop.jinja"
    jinja.write_text(JINJA_LOOP)
    for engine in engine_registry.ENGINES:
        done = cli_process("verify", str(CHATML), "--jinja", str(jinja), "--cases", "1",
                           "--engines", engine, "--timeout", "1")
        assert done.returncode == 1, (engine, done.stderr)
        assert f"error: {CHATML}: {engine}: rendering did not finish within " in done.stdout, \
            (engine, done.stdout)
        assert "Traceback" not in done.stderr


def test_verify_continues_after_a_go_timeout_and_names_the_file(tmp_path: Path) -> None:
    looping = tmp_path / "a_loop.gotmpl"
    looping.write_text(GO_LOOP)
    done = cli_process("verify", str(looping), str(CHATML), "--cases", "3", "--timeout", "1",
                       "--engines", "jinja2")
    assert done.returncode == 1
    first, second, summary = done.stdout.splitlines()
    assert first.startswith(f"a_loop\t{looping}\terror: {looping}: rendering did not finish")
    assert second.startswith(f"chatml\t{CHATML}\tcases=3\tengines=jinja2\t")
    assert summary == "2 template(s): 1 equivalent, 1 not"


# ---------------------------------------------------------------------------------------------
# No orphan: the Go renderer and node die with their parent


PARENT = textwrap.dedent("""
    import sys
    from gotmpl2jinja.engines.registry import get_engine
    from gotmpl2jinja.ollama.reference import ReferenceRenderer
    node = get_engine("hfjinja")
    renderer = ReferenceRenderer(timeout=600)
    renderer.check_parse("x")
    print(renderer.process_id, node._proc.pid, flush=True)
    renderer.render(%r, {"messages": [{"role": "user", "content": "x"}]})
""")


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_children_die_with_their_parent(how: signal.Signals) -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT % GO_LOOP], stdout=subprocess.PIPE,
                              text=True)
    go_pid = node_pid = None
    try:
        assert parent.stdout is not None
        go_pid, node_pid = map(int, parent.stdout.readline().split())
        time.sleep(0.5)  # the Go side is now inside the endless render
        assert alive(go_pid) and alive(node_pid)
        parent.send_signal(how)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 30
        while (alive(go_pid) or alive(node_pid)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(go_pid), "the Go renderer outlived its parent"
        assert not alive(node_pid), "node outlived its parent"
    finally:
        parent.kill()
        parent.wait()
        for pid in (go_pid, node_pid):  # a failing run must not leave the orphan burning
            if pid is not None and alive(pid):
                os.kill(pid, signal.SIGKILL)


# ---------------------------------------------------------------------------------------------
# Inputs


STDIN_TEMPLATE = "# Chat\nSystem prompt: {{ .System }}\n{{ .Prompt }}"


def test_stdin_read_as_a_modelfile_says_so_and_as_template_reads_it_as_one() -> None:
    sniffed = run("convert", "-", input=STDIN_TEMPLATE)
    assert "read as a Modelfile" in sniffed.output and "--as template" in sniffed.output
    as_template = run("convert", "-", "--as", "template", input=STDIN_TEMPLATE)
    assert as_template.exit_code == 0, as_template.output
    assert "read as a Modelfile" not in as_template.output
    assert "System prompt: " in as_template.stdout


def test_a_bom_is_dropped_by_parse_and_render_too(tmp_path: Path) -> None:
    plain = CHATML.read_bytes()
    bom = tmp_path / "bom.gotmpl"
    bom.write_bytes(b"\xef\xbb\xbf" + plain)
    conv = write_json(tmp_path / "c.json", HELLO)
    assert run("render", str(bom), str(conv)).stdout_bytes == \
        run("render", str(CHATML), str(conv)).stdout_bytes
    with_bom = run("parse", str(bom), "--json").stdout
    without = run("parse", str(CHATML), "--json").stdout
    assert with_bom.replace(str(bom), str(CHATML)) == without


# ---------------------------------------------------------------------------------------------
# Numbers and options that were silently accepted


def test_verify_that_checks_nothing_is_refused(tmp_path: Path) -> None:
    zero = run("verify", str(CHATML), "--cases", "0")
    assert zero.exit_code == 2 and "checks nothing" in zero.output
    empty = tmp_path / "empty"
    empty.mkdir()
    none = run("verify", str(empty))
    assert none.exit_code == 1 and "no templates" in none.output
    assert run("verify").exit_code == 2


@pytest.mark.parametrize("args", [
    ["sweep", "--cases", "-5"], ["sweep", "--exhaustive", "-1"],
    ["compare", str(CHATML), str(CHATML), "--cases", "-3"],
    ["migrate", str(CHATML), "out", "--cases", "0"],
], ids=["sweep-cases", "sweep-exhaustive", "compare-cases", "migrate-cases"])
def test_negative_counts_are_usage_errors(args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code == 2 and "is not in the range" in result.output, result.output


def test_gguf_option_that_is_not_a_gguf_is_one_sentence(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"  # --gguf gives the tokenizer facts for every format
    gguf.write_bytes(b"GGUF")
    result = run("convert", str(CHATML), "--gguf", str(gguf))
    assert result.exit_code == 1
    assert result.output == f"{gguf} is not a readable GGUF file (it ends inside its metadata)\n"


# ---------------------------------------------------------------------------------------------
# Outputs: never overwritten without --force, checked before the work, named when they fail


def test_sweep_and_compare_never_overwrite_without_force(tmp_path: Path) -> None:
    target = tmp_path / "table.md"
    target.write_text("keep me")
    sweep = run("sweep", str(CHATML.parent), "--cases", "1", "--exhaustive", "0", "-o",
                str(target))
    assert sweep.exit_code == 1 and "already exists (use --force" in sweep.output
    assert "[1/" not in sweep.output  # refused before any work
    corpus = run("compare", "--corpus", str(ROOT / "fixtures/corpus/huggingface__huggingface.js"),
                 "-o", str(target))
    assert corpus.exit_code == 1 and "already exists (use --force" in corpus.output
    assert target.read_text() == "keep me"
    missing = run("sweep", str(CHATML.parent), "-o", str(tmp_path / "no" / "t.md"))
    assert missing.exit_code == 1 and "does not exist" in missing.output


def test_sweep_writes_with_force(tmp_path: Path) -> None:
    folder = tmp_path / "one"
    folder.mkdir()
    (folder / "chatml.gotmpl").write_bytes(CHATML.read_bytes())
    target = tmp_path / "table.md"
    target.write_text("old")
    result = run("sweep", str(folder), "--cases", "2", "--exhaustive", "0", "-o", str(target),
                 "--force", "--engines", "jinja2")
    assert result.exit_code == 0, result.output
    row = next(line for line in target.read_text().splitlines()
               if line.startswith("| one/chatml.gotmpl |"))
    assert row.startswith("| one/chatml.gotmpl | messages | translated | ")
    assert row.endswith(" | = | — |")  # one engine column, every case equal


def test_convert_to_a_missing_directory_writes_no_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run("convert", str(CHATML), "-o", str(out))
    assert result.exit_code == 1 and "no such directory" in result.output
    assert not out.exists()


@pytest.mark.parametrize("errno_name", ["EROFS", "ENOSPC"])
def test_a_failed_write_names_the_target_not_the_temp_file(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, errno_name: str) -> None:
    import errno

    from gotmpl2jinja.formats import writers as formats

    code = getattr(errno, errno_name)

    def fail(*args: Any, **kwargs: Any) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(formats.os, "replace", fail)
    target = tmp_path / "t.jinja"
    result = run("convert", str(CHATML), "-o", str(target))
    assert result.exit_code == 1
    # (after the line saying the translation was checked)
    assert result.output.splitlines()[-1] == f"cannot write {target}: {os.strerror(code)}"
    assert list(tmp_path.iterdir()) == []  # no temp file left behind


def test_migrate_reports_an_output_it_could_not_write(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from gotmpl2jinja.batch import migrate as batch
    from gotmpl2jinja.formats.writers import OutputError

    real = batch.write_output

    def full_for_items(jinja: str, fmt: str, out: Path, **kwargs: Any) -> Path:
        if out.suffix == ".jinja":
            raise OutputError(f"cannot write {out}: No space left on device")
        return real(jinja, fmt, out, **kwargs)

    monkeypatch.setattr(batch, "write_output", full_for_items)
    out = tmp_path / "out"
    result = run("migrate", str(CHATML), str(out), "--cases", "2", "--engines", "jinja2")
    assert result.exit_code == 1
    (item,) = json.loads((out / "report.json").read_text())["items"]
    assert item["status"] == "not written"
    assert item["reason"] == f"cannot write {out / 'chatml.jinja'}: No space left on device"


# ---------------------------------------------------------------------------------------------
# render holds conversations to the contract, as the README says


def test_render_models_images_as_ollama_tags_them(tmp_path: Path) -> None:
    conv = write_json(tmp_path / "c.json", {"messages": [
        {"role": "user", "content": "x", "images": ["aGk="]}]})
    result = run("render", str(CHATML), str(conv))
    assert result.exit_code == 0 and "[img-0]x" in result.stdout, result.output


def test_render_has_no_option_that_does_nothing(tmp_path: Path) -> None:
    conv = write_json(tmp_path / "c.json", HELLO)
    result = run("render", "--ollama", str(CHATML), str(conv))
    assert result.exit_code == 2 and "No such option '--ollama'" in result.output


# ---------------------------------------------------------------------------------------------
# Columns count characters everywhere


@pytest.mark.parametrize("command", ["convert", "parse"])
def test_template_error_columns_count_characters(command: str) -> None:
    result = run(command, "-", input="ééé{{ .Foo bar }}")
    assert result.exit_code == 1
    assert result.output == "<stdin>:1:12: function 'bar' not defined\n"  # 'b' is character 12


def test_modelfile_and_template_columns_agree(tmp_path: Path) -> None:
    modelfile = tmp_path / "Modelfile"
    modelfile.write_text("FROM x\nTEMPLATE ééé{{ .Foo bar }}\n", encoding="utf-8")
    result = run("convert", str(modelfile))
    assert result.output == f"{modelfile}:2:21: function 'bar' not defined\n"  # 9 + 3 + 8 + 1
    verified = run("verify", str(modelfile), "--cases", "1", "--engines", "jinja2")
    assert f"error: {modelfile}:2:21: function 'bar' not defined" in verified.stdout


def test_compare_names_its_engine_and_takes_others() -> None:
    pair = ROOT / "fixtures/corpus/huggingface__huggingface.js/entries/002__library_cogito_14b"
    go, jinja = str(pair / "template.gotmpl"), str(pair / "gguf_chat_template.jinja")
    default = run("compare", go, jinja, "--cases", "0", "--json")
    assert json.loads(default.stdout)["engine"] == "jinja2"
    several = run("compare", go, jinja, "--cases", "0", "--json", "--engines",
                  "minijinja,hfjinja")
    assert [c["engine"] for c in json.loads(several.stdout)] == ["minijinja", "hfjinja"]
    text = run("compare", go, jinja, "--cases", "0", "--engines", "minijinja-trim")
    assert "; the model's Jinja rendered by minijinja-trim)" in text.stdout.splitlines()[0]
    corpus = run("compare", "--corpus", str(pair.parent.parent), "--engines", "jinja2")
    assert corpus.exit_code == 2 and "--engines is for two templates" in corpus.output


def test_engines_install_fails_when_the_setup_fails(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    from gotmpl2jinja.ollama.reference import driver

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text("#!/bin/sh\necho 'npm ERR! network unreachable' >&2\nexit 1\n")
    npm.chmod(npm.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("GOTMPL2JINJA_CACHE", str(tmp_path / "cache"))
    built: list[bool] = []
    monkeypatch.setattr(driver, "ensure_binary", lambda progress: built.append(True))
    compiled: list[str] = []  # the C++ engines' setup, recorded instead of fetched and built

    def fake_install(name: str, *, progress: Any, **kwargs: Any) -> Path:
        compiled.append(name)
        return tmp_path / name

    monkeypatch.setattr(engine_registry.cpp_build, "install", fake_install)
    result = run("engines", "install")
    assert result.exit_code == 1, result.output
    assert built == [True]
    assert sorted(set(compiled)) == ["llamacpp", "minja", "tokenizer"]
    assert "hfjinja: setup failed: hfjinja: npm install failed (exit 1): npm ERR! network " \
        "unreachable" in result.stderr
    assert "jinja2: available" in result.stdout
    assert not (tmp_path / "cache" / "node").exists()  # nothing half-installed
    unknown = run("engines", "install", "bogus")
    assert unknown.exit_code == 1 and "unknown engine(s) bogus" in unknown.output


def test_a_missing_python_engine_is_skipped_not_a_traceback(monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(engine_registry.importlib.util, "find_spec",
                        lambda name, *a: None if name == "minijinja" else real(name, *a))
    monkeypatch.setattr(engine_registry, "_instances", {})
    why = "the minijinja Python package is not installed (pip install minijinja)"
    assert engine_registry.ENGINES["minijinja-trim"].unavailable() == why
    table = tmp_path / "t.md"
    swept = run("sweep", str(CHATML), "--cases", "2", "--exhaustive", "0", "-o", str(table))
    no_traceback(swept)
    assert swept.exit_code == 0, swept.output
    assert f"skipped: minijinja ({why}); minijinja-trim ({why})" in swept.stderr
    rest = sorted(n for n in engine_registry.default_engine_names()
                  if not n.startswith("minijinja"))
    assert f"Engines: {', '.join(rest)}; skipped minijinja ({why})" in table.read_text()
    named = run("sweep", str(CHATML), "--cases", "2", "--engines", "minijinja")
    assert named.exit_code == 1 and f"minijinja: {why}" in named.output
