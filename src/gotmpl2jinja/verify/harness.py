"""The differential harness: is a Jinja template byte-for-byte equivalent to a Go template?

For each conversation (bounded-exhaustive and/or random, see `strategies.py`) the Go side is
rendered by Go itself (`reference.render_many`) and the Jinja side by every selected engine
(`engines.py`) with the contract's variables (`conversation.jinja_context`). Equal means
identical strings, or both sides failing (a Go execution error ⇔ the template's own
`raise_exception`). The first divergence on an engine is shrunk by hypothesis to a minimal
conversation and reported with both outputs and a readable diff.

Why batches: per case, a round trip to the Go process and one to node cost more than rendering,
and hypothesis's engine costs more than all renderers together. So cases are drawn in batches
from a seeded `random.Random` through the same builders as the hypothesis strategies, each side
renders a whole batch per request, and every case is still compared byte for byte on every
engine; only a divergence goes to hypothesis, which replays its choices and shrinks it with
single renders.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import random
import re
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from gotmpl2jinja.emit.runtime import ADDRESS, NOT_UTF8
from gotmpl2jinja.engines.base import RuntimeRefused
from gotmpl2jinja.engines.registry import (
    DEFAULT_NOW,
    ENGINES,
    Engine,
    EngineTimeout,
    get_engine,
    is_raised,
    render_many,
    select_engines,
    unknown_engine,
)
from gotmpl2jinja.errors import (
    Gotmpl2JinjaError,
    ReferenceRendererError,
    RenderError,
    TranslationError,
)
from gotmpl2jinja.verify.conversation import jinja_context, validate

if TYPE_CHECKING:
    from gotmpl2jinja.batch.sources import Source
    from gotmpl2jinja.verify.strategies import DrawnCase

T = TypeVar("T")

#: Renders the Go side: (go_source, conversation, now) -> text, RenderError on a Go exec error.
GoRenderer = Callable[[str, dict[str, Any], dt.datetime], str]

#: Renders the Go side for a batch: each item the text, or the RenderError of a Go exec error.
GoBatchRenderer = Callable[[str, list[dict[str, Any]], dt.datetime], list["str | RenderError"]]

#: Called after each checked case with the number of cases checked so far.
Progress = Callable[[int], None]


@dataclass(frozen=True)
class Outcome:
    """One side's result for one conversation: its text, or the error it failed with."""

    output: str | None = None
    error: str | None = None
    raised: bool = False  # the Jinja template called raise_exception (always False for Go)
    #: Jinja side only: the runtime (llama-server) refused the request before rendering: why.
    runtime_refused: str | None = None
    #: Go side only: the capability Ollama refused the request for (a 400, no prompt). The
    #: output/error are then the lenient rendering, the request as if the refused option were
    #: absent (what the contract asks of the Jinja); both None when no lenient side exists.
    refused: str | None = None

    @property
    def failed(self) -> bool:
        return self.error is not None


@dataclass
class Divergence:
    """A minimal conversation on which one engine disagrees with Go."""

    engine: str
    conversation: dict[str, Any]
    go_output: str | None
    go_error: str | None
    jinja_output: str | None
    jinja_error: str | None
    diff: str
    found_by: str  # "exhaustive" or "random"
    #: Ollama refused this request for this capability; go_* is then its lenient rendering.
    go_refused: str | None = None


@dataclass
class EngineTally:
    """How one engine fared: cases compared, equal texts, agreed failures, divergences."""

    cases: int = 0
    equal: int = 0
    both_failed: int = 0
    diverged: int = 0
    #: Ollama refused the request for a capability, and the Jinja rendered it as if the refused
    #: option were absent (checked against Go's lenient rendering): its own class.
    refused: int = 0
    #: A runtime engine (llama-server's context) rendered other bytes on a conversation of a kind
    #: the contract puts out of its scope (no template can make that runtime agree, e.g. it
    #: turns a `developer` role into `system`): counted by kind, never as equivalent.
    runtime_differs: dict[str, int] = field(default_factory=dict)


@dataclass
class VerifyResult:
    """Everything `verify_template` found for one template."""

    name: str
    cases: int
    engines: list[str]
    counts: dict[str, EngineTally]
    divergences: list[Divergence] = field(default_factory=list)
    seed: int = 0
    #: Engines not run because they are unavailable here, with the reason for each.
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.divergences

    @property
    def refused(self) -> int:
        """Cases Ollama refuses for a capability (most over the engines: each counts its own)."""
        return max((tally.refused for tally in self.counts.values()), default=0)

    @property
    def runtime_differs(self) -> dict[str, int]:
        """Cases a runtime context rendered differently for an out-of-scope kind, by
        "engine: kind" (see EngineTally.runtime_differs)."""
        return {f"{name}: {kind}": n for name, tally in self.counts.items()
                for kind, n in sorted(tally.runtime_differs.items())}

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (for `verify --json`)."""
        data = asdict(self)
        data["ok"] = self.ok
        data["refused"] = self.refused
        data["runtime_differs"] = self.runtime_differs
        return data


# ---------------------------------------------------------------------------------------------
# Comparing one case


@dataclass(frozen=True)
class GoSide:
    """The Go side through the reference renderer: Ollama's Execute on Go's text/template,
    with a Modelfile's SYSTEM/MESSAGE rule (ollama-semantics.md §8) when one is given.

    Callable as a `GoRenderer` (single cases: shrinking and reports) and `many` as a
    `GoBatchRenderer` (one request per batch), so a Modelfile is verified as fast as a bare
    template and both modes go through the same renderer with the same rule.
    """

    modelfile_system: str | None = None
    modelfile_messages: tuple[tuple[str, str], ...] = ()  # (role, content) of each MESSAGE
    #: Render a request Ollama refuses as if the refused option were absent (the contract's
    #: Jinja convention) instead of raising CapabilityRefusal.
    lenient: bool = False

    def _rule(self) -> dict[str, Any]:
        messages = [{"role": r, "content": c} for r, c in self.modelfile_messages]
        return {"modelfile_system": self.modelfile_system or None,
                "modelfile_messages": messages or None, "lenient": self.lenient}

    def as_lenient(self) -> GoSide:
        """The same Go side rendering refused requests as if the option were absent."""
        return replace(self, lenient=True)

    def __call__(self, go_source: str, conversation: dict[str, Any], now: dt.datetime) -> str:
        from gotmpl2jinja.ollama.reference import render

        return render(go_source, conversation, now=rfc3339(now), **self._rule())

    def many(self, go_source: str, conversations: list[dict[str, Any]], now: dt.datetime
             ) -> list[str | RenderError]:
        from gotmpl2jinja.ollama.reference import render_many as reference_render_many

        return reference_render_many(go_source, conversations, now=rfc3339(now), **self._rule())


#: Ollama's render of a bare template (no Modelfile rule).
BARE = GoSide()


def go_render(go_source: str, conversation: dict[str, Any], now: dt.datetime) -> str:
    """The Go side of one case for a bare template."""
    return BARE(go_source, conversation, now)


def go_render_many(go_source: str, conversations: list[dict[str, Any]], now: dt.datetime
                   ) -> list[str | RenderError]:
    """The Go side of a batch for a bare template, in one request to the reference renderer."""
    return BARE.many(go_source, conversations, now)


def one_by_one(render: GoRenderer) -> GoBatchRenderer:
    """A batch renderer from a single-case one (a caller's own Go side, e.g. with a Modelfile
    rule): same results, one call per case."""
    def render_batch(go_source: str, conversations: list[dict[str, Any]], now: dt.datetime
                     ) -> list[str | RenderError]:
        results: list[str | RenderError] = []
        for conv in conversations:
            try:
                results.append(render(go_source, conv, now))
            except ReferenceRendererError:
                raise
            except RenderError as exc:
                results.append(exc)
        return results

    return render_batch


def rfc3339(now: dt.datetime) -> str:
    """The pinned clock as the reference renderer takes it (a naive time is read as UTC)."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=dt.timezone.utc)
    return now.isoformat()


def go_outcome(render: GoRenderer, go_source: str, conv: dict[str, Any],
               now: dt.datetime, lenient: GoRenderer | None = None) -> Outcome:
    """Render the Go side; an execution error is an outcome, a broken renderer is fatal. A
    capability refusal is rendered again by `lenient` (as if the refused option were absent)."""
    from gotmpl2jinja.ollama.reference import CapabilityRefusal

    try:
        return Outcome(output=render(go_source, conv, now))
    except ReferenceRendererError:
        raise
    except CapabilityRefusal as exc:
        if lenient is None:
            return Outcome(refused=exc.capability)
        return replace(go_outcome(lenient, go_source, conv, now), refused=exc.capability)
    except RenderError as exc:
        return Outcome(error=str(exc))


def jinja_outcome(engine: Engine, jinja_source: str, context: dict[str, Any],
                  now: dt.datetime) -> Outcome:
    """Render the Jinja side on one engine; every failure is an outcome."""
    try:
        return Outcome(output=engine.render(jinja_source, context, now=now))
    except RenderError as exc:
        return failure_outcome(exc)


def failure_outcome(exc: RenderError) -> Outcome:
    """A Jinja-side failure as an Outcome: raised by the template, refused by the runtime, or
    an engine error."""
    refused = exc.kind if isinstance(exc, RuntimeRefused) else None
    return Outcome(error=str(exc), raised=is_raised(exc), runtime_refused=refused)


def outcome_of(item: str | RenderError) -> Outcome:
    """A batch item as an Outcome (a raised template is marked as such; a Go capability
    refusal has `refused` set and neither output nor error)."""
    from gotmpl2jinja.ollama.reference import CapabilityRefusal

    if isinstance(item, CapabilityRefusal):
        return Outcome(refused=item.capability)
    if isinstance(item, RenderError):
        return failure_outcome(item)
    return Outcome(output=item)


def out_of_scope(engine: Engine, conv: dict[str, Any], template: str) -> str | None:
    """The kind of `conv` that puts it outside the contract on `engine`'s runtime context (an
    engine without a `scope` method, i.e. a raw context, has none)."""
    scope = getattr(engine, "scope", None)
    return scope(conv, template) if scope is not None else None


#: How fmt prints a pointer inside a printed value (`0xc000012345`).
_ADDRESS = re.compile(r"0x[0-9a-f]{6,}")


def not_utf8(text: str) -> bool:
    """Go's output held bytes that are not UTF-8 (the reference decodes them as surrogates)."""
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def agree(go: Outcome, jinja: Outcome) -> bool:
    """Equal bytes, or Go failing exactly where the template raises. For a request Ollama
    refuses, Go's side is its lenient rendering (unchecked when there is none)."""
    if go.refused is not None and go.output is None and go.error is None:
        return True
    if go.output is not None and not_utf8(go.output):
        # no Jinja string can hold those bytes: the contract asks for this failure instead
        return jinja.raised and NOT_UTF8 in (jinja.error or "")
    if not go.failed and jinja.raised and ADDRESS in (jinja.error or ""):
        # a memory address changes from run to run: the contract asks for this failure where
        # Go prints one (and only there)
        return go.output is not None and _ADDRESS.search(go.output) is not None
    if go.failed or jinja.failed:
        return go.failed and jinja.raised
    return go.output == jinja.output


# ---------------------------------------------------------------------------------------------
# Readable diffs

_VISIBLE = {"\n": "⏎", "\r": "␍", "\t": "⇥", " ": "·", "\u00a0": "⍽"}


def visible(text: str) -> str:
    """White space and control characters made visible, one display character each if possible."""
    out = []
    for ch in text:
        if ch in _VISIBLE:
            out.append(_VISIBLE[ch])
        elif ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 or ch in "\u2028\u2029":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def describe_diff(go: Outcome, jinja: Outcome, engine: str, context: int = 30) -> str:
    """Where and how the two sides differ: first differing offset, some context around it."""
    if go.failed and jinja.failed:
        return (f"Go failed: {go.error}\n{engine} failed with an engine error, not "
                f"raise_exception: {jinja.error}")
    if go.failed:
        return f"Go failed: {go.error}\n{engine} rendered {len(jinja.output or '')} characters"
    if jinja.failed:
        what = "raised" if jinja.raised else "failed"
        return f"{engine} {what}: {jinja.error}\nGo rendered {len(go.output or '')} characters"
    a, b = go.output or "", jinja.output or ""
    pairs = enumerate(zip(a, b, strict=False))
    offset = next((i for i, (x, y) in pairs if x != y), min(len(a), len(b)))
    line = a.count("\n", 0, offset) + 1
    column = offset - (a.rfind("\n", 0, offset) + 1) + 1
    start = max(0, offset - context)
    prefix = "…" if start > 0 else ""

    def excerpt(text: str) -> str:
        end = offset + context
        tail = "…" if end < len(text) else ""
        shown = visible(text[offset:end]) if offset < len(text) else "(end of output)"
        return prefix + visible(text[start:offset]) + shown + tail

    label_width = max(len("go"), len(engine)) + 2
    caret = " " * (label_width + len(prefix) + len(visible(a[start:offset]))) + "^"
    return "\n".join([
        f"first difference at offset {offset} (line {line}, column {column}); "
        f"lengths: go {len(a)}, {engine} {len(b)}",
        f"{'go:':<{label_width}}{excerpt(a)}",
        f"{engine + ':':<{label_width}}{excerpt(b)}",
        caret,
    ])


# ---------------------------------------------------------------------------------------------
# The harness


#: Cases per batch: small at first (a broken translation diverges at once), doubling up to the
#: largest (one JSON line of a few hundred KiB each way).
FIRST_BATCH = 16
MAX_BATCH = 256


_POOL: ThreadPoolExecutor | None = None


def _workers() -> ThreadPoolExecutor:
    """Threads that wait on the engine processes (one per process engine is enough)."""
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="engine")
    return _POOL


class _Checker:
    """Checks conversations against Go on a set of engines, counting and remembering outcomes."""

    def __init__(self, go_source: str, jinja_source: str, engines: list[Engine],
                 render: GoRenderer, render_batch: GoBatchRenderer, now: dt.datetime,
                 progress: Progress | None) -> None:
        self.go_source = go_source
        self.jinja_source = jinja_source
        self.engines = engines
        self.render = render
        self.render_batch = render_batch
        self.now = now
        self.progress = progress
        self.cases = 0
        self.counts = {e.name: EngineTally() for e in engines}
        self.lenient: GoSide | None = render.as_lenient() if isinstance(render, GoSide) else None

    def outcomes(self, conv: dict[str, Any], engines: Iterable[Engine]
                 ) -> tuple[Outcome, dict[str, Outcome]]:
        """One case, rendered singly (shrinking and reports)."""
        go = go_outcome(self.render, self.go_source, conv, self.now, self.lenient)
        context = jinja_context(conv)
        return go, {e.name: jinja_outcome(e, self.jinja_source, context, self.now)
                    for e in engines}

    def batch_outcomes(self, convs: list[dict[str, Any]], engines: list[Engine]
                       ) -> list[tuple[Outcome, dict[str, Outcome]]]:
        """Many cases, each side rendering the whole batch in one request where it can."""
        for conv in convs:
            validate(conv)
        contexts = [jinja_context(conv) for conv in convs]
        # Engines in a process of their own render the batch on worker threads, while Go and
        # the in-process engines (whose time limit is SIGALRM, main thread only) run here.
        remote = {e.name: _workers().submit(render_many, e, self.jinja_source, contexts,
                                            now=self.now)
                  for e in engines if getattr(e, "out_of_process", False)}
        try:
            go_outcomes = self._go_outcomes(convs)
            local = {e.name: render_many(e, self.jinja_source, contexts, now=self.now)
                     for e in engines if e.name not in remote}
        finally:  # an engine process is never given a second batch while one is in flight
            wait(remote.values())
        jinja = {e.name: local[e.name] if e.name in local else remote[e.name].result()
                 for e in engines}
        return [(go_outcomes[i], {name: outcome_of(items[i]) for name, items in jinja.items()})
                for i in range(len(convs))]

    def _go_outcomes(self, convs: list[dict[str, Any]]) -> list[Outcome]:
        """Go's outcome of each case (a request Ollama refuses re-rendered without the refused
        option, as the contract compares it)."""
        go = self.render_batch(self.go_source, convs, self.now)
        if len(go) != len(convs):
            raise ReferenceRendererError("the Go side answered a batch of the wrong size")
        go_outcomes = [outcome_of(item) for item in go]
        refused = [i for i, item in enumerate(go_outcomes) if item.refused is not None]
        if refused and self.lenient is not None:
            again = self.lenient.many(self.go_source, [convs[i] for i in refused], self.now)
            for i, item in zip(refused, again, strict=True):
                go_outcomes[i] = replace(outcome_of(item), refused=go_outcomes[i].refused)
        return go_outcomes

    def count(self, go: Outcome, results: dict[str, Outcome], engines: list[Engine],
              conv: dict[str, Any]) -> list[Engine]:
        """Count one case on `engines`; returns those that diverge on it."""
        diverging = []
        for engine in engines:
            tally = self.counts[engine.name]
            tally.cases += 1
            if not agree(go, results[engine.name]):
                kind = (results[engine.name].runtime_refused
                        or out_of_scope(engine, conv, self.jinja_source))
                if kind is not None:
                    tally.runtime_differs[kind] = tally.runtime_differs.get(kind, 0) + 1
                    continue
                tally.diverged += 1
                diverging.append(engine)
            elif go.refused is not None:
                tally.refused += 1
            elif go.failed:
                tally.both_failed += 1
            else:
                tally.equal += 1
        self.cases += 1
        if self.progress is not None:
            self.progress(self.cases)
        return diverging

    def search(self, items: Iterator[T], conversation: Callable[[T], dict[str, Any]],
               pending: list[Engine], budget: int | None) -> list[tuple[T, list[Engine]]]:
        """Check `items` in batches, in order, until every engine of `pending` has diverged (it
        is removed from the list) or `budget` cases are counted; returns each first divergence
        with the engines it hit. Cases of a batch after the last engine's divergence are
        rendered but not counted."""
        found: list[tuple[T, list[Engine]]] = []
        size = FIRST_BATCH
        while pending and (budget is None or budget > 0):
            batch = list(itertools.islice(items, size if budget is None else min(size, budget)))
            if not batch:
                break
            if budget is not None:
                budget -= len(batch)
            results = self.batch_outcomes([conversation(i) for i in batch], pending)
            for item, (go, jinja) in zip(batch, results, strict=True):
                if not pending:
                    break
                hit = self.count(go, jinja, pending, conversation(item))
                if hit:
                    found.append((item, hit))
                    pending[:] = [e for e in pending if e not in hit]
            size = min(2 * size, MAX_BATCH)
        return found

    def divergence(self, conv: dict[str, Any], engine: Engine, found_by: str) -> Divergence:
        go, results = self.outcomes(conv, [engine])
        jinja = results[engine.name]
        return Divergence(
            engine=engine.name, conversation=conv, go_output=go.output, go_error=go.error,
            jinja_output=jinja.output, jinja_error=jinja.error,
            diff=describe_diff(go, jinja, engine.name), found_by=found_by,
            go_refused=go.refused,
        )

    def diverges(self, conv: dict[str, Any], engines: list[Engine]) -> list[Engine]:
        """The engines of `engines` that disagree with Go on `conv` (single renders)."""
        go, results = self.outcomes(conv, engines)
        return [e for e in engines
                if not agree(go, results[e.name]) and results[e.name].runtime_refused is None
                and out_of_scope(e, conv, self.jinja_source) is None]


def _shrunk_divergences(checker: _Checker, case: DrawnCase, engines: list[Engine]
                        ) -> list[Divergence]:
    """Shrink a random case that diverged on `engines`: the minimal conversation on which one of
    them still diverges is reported for every engine it hits; the rest are shrunk again from
    the same case (the original when a shrink no longer hits any)."""
    from gotmpl2jinja.verify.strategies import shrink_conversation

    divergences: list[Divergence] = []
    left = list(engines)
    while left:
        group = list(left)

        def still_diverges(conv: dict[str, Any], group: list[Engine] = group) -> bool:
            return bool(checker.diverges(conv, group))

        minimal = shrink_conversation(case, still_diverges)
        hit = checker.diverges(minimal, left)
        if not hit:  # a nondeterministic engine: report the case as found, never loop on it
            hit, minimal = left, case.conversation
        for engine in hit:
            divergences.append(checker.divergence(minimal, engine, "random"))
        left = [e for e in left if e not in hit]
    return divergences


def _same(conv: dict[str, Any]) -> dict[str, Any]:
    return conv


def _conversation_of(case: DrawnCase) -> dict[str, Any]:
    return case.conversation


def _translate(go_source: str, name: str) -> str:
    """The translator's Jinja; a crash inside it is reported as a sentence, not a traceback."""
    from gotmpl2jinja.emit.emitter import translate

    try:
        return translate(go_source, name=name)
    except Gotmpl2JinjaError:
        raise
    except Exception as exc:  # noqa: BLE001 - a translator bug must not hide the other files
        raise Gotmpl2JinjaError(
            f"the translator crashed ({type(exc).__name__}: {exc}); please report it"
        ) from exc


def verify_template(
    go_source: str,
    jinja_source: str | None = None,
    *,
    cases: int = 200,
    exhaustive: int | None = None,
    engines: list[str] | None = None,
    seed: int = 0,
    name: str = "template",
    now: dt.datetime | None = None,
    render: GoRenderer | None = None,
    progress: Progress | None = None,
) -> VerifyResult:
    """Compare a Go template with a Jinja template (translated from the Go one when None).

    `exhaustive` = message depth of the bounded-exhaustive pass (none by default); `cases` =
    random conversations after it. Per engine, the first divergence is reported: from the
    exhaustive pass the earliest (hence shortest) diverging conversation, from the random pass
    one shrunk by hypothesis. `render` replaces the Go side: a `GoSide` with a Modelfile rule
(`inputs.go_renderer`) renders in batches, any other callable case by case.
    """
    if jinja_source is None:
        jinja_source = _translate(go_source, name)
    if cases < 0 or (exhaustive is not None and exhaustive < 0):
        raise Gotmpl2JinjaError("cases and the exhaustive depth must not be negative")
    selection = select_engines(engines)
    chosen = [get_engine(name) for name in selection.used]
    go_single: GoRenderer = render or BARE
    go_batch = go_single.many if isinstance(go_single, GoSide) else one_by_one(go_single)
    checker = _Checker(go_source, jinja_source, chosen, go_single, go_batch,
                       now or DEFAULT_NOW, progress)
    divergences: list[Divergence] = []
    pending = list(chosen)

    if exhaustive is not None:
        from gotmpl2jinja.verify.strategies import exhaustive_conversations

        for conv, hit in checker.search(exhaustive_conversations(exhaustive), _same, pending,
                                        None):
            divergences += [checker.divergence(conv, engine, "exhaustive") for engine in hit]

    if pending and cases > 0:
        from gotmpl2jinja.verify.strategies import draw_random

        rng = random.Random(seed)
        drawn = (draw_random(rng) for _ in itertools.count())
        for case, hit in checker.search(drawn, _conversation_of, pending, cases):
            divergences += _shrunk_divergences(checker, case, hit)

    return VerifyResult(
        name=name, cases=checker.cases, engines=[e.name for e in chosen],
        counts=checker.counts, divergences=divergences, seed=seed, skipped=selection.skipped,
    )


def format_divergence(div: Divergence) -> str:
    """A divergence as a person reads it: engine, minimal conversation, diff, both outputs."""
    def side(output: str | None, error: str | None) -> str:
        return f"error: {error}" if error is not None else json.dumps(output, ensure_ascii=False)

    return "\n".join([
        f"  divergence on {div.engine} (found by {div.found_by} search, minimal conversation):",
        "    " + json.dumps(div.conversation, ensure_ascii=False),
        *("    " + line for line in div.diff.splitlines()),
        *([f"    (Ollama refuses this request: no {div.go_refused} capability; go is the request"
            " rendered as if that option were absent)"] if div.go_refused else []),
        f"    go:    {side(div.go_output, div.go_error)}",
        f"    jinja: {side(div.jinja_output, div.jinja_error)}",
    ])


# ---------------------------------------------------------------------------------------------
# Files (for the `verify` command)


def template_inputs(paths: Iterable[str]) -> list[Path]:
    """The inputs named: files as given (a template or a Modelfile), directories recursively —
    templates (*.gotmpl, *.tmpl) and Modelfiles, found as `migrate` finds them, sorted."""
    from gotmpl2jinja.batch.migrate import discover

    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(discover(path))
        elif path.is_file():
            found.append(path)
        else:
            raise Gotmpl2JinjaError(f"{raw}: no such file or directory")
    return found


def parse_engine_list(text: str | None) -> list[str] | None:
    """`a,b` → ["a", "b"], checking each name (None means every engine)."""
    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in ENGINES]
    if unknown or not names:
        raise unknown_engine(unknown)
    return names


@dataclass
class FileVerdict:
    """One input file's result: a VerifyResult, or why it could not be verified."""

    path: str
    result: VerifyResult | None = None
    error: str | None = None
    kind: str = "template"  # or "modelfile" (verified with its SYSTEM/MESSAGE rule)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.result is not None and self.result.ok


def verify_file(
    path: Path, *, jinja_path: Path | None = None, cases: int = 200,
    exhaustive: int | None = None, engines: list[str] | None = None, seed: int = 0,
    progress: Progress | None = None, kind: str = "auto",
) -> FileVerdict:
    """Verify one input file — a Go template, or a Modelfile with its SYSTEM/MESSAGE rule on
    both sides (`inputs.convert_source`'s preamble against Ollama's render with the rule) —
    against `jinja_path`, or against its translation. An unreadable, unparsable or
    untranslatable input is a verdict (its message placed in the file), not a crash; so is a
    render that runs past the timeout, on Go or an engine. `kind` is `load_source`'s."""
    from gotmpl2jinja.batch.sources import go_renderer, load_source
    from gotmpl2jinja.ollama.reference import RenderTimeout

    verdict = FileVerdict(path=str(path))
    try:
        source = load_source(str(path), kind=kind)
    except Gotmpl2JinjaError as exc:  # ModelfileError, InputError: placed already
        if exc.name is None:
            exc.name = str(path)
        verdict.error = str(exc)
        return verdict
    verdict.kind, verdict.warnings = source.kind, list(source.warnings)
    try:
        if jinja_path is not None:
            jinja_source = jinja_path.read_bytes().decode("utf-8")
        elif source.kind == "modelfile":
            jinja_source = _converted(source)
        else:
            jinja_source = None
        result = verify_template(
            source.template, jinja_source, cases=cases, exhaustive=exhaustive,
            engines=engines, seed=seed, name=path.stem, progress=progress,
            render=go_renderer(source) if source.has_modelfile_rule else None,
        )
    except (RenderTimeout, EngineTimeout) as exc:  # this file's fault: say so, check the next
        verdict.error = f"{path}: {exc}"
        return verdict
    except ReferenceRendererError:
        raise
    except Gotmpl2JinjaError as exc:
        if exc.line is not None:  # a Modelfile's TEMPLATE position → a position in the file
            exc.line, exc.col = source.locate(exc.line, exc.col)
        exc.name = str(path)
        verdict.error = str(exc)
        return verdict
    verdict.result = result
    return verdict


def _converted(source: Source) -> str:
    """A Modelfile's Jinja (translation plus preamble); a crash is a sentence, as `_translate`."""
    from gotmpl2jinja.batch.sources import convert_source

    try:
        return convert_source(source)
    except Gotmpl2JinjaError:
        raise
    except Exception as exc:  # noqa: BLE001 - a translator bug must not hide the other files
        raise Gotmpl2JinjaError(
            f"the translator crashed ({type(exc).__name__}: {exc}); please report it"
        ) from exc


def summary_line(result: VerifyResult, path: str) -> str:
    """One line per template: name, path, cases, engines, divergences."""
    verdict = "equivalent" if result.ok else "DIVERGES"
    return (f"{result.name}\t{path}\tcases={result.cases}\tengines={','.join(result.engines)}"
            f"\trefused={result.refused}"
            + (f"\truntime-differs={sum(result.runtime_differs.values())}"
               if result.runtime_differs else "")
            + f"\tdivergences={len(result.divergences)}\t{verdict}")


__all__ = [
    "ENGINES",
    "Divergence",
    "EngineTally",
    "Outcome",
    "VerifyResult",
    "agree",
    "describe_diff",
    "FileVerdict",
    "format_divergence",
    "verify_file",
    "parse_engine_list",
    "summary_line",
    "template_inputs",
    "verify_template",
    "visible",
]


# ---------------------------------------------------------------------------------------------
# The check `convert` and `translate()` run before handing a translation out

#: Depth of the bounded-exhaustive pass of the check (every message shape up to this many
#: messages: 238 conversations) and the random conversations after it.
CHECK_EXHAUSTIVE = 1
CHECK_CASES = 200


def check_engines() -> list[str]:
    """The engines a translation is checked on: every available engine that renders the
    contract's variables (the registry's `select_engines`: jinja2 and minijinja with the
    package's dependencies, the others once set up by `gotmpl2jinja engines install`).
    llama-server's contexts are left to `verify`: they cost tens of milliseconds a case, and
    what they add is the runtime's reshaping of requests, not the translation's correctness."""
    return [name for name in select_engines().used if "server" not in ENGINES[name].tags]


class TranslationDiverged(TranslationError):
    """The translator's own Jinja renders other bytes than Ollama: a bug of gotmpl2jinja,
    caught before the Jinja was handed out. `result` holds the minimal counterexamples."""

    def __init__(self, result: VerifyResult, name: str) -> None:
        first = result.divergences[0]
        engines = ", ".join(sorted({d.engine for d in result.divergences}))
        super().__init__(
            f"the translation renders other bytes than Ollama on {engines} (checked on "
            f"{result.cases} conversations), so it was not written; this is a bug of "
            "gotmpl2jinja: please report it with the template and this minimal conversation "
            "(--no-check writes the unchecked translation anyway)\n"
            + format_divergence(first), name=name)
        self.result = result


def check_translation(go_source: str, jinja_source: str, *, name: str = "template",
                      render: GoRenderer | None = None,
                      engines: list[str] | None = None) -> VerifyResult:
    """Verify a translation against Go (the exhaustive shapes plus CHECK_CASES random
    conversations, on `engines`, default `check_engines()`); raise TranslationDiverged on any
    divergence. Returns the result (its `.engines` and `.cases` say what was checked)."""
    result = verify_template(go_source, jinja_source, cases=CHECK_CASES,
                             exhaustive=CHECK_EXHAUSTIVE,
                             engines=check_engines() if engines is None else engines,
                             name=name, render=render)
    if not result.ok:
        raise TranslationDiverged(result, name)
    return result


def check_line(result: VerifyResult) -> str:
    """The one line `convert` prints on stderr after a successful check."""
    return (f"checked: renders what Ollama renders on {result.cases} conversations on "
            f"{', '.join(result.engines)}")
