"""What every engine shares: the pinned clock, the timeout, the errors, the Engine protocol.

Kept apart from `engines` (the Python-hosted engines and the registry) so that engine modules
of their own, such as `cppengines`, depend on this and the registry depends on them, never the
other way round.

May depend on: errors, ollama.reference.driver (the shared timeout default).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import signal
import threading
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from gotmpl2jinja.errors import Gotmpl2JinjaError, RenderError
from gotmpl2jinja.ollama.reference.driver import DEFAULT_TIMEOUT, check_timeout

#: The clock every engine reads when no "now" is given: deterministic, and the same instant as
#: the Go reference renderer's default (`reference.DEFAULT_NOW`, 2026-08-21T12:00:00Z).
#: Engines use its wall-clock fields (strftime does not convert time zones).
DEFAULT_NOW = dt.datetime(2026, 8, 21, 12, 0, 0, tzinfo=dt.timezone.utc)


class EngineError(Gotmpl2JinjaError):
    """An engine cannot be used or set up (unknown, unavailable, its setup failed)."""


class EngineTimeout(Gotmpl2JinjaError):
    """A render ran past the timeout (a template that loops): not a case's outcome, the end of
    that template's check. Deliberately not a RenderError, so batch helpers do not count it."""


_render_timeout = DEFAULT_TIMEOUT


def render_timeout() -> float:
    """Seconds one render may take on an engine (default: the Go side's, 5 s)."""
    return _render_timeout


def set_render_timeout(seconds: float) -> None:
    """Set the per-render timeout of every engine (positive and finite)."""
    global _render_timeout
    _render_timeout = check_timeout(seconds)


def timed_out(name: str, seconds: float) -> EngineTimeout:
    return EngineTimeout(f"{name}: rendering did not finish within {seconds:g} s "
                         "(a template that loops? see --timeout)")


class TemplateRaised(RenderError):
    """The template itself called `raise_exception(message)` (the Jinja side of a Go exec error)."""

    raised = True


class RuntimeRefused(RenderError):
    """A runtime context (llama-server) refused the request before any template ran (its HTTP
    400); `kind` names the refusal, a class of its own in the harness."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def is_raised(exc: BaseException) -> bool:
    """True when a render failed because the template raised, not because the engine choked."""
    return isinstance(exc, TemplateRaised)


@runtime_checkable
class Engine(Protocol):
    """A Jinja implementation configured like one real host."""

    name: str

    def render(
        self, template: str, context: dict[str, Any], *, now: dt.datetime | None = None
    ) -> str:
        """Render `template` with `context`; raise RenderError / TemplateRaised on failure."""
        ...


def source_key(template: str) -> str:
    """The key a compiled template is cached under (engine processes keep it by this key)."""
    return hashlib.sha1(template.encode("utf-8")).hexdigest()


class Deadline(BaseException):
    """Internal: SIGALRM fired inside an in-process render (a BaseException, so that no
    `except Exception` inside the engine swallows it)."""


@contextlib.contextmanager
def alarm(seconds: float) -> Iterator[None]:
    """Interrupt Python code running past `seconds` (main thread only; elsewhere no limit)."""
    if threading.current_thread() is not threading.main_thread() or \
            not hasattr(signal, "setitimer"):
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise Deadline

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
