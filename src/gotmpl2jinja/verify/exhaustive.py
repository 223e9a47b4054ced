"""The bounded-exhaustive conversations: every shape of message up to a depth, each with
the same few values (so a divergence found here is already minimal).

A runtime context's own exhaustive pass (`verify.percontext`) takes the shapes in its scope
(`steer`): no role, thinking, tool call or tool list it leaves out, no tool-call index, and a
user's turn after a final assistant message where a prefill is out of scope there.

May depend on: `verify.steer`, `verify.strategies` (the builders and pools).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from gotmpl2jinja.verify.steer import FREE, Steer
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


def _shaped_message(index: int, shape: tuple[str, bool, bool], steer: Steer = FREE
                    ) -> dict[str, Any]:
    role, thinking, calls = shape
    message: dict[str, Any] = {"role": role, "content": f"{role[0].upper()}{index}"}
    if thinking:
        message["thinking"] = f"T{index}"
    if calls:
        function = {"index": 0, "name": "get_weather", "arguments": {"city": "Paris", "n": 1}}
        if not steer.call_index:
            del function["index"]
        message["tool_calls"] = [{"id": f"call_{index}", "function": function}]
    if role == "tool":
        message["tool_name"] = "get_weather"
        message["tool_call_id"] = f"call_{index - 1}"
    return message


def exhaustive_count(depth: int) -> int:
    """How many conversations `exhaustive_conversations(depth)` yields."""
    sequences = sum(len(MESSAGE_SHAPES) ** n for n in range(depth + 1))
    return sequences * 2 * len(THINK_VALUES)


def exhaustive_conversations(depth: int, steer: Steer = FREE) -> Iterator[dict[str, Any]]:
    """Every shape sequence of length 0…depth × tools absent/present × each think value,
    shortest first (those `steer` allows: `FREE`, every one)."""
    shapes_allowed = [(role, thinking, calls) for role, thinking, calls in MESSAGE_SHAPES
                      if role in steer.roles(ROLES) and (steer.thinking or not thinking)
                      and (steer.tool_calls or not calls)]
    think_values = (None, *steer.think_values(THINK_VALUES[1:]))
    for length in range(0 if steer.empty_chat else 1, depth + 1):
        for shapes in itertools.product(shapes_allowed, repeat=length):
            sequence = [_shaped_message(i, shape, steer) for i, shape in enumerate(shapes)]
            if sequence and sequence[-1]["role"] == "assistant" and not steer.final_assistant:
                sequence.append({"role": "user", "content": f"U{length}"})
            for with_tools in (False, True)[:2 if steer.tools else 1]:
                for think in think_values:
                    conv: dict[str, Any] = {"messages": [dict(m) for m in sequence]}
                    if with_tools:
                        conv["tools"] = EXHAUSTIVE_TOOLS
                    if think is not None:
                        conv["think"] = think
                    yield conv
