"""What one case gives on each side (an `Outcome`), when two agree, and how a divergence and a
whole verification are reported (`Divergence`, `VerifyResult`); the Go side as a renderer.

Equal means identical strings, or both sides failing (a Go execution error ⇔ the template's
own `raise_exception`), or a case the contract counts as out of scope on a runtime.

May depend on: `emit.runtime` (the markers of the runtime's failures), `engines`, `errors`,
`ollama`, `verify.closed`, `verify.conversation`.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from gotmpl2jinja.emit.family import HARMONY_NAME
from gotmpl2jinja.emit.runtime import ADDRESS, NOT_UTF8
from gotmpl2jinja.engines.base import RuntimeRefused
from gotmpl2jinja.engines.registry import (
    Engine,
    is_raised,
)
from gotmpl2jinja.errors import (
    ReferenceRendererError,
    RenderError,
)
from gotmpl2jinja.ollama import reference
from gotmpl2jinja.ollama.family import NO_STEPS, FamilySteps
from gotmpl2jinja.ollama.reference import NOT_RENDERED, CapabilityRefusal
from gotmpl2jinja.verify.closed import cut_closed, host_call

if TYPE_CHECKING:
    pass

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
    #: Jinja side only: the kind that puts the case outside the contract on this engine's
    #: runtime context (`out_of_scope`); such a case is not rendered there, only counted.
    out_of_scope: str | None = None

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
    #: A conversation of a kind the contract puts out of scope on a runtime context (no template
    #: can make that runtime agree: llama-server turns a `developer` role into `system`, …), or
    #: one the runtime refused: counted by kind, never as equivalent. An out-of-scope case is
    #: not rendered there (nothing it rendered would be compared).
    runtime_differs: dict[str, int] = field(default_factory=dict)
    #: A runtime context's own draws after the main draw (`verify.percontext`): how many, the
    #: out-of-scope kinds among them (set aside before rendering, or refused by the runtime),
    #: and, where it still compared fewer than its share of the cases, why.
    drawn: int = 0
    drawn_out_of_scope: dict[str, int] = field(default_factory=dict)
    #: of `refused`, those of its own draws
    drawn_refused: int = 0
    short: str | None = None

    @property
    def compared(self) -> int:
        """Cases compared with Go on this engine (the main draw's and its own draws')."""
        return self.equal + self.both_failed + self.diverged + self.refused


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
    #: How outputs were compared when not as bare strings: as the hosts tokenize them
    #: (`verify.tokens`: token IDs of a vocabulary, or the BOS rule applied as text).
    compared_on: str | None = None
    #: The template's special-token texts the vocabulary has no special token for.
    unknown_specials: list[str] = field(default_factory=list)
    #: The engines that run in a runtime (llama-server's) context, each with draws of its own
    #: after the main draw (`verify.percontext`).
    contexts: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.divergences

    @property
    def refused(self) -> int:
        """Cases of the main draw Ollama refuses for a capability (most over the engines: each
        counts its own; a runtime context's own draws apart)."""
        return max((tally.refused - tally.drawn_refused for tally in self.counts.values()),
                   default=0)

    @property
    def runtime_differs(self) -> dict[str, int]:
        """Cases out of scope on a runtime context (or refused by it), by "engine: kind" (see
        EngineTally.runtime_differs)."""
        return {f"{name}: {kind}": n for name, tally in self.counts.items()
                for kind, n in sorted(tally.runtime_differs.items())}

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (for `verify --json`)."""
        data = asdict(self)
        data["ok"] = self.ok
        data["refused"] = self.refused
        data["runtime_differs"] = self.runtime_differs
        for name, tally in self.counts.items():
            data["counts"][name]["compared"] = tally.compared
        data["shortfalls"] = self.shortfalls
        return data

    @property
    def shortfalls(self) -> dict[str, str]:
        """The engines that compared fewer than their share of the cases, with why: `31 of
        200 compared, cap reached: …`."""
        return {name: f"{tally.compared} of {tally.cases} compared, {tally.short}"
                for name, tally in self.counts.items() if tally.short}


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
    #: The steps Ollama takes by the model's family, parser and config (ollama.family).
    family: FamilySteps = NO_STEPS

    def _rule(self) -> dict[str, Any]:
        messages = [{"role": r, "content": c} for r, c in self.modelfile_messages]
        return {"modelfile_system": self.modelfile_system or None,
                "modelfile_messages": messages or None, "lenient": self.lenient,
                "family": self.family.payload() if self.family else None}

    def as_lenient(self) -> GoSide:
        """The same Go side rendering refused requests as if the option were absent."""
        return replace(self, lenient=True)

    def __call__(self, go_source: str, conversation: dict[str, Any], now: dt.datetime) -> str:
        return reference.render(go_source, conversation, now=rfc3339(now), **self._rule())

    def many(self, go_source: str, conversations: list[dict[str, Any]], now: dt.datetime
             ) -> list[str | RenderError]:
        return reference.render_many(go_source, conversations, now=rfc3339(now), **self._rule())


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
    if isinstance(item, CapabilityRefusal):
        return Outcome(refused=item.capability)
    if isinstance(item, RenderError):
        return failure_outcome(item)
    return Outcome(output=item)


#: The kind of a case whose host asks for no generation prompt, on llama-server (which decides
#: the generation prompt itself: a request cannot turn it off).
CLOSED_ON_SERVER = "add_generation_prompt false (llama-server always adds one)"


def out_of_scope(engine: Engine, conv: dict[str, Any], template: str) -> str | None:
    """The kind of `conv` that puts it outside the contract on `engine`'s runtime context (an
    engine without a `scope` method, i.e. a raw context, has none)."""
    scope = getattr(engine, "scope", None)
    if scope is None:
        return None
    kind = scope(conv, template)
    if kind is None and host_call(conv) == "closed" and getattr(engine, "server", False):
        return CLOSED_ON_SERVER
    return kind


#: Go rendered the closed call but began no turn for the added message (nothing to cut at).
NO_CLOSING_TURN = "the closed rendering: Go began no turn of the message after the conversation"


def closed_outcome(item: Outcome, cut: bool) -> Outcome:
    """Go's outcome of a case, cut to the closed rendering where `cut` (`verify.closed`)."""
    if not cut or item.output is None:
        return item
    closed = cut_closed(item.output)
    if closed is None:
        return replace(item, output=None, error=NO_CLOSING_TURN)
    return replace(item, output=closed)


#: How fmt prints a pointer inside a printed value (`0xc000012345`).
_ADDRESS = re.compile(r"0x[0-9a-f]{6,}")


def not_utf8(text: str) -> bool:
    """Go's output held bytes that are not UTF-8 (the reference decodes them as surrogates)."""
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def address_raised(go: Outcome, jinja: Outcome) -> bool:
    """The template raised the contract's ADDRESS failure where Go rendered."""
    return not go.failed and jinja.raised and ADDRESS in (jinja.error or "")


def _refusal_note(refused: str) -> str:
    """What a divergence says of a request Ollama refuses or does not render."""
    if refused == NOT_RENDERED:
        return ("    (Ollama does not render this request: a chat without messages only loads the "
                "model; go is Execute's answer for it)")
    return (f"    (Ollama refuses this request: no {refused} capability; go is the request"
            " rendered as if that option were absent)")


def agree(go: Outcome, jinja: Outcome) -> bool:
    """Equal bytes, or Go failing exactly where the template raises. For a request Ollama
    refuses, Go's side is its lenient rendering (unchecked when there is none)."""
    if go.refused is not None and go.output is None and go.error is None:
        return True
    if go.output is not None and not_utf8(go.output):
        # no Jinja string can hold those bytes: the contract asks for this failure instead
        return jinja.raised and NOT_UTF8 in (jinja.error or "")
    if jinja.raised and HARMONY_NAME in (jinja.error or ""):
        # a tool name harmony renames by Unicode classes: the contract asks for this failure
        # (where Go fails further on, both fail)
        return True
    if address_raised(go, jinja):
        # a memory address changes from run to run: the contract asks for this failure where
        # Go prints one (and only there; a part of one: _Checker.address_dependent)
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


def format_divergence(div: Divergence) -> str:
    """A divergence as a person reads it: engine, minimal conversation, diff, both outputs."""
    def side(output: str | None, error: str | None) -> str:
        return f"error: {error}" if error is not None else json.dumps(output, ensure_ascii=False)

    return "\n".join([
        f"  divergence on {div.engine} (found by {div.found_by} search, minimal conversation):",
        "    " + json.dumps(div.conversation, ensure_ascii=False),
        *("    " + line for line in div.diff.splitlines()),
        *([_refusal_note(div.go_refused)] if div.go_refused else []),
        f"    go:    {side(div.go_output, div.go_error)}",
        f"    jinja: {side(div.jinja_output, div.jinja_error)}",
    ])
