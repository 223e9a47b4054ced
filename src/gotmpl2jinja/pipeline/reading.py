"""Reading an input for the pipeline — a file, a pasted text, `-` or an installed model — and
placing an error about it where the user sees it (`FILE:LINE:COL` in the file they have open).

Why here and not in the command line: the CLI and the playground (`serve`) read the same
inputs and must word and place the same errors, so that a message in the page is the
message on the terminal. What is worth saying along the way (a Modelfile's dropped line, a
family's hint) is a `Note`, handed to the caller as it arises and kept in the result.

May depend on: `engines` (the render timeout), `errors`, `ollama`, `syntax`.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from gotmpl2jinja.engines.registry import set_render_timeout
from gotmpl2jinja.errors import Gotmpl2JinjaError, TemplateSyntaxError
from gotmpl2jinja.ollama.reference import shared_renderer
from gotmpl2jinja.ollama.source import (
    INPUT_KINDS,
    InputError,
    Source,
    apply_family,
    jinja_hint,
    load_source,
    source_from_bytes,
)
from gotmpl2jinja.ollama.store import default_models_dir
from gotmpl2jinja.syntax.parser import parse


@dataclass(frozen=True)
class Note:
    """One thing the user should hear about a run that is not an error: `text` is the line
    the CLI prints on stderr, word for word; `kind` is "warning", "note" or "checked"; `line`
    and `col` place it in the input when it is about a place (a page marks it there)."""

    kind: str
    text: str
    line: int | None = None
    col: int | None = None


#: Called with each Note as it arises (the CLI prints it at once, so that what was said
#: before an error stays said).
OnNote = Callable[[Note], None]


class Notes(list[Note]):
    """The notes of one run, in order, each also handed to `on_note` when one is given."""

    def __init__(self, on_note: OnNote | None = None) -> None:
        super().__init__()
        self.on_note = on_note

    def __call__(self, note: Note) -> None:
        """Keep `note` and hand it on (a Notes is itself an `OnNote`)."""
        self.append(note)
        if self.on_note is not None:
            self.on_note(note)

    def add(self, kind: str, text: str, line: int | None = None, col: int | None = None
            ) -> None:
        self(Note(kind, text, line, col))

    def warnings(self, texts: list[str]) -> None:
        """`warning: …` lines, one per text."""
        for text in texts:
            self.add("warning", f"warning: {text}")


def store_path(store: str | Path | None) -> Path | None:
    """An Ollama store as the commands name it: None when not given, "" for the default one
    ($OLLAMA_MODELS, else ~/.ollama/models), else the directory."""
    if store is None:
        return None
    return Path(store) if str(store) else default_models_dir()


def read_input(spec: str | None = None, *, text: str | bytes | None = None,
               name: str = "<input>", kind: str = "auto", store: str | Path | None = None,
               on_note: OnNote | None = None) -> Source:
    """The input as a `Source`: `spec` names a file, `-` (standard input) or an installed
    model `ollama:NAME` (read-only from `store`); or `text` is the input itself (a Go
    template or a Modelfile, pasted or uploaded; `name` names it in messages; its FROM is
    looked up in `store` only, never as a file beside a name that is not a path). `kind`
    ("auto", "template", "modelfile") says how to read it. Its warnings are handed to
    `on_note` as `warning: …` lines (they also stay in `Source.warnings`). Errors are
    Gotmpl2JinjaErrors placed in the input (`ModelfileError`, `InputError`, `StoreError`)."""
    if (spec is None) == (text is None):
        raise Gotmpl2JinjaError("read_input takes a spec or a text, not both or neither")
    if kind not in INPUT_KINDS:
        raise InputError(f"unknown input kind {kind!r}; choose from {', '.join(INPUT_KINDS)}")
    if text is not None:
        data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
        models = store_path(store)
        source = source_from_bytes(data, name, models_dir=models, kind=kind)
        if source.model_path is not None and (models is None
                                              or models not in source.model_path.parents):
            # a pasted Modelfile's FROM file names no file of this machine: its BOS facts
            # come from the store's base model only, or from what the caller gives
            source.model_path = None
    else:
        assert spec is not None
        source = load_source(spec, models_dir=store_path(store), kind=kind)
    Notes(on_note).warnings(source.warnings)
    return source


def with_family(source: Source, family: str | None, on_note: OnNote | None = None) -> None:
    """Give `source` the family the user names (`--family`), or hand `on_note` the notice
    that its text is a family's whose model Ollama treats by family
    (`ollama.source.apply_family`)."""
    notice = apply_family(source, family)
    if notice and on_note is not None:
        on_note(Note("note", notice))


def set_timeout(seconds: float) -> None:
    """How long one render may take, on the Go renderer and on every engine (the CLI's
    `--timeout`; a server sets it once so that a template that loops fails alone)."""
    set_render_timeout(seconds)
    shared_renderer().timeout = seconds


@contextlib.contextmanager
def placed_in(source: Source) -> Iterator[None]:
    """An error about the template, placed in the file the user has open: a Modelfile's
    TEMPLATE position becomes a position in the Modelfile, columns count characters, and the
    message starts with the file's name (`FILE:LINE:COL: message`)."""
    try:
        yield
    except Gotmpl2JinjaError as exc:
        if exc.line is not None:
            exc.line, exc.col = source.locate(exc.line, exc.col)
        exc.name = source.name
        jinja_hint(exc, source.template)
        raise


@contextlib.contextmanager
def go_syntax_placed(source: Source) -> Iterator[None]:
    """Go's parse error (`template: :3: unexpected …`, a line and no column) placed as
    `placed_in` places the project's errors, with the column of the project's parser, which
    follows Go's grammar (Go's own sentence and line when that parser accepts the template)."""
    try:
        yield
    except TemplateSyntaxError as exc:
        with placed_in(source):
            try:
                parse(source.template, name=source.name)
            except Gotmpl2JinjaError as ours:
                if ours.line is not None:
                    raise TemplateSyntaxError(ours.message, line=ours.line, col=ours.col
                                              ) from None
            match = re.match(r"template: [^:]*:(\d+): (.*)", exc.message, re.S)
            if match is None:
                raise
            raise TemplateSyntaxError(match[2], line=int(match[1])) from None
