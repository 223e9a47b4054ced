"""The `minijinja` and `minijinja-trim` engines: minijinja's Python binding as TGI (no trim)
and mistral.rs (trim_blocks + lstrip_blocks) configure it.

May depend on: engines.base, engines.host_functions, errors.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from gotmpl2jinja.engines.base import (
    DEFAULT_NOW,
    TemplateRaised,
    render_timeout,
    source_key,
    timed_out,
)
from gotmpl2jinja.engines.host_functions import _Raise, _raise_exception
from gotmpl2jinja.errors import RenderError


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


# --------------------------------------------------------------------------------------------
# minijinja (Python binding), as TGI (no trim) and mistral.rs (trim + lstrip) configure it


#: minijinja cannot be interrupted by a signal; its "fuel" (instructions per render) bounds a
#: render instead: about this many per second of timeout (measured ~2.6e7/s on a loaded 2-core
#: machine; real templates use well under 1e6).
FUEL_PER_SECOND = 20_000_000


class MiniJinjaEngine:
    """minijinja with pycompat and host functions `raise_exception` / `strftime_now`."""

    def __init__(self, *, trim: bool, now: dt.datetime | None = None) -> None:
        import minijinja

        self._minijinja = minijinja
        self.name = "minijinja-trim" if trim else "minijinja"
        self.now = now or DEFAULT_NOW
        self._now_for_render = self.now
        env = minijinja.Environment(
            trim_blocks=trim, lstrip_blocks=trim, pycompat=True, debug=False
        )
        # (add_function exists at run time; minijinja's type stubs omit it)
        env.add_function("raise_exception", _raise_exception)  # type: ignore[attr-defined]
        env.add_function("strftime_now", self._strftime_now)  # type: ignore[attr-defined]
        self._env = env
        self._known: set[str] = set()

    def _strftime_now(self, fmt: str) -> str:
        return self._now_for_render.strftime(fmt)

    def render(
        self, template: str, context: dict[str, Any], *, now: dt.datetime | None = None
    ) -> str:
        """Render; compiled templates are kept in the environment under a hash of the source."""
        minijinja = self._minijinja
        key = "t" + source_key(template)  # no file extension: no auto-escaping
        if key not in self._known:
            try:
                self._env.add_template(key, template)
            except minijinja.TemplateError as exc:
                raise RenderError(
                    f"template does not compile on {self.name}: {_first_line(exc.message)}"
                ) from None
            self._known.add(key)
        self._now_for_render = now or self.now
        limit = render_timeout()
        self._env.fuel = int(limit * FUEL_PER_SECOND)
        try:  # (no SIGALRM here: an exception raised inside the Rust engine makes it panic)
            return self._env.render_template(key, **context)
        except _Raise as exc:
            raise TemplateRaised(exc.message) from None
        except minijinja.TemplateError as exc:
            if "out of fuel" in exc.message:
                raise timed_out(self.name, limit) from None
            raise RenderError(f"{self.name}: {_first_line(exc.message)}") from None
        except Exception as exc:  # noqa: BLE001 - a host callback failed
            raise RenderError(f"{self.name}: {type(exc).__name__}: {exc}") from None
