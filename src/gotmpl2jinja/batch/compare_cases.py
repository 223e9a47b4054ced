"""The conversations a pair is compared on (a fixed catalogue, then seeded random ones) and
the greedy shrinking of an example to a minimal one.

May depend on: batch.compare_kinds.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

from gotmpl2jinja.batch.compare_kinds import Conversation, Pair, classify

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
