"""Checks shared by the tests that hold a translation against Go on every raw engine: the
translation verified by the harness, then one conversation's bytes or failure on each engine
(the expected bytes are Go's: the caller checks them against the reference renderer, or
writes them by hand and renders_everywhere_as_go checks both)."""

from __future__ import annotations

from typing import Any

import pytest

from gotmpl2jinja.emit import translate
from gotmpl2jinja.engines.registry import get_engines, is_raised, raw_engine_names
from gotmpl2jinja.errors import RenderError
from gotmpl2jinja.ollama import reference
from gotmpl2jinja.verify.conversation import jinja_context
from gotmpl2jinja.verify.harness import verify_template


def verified(source: str, *, cases: int) -> str:
    """The translation of `source`, verified against Go on every raw engine (the one-message
    shapes, then `cases` random conversations)."""
    jinja = translate(source)
    result = verify_template(source, jinja, cases=cases, engines=raw_engine_names())
    assert sorted(result.engines) == sorted(raw_engine_names())
    assert result.ok, "\n".join(str(d) for d in result.divergences)
    return jinja


def renders_everywhere(jinja: str, conversation: dict[str, Any], want: str) -> None:
    """Every raw engine renders `want` (Go's bytes, checked by the caller) for `conversation`."""
    for engine in get_engines(raw_engine_names()):
        assert engine.render(jinja, jinja_context(conversation)) == want, engine.name


def renders_everywhere_as_go(source: str, jinja: str, conversation: dict[str, Any],
                             want: str) -> None:
    """Go renders `want` (written by hand by the caller) for `conversation`, and so does every
    raw engine with `jinja`, the translation of `source`."""
    assert reference.render(source, conversation) == want
    renders_everywhere(jinja, conversation, want)


def raises_everywhere(jinja: str, conversation: dict[str, Any], match: str) -> None:
    """Every raw engine fails with `match` (the contract's failure) for `conversation`."""
    for engine in get_engines(raw_engine_names()):
        with pytest.raises(RenderError, match=match):
            engine.render(jinja, jinja_context(conversation))


def fails_everywhere(jinja: str, conversation: dict[str, Any]) -> None:
    """Every raw engine stops at the translation's raise_exception for `conversation`, where
    Go fails (checked by the caller)."""
    for engine in get_engines(raw_engine_names()):
        with pytest.raises(RenderError) as info:
            engine.render(jinja, jinja_context(conversation))
        assert is_raised(info.value), engine.name
