"""Shared test settings: hypothesis runs are reproducible and never touch a database on disk, and
a CLI run inside the test process leaves the render time limits as it found them."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from gotmpl2jinja.engines import base as engine_base
from gotmpl2jinja.ollama.reference import shared_renderer

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = FIXTURES / "corpus"


def distinct_corpus_templates() -> list[Path]:
    """Every corpus `template.gotmpl`, the first of each distinct text (sorted by path)."""
    seen: set[str] = set()
    found = []
    for path in sorted(CORPUS.glob("**/template.gotmpl"), key=str):
        text = path.read_text()
        if text not in seen:
            seen.add(text)
            found.append(path)
    return found

settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev",
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: The engines' and Go's time limit per render in the tests (the tool's default is 5 s). The
#: limit tells a template that loops from one that ends; it is not a speed check (benchmarks/
#: measure speed). A first render on minja parses the whole template, about 2 s for the largest
#: translations, and a 2-core machine running the suite beside other work took over 5 s for
#: one (CI on a3bc983, 2026-12-04). The tests of the limit itself set their own.
TEST_RENDER_TIMEOUT = 30.0
engine_base.set_render_timeout(TEST_RENDER_TIMEOUT)
shared_renderer().timeout = TEST_RENDER_TIMEOUT


@pytest.fixture(autouse=True)
def _render_time_limits_restored() -> Iterator[None]:
    """`--timeout` sets the time limit of every engine and of the shared Go renderer for the
    rest of the process; a CLI test run in process (CliRunner) must not hand a test after it
    its 1 or 2 seconds (a first render of a large template on minja takes about one)."""
    saved, saved_go = engine_base.render_timeout(), shared_renderer().timeout
    yield
    engine_base.set_render_timeout(saved)
    shared_renderer().timeout = saved_go  # (the Go process itself starts on first use only)


def shipped_vocab(name: str) -> Path:
    """The sdist's vocabulary-only GGUF `ggml-vocab-NAME.gguf` (copied beside llama.cpp's
    tokenizer when `gotmpl2jinja engines install` builds it; never downloaded by a test).
    Skips the test, saying why, only when the tokenizer is not built."""
    from gotmpl2jinja.engines.tokenizer import shipped_vocabularies, tokenizer_state

    state = tokenizer_state()
    if state is not None:
        pytest.skip(f"llama.cpp's tokenizer is {state}")
    vocabularies = shipped_vocabularies()
    assert name in vocabularies, f"the sdist ships no ggml-vocab-{name}.gguf"
    return vocabularies[name]


def record_renders(monkeypatch: pytest.MonkeyPatch, engine: Any) -> list[dict[str, Any]]:
    """The contexts `engine` is asked to render from now on, in order (its `render_many`
    wrapped): what a harness sends a context, where the verdict alone cannot tell."""
    sent: list[dict[str, Any]] = []
    real = engine.render_many

    def recording(template: str, contexts: list[dict[str, Any]], **kwargs: Any) -> Any:
        sent.extend(contexts)
        return real(template, contexts, **kwargs)

    monkeypatch.setattr(engine, "render_many", recording)
    return sent
