"""Conversations that reach every field a chat template can see, for the differential harness.

Generators of the contract's conversation format (`conversation.py`):

- `conversations()` — hypothesis strategies. Random shapes (any role order, consecutive same
  roles, leading assistant/tool, system-only, empty) with hostile text (template metacharacters,
  chat special tokens, combining marks, RTL, emoji, NBSP, line separators), tools with nested
  JSON-schema parameters, tool calls with arguments of every JSON type, thinking, every `think`
  value, trailing assistant prefills, and fill-in-the-middle requests. Hypothesis shrinks a
  failing one towards the empty conversation and empty strings, which is what makes a reported
  divergence readable. (Ollama renders no prompt for a chat without messages: the reference
  answers it NotRendered, and the harness holds the Jinja to Execute's answer for it, as a
  Jinja host renders an empty list; so it stays among the conversations drawn.)
- `draw_random(rng)` — the same conversations from a seeded `random.Random` (the harness's bulk
  mode, no hypothesis engine per case), with the choices that built them, so that
  `shrink_conversation` hands a diverging one to hypothesis's shrinker.
- `exhaustive_conversations(depth)` (module `exhaustive`) — every sequence of message shapes
  up to `depth` messages (role × has thinking × has tool calls), × tools present/absent × each
  `think` value, with fixed contents: the small cases random search may miss, in order of
  length (the first divergence found is a shortest one).

Deliberately left out (each is a known, documented gap of the contract, not a template bug):
integers beyond ±2**53 (Go decodes tool-call arguments to float64; JavaScript rounds them too),
lone surrogates (Go replaces them by U+FFFD when decoding JSON), tool-schema keys Ollama does
not know (Go drops them; Jinja would see them), upper-case roles (Ollama lower-cases roles on
decode) and images (out of scope). One in eight carries a client's body (`verify.request`).

May depend on: `verify.conversation`, `verify.request`, `verify.steer`.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from hypothesis import strategies as st

from gotmpl2jinja.verify.conversation import THINK_LEVELS
from gotmpl2jinja.verify.request import sent_now_and_then
from gotmpl2jinja.verify.steer import FREE, Steer

ROLES = ("system", "user", "assistant", "tool")
#: A role no template expects: Ollama passes any lower-case role through.
ODD_ROLES = ("developer", "ipython")

#: Every value `think` can take; None stands for "absent".
THINK_VALUES: tuple[bool | str | None, ...] = (None, True, False, *THINK_LEVELS)

#: Text that means something to a template engine, a chat format or a whitespace rule.
SPECIAL_FRAGMENTS = (
    "{{", "}}", "{%", "%}", "{#", "#}", "{{-", "-}}", "{{ .Content }}", "{% endif %}",
    "<|im_start|>", "<|im_end|>", "<|eot_id|>", "<s>", "</s>", "[INST]", "[/INST]",
    "<start_of_turn>", "<end_of_turn>", "<think>", "</think>", "<tool_call>", "</tool_call>",
    "<no value>", "None", "null", "true", "\n", "\n\n", "\r\n", "\r", "\t", " ", "  ",
    "\\n", '"', "'", "\\", "<", ">", "&", "<b>&amp;</b>", "%s", "%v",
    "e\u0301",               # combining acute accent
    "\u05e9\u05dc\u05d5\u05dd", "\u0645\u0631\u062d\u0628\u0627",  # Hebrew, Arabic (RTL)
    "\u202e", "\u200d",      # RTL override, zero-width joiner
    "\U0001f642", "\U0001f468\u200d\U0001f469\u200d\U0001f467",  # emoji, ZWJ family
    "\u00a0", "\u3000",      # NBSP, ideographic space
    "\u2028", "\u2029",      # line/paragraph separator (escaped by Go's json)
    "\x00", "\x1b",          # control characters
    "日本語", "ß", "İ",
)

# No lone surrogates (see module doc).
_characters = st.characters(exclude_categories=["Cs"])


def texts(max_fragments: int = 6) -> st.SearchStrategy[str]:
    """Short hostile strings: concatenations of special fragments and arbitrary text."""
    fragment = st.one_of(
        st.sampled_from(SPECIAL_FRAGMENTS),
        st.text(_characters, max_size=8),
        st.text("ab \n", max_size=6),
    )
    return st.lists(fragment, max_size=max_fragments).map("".join)


def long_texts() -> st.SearchStrategy[str]:
    """Long contents (a few KiB) built from a repeated unit: truncation-free templates must cope."""
    return st.builds(lambda unit, n: unit * n, texts(3).filter(bool), st.integers(50, 400))


def contents() -> st.SearchStrategy[str]:
    """Message contents: mostly short and hostile, sometimes empty or long."""
    return st.one_of(st.just(""), texts(), long_texts())


# ---------------------------------------------------------------------------------------------
# JSON values (tool-call arguments)

#: Floats whose printing differs between Go (`%v`, `json`), Python, JavaScript and Rust.
SPECIAL_FLOATS = (0.0, -0.0, 0.5, 1.0, 1.5, -2.25, 1e6, 1234567.0, 999999.0, 1e20, 1e21, 1e22,
                  1e-4, 1e-5, 1e-7, 123456789012345678.0, 3.141592653589793, 0.1, 2.0**53)

_SAFE_INT = 2**53


def json_scalars() -> st.SearchStrategy[Any]:
    """null, booleans, integers within ±2**53, floats (special and arbitrary finite), strings."""
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-_SAFE_INT, _SAFE_INT),
        st.sampled_from(SPECIAL_FLOATS),
        st.floats(allow_nan=False, allow_infinity=False),
        texts(3),
    )


_keys = st.one_of(st.sampled_from(("city", "unit", "a", "b", "Z", "_", "", "ß", "a b", "<x>")),
                  st.text(_characters, max_size=5))


def json_values(max_leaves: int = 8) -> st.SearchStrategy[Any]:
    """Any JSON value: nested objects and arrays (empty ones too) of the scalars above."""
    return st.recursive(
        json_scalars(),
        lambda children: st.one_of(
            st.lists(children, max_size=3),
            st.dictionaries(_keys, children, max_size=3),
        ),
        max_leaves=max_leaves,
    )


def arguments() -> st.SearchStrategy[dict[str, Any]]:
    """Tool-call arguments: always an object (Ollama's API requires one), maybe empty."""
    return st.dictionaries(_keys, json_values(), max_size=4)


# ---------------------------------------------------------------------------------------------
# Tools (JSON schema as Ollama's api.ToolProperty knows it)

_TYPE_NAMES = ("string", "number", "integer", "boolean", "array", "object", "null")
_TOOL_NAMES = ("get_weather", "search", "calc", "f", "tool_2", "ünïcode", "a.b")
_names = st.sampled_from(_TOOL_NAMES)


def _property(children: st.SearchStrategy[dict[str, Any]] | None) -> st.SearchStrategy[Any]:
    fields: dict[str, st.SearchStrategy[Any]] = {
        "type": st.one_of(st.sampled_from(_TYPE_NAMES),
                          st.lists(st.sampled_from(_TYPE_NAMES), min_size=1, max_size=2,
                                   unique=True)),
        "description": texts(3),
        "enum": st.lists(st.one_of(texts(2), st.integers(-5, 5)), min_size=1, max_size=3),
    }
    if children is not None:
        fields["items"] = children
        fields["properties"] = st.dictionaries(_keys, children, min_size=1, max_size=3)
        fields["anyOf"] = st.lists(children, min_size=1, max_size=2)
    fields["required"] = st.lists(_keys, max_size=2)
    return st.fixed_dictionaries({}, optional=fields)


def properties() -> st.SearchStrategy[dict[str, Any]]:
    """A JSON-schema property: type (one or several), description, enum, nested object/array,
    anyOf, required — recursive, so nested `properties` keep their insertion order."""
    return st.recursive(_property(None), _property, max_leaves=4)


def tools() -> st.SearchStrategy[list[dict[str, Any]]]:
    """A tool list (maybe empty), each `{"type": "function", "function": {…}}`."""
    parameters = st.fixed_dictionaries(
        {"type": st.just("object")},
        optional={
            "properties": st.dictionaries(_keys, properties(), max_size=4),
            "required": st.lists(_keys, max_size=3),
            "$defs": st.dictionaries(_keys, properties(), max_size=2),
            "items": properties(),
        },
    )
    function = st.fixed_dictionaries(
        {"name": _names},
        optional={"description": texts(3), "parameters": parameters},
    )
    tool = st.fixed_dictionaries({"type": st.just("function"), "function": function},
                                 optional={"items": st.one_of(properties(), json_values())})
    return st.lists(tool, max_size=3)


# ---------------------------------------------------------------------------------------------
# Pools: pre-built values drawn with a single choice
#
# Hypothesis spends ~20-50 µs per choice; a conversation built character by character costs
# 10-50 ms to generate, more than rendering it on Go and four engines. The strategies used for
# whole conversations therefore draw each text, argument object and tool list from a pool built
# once (deterministically) from the same ingredients, sorted simplest first, so that shrinking
# (towards index 0) still ends at "" / {} / [] or the simplest value that fails. The fine-grained
# strategies above stay available for targeted properties.

_POOL_SEED = 20260821


def _random_text(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 5)):
        roll = rng.random()
        if roll < 0.55:
            parts.append(rng.choice(SPECIAL_FRAGMENTS))
        elif roll < 0.8:
            parts.append("".join(rng.choice("ab \n") for _ in range(rng.randint(1, 4))))
        else:
            parts.append("".join(_random_char(rng) for _ in range(rng.randint(1, 4))))
    return "".join(parts)


def _random_char(rng: random.Random) -> str:
    while True:
        code = rng.choice((rng.randint(0x20, 0x7E), rng.randint(0xA0, 0x2FFF),
                           rng.randint(0x3000, 0xFFFD), rng.randint(0x10000, 0x1FAFF),
                           rng.randint(0, 0x1F)))
        if not 0xD800 <= code <= 0xDFFF:
            return chr(code)


def _random_json(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 2 and roll < 0.15:
        return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if depth < 2 and roll < 0.3:
        return {_random_key(rng): _random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return rng.choice((
        None, rng.random() < 0.5, rng.randint(-1000, 1000), rng.randint(-_SAFE_INT, _SAFE_INT),
        rng.choice(SPECIAL_FLOATS), rng.uniform(-1e6, 1e6), _random_text(rng), "",
    ))


def _random_key(rng: random.Random) -> str:
    return rng.choice(("city", "unit", "a", "b", "Z", "_", "", "ß", "a b", "<x>", "n",
                       _random_text(rng)))


def _random_property(rng: random.Random, depth: int = 0) -> dict[str, Any]:
    prop: dict[str, Any] = {}
    if rng.random() < 0.85:
        types = rng.sample(_TYPE_NAMES, rng.choice((1, 1, 1, 2)))
        prop["type"] = types[0] if len(types) == 1 and rng.random() < 0.8 else types
    if rng.random() < 0.6:
        prop["description"] = _random_text(rng)
    if rng.random() < 0.2:
        prop["enum"] = [rng.choice((_random_text(rng), rng.randint(-5, 5)))
                        for _ in range(rng.randint(1, 3))]
    if depth < 2:
        if rng.random() < 0.2:
            prop["items"] = _random_property(rng, depth + 1)
        if rng.random() < 0.2:
            prop["properties"] = {_random_key(rng): _random_property(rng, depth + 1)
                                  for _ in range(rng.randint(1, 3))}
            prop["required"] = rng.sample(list(prop["properties"]), 1)
        if rng.random() < 0.1:
            prop["anyOf"] = [_random_property(rng, depth + 1) for _ in range(rng.randint(1, 2))]
    return prop


def _random_tool(rng: random.Random) -> dict[str, Any]:
    function: dict[str, Any] = {"name": rng.choice(_TOOL_NAMES)}
    if rng.random() < 0.8:
        function["description"] = _random_text(rng)
    if rng.random() < 0.9:
        parameters: dict[str, Any] = {"type": "object"}
        if rng.random() < 0.9:
            parameters["properties"] = {_random_key(rng): _random_property(rng)
                                        for _ in range(rng.randint(0, 4))}
        if rng.random() < 0.6:
            parameters["required"] = [_random_key(rng) for _ in range(rng.randint(0, 2))]
        if rng.random() < 0.1:
            parameters["$defs"] = {_random_key(rng): _random_property(rng)}
        if rng.random() < 0.05:
            parameters["items"] = _random_property(rng)
        function["parameters"] = parameters
    return {"type": "function", "function": function}


def _simplest_first(values: list[Any]) -> list[Any]:
    unique = {json.dumps(v, sort_keys=False): v for v in values}
    return [unique[k] for k in sorted(unique, key=lambda k: (len(k), k))]


@functools.cache
def text_pool() -> tuple[str, ...]:
    """~2,000 hostile strings, "" first, each special fragment alone, then combinations,
    then a few long ones (KiB)."""
    rng = random.Random(_POOL_SEED)
    values = ["", *SPECIAL_FRAGMENTS, *(_random_text(rng) for _ in range(2000))]
    values += [_random_text(rng) * rng.randint(50, 400) for _ in range(20)]
    return tuple(_simplest_first(values))


@functools.cache
def arguments_pool() -> tuple[dict[str, Any], ...]:
    """Argument objects: {} first, every special float/int/bool/null alone, then nested ones."""
    rng = random.Random(_POOL_SEED + 1)
    values: list[Any] = [{}]
    values += [{"a": v} for v in (None, True, False, 0, 1, -1, 2**53, *SPECIAL_FLOATS)]
    values += [{"a": {}, "b": []}, {"a": {"b": {"c": [1, 2.5, None]}}}]
    values += [{_random_key(rng): _random_json(rng) for _ in range(rng.randint(1, 4))}
               for _ in range(1500)]
    return tuple(_simplest_first(values))


@functools.cache
def tools_pool() -> tuple[list[dict[str, Any]], ...]:
    """Tool lists: [] first, then one to three tools with nested JSON-schema parameters."""
    rng = random.Random(_POOL_SEED + 2)
    values: list[Any] = [[]]
    values += [[_random_tool(rng) for _ in range(rng.choice((1, 1, 2, 3)))] for _ in range(800)]
    # drawn apart, so the lists above stay what they were: api.Tool's own `items` (free JSON,
    # printed by json of a tool), a property's `required` without nested properties (Go's json
    # tells an empty list from an absent one, nil; no empty `enum`: llama-server's JSON-schema
    # conversion refuses one)
    more = random.Random(_POOL_SEED + 3)
    for tools in values[1::10]:
        tools[0]["items"] = _random_property(more) if more.random() < 0.5 \
            else _random_json(more)
    for tools in values[5::10]:
        props = tools[0]["function"].get("parameters", {}).get("properties") or {"a": {}}
        prop = next(iter(props.values()))
        prop.setdefault("required", [_random_key(more) for _ in range(more.randint(0, 2))])
        tools[0]["function"].setdefault("parameters", {"type": "object"})["properties"] = props
    return tuple(_simplest_first(values))


def pooled_texts() -> st.SearchStrategy[str]:
    """One choice: a string from `text_pool()`."""
    return st.sampled_from(text_pool())


# ---------------------------------------------------------------------------------------------
# Messages and conversations: one description, two ways to draw it
#
# The shapes are written once, as builders that ask a `Chooser` for integers ("which of n", 0 the
# simplest). Hypothesis drives a chooser for the strategies (`conversations()` …: property tests
# and shrinking); a seeded `random.Random` drives one for the harness's bulk mode, ~50x cheaper
# per case than hypothesis's engine, and records the integers it chose. Because both make the
# same sequence of choices, a case found in bulk is handed to hypothesis as that sequence
# (`shrink_conversation`) and shrunk exactly as if hypothesis had generated it.

T = TypeVar("T")


class Chooser(Protocol):
    """Where a builder's decisions come from (and what it may draw: `steer`)."""

    steer: Steer

    def choice(self, n: int) -> int:
        """An index in range(n); 0 is what shrinking moves towards."""
        ...

    def repeat(self, max_size: int, build: Callable[[Chooser], T]) -> list[T]:
        """A list of 0…max_size built items (a "one more?" choice before each)."""
        ...


def _pick(chooser: Chooser, pool: Sequence[T]) -> T:
    return pool[chooser.choice(len(pool))]


_MESSAGE_ROLES = ROLES + ODD_ROLES
_CALL_IDS = ("call_1", "call_2", "x")
_TOOL_CALL_IDS = ("call_1", "call_2", "")


#: Tool-call indexes: small ones, and the edges a printed Index meets (a negative number's
#: uint64 for %U and %x, a number past the runes for %c, the contract's ±(2^53 - 1)).
_INDEXES = (0, 1, 2, 3, -1, 1114112, 2**53 - 1, -(2**53 - 1))


def build_tool_call(c: Chooser) -> dict[str, Any]:
    """A tool call with or without id / index / arguments (Go defaults what is missing)."""
    function: dict[str, Any] = {"name": _pick(c, _TOOL_NAMES)}
    if c.steer.call_index and c.choice(2):
        function["index"] = _pick(c, _INDEXES)
    if not c.steer.bare_calls or c.choice(2):
        function["arguments"] = _pick(c, arguments_pool())
    call: dict[str, Any] = {"function": function}
    if c.choice(2):
        call["id"] = _pick(c, _CALL_IDS)
    return call


def build_message(c: Chooser) -> dict[str, Any]:
    """One message of any role; assistants may think and call tools, tool results may name
    their tool and call; every optional field is sometimes absent."""
    role = _pick(c, c.steer.roles(_MESSAGE_ROLES))
    message: dict[str, Any] = {"role": role}
    if c.choice(2):
        message["content"] = _pick(c, text_pool())
    if role == "assistant":
        if c.steer.thinking and c.choice(2):
            message["thinking"] = _pick(c, text_pool())
        if c.steer.tool_calls and c.choice(2):
            message["tool_calls"] = c.repeat(3, build_tool_call)
    if role == "tool":
        if c.choice(2):
            message["tool_name"] = _pick(c, _TOOL_NAMES)
        if c.choice(2):
            message["tool_call_id"] = _pick(c, _TOOL_CALL_IDS)
    return message


def _maybe_think(c: Chooser, conv: dict[str, Any]) -> dict[str, Any]:
    values = c.steer.think_values(THINK_VALUES[1:])
    if values and c.choice(2):
        conv["think"] = _pick(c, values)
    return conv


def build_chat(c: Chooser, max_messages: int = 6) -> dict[str, Any]:
    """The `/api/chat` shape: messages, maybe tools, maybe `think`."""
    messages = c.repeat(max_messages, build_message)
    if not c.steer.empty_chat and not messages or not c.steer.final_assistant and messages \
            and messages[-1]["role"] == "assistant":  # steered: a user's turn closes the chat
        messages.append({"role": "user", "content": _pick(c, text_pool())})
    conv: dict[str, Any] = {"messages": messages}
    if c.steer.tools and c.choice(2):
        conv["tools"] = _pick(c, c.steer.tool_lists(tools_pool()))
    return _host_call(c, _maybe_think(c, conv))


def _host_call(c: Chooser, conv: dict[str, Any]) -> dict[str, Any]:
    """How a Hugging Face host calls the template (`verify.closed`): half the time as Ollama
    (flags derived), else `add_generation_prompt` given, true or false (a finished conversation,
    a prompt without generation prompt), or for a final assistant message
    `continue_final_message` (transformers' prefill)."""
    messages = conv["messages"]
    if not messages:  # (no choice: the simplest conversation stays the empty chat)
        return conv
    call = c.choice(6 if c.steer.closed_call else 4)
    if call == 3:
        conv["add_generation_prompt"] = True
    elif call in (4, 5):
        if call == 5 and messages[-1]["role"] == "assistant":
            conv["continue_final_message"] = True
        else:
            conv["add_generation_prompt"] = False
    return conv


def build_fim(c: Chooser) -> dict[str, Any]:
    """Fill-in-the-middle: non-empty prompt and suffix, maybe `think`."""
    non_empty = text_pool()[1:]
    return _maybe_think(c, {"prompt": _pick(c, non_empty), "suffix": _pick(c, non_empty)})


def build_conversation(c: Chooser, max_messages: int = 6) -> dict[str, Any]:
    """Any conversation of the contract; chat seven times as often as fill-in-the-middle."""
    if c.steer.fim and c.choice(8) == 7:
        return sent_now_and_then(build_fim(c))
    return sent_now_and_then(build_chat(c, max_messages))


class RandomChooser:
    """Choices from a seeded `random.Random`, recorded (`choices`) for hypothesis to replay:
    an integer per `choice`, and a list as `st.lists` records it (True before each item, a
    final False). Lists get a uniform length (hypothesis's are mostly short)."""

    def __init__(self, rng: random.Random, steer: Steer = FREE) -> None:
        self.rng = rng
        self.steer = steer
        self.choices: list[int | bool] = []

    def choice(self, n: int) -> int:
        if n <= 1:
            return 0  # no decision: nothing recorded (hypothesis's side draws nothing either)
        value = self.rng.randrange(n)
        self.choices.append(value)
        return value

    def repeat(self, max_size: int, build: Callable[[Chooser], T]) -> list[T]:
        size = self.rng.randint(0, max_size)
        items = []
        for _ in range(size):
            self.choices.append(True)  # st.lists' "one more?"
            items.append(build(self))
        self.choices.append(False)  # the stop (forced at max_size: still one choice)
        return items


@functools.cache
def _index(n: int) -> st.SearchStrategy[int]:
    return st.integers(0, n - 1)


class _HypothesisChooser:
    """Choices drawn by hypothesis: one bounded integer each, lists by `st.lists`."""

    def __init__(self, draw: Callable[[st.SearchStrategy[Any]], Any], steer: Steer) -> None:
        self.draw = draw
        self.steer = steer

    def choice(self, n: int) -> int:
        return 0 if n <= 1 else int(self.draw(_index(n)))

    def repeat(self, max_size: int, build: Callable[[Chooser], T]) -> list[T]:
        return list(self.draw(_list_of(build, max_size, self.steer)))


@functools.cache
def _built(build: Callable[[Chooser], Any], steer: Steer = FREE) -> st.SearchStrategy[Any]:
    """A hypothesis strategy for a builder (cached: one strategy object per builder)."""
    @st.composite
    def strategy(draw: Callable[[st.SearchStrategy[Any]], Any]) -> Any:
        return build(_HypothesisChooser(draw, steer))

    return strategy()


@functools.cache
def _list_of(build: Callable[[Chooser], Any], max_size: int, steer: Steer = FREE
             ) -> st.SearchStrategy[list[Any]]:
    """`st.lists` itself, whose items the shrinker deletes anywhere in the list (a home-made
    list of "one more?" choices only loses items at its end)."""
    return st.lists(_built(build, steer), max_size=max_size)


@functools.cache
def _with_max_messages(build: Callable[..., T], max_messages: int) -> Callable[[Chooser], T]:
    return functools.partial(build, max_messages=max_messages)


def tool_calls() -> st.SearchStrategy[list[dict[str, Any]]]:
    """Tool calls with or without id / index / arguments."""
    return _built(_repeat_tool_calls)


def _repeat_tool_calls(c: Chooser) -> list[dict[str, Any]]:
    return c.repeat(3, build_tool_call)


def messages() -> st.SearchStrategy[dict[str, Any]]:
    """One message (see `build_message`)."""
    return _built(build_message)


def chat_conversations(max_messages: int = 6) -> st.SearchStrategy[dict[str, Any]]:
    """The `/api/chat` shape (see `build_chat`)."""
    return _built(_with_max_messages(build_chat, max_messages))


def fim_requests() -> st.SearchStrategy[dict[str, Any]]:
    """Fill-in-the-middle requests (see `build_fim`)."""
    return _built(build_fim)


def conversations(max_messages: int = 6, steer: Steer = FREE
                  ) -> st.SearchStrategy[dict[str, Any]]:
    """Any conversation of the contract (see `build_conversation`) `steer` allows."""
    return _built(_with_max_messages(build_conversation, max_messages), steer)


@dataclass(frozen=True)
class DrawnCase:
    """A conversation drawn at random, with the choices that built it (for shrinking)."""

    conversation: dict[str, Any]
    choices: tuple[int | bool, ...]
    max_messages: int = 6
    steer: Steer = FREE


def draw_random(rng: random.Random, max_messages: int = 6, steer: Steer = FREE) -> DrawnCase:
    """One conversation of `conversations(max_messages, steer)`, drawn without hypothesis's
    engine."""
    chooser = RandomChooser(rng, steer)
    conv = build_conversation(chooser, max_messages)
    return DrawnCase(conv, tuple(chooser.choices), max_messages, steer)


def shrink_conversation(
    case: DrawnCase, fails: Callable[[dict[str, Any]], bool], *, max_shrinks: int = 2000,
) -> dict[str, Any]:
    """Hypothesis's shrinker, started from `case` (its choices replayed from an in-memory
    example database): a minimal conversation on which `fails` still holds. `case` itself
    when hypothesis cannot reproduce it (`fails` not deterministic)."""
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis.database import InMemoryExampleDatabase, choices_to_bytes
    from hypothesis.errors import NoSuchExample

    key = b"gotmpl2jinja.shrink"
    database = InMemoryExampleDatabase()
    # Under the secondary key: hypothesis's place for failing but not yet minimal cases (the
    # primary key holds minimal ones, which it replays without shrinking).
    database.save(key + b".secondary", choices_to_bytes(case.choices))
    try:
        return find(
            conversations(case.max_messages, case.steer), fails, database_key=key,
            settings=settings(
                database=database, max_examples=max_shrinks, deadline=None,
                phases=[Phase.reuse, Phase.shrink], suppress_health_check=list(HealthCheck),
            ),
        )
    except NoSuchExample:
        return case.conversation
