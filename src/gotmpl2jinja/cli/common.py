"""What the commands share: friendly errors, reading a source (`pipeline.read_input`, its notes
on stderr), the engine and timeout options, the output-file checks, and the example template
shipped in the package.

Imports inside these helpers are deferred for start-up time (a command imports its stage when
it runs).

May depend on: errors (and, when a helper runs, batch, engines.registry, formats.writers,
ollama, pipeline).
"""

from __future__ import annotations

import functools
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gotmpl2jinja.errors import Gotmpl2JinjaError

if TYPE_CHECKING:
    from gotmpl2jinja.engines.registry import EngineSelection
    from gotmpl2jinja.ollama.source import Source
    from gotmpl2jinja.pipeline.reading import Note

F = TypeVar("F", bound=Callable[..., Any])


def friendly_errors(func: F) -> F:
    """Turn the package's own errors (and unreadable files) into one line on stderr, exit 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except Gotmpl2JinjaError as exc:
            click.echo(str(exc), err=True)
            sys.exit(1)
        except FileNotFoundError as exc:  # worded as every command's own check words it
            from gotmpl2jinja.ollama.source import no_such_file

            click.echo(no_such_file(str(exc.filename)) if exc.filename else str(exc), err=True)
            sys.exit(1)
        except OSError as exc:
            where = f"{exc.filename}: " if exc.filename else ""
            click.echo(f"{where}{exc.strerror or exc}", err=True)
            sys.exit(1)
        except RecursionError:
            click.echo("error: the input nests too deeply to process (Python's recursion limit)",
                       err=True)
            sys.exit(1)
        except UnicodeDecodeError as exc:
            click.echo(f"error: the input is not UTF-8 text ({exc.reason} at byte {exc.start})",
                       err=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]


#: What writing a GGUF needs, said when it is missing (`gguf` brings numpy: an extra).
GGUF_EXTRA_MISSING = ("--format gguf needs the gguf package (with numpy), which is not "
                      "installed: pip install 'gotmpl2jinja[gguf]'")


def gguf_writer_needed(ctx: click.Context, param: click.Parameter, fmt: str) -> str:
    """`--format`'s callback: `gguf` without the `gguf` extra ends the command here, before any
    work, in one line naming the extra (exit 2: the option cannot be used as installed)."""
    if fmt == "gguf":
        try:
            import gguf  # noqa: F401 - only its presence (and numpy's) is asked
        except ImportError:
            click.echo(GGUF_EXTRA_MISSING, err=True)
            ctx.exit(2)
    return fmt


#: `--ollama-store [DIR]`'s help, the same on every command that has it.
STORE_HELP = ("Ollama's models directory, where ollama:NAME and a Modelfile's FROM are looked "
              "up (alone: $OLLAMA_MODELS, else ~/.ollama/models).")


def store_option(extra: str = "") -> Callable[[F], F]:
    """`--ollama-store [DIR]`, one name and one meaning on every command: the Ollama store to
    use (DIR, or alone the default one). `extra` says what the command does with it."""
    def decorate(func: F) -> F:
        return click.option(
            "--ollama-store", "store", is_flag=False, flag_value="", default=None,
            metavar="[DIR]", help=STORE_HELP + (" " + extra if extra else ""))(func)
    return decorate


def store_dir(store: str | None) -> Path | None:
    """`--ollama-store`'s value as a directory: None when not given, the default store when
    given alone."""
    from gotmpl2jinja.pipeline.reading import store_path

    return store_path(store)


def echo_note(note: Note) -> None:
    """A note of the pipeline as the commands print it: its line, on stderr, at once."""
    click.echo(note.text, err=True)


def load_input(spec: str, kind: str = "auto", store: str | None = None) -> Source:
    """Every command's way to read its INPUT (a template, a Modelfile, `-`, `ollama:NAME`):
    `pipeline.read_input` with the `--ollama-store` given, its warnings on stderr."""
    from gotmpl2jinja.pipeline.reading import read_input

    return read_input(spec, kind=kind, store=store, on_note=echo_note)


class ExistingPath(click.Path):
    """`click.Path(exists=True)` that says a missing path in the words of every command
    (`FILE: no such file or directory`); a bad option value, so a usage error (exit 2), checked
    with the other options before any work."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(exists=True, **kwargs)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None
                ) -> Any:
        from gotmpl2jinja.ollama.source import no_such_file

        if isinstance(value, str) and value != "-" and not os.path.lexists(value):
            self.fail(no_such_file(value), param, ctx)
        return super().convert(value, param, ctx)


def read_source(path: str) -> tuple[str, str]:
    """Read a template file (or `-` for standard input) as UTF-8, a leading BOM dropped as
    `convert` and `verify` drop it; returns (display name, text)."""
    from gotmpl2jinja.ollama.source import decode_template

    name = "<stdin>" if path == "-" else path
    data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    return name, decode_template(data, name)


#: The template shipped inside the package, so that `verify --example` runs anywhere.
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "qwen-style.gotmpl"


def _positive_seconds(ctx: click.Context, param: click.Parameter, value: float | None
                      ) -> float | None:
    """--timeout: above 0, finite, at most a day (0 or less would mean waiting for ever)."""
    from gotmpl2jinja.ollama.reference.driver import MAX_TIMEOUT

    if value is not None and not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT):
        raise click.BadParameter(f"{value:g} is not a number of seconds above 0 and at most "
                                 f"{MAX_TIMEOUT:g}")
    return value


def timeout_option(func: F) -> F:
    """`--timeout SECONDS`: how long one render may take, on Go and on each engine."""
    return click.option(
        "--timeout", type=float, default=5.0, show_default=True, callback=_positive_seconds,
        help="Seconds one render may take, on Go and on each Jinja engine (a template that "
        "runs longer is reported, not waited for).")(func)


def engine_options(func: F) -> F:
    """`--engines a,b` and `--require-all-engines`, shared by the commands that verify."""
    func = click.option(
        "--require-all-engines", is_flag=True,
        help="Fail (exit 1) when an engine is unavailable instead of skipping it.")(func)
    return click.option(
        "--engines", default=None,
        help="Comma-separated engines (default: every available one but the opt-in "
        "ollama-jinja, Ollama's own Jinja path; see `gotmpl2jinja engines`).")(func)


def choose_engines(engines: str | None, require_all: bool, timeout: float | None,
                   quiet: bool = False) -> EngineSelection:
    """The engines a run uses (printed on stderr with those skipped and why, unless `quiet`:
    with --json the JSON says it); sets the render timeout of the Go renderer and engines."""
    from gotmpl2jinja.batch.files import parse_engine_list
    from gotmpl2jinja.engines.registry import select_engines

    selection = select_engines(parse_engine_list(engines), require_all=require_all)
    if not quiet:
        click.echo(selection.describe(), err=True)
    if timeout is not None:
        choose_timeout(timeout)
    return selection


def choose_timeout(seconds: float) -> None:
    """`--timeout`: how long one render may take on the Go renderer and on every engine."""
    from gotmpl2jinja.pipeline.reading import set_timeout

    set_timeout(seconds)


def convert_target(output: str | None, fmt: str, force: bool, gguf_source: str | None
                   ) -> Path | None:
    """Where `convert` writes (None: standard output), checked before any work: a format
    that writes a file needs -o (usage, exit 2); an output that cannot be written as asked is
    `formats.writers.output_path`'s error (exit 1), like every output problem."""
    from gotmpl2jinja.formats.writers import OutputError, output_path

    if output == "-":
        output = None
    if output is None:
        if fmt != "jinja":
            raise click.UsageError(f"--format {fmt} writes a file: give it -o PATH")
        return None
    if fmt == "gguf" and gguf_source is None:
        raise click.UsageError("--format gguf needs --gguf MODEL.gguf (the file to copy)")
    path = Path(output)
    if not path.exists() and not path.suffix and fmt != "lmstudio" \
            and not output.endswith(("/", os.sep)):
        raise OutputError(f"cannot write {output}: no such directory; create it to write "
                          f"{fmt}'s usual file inside, or give a file name with an extension")
    return output_path(fmt, output, force=force,
                       gguf_source=Path(gguf_source) if gguf_source else None)


def check_output_target(output: str, force: bool) -> Path:
    """Before any work: `-o FILE` must be a file we may write (`formats.writers.output_path`'s
    checks), and not a directory: a table or report has no usual file name to put in one."""
    from gotmpl2jinja.formats.writers import OutputError, output_path

    if Path(output).is_dir():
        raise OutputError(f"{output} is a directory; give -o a file name")
    return output_path("jinja", output, force=force)


def write_text_output(text: str, path: Path, force: bool) -> None:
    """Write a table or report atomically (a temp file beside it, then a rename)."""
    from gotmpl2jinja.formats.writers import write_output

    write_output(text, "jinja", path, force=force)

def as_option(func: F) -> F:
    """`--as template|modelfile`: how to read an input that could be either."""
    return click.option(
        "--as", "kind", type=click.Choice(["auto", "template", "modelfile"]), default="auto",
        show_default=True, help="Read INPUT as a Go template or a Modelfile (auto: by its "
        "name, else by its first line).")(func)


def family_option(func: F) -> F:
    """`--family NAME`: the model's family, whose steps Ollama takes whatever the template."""
    return click.option(
        "--family", "family", default=None, metavar="NAME",
        help="The model's family, for a template or Modelfile whose model Ollama treats by "
        "family (gpt-oss, qwen3, deepseek-r1); ollama:NAME knows its own.")(func)
