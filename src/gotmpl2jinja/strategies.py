"""Conversations that reach every field a chat template can see, for the differential harness.

Two generators of the contract's conversation format (`conversation.py`):

- `conversations()` — hypothesis strategies. Random shapes (any role order, consecutive same
  roles, leading assistant/tool, system-only, empty) with hostile text (template metacharacters,
  chat special tokens, combining marks, RTL, emoji, NBSP, line separators), tools with nested
  JSON-schema parameters, tool calls with arguments of every JSON type, thinking, every `think`
  value, trailing assistant prefills, and fill-in-the-middle requests. Hypothesis shrinks a
  failing one towards the empty conversation and empty strings, which is what makes a reported
  divergence readable.
- `exhaustive_conversations(depth)` — every sequence of message shapes up to `depth` messages
  (role × has thinking × has tool calls), × tools present/absent × each `think` value, with
  fixed contents: the small cases random search may miss, in order of length (the first
  divergence found is a shortest one).

Deliberately left out (each is a known, documented gap of the contract, not a template bug):
integers beyond ±2**53 (Go decodes tool-call arguments to float64; JavaScript rounds them too),
lone surrogates (Go replaces them by U+FFFD when decoding JSON), tool-schema keys Ollama does
not know (Go drops them; Jinja would see them), upper-case roles (Ollama lower-cases roles on
decode) and images (out of scope).
"""

from __future__ import annotations

import functools
import itertools
import json
import random
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from gotmpl2jinja.conversation import THINK_LEVELS

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

_characters = st.characters(exclude_categories=("Cs",))  # no lone surrogates (see module doc)


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
        fields["required"] = st.lists(_keys, max_size=2)
        fields["anyOf"] = st.lists(children, min_size=1, max_size=2)
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
    tool = st.fixed_dictionaries({"type": st.just("function"), "function": function})
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
    return tuple(_simplest_first(values))


def pooled_texts() -> st.SearchStrategy[str]:
    """One choice: a string from `text_pool()`."""
    return st.sampled_from(text_pool())


# ---------------------------------------------------------------------------------------------
# Messages and conversations

def tool_calls() -> st.SearchStrategy[list[dict[str, Any]]]:
    """Tool calls with or without id / index / arguments (Go defaults what is missing)."""
    function = st.fixed_dictionaries(
        {"name": _names},
        optional={"index": st.integers(0, 3),
                  "arguments": st.sampled_from(arguments_pool())},
    )
    call = st.fixed_dictionaries(
        {"function": function}, optional={"id": st.sampled_from(("call_1", "call_2", "x"))}
    )
    return st.lists(call, max_size=3)


def messages() -> st.SearchStrategy[dict[str, Any]]:
    """One message of any role; assistants may think and call tools, tool results may name
    their tool and call; every optional field is sometimes absent."""
    def for_role(role: str) -> st.SearchStrategy[dict[str, Any]]:
        optional: dict[str, st.SearchStrategy[Any]] = {"content": pooled_texts()}
        if role == "assistant":
            optional["thinking"] = pooled_texts()
            optional["tool_calls"] = tool_calls()
        if role == "tool":
            optional["tool_name"] = _names
            optional["tool_call_id"] = st.sampled_from(("call_1", "call_2", ""))
        return st.fixed_dictionaries({"role": st.just(role)}, optional=optional)

    return st.one_of([for_role(role) for role in ROLES + ODD_ROLES])  # flatmap is slower


def chat_conversations(max_messages: int = 6) -> st.SearchStrategy[dict[str, Any]]:
    """The `/api/chat` shape: messages, maybe tools, maybe `think`."""
    return st.fixed_dictionaries(
        {"messages": st.lists(messages(), max_size=max_messages)},
        optional={"tools": st.sampled_from(tools_pool()),
                  "think": st.sampled_from(THINK_VALUES[1:])},
    )


def fim_requests() -> st.SearchStrategy[dict[str, Any]]:
    """Fill-in-the-middle: non-empty prompt and suffix, maybe `think`."""
    non_empty = st.sampled_from(text_pool()[1:])
    return st.fixed_dictionaries(
        {"prompt": non_empty, "suffix": non_empty},
        optional={"think": st.sampled_from(THINK_VALUES[1:])},
    )


def conversations(max_messages: int = 6) -> st.SearchStrategy[dict[str, Any]]:
    """Any conversation of the contract; chat far more often than fill-in-the-middle."""
    chat = chat_conversations(max_messages)
    return st.one_of(chat, chat, chat, chat, chat, chat, chat, fim_requests())


# ---------------------------------------------------------------------------------------------
# Bounded-exhaustive

#: (role, has thinking, has tool calls) for every role: what a template can branch on.
MESSAGE_SHAPES: tuple[tuple[str, bool, bool], ...] = tuple(
    itertools.product(ROLES, (False, True), (False, True))
)

EXHAUSTIVE_TOOLS = [{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather",
        "parameters": {"type": "object", "required": ["city"],
                       "properties": {"city": {"type": "string", "description": "City"},
                                      "unit": {"type": "string", "enum": ["c", "f"]}}},
    },
}]


def _shaped_message(index: int, shape: tuple[str, bool, bool]) -> dict[str, Any]:
    role, thinking, calls = shape
    message: dict[str, Any] = {"role": role, "content": f"{role[0].upper()}{index}"}
    if thinking:
        message["thinking"] = f"T{index}"
    if calls:
        message["tool_calls"] = [{"id": f"call_{index}", "function": {
            "index": 0, "name": "get_weather", "arguments": {"city": "Paris", "n": 1}}}]
    if role == "tool":
        message["tool_name"] = "get_weather"
        message["tool_call_id"] = f"call_{index - 1}"
    return message


def exhaustive_count(depth: int) -> int:
    """How many conversations `exhaustive_conversations(depth)` yields."""
    sequences = sum(len(MESSAGE_SHAPES) ** n for n in range(depth + 1))
    return sequences * 2 * len(THINK_VALUES)


def exhaustive_conversations(depth: int) -> Iterator[dict[str, Any]]:
    """Every shape sequence of length 0…depth × tools absent/present × each think value,
    shortest first."""
    for length in range(depth + 1):
        for shapes in itertools.product(MESSAGE_SHAPES, repeat=length):
            sequence = [_shaped_message(i, shape) for i, shape in enumerate(shapes)]
            for with_tools in (False, True):
                for think in THINK_VALUES:
                    conv: dict[str, Any] = {"messages": [dict(m) for m in sequence]}
                    if with_tools:
                        conv["tools"] = EXHAUSTIVE_TOOLS
                    if think is not None:
                        conv["think"] = think
                    yield conv
