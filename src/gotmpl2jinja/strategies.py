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

import itertools
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
_names = st.sampled_from(("get_weather", "search", "calc", "f", "tool_2", "ünïcode", "a.b"))


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
# Messages and conversations

def tool_calls() -> st.SearchStrategy[list[dict[str, Any]]]:
    """Tool calls with or without id / index / arguments (Go defaults what is missing)."""
    function = st.fixed_dictionaries(
        {"name": _names},
        optional={"index": st.integers(0, 3), "arguments": arguments()},
    )
    call = st.fixed_dictionaries(
        {"function": function}, optional={"id": st.sampled_from(("call_1", "call_2", "x"))}
    )
    return st.lists(call, max_size=3)


def messages() -> st.SearchStrategy[dict[str, Any]]:
    """One message of any role; assistants may think and call tools, tool results may name
    their tool and call; every optional field is sometimes absent."""
    def for_role(role: str) -> st.SearchStrategy[dict[str, Any]]:
        optional: dict[str, st.SearchStrategy[Any]] = {"content": contents()}
        if role == "assistant":
            optional["thinking"] = contents()
            optional["tool_calls"] = tool_calls()
        if role == "tool":
            optional["tool_name"] = _names
            optional["tool_call_id"] = st.sampled_from(("call_1", "call_2", ""))
        return st.fixed_dictionaries({"role": st.just(role)}, optional=optional)

    return st.sampled_from(ROLES + ODD_ROLES).flatmap(for_role)


def chat_conversations(max_messages: int = 6) -> st.SearchStrategy[dict[str, Any]]:
    """The `/api/chat` shape: messages, maybe tools, maybe `think`."""
    return st.fixed_dictionaries(
        {"messages": st.lists(messages(), max_size=max_messages)},
        optional={"tools": tools(), "think": st.sampled_from(THINK_VALUES[1:])},
    )


def fim_requests() -> st.SearchStrategy[dict[str, Any]]:
    """Fill-in-the-middle: non-empty prompt and suffix, maybe `think`."""
    non_empty = texts(4).filter(bool)
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
