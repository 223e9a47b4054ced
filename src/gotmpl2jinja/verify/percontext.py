"""Draws per runtime context: each of llama-server's contexts compares its share of the cases.

On a runtime context (llamacpp-server, minja-server, ollama-jinja) most conversations of the
main draw are of kinds the contract leaves out of scope there (a prefill, a developer role,
fill-in-the-middle, minja-era tools…): counted by kind, never compared. So after the main draw,
each such context that compared fewer than `SHARE` of the cases gets draws of its own:

1. with an exhaustive pass, the shapes of that pass in its scope (`exhaustive_conversations`
   steered: a final assistant message closed by a user's turn, no tool-call index…), those the
   main pass did not already give it;
2. random conversations from a stream of its own (seeded by the seed and the context's name:
   same seed, same cases), steered (`verify.steer`) away from each kind its out-of-scope check
   has named so far, and filtered by that check before anything is rendered (it needs no Go
   render), until the context has compared `SHARE` of the cases or `CAP` × the random cases
   were drawn for it.

The out-of-scope check stays the authority on what is compared; steering only spares the
draws. The main draw and its counts by kind stay as they were; these draws are counted apart
(`EngineTally.drawn`, `drawn_out_of_scope`), and a context that falls short says why
(`EngineTally.short`), e.g. a template llama-server will not load.

May depend on: `engines`, `verify.exhaustive`, `verify.outcomes`, `verify.steer`,
`verify.strategies`.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from gotmpl2jinja.engines.cpp_engines import NO_SYSTEM_ROLE, STRING_ARGUMENTS
from gotmpl2jinja.engines.ollama_jinja import (
    NO_ARGUMENTS,
    THINK_REFUSED,
    THINKING_DROPPED,
    TOOLS_REFUSED,
)
from gotmpl2jinja.engines.registry import Engine
from gotmpl2jinja.verify.exhaustive import exhaustive_conversations
from gotmpl2jinja.verify.outcomes import CLOSED_ON_SERVER, Divergence, EngineTally, out_of_scope
from gotmpl2jinja.verify.steer import FREE, Steer
from gotmpl2jinja.verify.strategies import DrawnCase, draw_random

#: The share of the cases each runtime context compares (when its scope allows it).
SHARE = 0.9
#: Draws a context may make of its own, per random case asked for.
CAP = 20

#: What each kind of out-of-scope conversation steers a context's draws away from.
STEERING: dict[str, dict[str, Any]] = {
    "fill-in-the-middle": {"fim": False},
    "no messages": {"empty_chat": False},
    "developer role": {"dropped_roles": frozenset({"developer"})},
    "prefill": {"final_assistant": False},
    CLOSED_ON_SERVER: {"closed_call": False},
    "empty tool list": {"empty_tools": False},
    "tool-call index": {"call_index": False},
    "tool-level items": {"tool_items": False},
    NO_SYSTEM_ROLE: {"dropped_roles": frozenset({"system"})},
    "thinking control (minja era)": {"think": ()},
    "tool use (minja-era polyfills)": {"tools": False, "tool_calls": False,
                                       "dropped_roles": frozenset({"tool"})},
    STRING_ARGUMENTS: {"tool_calls": False},
    THINK_REFUSED: {"think": (False,)},
    TOOLS_REFUSED: {"tools": False},
    THINKING_DROPPED: {"thinking": False},
    NO_ARGUMENTS: {"bare_calls": False},
}

#: The kind that puts every case out of scope (no draw can help).
_REFUSED_TEMPLATE = "llama-server refuses the template"


def steered(steer: Steer, kinds: Iterable[str]) -> Steer:
    """`steer`, also kept away from each of `kinds` (kinds without a steering change nothing)."""
    for kind in kinds:
        for name, value in STEERING.get(kind, {}).items():
            if name == "dropped_roles":
                value = steer.dropped_roles | value
            elif name == "think" and steer.think is not None:
                value = tuple(v for v in steer.think if v in value)
            steer = replace(steer, **{name: value})
    return steer


def runtime_contexts(engines: Iterable[Engine]) -> list[Engine]:
    """The engines that run in a runtime (llama-server's) context."""
    return [e for e in engines if getattr(e, "server", False) and hasattr(e, "scope")]


def _key(conv: dict[str, Any]) -> str:
    return json.dumps(conv, sort_keys=True)


T = TypeVar("T")


class Checker(Protocol):
    """What these draws need of the harness's checker."""

    counts: dict[str, EngineTally]
    jinja_source: str

    def search_extra(self, items: Iterator[T], engine: Engine, target: int,
                     conversation: Callable[[T], dict[str, Any]] = ...) -> T | None: ...

    def divergence(self, conv: dict[str, Any], engine: Engine, found_by: str
                   ) -> Divergence: ...


#: Shrinks a random case that diverged (the harness's `_shrunk_divergences`).
Shrink = Callable[[Any, DrawnCase, list[Engine]], list[Divergence]]


def draw_per_context(checker: Checker, engine: Engine, *, cases: int, exhaustive: int | None,
                     seed: int, shrink: Shrink) -> list[Divergence]:
    """Give `engine` (a runtime context that has not diverged) its share of compared cases;
    returns the divergences found (the first one stops its draws)."""
    tally = checker.counts[engine.name]
    target = math.ceil(SHARE * tally.cases)
    kinds = dict(tally.runtime_differs)
    refused = next((k for k in kinds if k.startswith(_REFUSED_TEMPLATE)), None)
    if refused is not None:
        tally.short = refused
        return []
    steer = steered(FREE, kinds)

    def in_scope(drawn: Iterator[DrawnCase]) -> Iterator[DrawnCase]:
        """The draws in the context's scope; the others counted by kind, and steered away
        from from then on (the random stream reads `steer` at each draw)."""
        nonlocal steer
        for case in drawn:
            tally.drawn += 1
            kind = out_of_scope(engine, case.conversation, checker.jinja_source)
            if kind is None:
                yield case
                continue
            tally.drawn_out_of_scope[kind] = tally.drawn_out_of_scope.get(kind, 0) + 1
            steer = steered(steer, [kind])

    if exhaustive is not None and tally.compared < target:
        main = {_key(conv) for conv in exhaustive_conversations(exhaustive)}
        shapes = (DrawnCase(conv, ()) for conv in exhaustive_conversations(exhaustive, steer)
                  if _key(conv) not in main)
        found = checker.search_extra(in_scope(shapes), engine, target, _conversation_of)
        if found is not None:
            return [checker.divergence(found.conversation, engine, "exhaustive")]
    if cases <= 0 or tally.compared >= target:
        return []
    rng = random.Random(f"{seed}:{engine.name}")
    cap = math.ceil(CAP * cases)
    drawn = (draw_random(rng, steer=steer) for _ in range(cap))
    case = checker.search_extra(in_scope(drawn), engine, target, _conversation_of)
    if case is not None:
        return shrink(checker, case, [engine])
    if tally.compared < target:
        tally.short = short_reason(tally, cap)
    return []


def _conversation_of(case: DrawnCase) -> dict[str, Any]:
    return case.conversation


def short_reason(tally: EngineTally, cap: int) -> str:
    """Why a context compared fewer than its share: the cap, and what its draws met."""
    kinds = sorted(tally.drawn_out_of_scope.items(), key=lambda item: (-item[1], item[0]))
    return (f"cap reached: {cap} draws of its own, out of scope: "
            + ", ".join(f"{kind} {n}" for kind, n in kinds[:3]))
