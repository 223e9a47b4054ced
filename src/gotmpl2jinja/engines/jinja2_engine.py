"""The `jinja2` engine: jinja2 configured as Hugging Face transformers configures it.

May depend on: engines.base, engines.host_functions, errors.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from gotmpl2jinja.engines.base import (
    DEFAULT_NOW,
    Deadline,
    TemplateRaised,
    alarm,
    render_timeout,
    timed_out,
)
from gotmpl2jinja.engines.host_functions import _Raise, _raise_exception
from gotmpl2jinja.errors import RenderError

# --------------------------------------------------------------------------------------------
# jinja2, configured as HF transformers does


class Jinja2Engine:
    """jinja2 exactly as `transformers.utils.chat_template_utils._compile_jinja_template`."""

    name = "jinja2"

    def __init__(self, now: dt.datetime | None = None) -> None:
        import jinja2
        import jinja2.ext
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        self._jinja2 = jinja2
        self.now = now or DEFAULT_NOW
        env = ImmutableSandboxedEnvironment(
            trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
        )
        env.filters["tojson"] = _transformers_tojson
        env.globals["raise_exception"] = _raise_exception
        env.globals["strftime_now"] = self._strftime_now
        self._env = env
        self._compiled: dict[str, Any] = {}

    def _strftime_now(self, fmt: str) -> str:
        return self._now_for_render.strftime(fmt)

    _now_for_render: dt.datetime = DEFAULT_NOW

    def render(
        self, template: str, context: dict[str, Any], *, now: dt.datetime | None = None
    ) -> str:
        """Render like `apply_chat_template(..., tokenize=False)` would."""
        jinja2 = self._jinja2
        compiled = self._compiled.get(template)
        if compiled is None:
            try:
                compiled = self._env.from_string(template)
            except jinja2.TemplateSyntaxError as exc:
                raise RenderError(
                    f"template does not compile on jinja2: line {exc.lineno}: {exc.message}"
                ) from None
            except (SyntaxError, RecursionError) as exc:  # CPython refusing jinja2's Python
                raise RenderError(f"template does not compile on jinja2: {exc}") from None
            self._compiled[template] = compiled
        self._now_for_render = now or self.now
        limit = render_timeout()
        try:
            with alarm(limit):
                return compiled.render(**context)
        except Deadline:
            raise timed_out(self.name, limit) from None
        except _Raise as exc:
            raise TemplateRaised(exc.message) from None
        except RecursionError:
            raise RenderError("jinja2: recursion limit exceeded") from None
        except Exception as exc:  # noqa: BLE001 - any engine failure is a render failure
            raise RenderError(f"jinja2: {type(exc).__name__}: {exc}") from None


def _transformers_tojson(
    x: Any, ensure_ascii: bool = False, indent: int | None = None,
    separators: tuple[str, str] | None = None, sort_keys: bool = False,
) -> str:
    """transformers' override: plain `json.dumps`, no HTML escaping, insertion order."""
    return json.dumps(
        x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )
