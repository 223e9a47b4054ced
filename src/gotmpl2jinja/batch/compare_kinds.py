"""The kinds of drift, the pair's two renderers, and how one conversation is classified.

The rules are the `compare` module docstring's: a conversation's kinds are the smallest set of
explanations (feature variants, then text normalisations) under which both sides agree.

May depend on: `engines`, `errors`, `ollama`, `verify`.
"""

from __future__ import annotations

import copy
import datetime as dt
import itertools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gotmpl2jinja.engines.registry import get_engine
from gotmpl2jinja.errors import RenderError
from gotmpl2jinja.ollama import reference
from gotmpl2jinja.verify.conversation import jinja_context

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
    #: The model's vocabulary adds BOS (llama.cpp's rule): Ollama's tokenizer puts it before the
    #: prompt, so the Ollama side is `bos` + the prompt, what the model is fed as text.
    adds_bos: bool = False
    #: The text Ollama's server cuts off the start of a prompt first (`<bos>`, or "").
    strips: str = ""
    #: llama.cpp's tokenizer on the vocabulary (`engines.tokenizer.Vocabulary`), or None: two
    #: renderings whose texts differ still agree when they feed the model the same token IDs.
    vocab: Any = None

    def render(self, side: str, conversation: Conversation) -> Rendering:
        """Render one side ("ollama" or "jinja"); renderings are cached per conversation (the
        cache holds Go's own prompt: pairs that differ only in the BOS rule share it)."""
        hit = self._raw(side, conversation)
        if side == "ollama" and hit.text is not None and (self.adds_bos or self.strips):
            text = self._stripped(hit.text)
            return Rendering(self.bos + text if self.adds_bos else text)
        return hit

    def same_tokens(self, conversation: Conversation) -> bool:
        """Both sides feed the model the same token IDs (with a vocabulary): Ollama's prompt,
        cut as its server cuts it, tokenized with add_special (llama.cpp adds BOS by the
        vocabulary's rule), the Jinja's output without added specials; special-token text
        parsed on both."""
        ollama, jinja = self._raw("ollama", conversation), self._raw("jinja", conversation)
        if self.vocab is None or ollama.text is None or jinja.text is None:
            return False
        (fed,) = self.vocab.tokenize([self._stripped(ollama.text)], add_special=True)
        (written,) = self.vocab.tokenize([jinja.text], add_special=False)
        return bool(fed == written)

    def _stripped(self, prompt: str) -> str:
        return prompt[len(self.strips):] if self.strips and prompt.startswith(self.strips) \
            else prompt

    def _raw(self, side: str, conversation: Conversation) -> Rendering:
        key = (side, json.dumps(conversation, sort_keys=True, ensure_ascii=False))
        hit = self._cache.get(key)
        if hit is None:
            hit = self._render_ollama(conversation) if side == "ollama" else (
                self._render_jinja(conversation))
            self._cache[key] = hit
        return hit

    def _render_ollama(self, conversation: Conversation) -> Rendering:
        try:
            # a request Ollama refuses for a capability (think on a template that cannot
            # think …) is rendered as if the option were absent, as a Jinja caller's would be
            return Rendering(reference.render(self.ollama_template, conversation,
                                    now=self.now.strftime("%Y-%m-%dT%H:%M:%SZ"), lenient=True))
        except RenderError as exc:  # an execution error; a parse error is not a drift
            return Rendering(None, str(exc))

    def _render_jinja(self, conversation: Conversation) -> Rendering:
        """transformers' rendering; its `{% generation %}` block renders its body unchanged."""
        context = dict(jinja_context(conversation))
        messages = context.get("messages") or []
        if messages and messages[-1]["role"] == "assistant":
            # Ollama's request ends with the assistant: the model's own template is asked
            # without a generation prompt (a Hugging Face host's call for that conversation)
            context["add_generation_prompt"] = False
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
    if ollama.text == jinja.text or pair.same_tokens(conversation):
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
