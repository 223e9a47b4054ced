"""Hugging Face transformers' own chat-template code path as an engine (`transformers`).

`engines.Jinja2Engine` configures jinja2 the way transformers does; this engine is transformers
itself: `transformers.utils.chat_template_utils.render_jinja_template`, the function behind
`tokenizer.apply_chat_template(..., tokenize=False)`, given the contract's variables as
`apply_chat_template` passes them (messages, tools, add_generation_prompt as the caller gave it,
and the rest as template kwargs); a context with `continue_final_message` (the harness's prefill
call) is rendered through transformers' own prefill: the final turn rendered closed, marked and
cut after its content. Only the clock is pinned: its `strftime_now` reads `datetime.now()` of that
module, which is answered from the render's `now` while it runs. Available where transformers
is installed (a test extra; torch is not needed).

May depend on: engines.base, errors.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import threading
from typing import Any

from gotmpl2jinja.engines.base import (
    DEFAULT_NOW,
    Deadline,
    TemplateRaised,
    alarm,
    render_timeout,
    timed_out,
)
from gotmpl2jinja.errors import RenderError


def transformers_missing() -> str | None:
    """None when transformers can be imported, else why not (the engine's probe)."""
    if importlib.util.find_spec("transformers") is None:
        return "transformers is not installed (pip install transformers; torch is not needed)"
    return None


class TransformersEngine:
    """Renders through transformers' `render_jinja_template`, clock pinned."""

    name = "transformers"
    #: its prefill is its own (`continue_final_message`): the harness asks Go which prefills
    #: that mechanism can give Ollama's bytes for (`verify.closed.prefill_cut`)
    cuts_prefill = True

    def __init__(self, now: dt.datetime | None = None) -> None:
        import os

        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")  # no "PyTorch was not found"
        import jinja2
        from transformers.utils import chat_template_utils

        self._module = chat_template_utils
        self._template_error = jinja2.exceptions.TemplateError
        self._syntax_error = jinja2.exceptions.TemplateSyntaxError
        self.now = now or DEFAULT_NOW
        self._lock = threading.Lock()

    def render(self, template: str, context: dict[str, Any], *,
               now: dt.datetime | None = None) -> str:
        """What `apply_chat_template(messages, tools=…, add_generation_prompt=…,
        continue_final_message=…, **kwargs, tokenize=False)` returns for this context."""
        module = self._module
        when = now or self.now
        kwargs = {k: v for k, v in context.items()
                  if k not in ("messages", "tools", "add_generation_prompt",
                               "continue_final_message")}
        prefill = bool(context.get("continue_final_message", False))
        # a prefill is transformers' own: the final turn rendered closed (apply_chat_template
        # refuses add_generation_prompt with it) and the text cut after the final content
        generation = False if prefill else context.get("add_generation_prompt", False)
        pinned = _pinned_datetime(when)
        with self._lock:
            real = module.datetime
            module.datetime = pinned
            limit = render_timeout()
            try:
                with alarm(limit):
                    result = module.render_jinja_template(
                        conversations=[context.get("messages", [])],
                        tools=context.get("tools"), chat_template=template,
                        add_generation_prompt=generation,
                        continue_final_message=prefill, **kwargs)
            except Deadline:
                raise timed_out(self.name, limit) from None
            except self._syntax_error as exc:
                raise RenderError(f"template does not compile on transformers: line "
                                  f"{exc.lineno}: {exc.message}") from None
            except self._template_error as exc:
                if type(exc) is self._template_error:  # transformers' raise_exception
                    raise TemplateRaised(str(exc.message or "")) from None
                raise RenderError(f"transformers: {type(exc).__name__}: {exc}") from None
            except RecursionError:
                raise RenderError("transformers: recursion limit exceeded") from None
            except Exception as exc:  # noqa: BLE001 - any failure of the host is a render failure
                raise RenderError(f"transformers: {type(exc).__name__}: {exc}") from None
            finally:
                module.datetime = real
        rendered = result[0] if isinstance(result, tuple) else result
        return str(rendered[0] if isinstance(rendered, list) else rendered)


def _pinned_datetime(when: dt.datetime) -> type[dt.datetime]:
    """A datetime class whose now() is `when` (wall-clock fields, as the other engines)."""
    naive = when.replace(tzinfo=None)

    class Pinned(dt.datetime):
        @classmethod
        def now(cls, tz: dt.tzinfo | None = None) -> Pinned:  # type: ignore[override]
            return cls(naive.year, naive.month, naive.day, naive.hour, naive.minute,
                       naive.second, naive.microsecond)

    return Pinned
