"""Writers for a converted Jinja chat template: `jinja`, `hf`, `lmstudio`, `gguf`.

Why each writer is careful: the template must arrive byte for byte (no added newline, no
re-encoding), and the user's other files must survive. So: nothing that exists is overwritten
without `force`; every write goes to a temp file in the same directory and is moved into place
with `os.replace` (a crash leaves the old file or the new one, never half of one); a GGUF input
is only read, and everything in it except `tokenizer.chat_template` is copied byte for byte.

Formats:
- `jinja`: the template as is (a `chat_template.jinja`; a directory gets that file name).
- `hf`: `chat_template` set in a `tokenizer_config.json` (a directory gets that file name), with
  the model's BOS facts when known: `bos_token`, `eos_token`, `add_bos_token` (the key
  llama.cpp's converter turns into `tokenizer.ggml.add_bos_token`). A new file holds just
  those keys. An existing file is UPDATED IN PLACE ONLY WITH `force` (the message without it
  says so); every other key keeps its value and its order, written with
  indent 2, non-ASCII kept, and a trailing newline (as transformers writes it).
- `lmstudio`: LM Studio's model config, `{"type": "manual", "jinjaPromptTemplate":
  {"template": …}, "stopStrings": […]}` with the stop strings from `PARAMETER stop`.
- `gguf`: a copy of `gguf_source` with `tokenizer.chat_template` set (replaced where it was,
  appended after the other keys otherwise).

May depend on: `errors` (and `ollama.vocab` for a type).
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from gotmpl2jinja.errors import Gotmpl2JinjaError

if TYPE_CHECKING:
    from gotmpl2jinja.ollama.vocab import BosFacts

FORMATS: tuple[str, ...] = ("jinja", "hf", "lmstudio", "gguf")
CHAT_TEMPLATE_KEY = "tokenizer.chat_template"
_DEFAULT_NAMES = {"jinja": "chat_template.jinja", "hf": "tokenizer_config.json"}
_GGUF_STRING = 8  # GGUFValueType.STRING
_GGUF_DEFAULT_ALIGNMENT = 32


class OutputError(Gotmpl2JinjaError):
    """The output cannot be written as asked (exists, bad input file, unknown format…)."""


def write_output(
    jinja: str, fmt: str, out: Path, *, force: bool = False, stop: list[str] | None = None,
    gguf_source: Path | None = None, bos: BosFacts | None = None,
) -> Path:
    """Write `jinja` in format `fmt` to `out` (file, or directory for jinja/hf/gguf); returns
    the path written."""
    out = output_path(fmt, out, force=force, gguf_source=gguf_source)
    if fmt == "jinja":
        _atomic_write(out, lambda f: f.write(jinja.encode("utf-8")))
    elif fmt == "hf":
        data = _hf_config(jinja, out, bos)
        _atomic_write(out, lambda f: f.write(data))
    elif fmt == "lmstudio":
        data = lmstudio_config(jinja, stop or []).encode("utf-8")
        _atomic_write(out, lambda f: f.write(data))
    else:
        if gguf_source is None:
            raise OutputError("the gguf format needs the GGUF file to copy (gguf_source)")
        _write_gguf(jinja, Path(gguf_source), out)
    return out


def output_path(fmt: str, out: Path | str, *, force: bool = False,
                gguf_source: Path | None = None) -> Path:
    """The file `write_output` writes for `fmt` and `out`, checked: a command calls it before
    any work, so that an output it could not write is said at once, not after the check ran.
    Refused: an unknown format, a directory that does not exist (`out/` or `out/x`), a
    directory where a file name is needed, an existing file without `force`, and a directory
    this process cannot write in."""
    if fmt not in FORMATS:
        raise OutputError(f"unknown output format {fmt!r}; choose one of {', '.join(FORMATS)}")
    named = str(out)
    out = Path(out)
    if named.endswith(("/", os.sep)) and not out.is_dir():
        raise OutputError(f"cannot write {named}: directory {out} does not exist")
    if out.is_dir():
        if fmt in _DEFAULT_NAMES:
            out = out / _DEFAULT_NAMES[fmt]
        elif fmt == "gguf" and gguf_source is not None:
            out = out / Path(gguf_source).name
        else:
            raise OutputError(f"{out} is a directory; give the {fmt} output a file name")
    if not out.parent.is_dir():
        raise OutputError(f"cannot write {out}: directory {out.parent} does not exist")
    if out.exists() and not force:
        if fmt == "hf":  # not an overwrite of the user's file: an update of one key
            raise OutputError(f"{out} already exists; --force updates it in place "
                              "(chat_template, and the BOS keys when known; every other key "
                              "is kept)")
        raise OutputError(f"{out} already exists (use --force to overwrite it)")
    if not os.access(out.parent, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {out}: directory {out.parent} is not writable")
    return out


def _atomic_write(out: Path, write: Callable[[IO[bytes]], Any]) -> None:
    """Write through a temp file beside `out`, then os.replace; keep an old file's mode."""
    try:
        mode = out.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    try:
        fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    except OSError as exc:  # named by the target, not by the temp file nobody asked for
        raise OutputError(f"cannot write {out}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, out)
    except OSError as exc:  # a full disk, a read-only target …: the old file stays as it was
        Path(tmp).unlink(missing_ok=True)
        raise OutputError(f"cannot write {out}: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _hf_config(jinja: str, out: Path, bos: BosFacts | None = None) -> bytes:
    """tokenizer_config.json with `chat_template` and the known BOS facts set; other keys,
    values and order kept (an AddedToken object keeps its form, its content set)."""
    config: dict[str, Any] = {}
    if out.exists():
        try:
            loaded = json.loads(out.read_bytes())
        except (ValueError, UnicodeDecodeError) as exc:  # ValueError: also a >4300-digit int
            raise OutputError(f"{out} is not valid JSON this tool can update ({exc}); "
                              "not updating it") from None
        except RecursionError:
            raise OutputError(f"{out} nests too deeply to update; not updating it") from None
        if not isinstance(loaded, dict):
            raise OutputError(f"{out} does not hold a JSON object; not updating it")
        config = loaded
    return tokenizer_config(jinja, bos, config, name=str(out)).encode("utf-8")


def tokenizer_config(jinja: str, bos: BosFacts | None = None,
                     config: dict[str, Any] | None = None, *, name: str = "the config") -> str:
    """The text of the `hf` format: `config` (an existing tokenizer_config.json's object; a new
    file's when None) with `chat_template` and the known BOS facts set — what `write_output`
    writes, for a caller that hands the file out instead (a download)."""
    config = {} if config is None else config
    existing = config.get("chat_template")
    if isinstance(existing, list):  # named templates: replace the default one
        named = [t for t in existing if isinstance(t, dict) and t.get("name") == "default"]
        if not named:
            raise OutputError(f"{name} has named chat templates but none called 'default'")
        named[0]["template"] = jinja
    else:
        config["chat_template"] = jinja
    if bos is not None:
        for key, text in (("bos_token", bos.bos_token), ("eos_token", bos.eos_token)):
            if text is None:
                continue
            if isinstance(config.get(key), dict):
                config[key]["content"] = text
            else:
                config[key] = text
        if bos.adds_bos is not None:
            config["add_bos_token"] = bos.adds_bos
    return json.dumps(config, indent=2, ensure_ascii=False) + "\n"


def lmstudio_config(jinja: str, stop: list[str]) -> str:
    """LM Studio's manual prompt-template config, as its own files look (indent 2, no newline)."""
    config = {
        "type": "manual",
        "jinjaPromptTemplate": {"template": jinja},
        "stopStrings": list(stop),
    }
    return json.dumps(config, indent=2, ensure_ascii=False)


def _write_gguf(jinja: str, source: Path, out: Path) -> None:
    """Copy `source` to `out` with tokenizer.chat_template set; every other byte kept."""
    try:
        from gguf import GGUFReader
    except ImportError:  # pragma: no cover - depends on the environment
        raise OutputError(
            "writing GGUF needs the gguf package: pip install 'gotmpl2jinja[gguf]'"
        ) from None
    if not source.is_file():
        raise OutputError(f"GGUF source {source} does not exist")
    if out.exists() and os.path.samefile(source, out):
        raise OutputError(f"refusing to write over the GGUF source {source}; choose another path")
    try:
        reader = GGUFReader(source, "r")
    except (ValueError, KeyError, IndexError) as exc:
        raise OutputError(f"{source} is not a readable GGUF file: {exc}") from None

    order = ">" if reader.endianess.name == "BIG" else "<"
    fields = [f for f in reader.fields.values() if not f.name.startswith("GGUF.")]
    kv_count_field = reader.fields["GGUF.kv_count"]
    kv_start = kv_count_field.offset + _field_size(kv_count_field)
    kv_end = fields[-1].offset + _field_size(fields[-1]) if fields else kv_start
    if reader.tensors:
        last = reader.tensors[-1].field
        ti_end = last.offset + _field_size(last)
    else:
        ti_end = kv_end
    alignment = int(getattr(reader, "alignment", _GGUF_DEFAULT_ALIGNMENT))
    data_offset = int(reader.data_offset)

    key = CHAT_TEMPLATE_KEY.encode("utf-8")
    value = jinja.encode("utf-8")
    new_field = (
        struct.pack(f"{order}Q", len(key)) + key + struct.pack(f"{order}I", _GGUF_STRING)
        + struct.pack(f"{order}Q", len(value)) + value
    )
    replaced = any(f.name == CHAT_TEMPLATE_KEY for f in fields)
    n_kv = len(fields) + (0 if replaced else 1)

    def write(handle: IO[bytes]) -> None:
        with source.open("rb") as src:
            def copy(start: int, end: int) -> None:
                src.seek(start)
                remaining = end - start
                while remaining > 0:
                    chunk = src.read(min(remaining, 1 << 24))
                    if not chunk:
                        raise OutputError(f"{source} ended early; is it truncated?")
                    handle.write(chunk)
                    remaining -= len(chunk)

            copy(0, kv_count_field.offset)
            handle.write(struct.pack(f"{order}Q", n_kv))
            for f in fields:
                if f.name == CHAT_TEMPLATE_KEY:
                    handle.write(new_field)
                else:
                    copy(f.offset, f.offset + _field_size(f))
            if not replaced:
                handle.write(new_field)
            position = handle.tell()
            copy(kv_end, ti_end)
            position += ti_end - kv_end
            handle.write(b"\0" * (-position % alignment))
            copy(data_offset, source.stat().st_size)

    _atomic_write(out, write)


def _field_size(field: Any) -> int:
    """Bytes a GGUFReader field occupies in the file (its parts are views of the file)."""
    return int(sum(part.nbytes for part in field.parts))
