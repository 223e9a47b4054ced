"""Where an Ollama template drifts from the model's own Jinja chat template (issue 8).

Ollama's Go template and the model's original Jinja template (from its GGUF) disagree for most
models. This module renders both on the same conversations — the Go side with the real Go
reference renderer, the Jinja side with jinja2 configured as transformers does, plus
`bos_token`/`eos_token` — and explains every disagreement with a small set of *kinds*.

How a disagreement is classified (the rules docs/compare.md states for readers):

- One side fails and the other does not: `jinja raises` / `ollama raises`. Both failing is
  agreement (the contract: where Ollama fails, the Jinja must fail too).
- Otherwise a kind is an *explanation*, and a conversation's kinds are the smallest set of
  explanations under which the two renderings become byte-identical. Explanations are tried by
  size, then in the order of `KINDS`; the first set that works is the answer. Nothing explains
  it → `other`.
  - Feature explanations re-render a *variant* of the conversation (never guessed from text):
    `default system prompt` — the conversation has no system message and a system message is
    added; `tool definitions` — `tools` removed; `tool calls` — assistant tool calls and the
    tool results removed; `thinking` — `thinking` fields and `think` removed.
  - Text explanations normalise both renderings: `BOS/EOS` — every occurrence of the BOS and
    EOS token deleted; `date header` — every line holding a date-like string deleted (the clock
    is pinned, so a date present on one side only is a date header the other side lacks);
    `white space only` — all white space deleted.
  Feature explanations come first in the order, so a difference inside the tool JSON that is
  only spacing is a `tool definitions` drift, not `white space only`.
- A minimal example per kind: the smallest catalogue/generated conversation showing the kind,
  then greedily shrunk (drop a message, a field, a tool, shorten a text) while it still shows it.
"""

from __future__ import annotations

import copy
import datetime as dt
import itertools
import json
import random
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gotmpl2jinja.errors import Gotmpl2JinjaError, RenderError

Conversation = dict[str, Any]

#: The clock pinned on both sides (`currentDate` in Go, `strftime_now` in Jinja), read as UTC.
PINNED_NOW = dt.datetime(2026, 1, 15, 9, 30, 0)

DEFAULT_SYSTEM = "default system prompt"
TOOL_DEFINITIONS = "tool definitions"
TOOL_CALLS = "tool calls"
THINKING = "thinking"
BOS_EOS = "BOS/EOS"
DATE_HEADER = "date header"
WHITE_SPACE = "white space only"
OTHER = "other"
JINJA_RAISES = "jinja raises"
OLLAMA_RAISES = "ollama raises"

#: Explanation order: feature variants first, then text normalisations (see module docstring).
FEATURE_KINDS = (DEFAULT_SYSTEM, TOOL_DEFINITIONS, TOOL_CALLS, THINKING)
TEXT_KINDS = (BOS_EOS, DATE_HEADER, WHITE_SPACE)
KINDS = FEATURE_KINDS + TEXT_KINDS + (OTHER, JINJA_RAISES, OLLAMA_RAISES)

#: The system message added by the `default system prompt` variant.
PROBE_SYSTEM = "You are a careful assistant."

_MONTHS = (
    "Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|Jun(?:e)?|Jul(?:y)?|Aug(?:ust)?"
    "|Sep(?:t|tember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?"
)
#: Date-like strings: 2026-01-15, 2026/01/15, 15 Jan 2026, January 15, 2026, December 2023.
DATE_LIKE = re.compile(
    r"\b\d{4}[-/]\d{1,2}[-/]\d{1,2}\b"
    rf"|\b\d{{1,2}} (?:{_MONTHS}),? \d{{4}}\b"
    rf"|\b(?:{_MONTHS}) \d{{1,2}}(?:st|nd|rd|th)?,? \d{{4}}\b"
    rf"|\b(?:{_MONTHS}) \d{{4}}\b"
)


# --------------------------------------------------------------------------------------------
# The pair and its two renderers


@dataclass(frozen=True)
class Rendering:
    """What one side produced: its text, or the error it raised."""

    text: str | None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class Pair:
    """An Ollama Go template and a reference Jinja template for the same model."""

    ollama_template: str
    reference_jinja: str
    bos: str = ""
    eos: str = ""
    now: dt.datetime = PINNED_NOW
    engine: str = "jinja2"  # the engine the reference Jinja is rendered on (JINJA_ENGINE)
    _cache: dict[tuple[str, str], Rendering] = field(default_factory=dict, repr=False)

    def render(self, side: str, conversation: Conversation) -> Rendering:
        """Render one side ("ollama" or "jinja"); renderings are cached per conversation."""
        key = (side, json.dumps(conversation, sort_keys=True, ensure_ascii=False))
        hit = self._cache.get(key)
        if hit is None:
            hit = self._render_ollama(conversation) if side == "ollama" else (
                self._render_jinja(conversation))
            self._cache[key] = hit
        return hit

    def _render_ollama(self, conversation: Conversation) -> Rendering:
        from gotmpl2jinja.ollama.reference import render

        try:
            # a request Ollama refuses for a capability (think on a template that cannot
            # think …) is rendered as if the option were absent, as a Jinja caller's would be
            return Rendering(render(self.ollama_template, conversation,
                                    now=self.now.strftime("%Y-%m-%dT%H:%M:%SZ"), lenient=True))
        except RenderError as exc:  # an execution error; a parse error is not a drift
            return Rendering(None, str(exc))

    def _render_jinja(self, conversation: Conversation) -> Rendering:
        """transformers' rendering; its `{% generation %}` block renders its body unchanged."""
        from gotmpl2jinja.engines.registry import get_engine
        from gotmpl2jinja.verify.conversation import jinja_context

        context = dict(jinja_context(conversation))
        context["bos_token"] = self.bos
        context["eos_token"] = self.eos
        try:
            text = get_engine(self.engine).render(
                without_generation_tags(self.reference_jinja), context, now=self.now)
        except RenderError as exc:
            return Rendering(None, str(exc))
        return Rendering(text)


#: The engine the model's own Jinja is rendered on by default: the question is what the model
#: was trained on, and its chat template is applied by transformers (jinja2) in training
#: pipelines (`compare --engines` chooses others: what a runtime on that engine would render).
JINJA_ENGINE = "jinja2"


_GENERATION_TAG = re.compile(r"\{%(-?)(\s*)(end)?generation(\s*)(-?)%\}")


def without_generation_tags(template: str) -> str:
    """`{% generation %}…{% endgeneration %}` as `{% if true %}…{% endif %}`.

    transformers' AssistantTracker extension only records where assistant text lies and renders
    the block's body unchanged; an `if true` block keeps the tags' white-space control (`-`,
    trim_blocks, lstrip_blocks) exactly, on a jinja2 without the extension.
    """
    return _GENERATION_TAG.sub(
        lambda m: "{%" + m[1] + m[2] + ("endif" if m[3] else "if true") + m[4] + m[5] + "%}",
        template,
    )


# --------------------------------------------------------------------------------------------
# Variants (feature explanations) and normalisations (text explanations)


def has_system(conversation: Conversation) -> bool:
    return any(m.get("role") == "system" for m in conversation.get("messages", []))


def has_tool_calls(conversation: Conversation) -> bool:
    return any(
        m.get("tool_calls") or m.get("role") == "tool" for m in conversation.get("messages", [])
    )


def has_thinking(conversation: Conversation) -> bool:
    return "think" in conversation or any(
        "thinking" in m for m in conversation.get("messages", [])
    )


def with_system(conversation: Conversation) -> Conversation:
    """The conversation with a system message first."""
    out = copy.deepcopy(conversation)
    out["messages"] = [{"role": "system", "content": PROBE_SYSTEM}, *out.get("messages", [])]
    return out


def without_tools(conversation: Conversation) -> Conversation:
    out = copy.deepcopy(conversation)
    out.pop("tools", None)
    return out


def without_tool_calls(conversation: Conversation) -> Conversation:
    """No assistant tool calls and no tool results (they come as a pair)."""
    out = copy.deepcopy(conversation)
    messages = []
    for message in out.get("messages", []):
        if message.get("role") == "tool":
            continue
        message.pop("tool_calls", None)
        messages.append(message)
    out["messages"] = messages
    return out


def without_thinking(conversation: Conversation) -> Conversation:
    out = copy.deepcopy(conversation)
    out.pop("think", None)
    for message in out.get("messages", []):
        message.pop("thinking", None)
    return out


#: kind -> (applies to this conversation?, the variant without/with the feature)
FEATURE_VARIANTS: dict[str, tuple[Callable[[Conversation], bool],
                                  Callable[[Conversation], Conversation]]] = {
    DEFAULT_SYSTEM: (lambda c: not has_system(c), with_system),
    TOOL_DEFINITIONS: (lambda c: bool(c.get("tools")), without_tools),
    TOOL_CALLS: (has_tool_calls, without_tool_calls),
    THINKING: (has_thinking, without_thinking),
}


def delete_tokens(text: str, tokens: Sequence[str]) -> str:
    for token in tokens:
        if token:
            text = text.replace(token, "")
    return text


def delete_date_lines(text: str) -> str:
    """Every line holding a date-like string removed (with its line break)."""
    return "".join(
        line for line in text.splitlines(keepends=True) if not DATE_LIKE.search(line)
    )


def delete_white_space(text: str) -> str:
    return re.sub(r"\s+", "", text)


def normalise(text: str, kinds: Sequence[str], pair: Pair) -> str:
    """Apply the text explanations in `kinds`, always in the order BOS/EOS, date, white space."""
    if BOS_EOS in kinds:
        text = delete_tokens(text, (pair.bos, pair.eos))
    if DATE_HEADER in kinds:
        text = delete_date_lines(text)
    if WHITE_SPACE in kinds:
        text = delete_white_space(text)
    return text


# --------------------------------------------------------------------------------------------
# Classification


def classify(pair: Pair, conversation: Conversation) -> tuple[str, ...]:
    """The kinds of disagreement this conversation shows; () when both sides agree."""
    ollama = pair.render("ollama", conversation)
    jinja = pair.render("jinja", conversation)
    if not ollama.ok or not jinja.ok:
        if ollama.ok:
            return (JINJA_RAISES,)
        if jinja.ok:
            return (OLLAMA_RAISES,)
        return ()
    if ollama.text == jinja.text:
        return ()
    features = [k for k in FEATURE_KINDS if FEATURE_VARIANTS[k][0](conversation)]
    texts = [k for k in TEXT_KINDS if k != BOS_EOS or pair.bos or pair.eos]
    candidates = features + texts
    order = {k: i for i, k in enumerate(KINDS)}
    for size in range(1, len(candidates) + 1):
        for subset in itertools.combinations(sorted(candidates, key=order.__getitem__), size):
            if _explains(pair, conversation, subset):
                return subset
    return (OTHER,)


def _explains(pair: Pair, conversation: Conversation, kinds: Sequence[str]) -> bool:
    variant = conversation
    for kind in FEATURE_KINDS:
        if kind in kinds:
            variant = FEATURE_VARIANTS[kind][1](variant)
    ollama = pair.render("ollama", variant)
    jinja = pair.render("jinja", variant)
    if ollama.text is None or jinja.text is None:
        return False
    return normalise(ollama.text, kinds, pair) == normalise(jinja.text, kinds, pair)


# --------------------------------------------------------------------------------------------
# Conversations: a fixed catalogue, then seeded random ones

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city",
        "parameters": {
            "type": "object",
            "required": ["city"],
            "properties": {
                "city": {"type": "string", "description": "The city name"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
        },
    },
}
TIME_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Get the local time",
        "parameters": {"type": "object", "properties": {}},
    },
}


def _call(city: str = "Paris", call_id: str = "call_1") -> dict[str, Any]:
    return {"id": call_id, "function": {"index": 0, "name": "get_weather",
                                        "arguments": {"city": city}}}


def catalogue() -> list[Conversation]:
    """Hand-picked shapes, small first: each isolates one feature a template may treat apart."""
    user = {"role": "user", "content": "Hello!"}
    system = {"role": "system", "content": "You are a helpful assistant."}
    answer = {"role": "assistant", "content": "Hi! How can I help?"}
    follow = {"role": "user", "content": "What is the weather in Paris?"}
    asks = {"role": "assistant", "content": "", "tool_calls": [_call()]}
    result = {"role": "tool", "content": '{"temperature": 21}', "tool_name": "get_weather",
              "tool_call_id": "call_1"}
    sunny = {"role": "assistant", "content": "It is 21 degrees in Paris."}
    thought = {"role": "assistant", "content": "Hi!", "thinking": "The user greets me."}
    return [
        {"messages": [user]},
        {"messages": [system, user]},
        {"messages": [user, answer]},
        {"messages": [user, answer, follow]},
        {"messages": [system, user, answer, follow]},
        {"messages": [{"role": "user", "content": "  Hello!\n"}]},
        {"messages": [user], "think": True},
        {"messages": [user], "think": False},
        {"messages": [user, thought, follow], "think": True},
        {"messages": [follow], "tools": [WEATHER_TOOL]},
        {"messages": [system, follow], "tools": [WEATHER_TOOL, TIME_TOOL]},
        {"messages": [follow, asks, result], "tools": [WEATHER_TOOL]},
        {"messages": [system, follow, asks, result, sunny, user], "tools": [WEATHER_TOOL]},
    ]


_WORDS = ("Hello", "weather", "Paris", "please", "why?", "ünïcödé", "42", "x", "Tell me more")


def random_conversations(count: int, seed: int) -> list[Conversation]:
    """`count` seeded conversations mixing system, turns, tools, tool calls and thinking."""
    rng = random.Random(seed)
    out: list[Conversation] = []

    def text() -> str:
        words = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 4)))
        return rng.choice(["", " ", "\n"]) + words + rng.choice(["", "", " ", "\n"])

    for _ in range(count):
        messages: list[dict[str, Any]] = []
        if rng.random() < 0.4:
            messages.append({"role": "system", "content": text()})
        tools = rng.random() < 0.35
        turns = rng.randint(1, 3)
        for turn in range(turns):
            messages.append({"role": "user", "content": text()})
            if turn == turns - 1 and rng.random() < 0.6:
                break  # most conversations end on the user: a generation prompt follows
            if tools and rng.random() < 0.5:
                calls = [_call(rng.choice(["Paris", "Oslo"]), f"call_{turn}_{i}")
                         for i in range(rng.randint(1, 2))]
                messages.append({"role": "assistant", "content": "", "tool_calls": calls})
                for call in calls:
                    messages.append({"role": "tool", "content": "sunny",
                                     "tool_name": "get_weather", "tool_call_id": call["id"]})
            reply: dict[str, Any] = {"role": "assistant", "content": text()}
            if rng.random() < 0.25:
                reply["thinking"] = text()
            messages.append(reply)
        conversation: Conversation = {"messages": messages}
        if tools:
            conversation["tools"] = [WEATHER_TOOL] if rng.random() < 0.7 else [
                WEATHER_TOOL, TIME_TOOL]
        if rng.random() < 0.25:
            conversation["think"] = rng.choice([True, False, "high"])
        out.append(conversation)
    return out


def conversations(cases: int, seed: int) -> list[Conversation]:
    return catalogue() + random_conversations(cases, seed)


# --------------------------------------------------------------------------------------------
# Shrinking


def size(conversation: Conversation) -> int:
    """How big a conversation reads: the length of its canonical JSON."""
    return len(json.dumps(conversation, sort_keys=True, ensure_ascii=False))


def _reductions(conversation: Conversation) -> Iterator[Conversation]:
    """Every one-step simplification of a conversation, biggest cuts first."""
    messages = conversation.get("messages", [])
    for i in range(len(messages)):
        if len(messages) > 1 and not _joins_same_roles(messages, i):
            c = copy.deepcopy(conversation)
            del c["messages"][i]
            yield c
    for key in ("tools", "think"):
        if key in conversation:
            c = copy.deepcopy(conversation)
            del c[key]
            yield c
    tools = conversation.get("tools") or []
    for i in range(len(tools)):
        if len(tools) > 1:
            c = copy.deepcopy(conversation)
            del c["tools"][i]
            yield c
    for i, tool in enumerate(tools):
        function = tool.get("function") or {}
        if function.get("description"):
            c = copy.deepcopy(conversation)
            c["tools"][i]["function"]["description"] = ""
            yield c
        parameters = function.get("parameters") or {}
        for name in parameters.get("properties") or {}:
            c = copy.deepcopy(conversation)
            del c["tools"][i]["function"]["parameters"]["properties"][name]
            required = c["tools"][i]["function"]["parameters"].get("required")
            if isinstance(required, list) and name in required:
                required.remove(name)
                if not required:
                    del c["tools"][i]["function"]["parameters"]["required"]
            yield c
    for i, message in enumerate(messages):
        for key in ("tool_calls", "thinking", "tool_name", "tool_call_id"):
            if key in message:
                c = copy.deepcopy(conversation)
                del c["messages"][i][key]
                yield c
        calls = message.get("tool_calls") or []
        if len(calls) > 1:
            c = copy.deepcopy(conversation)
            del c["messages"][i]["tool_calls"][1:]
            yield c
        for key in ("content", "thinking"):
            value = message.get(key)
            if isinstance(value, str) and value not in ("", "Hi"):
                for shorter in ("", "Hi"):
                    c = copy.deepcopy(conversation)
                    c["messages"][i][key] = shorter
                    yield c
    if conversation.get("think") not in (None, True, False):
        c = copy.deepcopy(conversation)
        c["think"] = True
        yield c


def _joins_same_roles(messages: list[dict[str, Any]], i: int) -> bool:
    """Would dropping message i put two messages of one role (not tool) side by side?

    Ollama merges such messages (`collate`) and most Jinja templates refuse them; the generated
    conversations never have them, so shrinking must not introduce that drift either.
    """
    if 0 < i < len(messages) - 1:
        before, after = messages[i - 1].get("role"), messages[i + 1].get("role")
        return before == after and before != "tool"
    return False


def shrink(pair: Pair, conversation: Conversation, kind: str, budget: int = 200) -> Conversation:
    """Greedy delta debugging: keep taking the first smaller variant that still shows `kind`."""
    current = conversation
    tries = 0
    improved = True
    while improved and tries < budget:
        improved = False
        for candidate in _reductions(current):
            if size(candidate) >= size(current):
                continue
            tries += 1
            if kind in classify(pair, candidate):
                current = candidate
                improved = True
                break
            if tries >= budget:
                break
    return current


# --------------------------------------------------------------------------------------------
# Reports


@dataclass
class Finding:
    """One kind of disagreement: how often it showed and its minimal example.

    `focused` is the example's pair of renderings with the example's *other* kinds explained
    away (their variants applied, their normalisations done), so its first difference is this
    kind's; it equals (`ollama`, `jinja`) when the example shows this kind alone.
    """

    kind: str
    count: int
    example: Conversation
    ollama: Rendering
    jinja: Rendering
    kinds_of_example: tuple[str, ...]
    focused: tuple[Rendering, Rendering]


@dataclass
class Comparison:
    """The outcome for one pair over all conversations."""

    total: int
    agreeing: int
    findings: list[Finding]
    bos: str
    eos: str
    engine: str = "jinja2"

    @property
    def agree(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        return {
            "conversations": self.total, "agreeing": self.agreeing, "agree": self.agree,
            "bos_token": self.bos, "eos_token": self.eos, "engine": self.engine,
            "kinds": [
                {"kind": f.kind, "count": f.count, "example": f.example,
                 "kinds_of_example": list(f.kinds_of_example),
                 "ollama": f.ollama.text, "ollama_error": f.ollama.error,
                 "jinja": f.jinja.text, "jinja_error": f.jinja.error,
                 "first_difference": first_difference(f.ollama.text, f.jinja.text),
                 "focused_ollama": f.focused[0].text, "focused_jinja": f.focused[1].text}
                for f in self.findings
            ],
        }


def compare(pair: Pair, cases: int = 20, seed: int = 0) -> Comparison:
    """Render both sides on the catalogue plus `cases` seeded conversations; explain the drift."""
    pool = conversations(cases, seed)
    probe = pair.render("jinja", pool[0])
    if probe.error is not None and "does not compile" in probe.error:
        # A broken template is not a drift: say so instead of "raises" on every conversation.
        raise Gotmpl2JinjaError(f"reference Jinja: {probe.error}")
    by_kind: dict[str, list[Conversation]] = {}
    agreeing = 0
    for conversation in pool:
        kinds = classify(pair, conversation)
        if not kinds:
            agreeing += 1
        for kind in kinds:
            by_kind.setdefault(kind, []).append(conversation)
    findings = []
    for kind in sorted(by_kind, key=KINDS.index):
        seen = by_kind[kind]
        smallest = min(seen, key=size)  # min keeps the first of equal sizes: deterministic
        example = shrink(pair, smallest, kind)
        kinds_of_example = classify(pair, example)
        findings.append(Finding(
            kind, len(seen), example, pair.render("ollama", example),
            pair.render("jinja", example), kinds_of_example,
            focus(pair, example, kind, kinds_of_example),
        ))
    return Comparison(len(pool), agreeing, findings, pair.bos, pair.eos, pair.engine)


def focus(
    pair: Pair, example: Conversation, kind: str, kinds_of_example: Sequence[str]
) -> tuple[Rendering, Rendering]:
    """Both renderings of `example` with every kind but `kind` explained away.

    For `other` nothing explains the drift, but BOS/EOS tokens and date lines are deleted
    anyway (when that changes something), so the residual difference is what the diff shows.
    """
    others = [k for k in kinds_of_example if k != kind and k in FEATURE_KINDS + TEXT_KINDS]
    if kind == OTHER:
        others = [BOS_EOS, DATE_HEADER]
    variant = example
    for other in FEATURE_KINDS:
        if other in others:
            variant = FEATURE_VARIANTS[other][1](variant)
    sides = []
    for side in ("ollama", "jinja"):
        rendering = pair.render(side, variant)
        if rendering.text is not None:
            rendering = Rendering(normalise(rendering.text, others, pair))
        sides.append(rendering)
    return sides[0], sides[1]


def first_difference(a: str | None, b: str | None) -> int | None:
    """Offset of the first differing character; None when equal or a side has no text."""
    if a is None or b is None or a == b:
        return None
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def visible(text: str) -> str:
    """White space made visible on one line: `·` space, `⏎` newline, `→` tab."""
    return (text.replace(" ", "·").replace("\n", "⏎").replace("\t", "→")
            .replace("\r", "␍"))


def readable_diff(ollama: Rendering, jinja: Rendering, before: int = 60, after: int = 100) -> str:
    """Both renderings around the first differing offset, white space visible, a caret under it."""
    if not ollama.ok or not jinja.ok:
        lines = []
        for name, side in (("ollama", ollama), ("jinja ", jinja)):
            lines.append(f"{name}: " + (f"ERROR {side.error}" if not side.ok
                                        else visible(_clip(side.text or "", 0, before + after))))
        return "\n".join(lines)
    a, b = ollama.text or "", jinja.text or ""
    offset = first_difference(a, b)
    if offset is None:
        return "identical"
    line = a.count("\n", 0, offset) + 1
    col = offset - (a.rfind("\n", 0, offset) + 1) + 1
    start = max(0, offset - before)
    prefix = "…" if start else ""
    shown_a = prefix + visible(a[start:offset + after]) + ("…" if offset + after < len(a) else "")
    shown_b = prefix + visible(b[start:offset + after]) + ("…" if offset + after < len(b) else "")
    caret = " " * (8 + len(prefix) + (offset - start)) + "^"
    return (f"first difference at offset {offset} (ollama line {line}, column {col}); "
            f"lengths {len(a)} vs {len(b)}\n"
            f"ollama: {shown_a}\njinja : {shown_b}\n{caret}")


def _others(finding: Finding) -> str:
    if finding.kind == OTHER:
        return "BOS/EOS tokens and date lines"
    return ", ".join(k for k in finding.kinds_of_example if k != finding.kind)


def _focus_differs(finding: Finding) -> bool:
    """Is the focused view worth showing (it differs from the plain one)?"""
    return finding.focused != (finding.ollama, finding.jinja)


def _clip(text: str, start: int, length: int) -> str:
    return text[start:start + length] + ("…" if len(text) > start + length else "")


def text_report(comparison: Comparison) -> str:
    """Human-readable report of one comparison (the CLI's default output)."""
    lines = [
        f"{comparison.agreeing}/{comparison.total} conversations agree "
        f"(bos_token={comparison.bos!r}, eos_token={comparison.eos!r}; the model's Jinja "
        f"rendered by {comparison.engine}"
        + (", as transformers renders it)" if comparison.engine == JINJA_ENGINE else ")"),
    ]
    if comparison.agree:
        lines.append("agree: no drift found")
    for f in comparison.findings:
        lines += [
            "", f"== {f.kind}: {f.count} conversation(s)",
            "minimal conversation: " + json.dumps(f.example, ensure_ascii=False),
            "its kinds: " + ", ".join(f.kinds_of_example),
            readable_diff(f.ollama, f.jinja),
        ]
        if _focus_differs(f):
            lines += [f"with {_others(f)} explained away:", readable_diff(*f.focused)]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# BOS / EOS tokens


def tokens_from_tokenizer_config(path: Path) -> tuple[str, str]:
    """`bos_token` / `eos_token` of a tokenizer_config.json (string or {"content": …} form)."""
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise Gotmpl2JinjaError(f"not JSON: {exc.msg}", name=str(path), line=exc.lineno,
                                col=exc.colno) from None
    except ValueError as exc:  # not UTF-8, or an integer of more than 4300 digits
        raise Gotmpl2JinjaError(f"{path}: not JSON this tool can read ({exc})") from None
    except RecursionError:
        raise Gotmpl2JinjaError(f"{path}: the JSON nests too deeply") from None
    if not isinstance(config, dict):
        raise Gotmpl2JinjaError(f"{path}: expected a JSON object")

    def token(key: str) -> str:
        value = config.get(key)
        if isinstance(value, dict):
            value = value.get("content")
        return value if isinstance(value, str) else ""

    return token("bos_token"), token("eos_token")


#: Families by a special token their templates use (or the model name) → (BOS, EOS) of the
#: family's tokenizer. The corpus's meta.json lists no BOS/EOS, so these are the families'
#: published tokenizer_config.json values as we know them — assumed, not checkable offline —
#: stated here and shown per entry in docs/compare.md rather than guessed silently.
#: First match wins; no match → no BOS/EOS ("").
FAMILY_TOKENS: tuple[tuple[str, str, str], ...] = (
    # models whose special tokens do not tell their tokenizer apart, by name
    ("library/hermes3:", "<|begin_of_text|>", "<|im_end|>"),
    ("library/nous-hermes2-mixtral:", "<s>", "<|im_end|>"),
    ("library/internlm2:", "<s>", "</s>"),
    ("library/olmo2:", "<|endoftext|>", "<|endoftext|>"),
    ("library/tulu3:", "<|begin_of_text|>", "<|end_of_text|>"),
    ("<|EOT|>", "<｜begin▁of▁sentence｜>", "<|EOT|>"),
    ("<|end_of_turn|>", "<s>", "<|end_of_turn|>"),
    ("<｜end▁of▁sentence｜>", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"),
    ("<|header_start|>", "<|begin_of_text|>", "<|eot|>"),
    ("<|start_header_id|>", "<|begin_of_text|>", "<|eot_id|>"),
    ("<|start_of_role|>", "<|end_of_text|>", "<|end_of_text|>"),
    ("<|START_OF_TURN_TOKEN|>", "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"),
    ("<start_of_turn>", "<bos>", "<eos>"),
    ("[INST]", "<s>", "</s>"),
    ("<|end|>", "<s>", "<|endoftext|>"),
    ("<|user|>", "<s>", "</s>"),
    ("<|im_start|>", "", "<|im_end|>"),
)


def tokens_for_entry(meta: dict[str, Any], ollama_template: str, jinja: str) -> tuple[str, str]:
    """BOS/EOS for a corpus entry: meta.json's own when present, else `FAMILY_TOKENS`."""
    bos, eos = meta.get("bos_token"), meta.get("eos_token")
    if isinstance(bos, str) or isinstance(eos, str):
        return (bos if isinstance(bos, str) else "", eos if isinstance(eos, str) else "")
    evidence = "\n".join([str(meta.get("model", "")), *(meta.get("tokens") or []),
                          ollama_template, jinja])
    for marker, family_bos, family_eos in FAMILY_TOKENS:
        if marker in evidence:
            return family_bos, family_eos
    return "", ""


# --------------------------------------------------------------------------------------------
# The corpus table


@dataclass
class EntryResult:
    """One corpus entry's comparison."""

    name: str
    model: str
    comparison: Comparison | None
    error: str | None = None  # a template that cannot be compared at all (does not compile)


def compare_corpus(
    corpus: Path, cases: int = 20, seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> list[EntryResult]:
    """Compare every `entries/*/` pair (template.gotmpl vs gguf_chat_template.jinja)."""
    entries_dir = corpus / "entries" if (corpus / "entries").is_dir() else corpus
    entries = sorted(p for p in entries_dir.iterdir()
                     if (p / "template.gotmpl").is_file()
                     and (p / "gguf_chat_template.jinja").is_file())
    if not entries:
        raise Gotmpl2JinjaError(
            f"{corpus}: no entry folders with template.gotmpl and gguf_chat_template.jinja")
    results = []
    for number, entry in enumerate(entries, 1):
        ollama_template = (entry / "template.gotmpl").read_text(encoding="utf-8")
        jinja = (entry / "gguf_chat_template.jinja").read_text(encoding="utf-8")
        meta_path = entry / "meta.json"
        meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
        bos, eos = tokens_for_entry(meta, ollama_template, jinja)
        if progress:
            progress(f"[{number}/{len(entries)}] {entry.name}")
        model = str(meta.get("model", ""))
        try:
            comparison = compare(Pair(ollama_template, jinja, bos, eos), cases=cases, seed=seed)
        except Gotmpl2JinjaError as exc:  # one broken template must not stop the table
            results.append(EntryResult(entry.name, model, None, str(exc)))
            continue
        results.append(EntryResult(entry.name, model, comparison))
    return results


def _md_cell_code(text: str) -> str:
    """Code in a Markdown table cell: a `|` must be escaped even inside backticks (GFM)."""
    text = text.replace("|", "\\|").replace("\n", " ")
    return "`` " + text + " ``" if "`" in text else f"`{text}`"


CORPUS_COMMAND = ("gotmpl2jinja compare --corpus fixtures/corpus/huggingface__huggingface.js "
                  "--cases {cases} --seed {seed} -o docs/compare.md")


def markdown_table(results: list[EntryResult], cases: int, seed: int) -> str:
    """docs/compare.md: the command, the rules, the table, then one section per entry."""
    totals: dict[str, int] = {}
    compared = [r.comparison for r in results if r.comparison is not None]
    for comparison in compared:
        for f in comparison.findings:
            totals[f.kind] = totals.get(f.kind, 0) + 1
    agreeing = sum(c.agree for c in compared)
    failed = [r for r in results if r.comparison is None]
    out = [
        "# Where Ollama's templates drift from the models' own Jinja templates",
        "",
        "Generated — do not edit. Reproduce from a clean checkout with:",
        "",
        "```sh",
        CORPUS_COMMAND.format(cases=cases, seed=seed),
        "```",
        "",
        "For each of the corpus's paired entries (`fixtures/corpus/huggingface__huggingface.js/"
        "entries/*`: Ollama's Go `template.gotmpl` and the GGUF's `gguf_chat_template.jinja`), "
        f"both sides render the same {compared[0].total if compared else 0} "
        f"conversations (13 hand-picked shapes + {cases} generated with seed {seed}). "
        "The Go side is Ollama's template on Go's real `text/template` (the reference renderer); "
        "the Jinja side is jinja2 configured as transformers does, with the contract's "
        "variables plus `bos_token`/`eos_token`. The clock is pinned on both sides to "
        f"{PINNED_NOW.isoformat(sep=' ')}.",
        "",
        "## How a disagreement is classified",
        "",
        "- **jinja raises** / **ollama raises**: one side fails (e.g. `raise_exception(\"roles "
        "must alternate\")`, a Go execution error) where the other renders. Both failing counts "
        "as agreement.",
        "- Otherwise the kinds of a conversation are the *smallest set of explanations* under "
        "which both renderings become byte-identical (sets tried by size, then in the order "
        "below; nothing explains it → **other**):",
        "  - **default system prompt**: the conversation has no system message, and the "
        f"variant with a system message (`{PROBE_SYSTEM}`) added agrees — one side renders "
        "a system section of its own (a default prompt, or an empty system block) when none "
        "is given;",
        "  - **tool definitions**: the variant without `tools` agrees;",
        "  - **tool calls**: the variant without assistant `tool_calls` and `tool` messages "
        "agrees;",
        "  - **thinking**: the variant without `thinking` fields and `think` agrees;",
        "  - **BOS/EOS**: equal after deleting every BOS and EOS token on both sides;",
        "  - **date header**: equal after deleting every line holding a date-like string "
        "(`2026-01-15`, `15 Jan 2026`, `January 15, 2026`, `December 2023`);",
        "  - **white space only**: equal after deleting all white space.",
        "  Feature variants (re-rendered, never guessed) come before text normalisations, so "
        "spacing inside tool JSON is *tool definitions*.",
        "- Each kind's example is the smallest conversation that showed it, shrunk greedily "
        "(dropping messages, fields, tools, shortening texts) while it still shows that kind. "
        "*Its kinds* lists every kind that example needs, since one conversation can show "
        "several; a second diff then shows the example with those other kinds explained away (for "
        "*other*: with BOS/EOS tokens and date lines deleted). Diffs show white space as `·` "
        "(space), `⏎` (newline), `→` (tab).",
        "- Count = how many of the conversations showed the kind.",
        "- **BOS/EOS tokens**: meta.json carries none, so each entry gets its family's "
        "tokenizer BOS/EOS chosen by a special token its templates use "
        "(`compare.FAMILY_TOKENS`; shown per entry). Entries with no known family get none "
        "(`\"\"`), and then BOS/EOS is never a kind for them.",
        "",
        f"**{agreeing} of {len(results)} entries agree on every conversation**"
        + (f"; {len(failed)} could not be compared (a template does not compile)"
           if failed else "") + ". Entries per kind: "
        + ", ".join(f"{k} {totals[k]}" for k in KINDS if k in totals) + ".",
        "",
        "| # | entry | model | agree? | kinds (conversations) | BOS / EOS |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for number, r in enumerate(results):
        c = r.comparison
        if c is None:
            out.append(f"| {number} | [{r.name}](#{_anchor(r.name)}) | {r.model} | "
                       "not compared | — | — |")
            continue
        kinds = ", ".join(f"[{f.kind}](#{_anchor(r.name, f.kind)}) ({f.count})"
                          for f in c.findings) or "—"
        verdict = "yes" if c.agree else f"no ({c.agreeing}/{c.total})"
        out.append(f"| {number} | [{r.name}](#{_anchor(r.name)}) | {r.model} | {verdict} | "
                   f"{kinds} | {_md_cell_code(c.bos) if c.bos else '—'} / "
                   f"{_md_cell_code(c.eos) if c.eos else '—'} |")
    out.append("")
    for r in results:
        c = r.comparison
        out += [f'<a id="{_anchor(r.name)}"></a>', "", f"## {r.name}", ""]
        if c is None:
            out += [f"`{r.model}` — not compared: {r.error}", ""]
            continue
        out += [f"`{r.model}` — {c.agreeing}/{c.total} conversations agree.", ""]
        for f in c.findings:
            out += [
                f'<a id="{_anchor(r.name, f.kind)}"></a>', "",
                f"### {r.name}: {f.kind} ({_conversations(f.count)})", "",
                "<details><summary>minimal conversation and diff</summary>", "",
                "Its kinds: " + ", ".join(f.kinds_of_example), "",
                "```json", json.dumps(f.example, ensure_ascii=False), "```", "",
                "```text", readable_diff(f.ollama, f.jinja), "```", "",
            ]
            if _focus_differs(f):
                out += [f"With {_others(f)} explained away:", "",
                        "```text", readable_diff(*f.focused), "```", ""]
            out += ["</details>", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _conversations(count: int) -> str:
    return f"{count} conversation" + ("" if count == 1 else "s")


def _anchor(entry: str, kind: str | None = None) -> str:
    raw = entry if kind is None else f"{entry}-{kind}"
    return re.sub(r"[^a-z0-9]+", "-", raw.lower()).strip("-")


def corpus_json(results: list[EntryResult]) -> list[dict[str, Any]]:
    return [{"entry": r.name, "model": r.model,
             **(r.comparison.to_json() if r.comparison else {"error": r.error})}
            for r in results]


def stderr_progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
