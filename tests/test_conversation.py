"""The conversation contract: what is refused, and the exact Jinja variables built from it."""

from __future__ import annotations

import pytest

from gotmpl2jinja.conversation import ConversationError, jinja_context, validate
from gotmpl2jinja.errors import Gotmpl2JinjaError


@pytest.mark.parametrize(
    ("conv", "fragment"),
    [
        ([], "must be a JSON object"),
        ({"mesages": []}, "unknown conversation field(s) ['mesages']"),
        ({"messages": {}}, "messages: must be an array"),
        ({"messages": ["hi"]}, "messages[0]: a message must be an object"),
        ({"messages": [{"content": "x"}]}, "messages[0]: a message needs a role"),
        ({"messages": [{"role": 1}]}, "messages[0].role: must be a string"),
        ({"messages": [{"role": "user", "content": None}]},
         "messages[0].content: must be a string"),
        ({"messages": [{"role": "user", "name": "x"}]}, "unknown message field(s) ['name']"),
        ({"messages": [{"role": "user", "images": []}]}, "images are out of scope"),
        ({"messages": [{"role": "assistant", "tool_calls": {}}]}, "tool_calls: must be an array"),
        ({"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f",
          "arguments": "{}"}}]}]}, "tool_calls[0].function.arguments: must be an object"),
        ({"messages": [{"role": "assistant", "tool_calls": [{"function": {"index": True}}]}]},
         "function.index: must be an integer"),
        ({"messages": [{"role": "assistant", "tool_calls": [{"function": {
          "arguments": {"x": float("nan")}}}]}]}, "nan is not a JSON number"),
        ({"think": "extreme"}, "think: must be true, false or one of low, medium, high, max"),
        ({"think": 1}, "think: must be true, false"),
        ({"prompt": "a"}, "needs both prompt and suffix"),
        ({"prompt": "a", "suffix": ""}, "suffix: must be a non-empty string"),
        ({"prompt": "a", "suffix": "b", "messages": []}, "has no messages or tools"),
        ({"tools": [{"type": "function"}]}, "tools[0].function: must be an object"),
    ],
)
def test_malformed_conversations_are_refused_with_a_sentence(conv: object, fragment: str) -> None:
    with pytest.raises(ConversationError) as info:
        validate(conv)
    assert fragment in str(info.value)
    assert isinstance(info.value, Gotmpl2JinjaError)


def test_valid_conversation_is_returned_unchanged() -> None:
    conv = {"messages": [{"role": "user", "content": "hi"}], "think": "high"}
    assert validate(conv) is conv


def test_message_fields_are_renamed_as_the_contract_table_says() -> None:
    conv = validate({
        "messages": [
            {"role": "system", "content": "S"},
            {"role": "user"},
            {"role": "assistant", "content": "", "thinking": "hmm",
             "tool_calls": [
                 {"id": "call_1", "function": {"index": 0, "name": "get_weather",
                                               "arguments": {"city": "Paris", "n": 1.5}}},
                 {"function": {"name": "noargs"}},
             ]},
            {"role": "tool", "content": "20C", "tool_name": "get_weather",
             "tool_call_id": "call_1"},
        ],
    })
    assert jinja_context(conv) == {
        "messages": [
            {"role": "system", "content": "S"},
            {"role": "user", "content": ""},
            {"role": "assistant", "content": "", "reasoning_content": "hmm",
             "tool_calls": [
                 {"type": "function", "id": "call_1",
                  "function": {"name": "get_weather", "arguments": {"city": "Paris", "n": 1.5},
                               "index": 0}},
                 # no `arguments` key: Go's json prints null for it, String() prints {}
                 {"type": "function", "function": {"name": "noargs"}},
             ]},
            {"role": "tool", "content": "20C", "name": "get_weather", "tool_call_id": "call_1"},
        ],
        "add_generation_prompt": True,
    }


def test_tools_are_passed_unchanged_and_only_when_present() -> None:
    tools = [{"type": "function", "function": {"name": "f", "description": "",
              "parameters": {"type": "object", "properties": {"b": {"type": "string"},
                                                              "a": {"type": "integer"}}}}}]
    with_tools = jinja_context(validate({"messages": [], "tools": tools}))
    assert with_tools["tools"] == tools
    assert list(with_tools["tools"][0]["function"]["parameters"]["properties"]) == ["b", "a"]
    assert with_tools["tools"] is not tools  # a copy: engines cannot touch the caller's data
    assert "tools" not in jinja_context(validate({"messages": []}))


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([], True),
        ([{"role": "user", "content": "q"}], True),
        ([{"role": "tool", "content": "r"}], True),
        ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "pre"}], False),
    ],
)
def test_add_generation_prompt_unless_the_last_message_is_assistant(
    messages: list[dict[str, str]], expected: bool
) -> None:
    assert jinja_context(validate({"messages": messages}))["add_generation_prompt"] is expected


@pytest.mark.parametrize(
    ("think", "enable_thinking", "reasoning_effort"),
    [(True, True, None), (False, False, None), ("low", True, "low"),
     ("medium", True, "medium"), ("high", True, "high"), ("max", True, "max")],
)
def test_think_values(think: object, enable_thinking: bool, reasoning_effort: str | None) -> None:
    context = jinja_context(validate({"messages": [], "think": think}))
    assert context["enable_thinking"] is enable_thinking
    assert context.get("reasoning_effort") == reasoning_effort
    assert ("reasoning_effort" in context) is (reasoning_effort is not None)


def test_no_think_means_no_thinking_variables() -> None:
    context = jinja_context(validate({"messages": [{"role": "user", "content": "q"}]}))
    assert "enable_thinking" not in context
    assert "reasoning_effort" not in context


def test_fill_in_the_middle_passes_prompt_and_suffix() -> None:
    conv = {"prompt": "def f(", "suffix": "    return x", "think": False}
    context = jinja_context(validate(conv))
    assert context == {"messages": [], "prompt": "def f(", "suffix": "    return x",
                       "add_generation_prompt": True, "enable_thinking": False}
