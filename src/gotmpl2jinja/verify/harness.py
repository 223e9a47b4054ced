"""The differential harness: is a Jinja template byte-for-byte equivalent to a Go template?

For each conversation (bounded-exhaustive and/or random: `exhaustive`, `strategies`) the Go side
is rendered by Go itself (`reference.render_many`) and the Jinja side by every selected engine
(`engines`) with the contract's variables (`conversation.jinja_context`). Equal means
identical strings, or both sides failing (a Go execution error ⇔ the template's own
`raise_exception`). The first divergence on an engine is shrunk by hypothesis to a minimal
conversation and reported with both outputs and a readable diff.

Why batches: per case, a round trip to the Go process and one to node cost more than rendering,
and hypothesis's engine costs more than all renderers together. So cases are drawn in batches
from a seeded `random.Random` through the same builders as the hypothesis strategies, each side
renders a whole batch per request, and every case is still compared byte for byte on every
engine; only a divergence goes to hypothesis, which replays its choices and shrinks it with
single renders.

May depend on: `emit`, `engines`, `errors`, `verify.closed`, `verify.conversation`,
`verify.outcomes`, `verify.percontext`, `verify.strategies`.
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import random
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from typing import Any

from gotmpl2jinja.emit import translate
from gotmpl2jinja.engines.registry import (
    DEFAULT_NOW,
    Engine,
    get_engine,
    render_many,
    select_engines,
)
from gotmpl2jinja.errors import (
    Gotmpl2JinjaError,
    ReferenceRendererError,
    RenderError,
    reporting_crash,
)
from gotmpl2jinja.verify.closed import (
    CLOSED_GO_FAILS,
    PREFILL_CONTENT_CHANGED,
    PREFILL_PAST_CONTENT,
    go_case,
    host_call,
    prefill_cut,
    prefill_refused,
    tagged,
)
from gotmpl2jinja.verify.conversation import jinja_context, validate
from gotmpl2jinja.verify.exhaustive import exhaustive_conversations
from gotmpl2jinja.verify.outcomes import (
    BARE,
    NO_CLOSING_TURN,
    Divergence,
    EngineTally,
    GoBatchRenderer,
    GoRenderer,
    GoSide,
    Outcome,
    Progress,
    T,
    VerifyResult,
    address_raised,
    agree,
    closed_outcome,
    describe_diff,
    go_outcome,
    jinja_outcome,
    not_utf8,
    one_by_one,
    out_of_scope,
    outcome_of,
)
from gotmpl2jinja.verify.percontext import draw_per_context, runtime_contexts
from gotmpl2jinja.verify.strategies import (
    DrawnCase,
    draw_random,
    shrink_conversation,
)
from gotmpl2jinja.verify.tokens import TokenLevel, unknown_specials

# ---------------------------------------------------------------------------------------------
# The harness

#: Cases per batch: small at first (a broken translation diverges at once), doubling up to the
#: largest (one JSON line of a few hundred KiB each way).
FIRST_BATCH = 16
MAX_BATCH = 256


_POOL: ThreadPoolExecutor | None = None


def _same(conv: dict[str, Any]) -> dict[str, Any]:
    return conv


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
                 progress: Progress | None, tokens: TokenLevel | None = None) -> None:
        self.go_source = go_source
        self.jinja_source = jinja_source
        self.engines = engines
        self.render = render
        self.render_batch = render_batch
        self.now = now
        self.progress = progress
        #: the host conventions (BOS/EOS facts, a vocabulary): None compares bare strings
        self.tokens = tokens
        self.cases = 0
        self.counts = {e.name: EngineTally() for e in engines}
        self.lenient: GoSide | None = render.as_lenient() if isinstance(render, GoSide) else None
        self._address_dependent: dict[str, bool] = {}

    def agrees(self, go: Outcome, jinja: Outcome, conv: dict[str, Any], engine: Engine) -> bool:
        """`agree`, and where the template raised ADDRESS on an output with no whole address in
        it, whether Go's output depends on one all the same. With host conventions, two
        outputs agree when the engine's host feeds the model Ollama's tokens (`verify.tokens`)."""
        if self.tokens is not None and self._prompts(go, jinja):
            return self.tokens.agree(engine.name, go.output or "", jinja.output or "")
        if agree(go, jinja):
            return True
        return address_raised(go, jinja) and self.address_dependent(conv, go)

    @staticmethod
    def _prompts(go: Outcome, jinja: Outcome) -> bool:
        """Both sides rendered a prompt (Go's a valid UTF-8 one), to be compared as the hosts
        tokenize them."""
        return (go.output is not None and jinja.output is not None and not jinja.failed
                and not go.failed and not not_utf8(go.output))

    def context(self, conv: dict[str, Any]) -> dict[str, Any]:
        """The Jinja variables of a case: the contract's, and the host's bos_token/eos_token."""
        context = jinja_context(conv)
        if self.tokens is not None:
            context.update(self.tokens.host.context())
        return context

    def address_dependent(self, conv: dict[str, Any], go: Outcome) -> bool:
        """Go prints other bytes when it renders `conv` again: its output holds part of a memory
        address (`slice (print .Messages) 2` cuts `[0xc000…` to `xc000…`), which no pattern
        can tell from text, while Go allocates the messages anew on every render."""
        key = json.dumps(conv, sort_keys=True)
        if key not in self._address_dependent:
            again = self.go_single(conv)
            self._address_dependent[key] = (again.output is not None
                                            and again.output != go.output)
        return self._address_dependent[key]

    def outcomes(self, conv: dict[str, Any], engines: Iterable[Engine]
                 ) -> tuple[Outcome, dict[str, Outcome]]:
        """One case, rendered singly (shrinking and reports)."""
        go = self.go_single(conv)
        context = self.context(conv)
        return go, {e.name: jinja_outcome(e, self.jinja_source, context, self.now)
                    for e in engines}

    def batch_outcomes(self, convs: list[dict[str, Any]], engines: list[Engine]
                       ) -> list[tuple[Outcome, dict[str, Outcome]]]:
        """Many cases, each side rendering the whole batch in one request where it can."""
        for conv in convs:
            validate(conv)
        contexts = [self.context(conv) for conv in convs]
        # A runtime context renders only the cases in the contract's scope there: what it
        # renders for the others is never compared (on llama-server that is most random
        # cases: developer roles, prefills, fill-in-the-middle, no messages).
        kinds = {e.name: [out_of_scope(e, conv, self.jinja_source) for conv in convs]
                 for e in engines}
        wanted = {name: [i for i, kind in enumerate(found) if kind is None]
                  for name, found in kinds.items()}
        cutting = [e for e in engines if getattr(e, "cuts_prefill", False)]

        def rendered(engine: Engine) -> list[str | RenderError]:
            return render_many(engine, self.jinja_source,
                               [contexts[i] for i in wanted[engine.name]], now=self.now)

        # Engines in a process of their own render the batch on worker threads, while Go and
        # the in-process engines (whose time limit is SIGALRM, main thread only) run here.
        remote = {e.name: _workers().submit(rendered, e)
                  for e in engines if getattr(e, "out_of_process", False)}
        try:
            go_outcomes = self._go_outcomes(convs)
            if cutting:  # in-process engines: their scope may wait for Go's outcomes
                past = self.prefill_scope(convs, go_outcomes)
                for engine in cutting:
                    kinds[engine.name] = [kind or past[i]
                                          for i, kind in enumerate(kinds[engine.name])]
                    wanted[engine.name] = [i for i, kind in enumerate(kinds[engine.name])
                                           if kind is None]
            local = {e.name: rendered(e) for e in engines if e.name not in remote}
        finally:  # an engine process is never given a second batch while one is in flight
            wait(remote.values())
        jinja: dict[str, list[Outcome]] = {}
        unknown = [self.closed_unknown(conv, go) for conv, go in zip(convs, go_outcomes,
                                                                     strict=True)]
        for engine in engines:
            items = iter(local[engine.name] if engine.name in local
                         else remote[engine.name].result())
            found = [outcome_of(next(items)) if kind is None else Outcome(out_of_scope=kind)
                     for kind in kinds[engine.name]]
            jinja[engine.name] = [Outcome(out_of_scope=unknown[i])
                                  if unknown[i] and item.out_of_scope is None else item
                                  for i, item in enumerate(found)]
        if self.tokens is not None:  # one tokenizer request per convention for the batch
            self.tokens.prefetch([
                (name, go_outcomes[i].output or "", items[i].output or "")
                for name, items in jinja.items() for i in range(len(convs))
                if self._prompts(go_outcomes[i], items[i])])
        return [(go_outcomes[i], {name: items[i] for name, items in jinja.items()})
                for i in range(len(convs))]

    def prefill_scope(self, convs: list[dict[str, Any]], go: list[Outcome]
                      ) -> list[str | None]:
        """Per case, PREFILL_PAST_CONTENT where the case is a host's prefill that transformers'
        mechanism (the final content tagged, the turn rendered closed, the text cut at the
        tag) cannot give Ollama's bytes for, as Go itself shows: Go's closed rendering of the
        tagged conversation, cut there, is not Go's prompt; PREFILL_CONTENT_CHANGED where
        transformers refuses the call, the final content not being in that rendering. Else
        None."""
        at = [i for i, conv in enumerate(convs) if host_call(conv) == "continue"]
        found: list[str | None] = [None] * len(convs)
        if not at:
            return found
        again = self._go_outcomes([{**tagged(convs[i]), "add_generation_prompt": False}
                                   for i in at])
        for i, item in zip(at, again, strict=True):
            if item.output is not None and prefill_refused(convs[i], item.output):
                found[i] = PREFILL_CONTENT_CHANGED
                continue
            cut = prefill_cut(item.output) if item.output is not None else None
            if cut is None or cut != go[i].output:
                found[i] = PREFILL_PAST_CONTENT
        return found

    def closed_unknown(self, conv: dict[str, Any], go: Outcome) -> str | None:
        """CLOSED_GO_FAILS where the case is a host's closed call and Go's rendering of it (the
        conversation plus the added message) failed: what the closed rendering is, Go cannot
        say then (`verify.closed`)."""
        if go.failed and go.error != NO_CLOSING_TURN and go_case(self.go_source, conv)[2]:
            return CLOSED_GO_FAILS
        return None

    def scope(self, engine: Engine, conv: dict[str, Any], go: Outcome) -> str | None:
        """The out-of-scope kind of one case on `engine` (single renders)."""
        kind = out_of_scope(engine, conv, self.jinja_source)
        if kind is None and getattr(engine, "cuts_prefill", False):
            kind = self.prefill_scope([conv], [go])[0]
        return kind or self.closed_unknown(conv, go)

    def go_single(self, conv: dict[str, Any]) -> Outcome:
        """Go's outcome of one case, for the host's call it carries (`verify.closed`)."""
        source, plain, cut = go_case(self.go_source, conv)
        return closed_outcome(go_outcome(self.render, source, plain, self.now, self.lenient),
                              cut)

    def _go_outcomes(self, convs: list[dict[str, Any]]) -> list[Outcome]:
        """Go's outcome of each case for the host's call it carries: Ollama's prompt, or the
        closed rendering (`verify.closed`), one batch per Go source."""
        cases = [go_case(self.go_source, conv) for conv in convs]
        outcomes: list[Outcome | None] = [None] * len(convs)
        for source in dict.fromkeys(case[0] for case in cases):
            at = [i for i, case in enumerate(cases) if case[0] == source]
            found = self._go_batch(source, [cases[i][1] for i in at])
            for i, item in zip(at, found, strict=True):
                outcomes[i] = closed_outcome(item, cases[i][2])
        return [item for item in outcomes if item is not None]

    def _go_batch(self, source: str, convs: list[dict[str, Any]]) -> list[Outcome]:
        """Go's outcome of each case (a request Ollama refuses re-rendered without the refused
        option, as the contract compares it)."""
        go = self.render_batch(source, convs, self.now)
        if len(go) != len(convs):
            raise ReferenceRendererError("the Go side answered a batch of the wrong size")
        go_outcomes = [outcome_of(item) for item in go]
        refused = [i for i, item in enumerate(go_outcomes) if item.refused is not None]
        if refused and self.lenient is not None:
            again = self.lenient.many(source, [convs[i] for i in refused], self.now)
            for i, item in zip(refused, again, strict=True):
                go_outcomes[i] = replace(outcome_of(item), refused=go_outcomes[i].refused)
        return go_outcomes

    def count(self, go: Outcome, results: dict[str, Outcome], engines: list[Engine],
              conv: dict[str, Any], extra: bool = False) -> list[Engine]:
        """Count one case on `engines` (`extra`: one of a context's own draws, counted apart
        from the main draw's cases and kinds); returns those that diverge on it."""
        diverging = []
        for engine in engines:
            tally = self.counts[engine.name]
            differs = tally.drawn_out_of_scope if extra else tally.runtime_differs
            tally.cases += not extra
            skipped = results[engine.name].out_of_scope
            if skipped is not None:
                differs[skipped] = differs.get(skipped, 0) + 1
                continue
            if not self.agrees(go, results[engine.name], conv, engine):
                kind = (results[engine.name].runtime_refused
                        or self.scope(engine, conv, go))
                if kind is not None:
                    differs[kind] = differs.get(kind, 0) + 1
                    continue
                tally.diverged += 1
                diverging.append(engine)
            elif go.refused is not None:
                tally.refused += 1
                tally.drawn_refused += extra
            elif go.failed:
                tally.both_failed += 1
            else:
                tally.equal += 1
        if not extra:
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

    def search_extra(self, items: Iterator[T], engine: Engine, target: int,
                     conversation: Callable[[T], dict[str, Any]] = _same) -> T | None:
        """Check a runtime context's own draws (`verify.percontext`) on it alone, in batches,
        until it has compared `target` cases or `items` run out; returns the first item it
        diverges on, or None."""
        tally = self.counts[engine.name]
        while tally.compared < target:
            batch = list(itertools.islice(items, min(target - tally.compared, MAX_BATCH)))
            if not batch:
                break
            results = self.batch_outcomes([conversation(i) for i in batch], [engine])
            for item, (go, jinja) in zip(batch, results, strict=True):
                if self.count(go, jinja, [engine], conversation(item), extra=True):
                    return item
        return None

    def divergence(self, conv: dict[str, Any], engine: Engine, found_by: str) -> Divergence:
        go, results = self.outcomes(conv, [engine])
        jinja = results[engine.name]
        diff = describe_diff(go, jinja, engine.name)
        if self.tokens is not None and self._prompts(go, jinja):
            diff = self.tokens.diff(engine.name, go.output or "", jinja.output or "")
        return Divergence(
            engine=engine.name, conversation=conv, go_output=go.output, go_error=go.error,
            jinja_output=jinja.output, jinja_error=jinja.error,
            diff=diff, found_by=found_by, go_refused=go.refused,
        )

    def diverges(self, conv: dict[str, Any], engines: list[Engine]) -> list[Engine]:
        """The engines of `engines` that disagree with Go on `conv` (single renders)."""
        go, results = self.outcomes(conv, engines)
        return [e for e in engines
                if not self.agrees(go, results[e.name], conv, e)
                and results[e.name].runtime_refused is None
                and self.scope(e, conv, go) is None]


def _shrunk_divergences(checker: _Checker, case: DrawnCase, engines: list[Engine]
                        ) -> list[Divergence]:
    """Shrink a random case that diverged on `engines`: the minimal conversation on which one of
    them still diverges is reported for every engine it hits; the rest are shrunk again from
    the same case (the original when a shrink no longer hits any)."""
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


def _conversation_of(case: DrawnCase) -> dict[str, Any]:
    return case.conversation


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
    tokens: TokenLevel | None = None,
) -> VerifyResult:
    """Compare a Go template with a Jinja template (translated from the Go one when None).

    `exhaustive` = message depth of the bounded-exhaustive pass (none by default); `cases` =
    random conversations after it. Per engine, the first divergence is reported: from the
    exhaustive pass the earliest (hence shortest) diverging conversation, from the random pass
    one shrunk by hypothesis. `render` replaces the Go side: a `GoSide` with a Modelfile rule
(`inputs.go_renderer`) renders in batches, any other callable case by case. `tokens`
    compares as the hosts feed the model (`verify.tokens`: on token IDs with a vocabulary, with
    the BOS rule as text without one); None compares the strings themselves.
    """
    if jinja_source is None:
        jinja_source = reporting_crash(lambda: translate(go_source, name=name))
    if cases < 0 or (exhaustive is not None and exhaustive < 0):
        raise Gotmpl2JinjaError("cases and the exhaustive depth must not be negative")
    selection = select_engines(engines)
    chosen = [get_engine(name) for name in selection.used]
    go_single: GoRenderer = render or BARE
    go_batch = go_single.many if isinstance(go_single, GoSide) else one_by_one(go_single)
    checker = _Checker(go_source, jinja_source, chosen, go_single, go_batch,
                       now or DEFAULT_NOW, progress, tokens)
    divergences: list[Divergence] = []
    pending = list(chosen)

    if exhaustive is not None:
        for conv, hit in checker.search(exhaustive_conversations(exhaustive), _same, pending,
                                        None):
            divergences += [checker.divergence(conv, engine, "exhaustive") for engine in hit]

    if pending and cases > 0:
        rng = random.Random(seed)
        drawn = (draw_random(rng) for _ in itertools.count())
        for case, hit in checker.search(drawn, _conversation_of, pending, cases):
            divergences += _shrunk_divergences(checker, case, hit)

    for engine in runtime_contexts(pending):  # each its share of compared cases
        divergences += draw_per_context(checker, engine, cases=cases, exhaustive=exhaustive,
                                        seed=seed, shrink=_shrunk_divergences)

    return VerifyResult(
        name=name, cases=checker.cases, engines=[e.name for e in chosen],
        counts=checker.counts, divergences=divergences, seed=seed, skipped=selection.skipped,
        compared_on=tokens.describe if tokens is not None else None,
        unknown_specials=(unknown_specials(tokens.vocab, go_source)
                          if tokens is not None and tokens.vocab is not None else []),
        contexts=[e.name for e in runtime_contexts(chosen)],
    )


@dataclass
class CaseRendering:
    """One conversation rendered on both sides, as `verify_template` compares it: Go's
    outcome for the host's call the conversation carries (`verify.closed`), each engine's,
    whether they agree, the kind that puts the case out of scope on a runtime context, and
    the Jinja variables the engines got."""

    go: Outcome
    engines: dict[str, Outcome]
    agrees: dict[str, bool]
    out_of_scope: dict[str, str | None]
    skipped: dict[str, str]
    context: dict[str, Any]


def render_case(go_source: str, jinja_source: str, conversation: dict[str, Any], *,
                engines: list[str] | None = None, render: GoRenderer | None = None,
                now: dt.datetime | None = None, tokens: TokenLevel | None = None
                ) -> CaseRendering:
    """Render one conversation on Go and on `engines` (default: every available one) and
    compare them exactly as the harness does (the same Go call, context, BOS rule and scope),
    so that what a person looks at is what `verify` checks (the playground's panes)."""
    validate(conversation)
    selection = select_engines(engines)
    chosen = [get_engine(name) for name in selection.used]
    go_single: GoRenderer = render or BARE
    checker = _Checker(go_source, jinja_source, chosen, go_single, one_by_one(go_single),
                       now or DEFAULT_NOW, None, tokens)
    go, results = checker.outcomes(conversation, chosen)
    scope = {e.name: results[e.name].out_of_scope or results[e.name].runtime_refused
             or checker.scope(e, conversation, go) for e in chosen}
    return CaseRendering(
        go=go, engines=results, out_of_scope=scope, skipped=dict(selection.skipped),
        context=checker.context(conversation),
        agrees={e.name: checker.agrees(go, results[e.name], conversation, e) for e in chosen})
