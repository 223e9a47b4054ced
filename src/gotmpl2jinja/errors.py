"""Errors a person can act on: every one carries a place (`FILE:LINE:COL: message`).

May depend on: nothing of the project.
"""

from __future__ import annotations

from collections.abc import Callable


class Gotmpl2JinjaError(Exception):
    """Base of every error this package raises on purpose (the CLI prints them, no traceback)."""

    def __init__(
        self, message: str, *, line: int | None = None, col: int | None = None,
        name: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.col = col
        self.name = name

    def __str__(self) -> str:
        where = [p for p in (self.name, self.line, self.col) if p is not None]
        if where:
            return ":".join(str(p) for p in where) + ": " + self.message
        return self.message


class TemplateSyntaxError(Gotmpl2JinjaError):
    """The Go template does not parse (where Go's parser would reject it too)."""


class TranslationError(Gotmpl2JinjaError):
    """A construct that cannot be translated faithfully; never emitted as wrong Jinja."""


class ModelfileError(Gotmpl2JinjaError):
    """A Modelfile that Ollama's parser would reject."""


class ReferenceRendererError(Gotmpl2JinjaError):
    """The Go reference renderer failed: Go missing, build failed, or an execution error."""


class RenderError(Gotmpl2JinjaError):
    """A template failed to render (Go execution error, Jinja raise_exception, engine error)."""


def translator_crash(exc: BaseException) -> str:
    """A bug of the translator as one sentence (the exception's type and message), for a run
    that must go on to its other inputs."""
    return f"the translator crashed ({type(exc).__name__}: {exc})"


def reporting_crash(convert: Callable[[], str]) -> str:
    """`convert()` (the translator's Jinja); a crash inside it is a Gotmpl2JinjaError with
    `translator_crash`'s sentence, not a traceback that hides the run's other inputs."""
    try:
        return convert()
    except Gotmpl2JinjaError:
        raise
    except Exception as exc:  # noqa: BLE001 - a translator bug must not hide the other files
        raise Gotmpl2JinjaError(f"{translator_crash(exc)}; please report it") from exc
