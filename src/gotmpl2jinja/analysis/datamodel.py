"""The Ollama data model (ollama-semantics.md §5): the Go type of every field a template can
reach, and the Jinja expression that reaches it from the contract's variables.

The emitter is type-directed: a Go value prints, compares and tests for truth according to its
Go type, so the data model is written down here once.

May depend on: nothing of the project.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class GoType(Enum):
    """The Go types a template can meet in Ollama's messages path (plus two markers)."""

    STRING = "string"
    BOOL = "bool"
    INT = "int"
    UINT8 = "uint8"  # one byte of a string (`index` of a string)
    FLOAT = "float64"
    NIL = "nil interface"  # a missing key of the root map: prints <no value>, falsy
    NO_DATA = "no data"  # `.` of a template called with nil: its fields are missing keys too
    ANY = "interface{} (decoded JSON)"  # tool-call argument values
    ROOT = "map[string]any"
    MESSAGES = "[]*templateMessage"
    MESSAGE = "*templateMessage"
    TOOL_CALLS = "[]templateToolCall"
    TOOL_CALL = "templateToolCall"
    CALL_FUNCTION = "templateToolCallFunction"
    ARGS = "templateArgs"
    TOOLS = "templateTools"
    TOOL = "templateTool"
    TOOL_FUNCTION = "templateToolFunction"
    PARAMETERS = "templateToolFunctionParameters"
    PROPERTIES = "templateProperties"
    PROPERTY = "api.ToolProperty"
    PROPERTY_TYPE = "api.PropertyType"
    PROPERTY_LIST = "[]api.ToolProperty"  # a property's anyOf
    STRINGS = "[]string"
    IMAGES = "[]api.ImageData"  # a message's images: always nil here (outside the contract)
    ANYS = "[]any"
    TRUTH = "a value only tested for truth"  # and/or of mixed types, used as a condition
    CHOICE = "and/or of operands of several Go types"  # see emit.Choice
    MIXED = "a variable assigned values of several Go types"  # see MIXABLE
    RAISE = "an execution error"  # evaluating it fails in Go


#: Go types a variable may hold besides a string (granite3-guardian: `$p := ""`, later a message;
#: granite3.2: `$identifier := $documentCounter`, later a string): their Jinja dicts are never
#: empty and a Jinja int is false exactly at 0, so Jinja's truth is Go's (a struct pointer is
#: true), and `is string` tells them from the string at run time.
MIXABLE = {GoType.MESSAGE, GoType.TOOL_CALL, GoType.TOOL, GoType.INT}

#: Slices: element type and the natural Jinja name of one element.
SLICE_ELEMENTS: dict[GoType, tuple[GoType, str]] = {
    GoType.MESSAGES: (GoType.MESSAGE, "message"),
    GoType.TOOL_CALLS: (GoType.TOOL_CALL, "tool_call"),
    GoType.TOOLS: (GoType.TOOL, "tool"),
    GoType.STRINGS: (GoType.STRING, "item"),
    GoType.ANYS: (GoType.ANY, "item"),
    GoType.IMAGES: (GoType.ANY, "image"),  # (never ranged: always nil)
    # a []string; the request gives it as one string or a list (the emitter reads it as a list)
    GoType.PROPERTY_TYPE: (GoType.STRING, "type"),
    GoType.PROPERTY_LIST: (GoType.PROPERTY, "alternative"),
}

#: Maps (ranged in sorted key order): value type and natural Jinja names of key and value.
MAP_VALUES: dict[GoType, tuple[GoType, str, str]] = {
    GoType.ARGS: (GoType.ANY, "key", "value"),
    GoType.PROPERTIES: (GoType.PROPERTY, "name", "property"),
}

#: Struct types: printing one whole is either JSON (String() or the contract) or struct syntax.
STRUCTS = {
    GoType.MESSAGE, GoType.TOOL_CALL, GoType.CALL_FUNCTION, GoType.TOOL, GoType.TOOL_FUNCTION,
    GoType.PARAMETERS, GoType.PROPERTY,
}


#: Attributes every Python dict has: on jinja2, `d.items` / `d['items']` of a dict without that
#: key gives the bound method (truthy) instead of undefined, so such keys are read with `.get`.
DICT_METHODS = frozenset({"clear", "copy", "fromkeys", "get", "items", "keys", "pop", "popitem",
                          "setdefault", "update", "values"})


@dataclass(frozen=True)
class FieldInfo:
    """How a Go field is reached on the Jinja side: `.key` when the key is always there,
    `.get(key, default)` when the contract may leave it out and Go's zero value prints like
    `default`, or `.get(key)` (none when absent or null) when `maybe_missing`: Go's nil
    map/slice/any then differs from an empty one (`json` prints `null`)."""

    key: str
    type: GoType
    default: str | None = None
    maybe_missing: bool = False

    def __post_init__(self) -> None:
        if self.default is None and not self.maybe_missing and self.key in DICT_METHODS:
            raise ValueError(f"{self.key!r} must be read with .get (a dict method on jinja2)")


#: Fields of the root map in the messages path (§3): the prelude binds these Jinja names.
ROOT_FIELDS: dict[str, tuple[str, GoType]] = {
    "Messages": ("messages", GoType.MESSAGES),
    "System": ("system", GoType.STRING),
    "Tools": ("tools", GoType.TOOLS),
    "Think": ("think", GoType.BOOL),
    "ThinkLevel": ("think_level", GoType.STRING),
    "IsThinkSet": ("is_think_set", GoType.BOOL),
}

#: Struct fields (§5). A message is the request's own dict where collating changes nothing, else
#: the prelude's collated copy: role and content always exist, the other keys only when given.
FIELDS: dict[GoType, dict[str, FieldInfo]] = {
    GoType.MESSAGE: {
        "Role": FieldInfo("role", GoType.STRING),
        "Content": FieldInfo("content", GoType.STRING),
        "Thinking": FieldInfo("reasoning_content", GoType.STRING, "''"),
        "ToolCalls": FieldInfo("tool_calls", GoType.TOOL_CALLS, "[]"),
        "ToolName": FieldInfo("name", GoType.STRING, "''"),
        "ToolCallID": FieldInfo("tool_call_id", GoType.STRING, "''"),
        # images are outside the contract (a conversation with them is refused): nil here
        "Images": FieldInfo("images", GoType.IMAGES, maybe_missing=True),
    },
    GoType.TOOL_CALL: {
        "ID": FieldInfo("id", GoType.STRING, "''"),
        "Function": FieldInfo("function", GoType.CALL_FUNCTION),
    },
    GoType.CALL_FUNCTION: {
        "Index": FieldInfo("index", GoType.INT, "0"),
        "Name": FieldInfo("name", GoType.STRING),
        "Arguments": FieldInfo("arguments", GoType.ARGS, maybe_missing=True),
    },
    GoType.TOOL: {
        "Type": FieldInfo("type", GoType.STRING, "''"),
        "Items": FieldInfo("items", GoType.ANY, maybe_missing=True),
        "Function": FieldInfo("function", GoType.TOOL_FUNCTION),
    },
    GoType.TOOL_FUNCTION: {
        "Name": FieldInfo("name", GoType.STRING, "''"),
        "Description": FieldInfo("description", GoType.STRING, "''"),
        "Parameters": FieldInfo("parameters", GoType.PARAMETERS, "{}"),
    },
    GoType.PARAMETERS: {
        "Type": FieldInfo("type", GoType.STRING, "''"),
        "Defs": FieldInfo("$defs", GoType.ANY, maybe_missing=True),
        "Items": FieldInfo("items", GoType.ANY, maybe_missing=True),
        "Required": FieldInfo("required", GoType.STRINGS, maybe_missing=True),
        "Properties": FieldInfo("properties", GoType.PROPERTIES, maybe_missing=True),
    },
    GoType.PROPERTY: {
        "Type": FieldInfo("type", GoType.PROPERTY_TYPE, maybe_missing=True),
        "Items": FieldInfo("items", GoType.ANY, maybe_missing=True),
        "Description": FieldInfo("description", GoType.STRING, "''"),
        "Enum": FieldInfo("enum", GoType.ANYS, maybe_missing=True),
        "Required": FieldInfo("required", GoType.STRINGS, maybe_missing=True),
        "AnyOf": FieldInfo("anyOf", GoType.PROPERTY_LIST, maybe_missing=True),
    },
}

#: Go fields that exist but that the translator does not model (a TranslationError, not a raise).
UNMODELLED_FIELDS: dict[GoType, set[str]] = {
    GoType.PROPERTY: {"Properties"},
}
