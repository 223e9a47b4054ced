"""The conversation contract (docs: equivalence-contract.md): one JSON object, two renderings.

A conversation is the subset of Ollama's `/api/chat` request body that reaches a template. The Go
side gets it as is (the reference renderer decodes it like Ollama does); the Jinja side gets the
variables a Hugging Face user would pass, built here by `jinja_context`. Both sides must start
from the same validated object, so a malformed one is refused with a sentence, not a traceback.

May depend on: `errors`.
"""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

from gotmpl2jinja.errors import Gotmpl2JinjaError

#: Values Ollama accepts for `think` besides true/false (other strings are a 400 there).
THINK_LEVELS = ("low", "medium", "high", "max")

#: The range of Go's int (64-bit), a tool call's `index` in Ollama's api.ToolCallFunction.
GO_INT_MIN, GO_INT_MAX = -(2 ** 63), 2 ** 63 - 1
#: The integers every engine holds and computes with exactly: @huggingface/jinja reads a
#: JSON number as a double, and the runtime's digit arithmetic goes through `/`.
SAFE_INT = 2 ** 53 - 1

_TOP_KEYS = ("messages", "tools", "think", "prompt", "suffix", "add_generation_prompt",
             "continue_final_message")
_MESSAGE_KEYS = ("role", "content", "thinking", "tool_calls", "tool_name", "tool_call_id")
_STRING_MESSAGE_KEYS = ("content", "thinking", "tool_name", "tool_call_id")


class ConversationError(Gotmpl2JinjaError):
    """A conversation that does not follow the contract's format."""


def _fail(where: str, message: str) -> ConversationError:
    return ConversationError(f"{where}: {message}" if where else message)


def _kind(value: Any) -> str:
    """A JSON-ish name for a Python value, for error sentences."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _check_json(value: Any, where: str) -> None:
    """Only JSON values may travel (to Go, to node): no NaN/Infinity, no tuples, string keys."""
    if value is None or isinstance(value, (bool, int, str)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _fail(where, f"{value!r} is not a JSON number")
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check_json(item, f"{where}[{i}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise _fail(where, f"object key {key!r} is not a string")
            _check_json(item, _at(where, key))
        return
    raise _fail(where, f"{type(value).__name__} is not a JSON value")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_no_surrogates(value: Any, where: str) -> None:
    """Strings are Unicode text: a lone surrogate (JSON's "\\ud800") is refused everywhere.
    Ollama's decoder turns one in a value into U+FFFD where a Jinja caller's string keeps it,
    and refuses the request for one in a tool-call argument's key or a property's name."""
    if isinstance(value, bool):
        return
    if isinstance(value, int) and 2**63 <= value < 2**64:
        raise _fail(where or "conversation",
                    f"{value} is an integer llama.cpp's and minja's JSON reader holds as "
                    "unsigned and hands to the template wrapped to a negative number: outside "
                    "the contract (Go reads it as float64; write it as a float)")
    if isinstance(value, str):
        if _SURROGATE.search(value):
            raise _fail(where or "conversation",
                        "holds a lone UTF-16 surrogate, which is not text (Ollama's decoder "
                        "replaces it with U+FFFD, or refuses the request where it names an "
                        "argument or a property)")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_no_surrogates(item, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and _SURROGATE.search(key):
                raise _fail(where or "conversation",
                            f"key {key!r} holds a lone UTF-16 surrogate, which is not text "
                            "(Ollama's decoder refuses the request)")
            _check_no_surrogates(item, _at(where, key) if isinstance(key, str) else where)


def _check_tool_call(call: Any, where: str) -> None:
    if not isinstance(call, dict):
        raise _fail(where, f"a tool call must be an object, not {_kind(call)}")
    unknown = set(call) - {"id", "type", "function"}
    if unknown:
        raise _fail(where, f"unknown tool call field(s) {sorted(unknown)}; "
                           "expected id and function")
    if "id" in call and not isinstance(call["id"], str):
        raise _fail(f"{where}.id", f"must be a string, not {_kind(call['id'])}")
    if "type" in call and call["type"] != "function":
        raise _fail(f"{where}.type", 'must be "function" when given')
    function = call.get("function")
    if not isinstance(function, dict):
        raise _fail(f"{where}.function", f"must be an object, not {_kind(function)}")
    unknown = set(function) - {"index", "name", "arguments"}
    if unknown:
        raise _fail(f"{where}.function", f"unknown field(s) {sorted(unknown)}; "
                                         "expected index, name and arguments")
    if "name" in function and not isinstance(function["name"], str):
        raise _fail(f"{where}.function.name", f"must be a string, not {_kind(function['name'])}")
    if "index" in function and (
        isinstance(function["index"], bool) or not isinstance(function["index"], int)
    ):
        raise _fail(f"{where}.function.index",
                    f"must be an integer, not {_kind(function['index'])}")
    if "index" in function and not GO_INT_MIN <= function["index"] <= GO_INT_MAX:
        raise _fail(f"{where}.function.index",
                    "does not fit Go's int: Ollama's decoder refuses the request")
    if "index" in function and not -SAFE_INT <= function["index"] <= SAFE_INT:
        raise _fail(f"{where}.function.index",
                    "is beyond ±(2^53 - 1), the contract's limit: not every engine holds such "
                    "an integer exactly")
    if "arguments" in function:
        arguments = function["arguments"]
        if not isinstance(arguments, dict):
            raise _fail(f"{where}.function.arguments",
                        f"must be an object, not {_kind(arguments)}")
        _check_json(arguments, f"{where}.function.arguments")


def _check_message(message: Any, where: str) -> None:
    if not isinstance(message, dict):
        raise _fail(where, f"a message must be an object, not {_kind(message)}")
    if "role" not in message:
        raise _fail(where, "a message needs a role")
    if "images" in message:
        raise _fail(f"{where}.images", "images are outside the contract (Ollama puts [img-N] "
                                        "tags in the content; `gotmpl2jinja render` models "
                                        "them, no Jinja variable carries them)")
    unknown = set(message) - set(_MESSAGE_KEYS)
    if unknown:
        raise _fail(where, f"unknown message field(s) {sorted(unknown)}; "
                           f"expected {', '.join(_MESSAGE_KEYS)}")
    if not isinstance(message["role"], str):
        raise _fail(f"{where}.role", f"must be a string, not {_kind(message['role'])}")
    for key in _STRING_MESSAGE_KEYS:
        if key in message and not isinstance(message[key], str):
            raise _fail(f"{where}.{key}", f"must be a string, not {_kind(message[key])}")
    if "tool_calls" in message:
        calls = message["tool_calls"]
        if not isinstance(calls, list):
            raise _fail(f"{where}.tool_calls", f"must be an array, not {_kind(calls)}")
        for j, call in enumerate(calls):
            _check_tool_call(call, f"{where}.tool_calls[{j}]")


#: The keys Ollama's api.Tool and its parts know, as the contract spells them (Go would also
#: match them case-insensitively; a Jinja caller's dict would not, so other spellings are refused).
_TOOL_KEYS = ("type", "items", "function")
_FUNCTION_KEYS = ("name", "description", "parameters")
_PARAMETERS_KEYS = ("type", "$defs", "items", "required", "properties")
_PROPERTY_KEYS = ("anyOf", "type", "items", "description", "enum", "properties", "required")

_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")


def _at(where: str, key: str) -> str:
    """The JSON path of `key` inside `where` (`a.city`, or `a["a b"]` for other keys)."""
    if _IDENTIFIER.match(key):
        return f"{where}.{key}" if where else key
    return f"{where}[{json.dumps(key, ensure_ascii=False)}]"


def _listing(keys: tuple[str, ...]) -> str:
    return ", ".join(keys[:-1]) + " and " + keys[-1]


def _check_keys(obj: dict[str, Any], known: tuple[str, ...], where: str, what: str) -> None:
    """Refuse keys outside `known`, pointing at a case variant Go would have accepted."""
    unknown = [key for key in obj if key not in known]
    if not unknown:
        return
    key = unknown[0]
    if not isinstance(key, str):
        raise _fail(where, f"object key {key!r} is not a string")
    hint = next((f" (keys are case-sensitive here: {k!r})" for k in known
                 if k.lower() == key.lower()), "")
    raise _fail(where, f"unknown {what} field(s) {sorted(map(str, unknown))}{hint}; "
                       f"expected {_listing(known)}")


def _check_string(obj: dict[str, Any], key: str, where: str) -> None:
    if key in obj and not isinstance(obj[key], str):
        raise _fail(_at(where, key), f"must be a string, not {_kind(obj[key])}")


def _check_strings(obj: dict[str, Any], key: str, where: str) -> None:
    """An array of strings (`required`); Go would turn a null item into ""."""
    if key not in obj:
        return
    values = obj[key]
    if not isinstance(values, list):
        raise _fail(_at(where, key), f"must be an array of strings, not {_kind(values)}")
    for i, value in enumerate(values):
        if not isinstance(value, str):
            raise _fail(f"{_at(where, key)}[{i}]", f"must be a string, not {_kind(value)}")


def _check_free_json(obj: dict[str, Any], key: str, where: str) -> None:
    """`items` / `$defs`: any JSON value Go keeps as is; null is Go's nil, like absent."""
    if key in obj:
        _check_json(obj[key], _at(where, key))


def _check_properties(properties: Any, where: str) -> None:
    if not isinstance(properties, dict):
        raise _fail(where, f"must be an object of properties, not {_kind(properties)}")
    for name, prop in properties.items():
        if not isinstance(name, str):
            raise _fail(where, f"object key {name!r} is not a string")
        _check_property(prop, _at(where, name))


def _check_property(prop: Any, where: str) -> None:
    """One JSON-schema property as api.ToolProperty decodes it (recursive)."""
    if not isinstance(prop, dict):
        raise _fail(where, f"a property must be an object, not {_kind(prop)}")
    _check_keys(prop, _PROPERTY_KEYS, where, "property")
    if "type" in prop:
        kind = prop["type"]
        if isinstance(kind, list):
            odd = [t for t in kind if not isinstance(t, str)]
            if odd:
                raise _fail(_at(where, "type"), "must be a string or a list of strings, "
                                                 f"not a list holding {_kind(odd[0])}")
        elif not isinstance(kind, str):
            raise _fail(_at(where, "type"),
                        f"must be a string or a list of strings, not {_kind(kind)}")
    _check_string(prop, "description", where)
    if "enum" in prop:
        if not isinstance(prop["enum"], list):
            raise _fail(_at(where, "enum"), f"must be an array, not {_kind(prop['enum'])}")
        _check_json(prop["enum"], _at(where, "enum"))
    if "anyOf" in prop:
        alternatives = prop["anyOf"]
        if not isinstance(alternatives, list):
            raise _fail(_at(where, "anyOf"),
                        f"must be an array of properties, not {_kind(alternatives)}")
        for i, alternative in enumerate(alternatives):
            _check_property(alternative, f"{_at(where, 'anyOf')}[{i}]")
    if "properties" in prop:
        _check_properties(prop["properties"], _at(where, "properties"))
    _check_strings(prop, "required", where)
    _check_free_json(prop, "items", where)


def _check_parameters(parameters: Any, where: str) -> None:
    if not isinstance(parameters, dict):
        raise _fail(where, f"must be an object, not {_kind(parameters)}")
    _check_keys(parameters, _PARAMETERS_KEYS, where, "parameters")
    _check_string(parameters, "type", where)
    _check_strings(parameters, "required", where)
    if "properties" in parameters:
        _check_properties(parameters["properties"], _at(where, "properties"))
    _check_free_json(parameters, "$defs", where)
    _check_free_json(parameters, "items", where)


def _check_tool(tool: Any, where: str) -> None:
    if not isinstance(tool, dict):
        raise _fail(where, f"a tool must be an object, not {_kind(tool)}")
    _check_keys(tool, _TOOL_KEYS, where, "tool")
    _check_string(tool, "type", where)
    _check_free_json(tool, "items", where)
    function = tool.get("function")
    if not isinstance(function, dict):
        raise _fail(_at(where, "function"), f"must be an object, not {_kind(function)}")
    where = _at(where, "function")
    _check_keys(function, _FUNCTION_KEYS, where, "function")
    _check_string(function, "name", where)
    _check_string(function, "description", where)
    if "parameters" in function:
        _check_parameters(function["parameters"], _at(where, "parameters"))


def _check_tools(tools: Any) -> None:
    if not isinstance(tools, list):
        raise _fail("tools", f"must be an array, not {_kind(tools)}")
    for i, tool in enumerate(tools):
        _check_tool(tool, f"tools[{i}]")


def validate(conv: Any) -> dict[str, Any]:
    """Check a conversation against the contract; return it unchanged (raises ConversationError).

    Refused: a non-object, unknown fields (a typo would otherwise silently test nothing), fields
    of the wrong JSON type, lone UTF-16 surrogates, a tool call `index` past Go's int, images,
    a `think` Ollama would answer 400 to whatever the template, half a fill-in-the-middle
    request, or messages mixed with one. Tools too, down to nested properties and `anyOf`: a key
    other than the documented lower-case one, or a null outside free JSON, is where Go's
    case-insensitive, null-skipping decoder and a Jinja caller's dict see different things
    (the translated templates read exactly the documented keys).
    """
    if not isinstance(conv, dict):
        raise _fail("", f"a conversation must be a JSON object, not {_kind(conv)}")
    _check_no_surrogates(conv, "")
    unknown = set(conv) - set(_TOP_KEYS)
    if unknown:
        raise _fail("", f"unknown conversation field(s) {sorted(unknown)}; "
                        f"expected {', '.join(_TOP_KEYS)}")
    if "think" in conv:
        think = conv["think"]
        if not (isinstance(think, bool) or think in THINK_LEVELS):
            raise _fail("think", f"must be true, false or one of {', '.join(THINK_LEVELS)}, "
                                 f"not {think!r}")
    _check_host_flags(conv)
    if is_fim(conv):
        for key in ("prompt", "suffix"):
            if not isinstance(conv[key], str) or conv[key] == "":
                raise _fail(key, "must be a non-empty string for fill-in-the-middle")
        if "messages" in conv or "tools" in conv:
            raise _fail("", "a fill-in-the-middle request (prompt + suffix) has no messages "
                            "or tools")
        return conv
    if "prompt" in conv or "suffix" in conv:
        raise _fail("", "fill-in-the-middle needs both prompt and suffix")
    messages = conv.get("messages", [])
    if not isinstance(messages, list):
        raise _fail("messages", f"must be an array, not {_kind(messages)}")
    for i, message in enumerate(messages):
        _check_message(message, f"messages[{i}]")
    if "tools" in conv:
        _check_tools(conv["tools"])
    return conv


def _check_host_flags(conv: dict[str, Any]) -> None:
    """The host's flags (never seen by Go): booleans; a prefill (`continue_final_message`)
    continues a final assistant message and asks for no generation prompt."""
    for key in ("add_generation_prompt", "continue_final_message"):
        if key in conv and not isinstance(conv[key], bool):
            raise _fail(key, f"must be true or false, not {_kind(conv[key])}")
    if conv.get("continue_final_message"):
        messages = conv.get("messages")
        if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict) \
                or messages[-1].get("role") != "assistant" or conv.get("add_generation_prompt"):
            raise _fail("continue_final_message", "continues a final assistant message, "
                        "without add_generation_prompt")
    if (is_fim(conv) or "prompt" in conv) and any(k in conv for k in
                                                  ("add_generation_prompt",
                                                   "continue_final_message")):
        raise _fail("", "a fill-in-the-middle request takes no host flags")


def is_fim(conv: dict[str, Any]) -> bool:
    """A fill-in-the-middle request: Ollama's suffix path (both prompt and suffix given)."""
    return "prompt" in conv and "suffix" in conv


def _jinja_message(message: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message["role"], "content": message.get("content", "")}
    if "thinking" in message:
        out["reasoning_content"] = message["thinking"]
    if "tool_calls" in message:
        calls = []
        for call in message["tool_calls"]:
            function = call["function"]
            jinja_call: dict[str, Any] = {"type": "function"}
            if "id" in call:
                jinja_call["id"] = call["id"]
            jinja_function: dict[str, Any] = {"name": function.get("name", "")}
            if "arguments" in function:
                # absent differs from {} in Go: `json .Function.Arguments` prints null
                jinja_function["arguments"] = copy.deepcopy(function["arguments"])
            if "index" in function:
                jinja_function["index"] = function["index"]
            jinja_call["function"] = jinja_function
            calls.append(jinja_call)
        out["tool_calls"] = calls
    if "tool_name" in message:
        out["name"] = message["tool_name"]
    if "tool_call_id" in message:
        out["tool_call_id"] = message["tool_call_id"]
    return out


def jinja_context(conv: dict[str, Any]) -> dict[str, Any]:
    """The Jinja variables of the contract table, for a validated conversation.

    "When present" means the key is present (an empty string or list is still passed), the way
    a Hugging Face user would pass it; a missing tool-call name is "" (what Go sees), while
    missing `arguments` stay missing: Go prints `{}` for `{{ .Function.Arguments }}` but `null`
    for `{{ json .Function.Arguments }}`, so the template must be able to tell. The result is
    a fresh copy: engines never share state with `conv`.
    """
    context: dict[str, Any] = {}
    if is_fim(conv):
        context["messages"] = []
        context["prompt"] = conv["prompt"]
        context["suffix"] = conv["suffix"]
        context["add_generation_prompt"] = True
    else:
        messages = [_jinja_message(m) for m in conv.get("messages", [])]
        context["messages"] = messages
        if "tools" in conv:
            context["tools"] = copy.deepcopy(conv["tools"])
        # Ollama's prompt is a generation prompt, also where it leaves a final assistant turn
        # open (its prefill); a host's explicit flag asks for the closed rendering instead. A
        # prefill is Ollama's prompt: transformers' engine asks for it its own way (the final
        # turn rendered closed and cut after the content), the others as Ollama's prompt.
        context["add_generation_prompt"] = conv.get("add_generation_prompt", True)
        if conv.get("continue_final_message"):
            context["add_generation_prompt"] = True
            context["continue_final_message"] = True
    if "think" in conv:
        think = conv["think"]
        context["enable_thinking"] = think is not False
        if isinstance(think, str):
            context["reasoning_effort"] = think
    return context
