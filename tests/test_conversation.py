"""The conversation contract: what is refused, and the exact Jinja variables built from it."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from gotmpl2jinja.errors import Gotmpl2JinjaError
from gotmpl2jinja.verify import exhaustive, strategies
from gotmpl2jinja.verify.conversation import ConversationError, jinja_context, validate


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
        ({"messages": [{"role": "user", "images": []}]}, "images are outside the contract"),
        ({"messages": [{"role": "assistant", "tool_calls": {}}]}, "tool_calls: must be an array"),
        ({"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f",
          "arguments": "{}"}}]}]}, "tool_calls[0].function.arguments: must be an object"),
        ({"messages": [{"role": "assistant", "tool_calls": [{"function": {"index": True}}]}]},
         "function.index: must be an integer"),
        ({"messages": [{"role": "assistant", "tool_calls": [{"function": {"index": -2**53}}]}]},
         "function.index: is beyond ±(2^53 - 1), the contract's limit"),
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
    "messages",
    [[], [{"role": "user", "content": "q"}], [{"role": "tool", "content": "r"}],
     [{"role": "user", "content": "q"}, {"role": "assistant", "content": "pre"}]],
)
def test_ollamas_prompt_is_asked_with_add_generation_prompt(
    messages: list[dict[str, str]]
) -> None:
    # Ollama's prompt is a generation prompt, its prefill (a final assistant turn left open)
    # too: add_generation_prompt false now asks for the closed rendering (verify.closed)
    assert jinja_context(validate({"messages": messages}))["add_generation_prompt"] is True


def test_host_flags_are_passed_as_the_host_gives_them() -> None:
    finished = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]
    closed = jinja_context(validate({"messages": finished, "add_generation_prompt": False}))
    assert closed["add_generation_prompt"] is False
    assert "continue_final_message" not in closed
    prefill = jinja_context(validate({"messages": finished, "continue_final_message": True}))
    # every engine but transformers' own prefill renders Ollama's prompt for a prefill
    assert prefill["add_generation_prompt"] is True
    assert prefill["continue_final_message"] is True


@pytest.mark.parametrize(
    ("conv", "message"),
    [
        ({"messages": [], "add_generation_prompt": "no"}, "must be true or false"),
        ({"messages": [], "continue_final_message": True}, "continues a final assistant"),
        ({"messages": [{"role": "user", "content": "q"}], "continue_final_message": True},
         "continues a final assistant"),
        ({"messages": [{"role": "assistant", "content": "a"}], "continue_final_message": True,
          "add_generation_prompt": True}, "without add_generation_prompt"),
        ({"prompt": "a", "suffix": "b", "add_generation_prompt": False}, "no host flags"),
    ],
)
def test_host_flags_refused_outside_their_meaning(conv: dict[str, object], message: str
                                                  ) -> None:
    with pytest.raises(ConversationError, match=message):
        validate(conv)


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


# --------------------------------------------------------------------------------------------
# Tools: exactly the documented keys and JSON types (equivalence-contract.md, "Keys and values
# are exactly the documented ones"). Go's decoder would match other spellings case-insensitively
# and read null as the zero value; a Jinja caller's dict keeps them as given, so they are refused.

CITY = {"type": "string", "description": "City"}


def _tool(parameters: Any = None, **function: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": "get_weather", **function}
    if parameters is not None:
        body["parameters"] = parameters
    return {"type": "function", "function": body}


def _with_property(prop: Any) -> dict[str, Any]:
    return {"tools": [_tool({"type": "object", "properties": {"city": prop}})]}


PROPERTY_AT = "tools[0].function.parameters.properties.city"


@pytest.mark.parametrize(
    ("conv", "message"),
    [
        # unknown keys, at each level
        ({"tools": [{"type": "function", "strict": True, "function": {"name": "f"}}]},
         "tools[0]: unknown tool field(s) ['strict']; expected type, items and function"),
        ({"tools": [{"Type": "function", "function": {"name": "f"}}]},
         "tools[0]: unknown tool field(s) ['Type'] (keys are case-sensitive here: 'type'); "
         "expected type, items and function"),
        ({"tools": [_tool(Name="f")]},
         "tools[0].function: unknown function field(s) ['Name'] (keys are case-sensitive "
         "here: 'name'); expected name, description and parameters"),
        ({"tools": [_tool({"type": "object", "additionalProperties": False})]},
         "tools[0].function.parameters: unknown parameters field(s) ['additionalProperties']; "
         "expected type, $defs, items, required and properties"),
        ({"tools": [_tool({"type": "object", "$DEFS": {}})]},
         "tools[0].function.parameters: unknown parameters field(s) ['$DEFS'] (keys are "
         "case-sensitive here: '$defs')"),
        (_with_property({"type": "string", "Description": "City"}),
         f"{PROPERTY_AT}: unknown property field(s) ['Description'] (keys are case-sensitive "
         "here: 'description'); expected anyOf, type, items, description, enum, properties "
         "and required"),
        (_with_property({"anyof": [CITY]}),
         f"{PROPERTY_AT}: unknown property field(s) ['anyof'] (keys are case-sensitive here: "
         "'anyOf')"),
        (_with_property({"type": "string", "default": "Paris", "title": "City"}),
         f"{PROPERTY_AT}: unknown property field(s) ['default', 'title']; expected"),
        # ... recursively, through nested properties and anyOf
        (_with_property({"type": "object", "properties": {"zip": {"format": "x"}}}),
         f"{PROPERTY_AT}.properties.zip: unknown property field(s) ['format']"),
        (_with_property({"anyOf": [CITY, {"type": "null", "nullable": True}]}),
         f"{PROPERTY_AT}.anyOf[1]: unknown property field(s) ['nullable']"),
        (_with_property({"anyOf": [{"properties": {"a b": {"Type": "x"}}}]}),
         f'{PROPERTY_AT}.anyOf[0].properties["a b"]: unknown property field(s) [\'Type\']'),
        # types, and null where Go would read a zero value
        ({"tools": [{"type": None, "function": {"name": "f"}}]},
         "tools[0].type: must be a string, not null"),
        ({"tools": [{"type": "function", "function": None}]},
         "tools[0].function: must be an object, not null"),
        ({"tools": [_tool(name=None)]}, "tools[0].function.name: must be a string, not null"),
        ({"tools": [_tool(description=3)]},
         "tools[0].function.description: must be a string, not a number"),
        ({"tools": [{"type": "function", "function": {"name": "f", "parameters": None}}]},
         "tools[0].function.parameters: must be an object, not null"),
        ({"tools": [_tool({"type": None})]},
         "tools[0].function.parameters.type: must be a string, not null"),
        ({"tools": [_tool({"type": ["object"]})]},
         "tools[0].function.parameters.type: must be a string, not an array"),
        ({"tools": [_tool({"type": "object", "required": None})]},
         "tools[0].function.parameters.required: must be an array of strings, not null"),
        ({"tools": [_tool({"type": "object", "required": ["city", None]})]},
         "tools[0].function.parameters.required[1]: must be a string, not null"),
        ({"tools": [_tool({"type": "object", "properties": None})]},
         "tools[0].function.parameters.properties: must be an object of properties, not null"),
        ({"tools": [_tool({"type": "object", "properties": [CITY]})]},
         "tools[0].function.parameters.properties: must be an object of properties, "
         "not an array"),
        (_with_property(None), f"{PROPERTY_AT}: a property must be an object, not null"),
        (_with_property("string"), f"{PROPERTY_AT}: a property must be an object, not a string"),
        (_with_property({"type": None}),
         f"{PROPERTY_AT}.type: must be a string or a list of strings, not null"),
        (_with_property({"type": 1}),
         f"{PROPERTY_AT}.type: must be a string or a list of strings, not a number"),
        (_with_property({"type": ["string", None]}),
         f"{PROPERTY_AT}.type: must be a string or a list of strings, not a list holding null"),
        (_with_property({"description": None}),
         f"{PROPERTY_AT}.description: must be a string, not null"),
        (_with_property({"enum": None}), f"{PROPERTY_AT}.enum: must be an array, not null"),
        (_with_property({"enum": "c"}), f"{PROPERTY_AT}.enum: must be an array, not a string"),
        (_with_property({"enum": [float("inf")]}), f"{PROPERTY_AT}.enum[0]: inf is not"),
        (_with_property({"anyOf": None}),
         f"{PROPERTY_AT}.anyOf: must be an array of properties, not null"),
        (_with_property({"anyOf": [None]}),
         f"{PROPERTY_AT}.anyOf[0]: a property must be an object, not null"),
        (_with_property({"properties": None}),
         f"{PROPERTY_AT}.properties: must be an object of properties, not null"),
        (_with_property({"properties": {"zip": {"type": None}}}),
         f"{PROPERTY_AT}.properties.zip.type: must be a string or a list of strings, not null"),
        (_with_property({"required": "zip"}),
         f"{PROPERTY_AT}.required: must be an array of strings, not a string"),
        (_with_property({"items": {"x": float("nan")}}), f"{PROPERTY_AT}.items.x: nan is not"),
        ({"tools": [_tool({"type": "object", "$defs": {"a b": [float("nan")]}})]},
         'tools[0].function.parameters.$defs["a b"][0]: nan is not a JSON number'),
    ],
)
def test_off_contract_tools_are_refused_naming_the_path(conv: Any, message: str) -> None:
    with pytest.raises(ConversationError) as info:
        validate({"messages": [], **conv})
    assert message in str(info.value)


FULL_TOOL = {
    "type": "function",
    "items": None,
    "function": {
        "name": "", "description": "Weather <b>",
        "parameters": {
            "type": "object", "$defs": None, "items": {"any": [None, 1.5, {"k": True}]},
            "required": [], "properties": {
                "": {},
                "city": {"type": ["string", "null"], "description": "",
                         "enum": [None, 1, "x", [{}]], "items": None,
                         "anyOf": [{"type": "string"}, {"properties": {"z": {"required": []}}}],
                         "properties": {"a b": {"type": []}}, "required": ["a b"]},
            },
        },
    },
}


def test_every_documented_tool_key_and_free_json_value_is_accepted() -> None:
    """Free JSON (items, $defs, enum items) may be null: Go's nil, printed like absent."""
    conv = {"messages": [], "tools": [FULL_TOOL, {"function": {}}]}
    assert validate(conv) is conv


def test_a_tool_without_a_function_stays_refused() -> None:
    with pytest.raises(ConversationError, match=r"tools\[1\]\.function: must be an object"):
        validate({"tools": [FULL_TOOL, {"type": "function"}]})


def test_validation_leaves_the_tools_untouched() -> None:
    tools = [copy.deepcopy(FULL_TOOL)]
    validate({"tools": tools})
    assert tools == [FULL_TOOL]


# --------------------------------------------------------------------------------------------
# The project's generators stay inside the contract (else the harness would test nothing real)


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(strategies.conversations())
def test_generated_conversations_are_inside_the_contract(conv: dict[str, Any]) -> None:
    assert validate(conv) is conv


@settings(max_examples=300, deadline=None)
@given(strategies.tools())
def test_generated_tool_lists_are_inside_the_contract(tools: list[dict[str, Any]]) -> None:
    validate({"messages": [], "tools": tools})


def test_the_tool_pool_draws_what_go_prints_apart() -> None:
    """Go's json tells a nil list from an empty one and prints api.Tool's own `items`: the
    pool holds a tool without parameters, parameters and properties without `required`, a
    property's `required` without nested properties, a tool-level `items`."""
    tools = [t for ts in strategies.tools_pool() for t in ts]
    params = [t["function"]["parameters"] for t in tools if "parameters" in t["function"]]
    props = [p for ps in params for p in ps.get("properties", {}).values()]
    assert len(params) < len(tools)
    assert any("required" not in p for p in params)
    assert any("required" in p and "properties" not in p for p in props)
    assert any("required" not in p for p in props)
    assert any("items" in t for t in tools)


def test_bulk_pools_and_exhaustive_cases_are_inside_the_contract() -> None:
    rng = random.Random(14)
    for _ in range(3000):
        validate(strategies.draw_random(rng).conversation)
    for tools in strategies.tools_pool():
        validate({"messages": [], "tools": tools})
    for conv in exhaustive.exhaustive_conversations(2):
        validate(conv)
