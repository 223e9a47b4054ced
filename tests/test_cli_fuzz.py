"""A seeded fuzz of the command line: every command and option, fed bad files, bad JSON, bad
numbers, damaged Ollama stores and odd paths.

What must hold for every invocation (the README's promises): no Python traceback; an exit code
the README documents (0, 1, or 2 for a usage error — and 2 for a number out of range); no file
overwritten without --force; no partial output (no temp file left, nothing new after a failed
convert/sweep/compare, no migrate outputs without their report). Renders are bounded by a
small --timeout and few cases; a hang would trip faulthandler's watchdog and fail the run.
"""

from __future__ import annotations

import faulthandler
import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gotmpl2jinja.cli.main import cli

ROOT = Path(__file__).resolve().parent.parent
CHATML = ROOT / "fixtures" / "corpus" / "ollama" / "template" / "chatml.gotmpl"
MODELFILE = (ROOT / "fixtures" / "corpus" / "ahnafnafee__modelfile-syntax" / "syntaxes" / "tests"
             / "template-qwen.modelfile")
PAIR = ROOT / "fixtures/corpus/huggingface__huggingface.js/entries/002__library_cogito_14b"

SEED = 16
INVOCATIONS = 300
SENTINEL = "sentinel: must survive without --force\n"


def build_workspace(root: Path) -> None:
    """The files an invocation may name (relative to the working directory)."""
    (root / "chatml.gotmpl").write_bytes(CHATML.read_bytes())
    (root / "bom.gotmpl").write_bytes(b"\xef\xbb\xbf" + CHATML.read_bytes())
    (root / "qwen.modelfile").write_bytes(MODELFILE.read_bytes())
    (root / "latin1.gotmpl").write_bytes(b"caf\xe9 {{ .Prompt }}")
    (root / "empty.gotmpl").write_bytes(b"")
    (root / "unclosed.gotmpl").write_text("{{ if .Messages }}x")
    (root / "loop.gotmpl").write_text("{{ range 10000000000000 }}{{ end }}")
    (root / "loop.jinja").write_text("{% for i in range(100000) %}{% for j in range(100000) %}"
                                     "{% endfor %}{% endfor %}")
    (root / "good.jinja").write_text("{% for m in messages %}{{ m.content }}{% endfor %}")
    (root / "weird name é.gotmpl").write_bytes(CHATML.read_bytes())
    conversations = {
        "conv.json": json.dumps({"messages": [{"role": "user", "content": "Hi"}]}),
        "badjson.json": '{"messages": [',
        "array.json": "[1, 2]",
        "bigint.json": '{"messages": [], "tools": [{"type": "function", "function": {"name": '
                       '"f", "parameters": {"type": "object", "properties": {}, "x": '
                       + "7" * 5000 + "}}}]}",
        "deep.json": "[" * 100000 + "]" * 100000,
        "null.json": '{"messages": [{"role": "user", "content": null}]}',
        "nan.json": '{"messages": [], "tools": [{"type": "function", "function": {"name": "f", '
                    '"parameters": {"type": "object", "properties": {}, "x": NaN}}}]}',
        "notutf8.json": b'{"messages": [{"role": "user", "content": "\xff"}]}',
    }
    for name, text in conversations.items():
        path = root / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)
    (root / "config.json").write_text('{"bos_token": "<s>", "eos_token": "</s>"}')
    (root / "bigconfig.json").write_text('{"x": ' + "1" * 5000 + "}")
    (root / "empty_dir").mkdir()
    (root / "templates").mkdir()
    (root / "templates" / "chatml.gotmpl").write_bytes(CHATML.read_bytes())
    corpus = root / "corpus" / "entries" / "one"
    corpus.mkdir(parents=True)
    for name in ("template.gotmpl", "gguf_chat_template.jinja"):
        (corpus / name).write_bytes((PAIR / name).read_bytes())
    (root / "existing.jinja").write_text(SENTINEL)
    (root / "existing_dir").mkdir()
    (root / "existing_dir" / "chat_template.jinja").write_text(SENTINEL)
    (root / "existing_dir" / "tokenizer_config.json").write_text(SENTINEL)
    (root / "migrated").mkdir()
    (root / "migrated" / "report.md").write_text(SENTINEL)
    (root / "fake.gguf").write_bytes(b"GGUF\x03\x00\x00\x00")
    store = root / "store"
    manifest = store / "manifests/registry.ollama.ai/library/broken/latest"
    manifest.parent.mkdir(parents=True)
    manifest.write_text('{"layers": "not a list"}')
    other = store / "manifests/registry.ollama.ai/library/digest/latest"
    other.parent.mkdir(parents=True)
    other.write_text('{"config": {"digest": 7}, "layers": [{"digest": 1}]}')
    (store / "blobs").mkdir()


FILES = ["chatml.gotmpl", "bom.gotmpl", "qwen.modelfile", "latin1.gotmpl", "empty.gotmpl",
         "unclosed.gotmpl", "weird name é.gotmpl", "missing.gotmpl", "empty_dir", "templates",
         "-", "", "existing_dir/", "/dev/null"]
CONVERSATIONS = ["conv.json", "badjson.json", "array.json", "bigint.json", "deep.json",
                 "null.json", "nan.json", "notutf8.json", "missing.json", "-", "empty_dir"]
STDIN = ["", "{{ .Prompt }}", "# heading\nSYSTEM x {{ .Prompt }}", "FROM x\nTEMPLATE {{ if }}",
         '{"messages": []}', "\ufeff{{ .Prompt }}", "\x00\x01"]
COUNTS = ["-5", "-1", "0", "x", "1.5"]
TIMEOUTS = ["0", "-1", "inf", "nan", "abc", "1e9"]
SEEDS = ["0", "-1", "x", "9" * 30]
ENGINE_LISTS = ["jinja2", "jinja2,minijinja", "bogus", ",", "minijinja-trim", "hfjinja"]
OUTPUTS = ["out.jinja", "existing.jinja", "existing_dir", "missing_dir/x.jinja", "newdir/",
           "out", "/dev/null/x", "weird é.json"]


def maybe(rng: random.Random, p: float, *args: str) -> list[str]:
    return list(args) if rng.random() < p else []


def pick(rng: random.Random, options: list[str]) -> str:
    return rng.choice(options)


def number(rng: random.Random, good: list[str], odd: list[str], p_odd: float = 0.2) -> str:
    """Mostly a sensible value, sometimes an odd one (which must be a usage error or work)."""
    return pick(rng, odd if rng.random() < p_odd else good)


def invocation(rng: random.Random) -> tuple[list[str], str | None]:
    """One random command line (and standard input)."""
    command = pick(rng, ["parse", "render", "convert", "verify", "migrate", "compare", "sweep",
                         "modelfile", "runtime", "engines"])
    args: list[str] = [command]
    if command == "parse":
        args += [pick(rng, FILES), *maybe(rng, 0.5, "--json")]
    elif command == "render":
        args += [pick(rng, FILES), pick(rng, CONVERSATIONS)]
        args += maybe(rng, 0.3, "--now", pick(rng, ["2025-01-31T12:00:00Z", "yesterday", ""]))
        args += maybe(rng, 0.3, "--go-struct-function")
        args += ["--timeout", number(rng, ["1"], TIMEOUTS)]
    elif command == "convert":
        args += [pick(rng, [*FILES, "ollama:broken", "ollama:digest", "ollama:", "ollama:x"])]
        args += maybe(rng, 0.6, "-o", pick(rng, OUTPUTS))
        args += maybe(rng, 0.5, "--format", pick(rng, ["jinja", "hf", "lmstudio", "gguf", "x"]))
        args += maybe(rng, 0.2, "--gguf", pick(rng, ["fake.gguf", "missing.gguf", "chatml.gotmpl"]))
        args += maybe(rng, 0.3, "--models", pick(rng, ["store", "missing_store", "chatml.gotmpl"]))
        args += maybe(rng, 0.3, "--force")
        args += maybe(rng, 0.3, "--as", pick(rng, ["template", "modelfile", "auto", "x"]))
    elif command == "verify":
        args += [pick(rng, FILES) for _ in range(rng.randint(0, 2))]
        args += maybe(rng, 0.1, "--example")
        args += ["--cases", number(rng, ["1", "2"], COUNTS)]
        args += maybe(rng, 0.2, "--exhaustive", pick(rng, ["-1", "0", "x"]))
        args += ["--engines", number(rng, ["jinja2", "jinja2,minijinja"], ENGINE_LISTS, 0.4)]
        args += maybe(rng, 0.2, "--require-all-engines")
        args += ["--timeout", number(rng, ["2"], TIMEOUTS)]
        args += maybe(rng, 0.3, "--jinja", pick(rng, ["good.jinja", "loop.jinja", "missing.j"]))
        args += maybe(rng, 0.2, "--as", pick(rng, ["template", "modelfile"]))
        args += maybe(rng, 0.3, "--json")
        args += maybe(rng, 0.2, "--seed", pick(rng, SEEDS))
    elif command == "migrate":
        args += [pick(rng, ["templates", "chatml.gotmpl", "missing", "empty_dir", "loop.gotmpl"]),
                 pick(rng, ["mig_out", "migrated", "chatml.gotmpl", "existing_dir"])]
        args += maybe(rng, 0.3, "--format", pick(rng, ["jinja", "hf", "lmstudio", "gguf"]))
        args += maybe(rng, 0.3, "--ollama-store", pick(rng, ["store", "missing_store"]))
        args += ["--cases", number(rng, ["1", "2"], COUNTS)]
        args += ["--engines", number(rng, ["jinja2"], ENGINE_LISTS, 0.4)]
        args += ["--timeout", number(rng, ["2"], TIMEOUTS)]
        args += maybe(rng, 0.2, "--report",
                      pick(rng, ["r.md", "missing_dir/r.md", "existing.jinja"]))
        args += maybe(rng, 0.3, "--force")
        args += maybe(rng, 0.3, "--json")
    elif command == "compare":
        if rng.random() < 0.4:
            args += ["--corpus", pick(rng, ["corpus", "empty_dir", "missing"])]
            args += maybe(rng, 0.6, "-o", pick(rng, OUTPUTS))
        else:
            args += [pick(rng, FILES), pick(rng, ["good.jinja", "loop.jinja", "unclosed.gotmpl",
                                                  "missing.jinja"])]
            args += maybe(rng, 0.3, "--tokenizer-config",
                          pick(rng, ["config.json", "bigconfig.json", "badjson.json"]))
        args += ["--cases", number(rng, ["0", "1", "2"], COUNTS)]
        args += maybe(rng, 0.3, "--force")
        args += maybe(rng, 0.3, "--json")
        args += maybe(rng, 0.2, "--bos", "<s>")
        args += maybe(rng, 0.2, "--engines", pick(rng, ENGINE_LISTS))
    elif command == "sweep":
        args += [pick(rng, ["templates", "empty_dir", "missing", "qwen.modelfile"])]
        args += maybe(rng, 0.6, "-o", pick(rng, OUTPUTS))
        args += ["--cases", number(rng, ["1", "2"], COUNTS)]
        args += ["--exhaustive", number(rng, ["0"], ["-1", "x"])]
        args += ["--engines", number(rng, ["jinja2"], ENGINE_LISTS, 0.4)]
        args += ["--timeout", number(rng, ["2"], TIMEOUTS)]
        args += maybe(rng, 0.3, "--force")
        args += maybe(rng, 0.3, "--json")
    elif command == "modelfile":
        args += [pick(rng, [*FILES, "broken", "qwen3"])]
        args += maybe(rng, 0.3, "--store")
        args += maybe(rng, 0.5, "--json")
    elif command == "runtime":
        args += maybe(rng, 0.5, pick(rng, ["print_int", "json_string", "nope", ""]))
        args += maybe(rng, 0.5, "--list")
    else:
        args += maybe(rng, 0.5, "install", pick(rng, ["bogus", "x,y"]))
        args += maybe(rng, 0.2, "--bogus-option")
    stdin = pick(rng, STDIN) if "-" in args else None
    return args, stdin


def snapshot(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(root.rglob("*"))}


RANGE_OPTIONS = {"--cases", "--exhaustive", "--timeout"}


def check(args: list[str], result: Any, before: dict[str, bytes | None],
          after: dict[str, bytes | None]) -> None:
    where = f"gotmpl2jinja {' '.join(repr(a) for a in args)}\n{result.output[-2000:]}"
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        f"{where}\n{result.exc_info}"
    assert "Traceback" not in result.output, where
    assert result.exit_code in (0, 1, 2), where
    for option in RANGE_OPTIONS & set(args):
        value = args[args.index(option) + 1]
        bad = value in ("-5", "-1", "x", "1.5", "abc", "nan", "inf", "1e9") or (
            value == "0" and option == "--timeout")
        if bad:
            assert result.exit_code == 2, f"{option} {value} accepted\n{where}"
    leftovers = [name for name in after if name.endswith(".tmp")]
    assert not leftovers, f"temp files left: {leftovers}\n{where}"
    if "--force" not in args:
        for name, data in before.items():
            if data is not None:
                assert after.get(name) == data, f"{name} changed without --force\n{where}"
    new = sorted(set(after) - set(before))
    command = args[0]
    if command in ("parse", "render", "verify", "modelfile", "runtime", "engines"):
        assert not new, f"{command} wrote {new}\n{where}"
    if command in ("convert", "sweep", "compare") and result.exit_code != 0:
        assert not new, f"a failed {command} left {new}\n{where}"
    if command == "migrate":
        out_dirs = {n.split("/")[0] for n in new}
        for out in out_dirs:
            files = [n for n in new if n.startswith(out + "/")]
            if files:
                reports = [n for n in after if n.endswith("report.md")]
                assert reports, f"migrate wrote {files} without a report\n{where}"


@pytest.fixture()
def watchdog() -> Any:
    """Fail loudly (dump and exit) instead of hanging for ever."""
    faulthandler.dump_traceback_later(300, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def test_cli_fuzz(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, watchdog: Any) -> None:
    template = tmp_path / "template"
    template.mkdir()
    build_workspace(template)
    monkeypatch.setenv("OLLAMA_MODELS", str(template / "store"))
    rng = random.Random(SEED)
    runner = CliRunner()
    for number in range(INVOCATIONS):
        args, stdin = invocation(rng)
        work = tmp_path / f"w{number}"
        shutil.copytree(template, work, symlinks=True)
        monkeypatch.chdir(work)
        monkeypatch.setenv("OLLAMA_MODELS", str(work / "store"))
        before = snapshot(work)
        result = runner.invoke(cli, args, input=stdin)
        check(args, result, before, snapshot(work))
        monkeypatch.chdir(tmp_path)
        shutil.rmtree(work)
