"""The bounded-exhaustive conversations: every shape of message up to a depth, each with
the same few values (so a divergence found here is already minimal).

May depend on: `verify.strategies` (the builders and pools).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from gotmpl2jinja.verify.strategies import ROLES, THINK_VALUES

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
