"""Requests as Ollama decodes them: an `/api/chat` body read into the contract's conversation.

Ollama's server decodes the body with Go's `encoding/json` into `api.ChatRequest`: a key
matches a field whatever its case, unknown keys are ignored, and `null` leaves a field at its
zero value (`"content": null` is ""). Clients send the whole body (`model`, `stream`,
`options`, `keep_alive`, …), so a conversation file is read the same way: the keys that reach
the template are taken under the contract's spelling, the others are set aside and named, so
that both sides of a check start from what Ollama's template sees. Go itself has the last word:
`checked_by_go` asks the reference renderer whether the reading decodes, in every part the
template can see, to what the body decodes to.

May depend on: `errors`, `ollama.reference`, `verify.conversation`.
"""

from __future__ import annotations

import json
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gotmpl2jinja.ollama.reference import shared_renderer
from gotmpl2jinja.verify.conversation import ConversationError

#: api.ChatRequest's fields that cannot reach the template (decoded, so Go refuses bad ones).
OLLAMA_ONLY_KEYS = ("model", "stream", "format", "keep_alive", "options", "truncate", "shift",
                    "_debug_render_only", "logprobs", "top_logprobs")

#: Beyond ASCII, the runes Go's key folding (ToUpper of ToLower, rune by rune) turns into a
#: letter of a field name: the Kelvin sign, the long s, and the dotted and dotless i.
_GO_FOLDS = {"\u212a": "K", "\u017f": "S", "\u0130": "I", "\u0131": "I"}

# Each Go struct the body decodes into, as {canonical key: kind}. Kinds: "string", "int",
# "list:<struct>" (a slice of structs), "struct:<name>", "map:<struct>" (property maps),
# "free" (any JSON, kept as is), "strings", "think", "images", "arguments", "ptype".
_STRUCTS: dict[str, dict[str, str]] = {
    "request": {"messages": "list:message", "tools": "list:tool", "think": "think",
                "prompt": "string", "suffix": "string"},
    "message": {"role": "string", "content": "string", "thinking": "string",
                "images": "images", "tool_calls": "list:call", "tool_name": "string",
                "tool_call_id": "string"},
    "call": {"id": "string", "function": "struct:call_function"},
    "call_function": {"index": "int", "name": "string", "arguments": "arguments"},
    "tool": {"type": "string", "items": "free", "function": "struct:function"},
    "function": {"name": "string", "description": "string", "parameters": "struct:parameters"},
    "parameters": {"type": "string", "$defs": "free", "items": "free", "required": "strings",
                   "properties": "map:property"},
    "property": {"anyOf": "list:property", "type": "ptype", "items": "free",
                 "description": "string", "enum": "free", "properties": "map:property",
                 "required": "strings"},
}

#: Keys the contract adds for a Jinja host (Go never sees them): taken as spelled only.
_HOST_KEYS = ("add_generation_prompt", "continue_final_message")
#: A tool call's `type` is OpenAI's (`"function"`): the contract keeps it, Go ignores it.
_CONTRACT_KEYS = {"request": _HOST_KEYS, "call": ("type",)}

#: Kinds whose `null` Go decodes to exactly what an absent key gives (so it is dropped): a
#: string's, a slice's, a struct's, a pointer's and an interface's zero value. A property's
#: `type` (api.PropertyType's UnmarshalJSON makes null [""]) and tool-call `arguments` are
#: kept as null for the contract's check to refuse.
_NULL_IS_ABSENT = ("string", "int", "list", "struct", "map", "free", "strings", "think",
                   "images")


def go_fold(key: str) -> str:
    """A key as Go's encoding/json compares it with a field name (case-insensitively)."""
    return "".join(_GO_FOLDS.get(c, c.upper() if c.isascii() else c) for c in key)


@dataclass(frozen=True)
class ChatRequest:
    """A request body read as Ollama reads it: `conversation` is the contract's conversation
    (what the template can see, under the documented keys), `ignored` the JSON paths of the
    keys that cannot reach the template, `text` the body as sent (Go decodes it itself)."""

    conversation: dict[str, Any]
    ignored: tuple[str, ...]
    text: str

    def note(self) -> str | None:
        """One line naming the ignored keys, or None."""
        if not self.ignored:
            return None
        return ("note: ignored what cannot reach the template (Ollama's server reads it, "
                f"the template never sees it): {', '.join(self.ignored)}")


class _Object(dict[str, Any]):
    """A JSON object that remembers the keys it was given more than once."""

    repeated: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, Any]]) -> _Object:
    out = _Object(pairs)
    if len(out) != len(pairs):
        counts: dict[str, int] = {}
        for key, _ in pairs:
            counts[key] = counts.get(key, 0) + 1
        out.repeated = tuple(k for k, n in counts.items() if n > 1)
    return out


#: What `_read_value` gives for a key to leave out.
_OMIT = object()


def _plain(value: Any) -> Any:
    """Free JSON as plain dicts and lists (each object's keys in first-seen order)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _path(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _read_struct(obj: dict[str, Any], struct: str, where: str, ignored: list[str]
                 ) -> dict[str, Any]:
    """One JSON object decoded into a Go struct: keys matched by Go's fold, unknown keys set
    aside, each value read by its field's kind."""
    fields = _STRUCTS[struct]
    by_fold = {go_fold(name): name for name in fields}
    contract = _CONTRACT_KEYS.get(struct, ())
    repeated = getattr(obj, "repeated", ())
    if repeated:
        raise ConversationError(f"{where or 'top level'}: key {repeated[0]!r} is given more "
                                "than once (Go's decoder and a reader of the JSON keep "
                                "different values): give it once")
    out: dict[str, Any] = {}
    taken: dict[str, str] = {}
    for key, value in obj.items():
        if not isinstance(key, str):
            raise ConversationError(f"{where or 'top level'}: object key {key!r} is not a string")
        name = by_fold.get(go_fold(key))
        if name is None and key in contract:
            out[key] = _plain(value)
            continue
        if name is None:
            ignored.append(_path(where, key))
            continue
        if name in taken:
            raise ConversationError(
                f"{where or 'top level'}: keys {taken[name]!r} and {key!r} are one field to "
                "Ollama's decoder (it matches keys case-insensitively): give it once")
        taken[name] = key
        kind = fields[name]
        if value is None and kind.split(":")[0] in _NULL_IS_ABSENT:
            if name in ("role", "content") and struct == "message":
                out[name] = ""  # (Go's zero value; the contract's messages carry both)
            continue
        read = _read_value(value, kind, _path(where, name), ignored)
        if read is not _OMIT:
            out[name] = read
    return out


def _read_value(value: Any, kind: str, where: str, ignored: list[str]) -> Any:
    """A field's value as the contract spells it (_OMIT: leave the key out); a value of the
    wrong JSON type is kept for the contract's check (or Go) to refuse."""
    base, _, struct = kind.partition(":")
    if base == "struct" and isinstance(value, dict):
        return _read_struct(value, struct, where, ignored)
    if base == "list" and isinstance(value, list):
        return [_read_struct(item, struct, f"{where}[{i}]", ignored)
                if isinstance(item, dict) else _plain(item) for i, item in enumerate(value)]
    if base == "map" and isinstance(value, dict):
        # (a property named twice keeps its first place and its last value, in Go's ordered
        # map as in a JSON reader's dict)
        return {k: _read_struct(v, struct, f"{where}[{json.dumps(k)}]", ignored)
                if isinstance(v, dict) else _plain(v) for k, v in value.items()}
    if base == "images" and isinstance(value, list) and not value:
        ignored.append(where)  # no image: nothing reaches the template
        return _OMIT
    return _plain(value)


def chat_request(body: Any, text: str | None = None) -> ChatRequest:
    """The reading of a decoded request body (`json.loads` of it; `text` is the body as
    sent, else its JSON)."""
    if not isinstance(body, dict):
        raise ConversationError("a request must be a JSON object")
    ignored: list[str] = []
    conversation = _read_struct(body, "request", "", ignored)
    return ChatRequest(conversation, tuple(ignored),
                       text if text is not None else json.dumps(body, ensure_ascii=False))


def read_chat_request(text: str, name: str = "conversation") -> ChatRequest:
    """A request body's JSON text read as Ollama's server reads it (see the module)."""
    try:
        body = json.loads(text, object_pairs_hook=_object)
    except json.JSONDecodeError as exc:
        raise ConversationError(f"not valid JSON: {exc.msg}", name=name, line=exc.lineno,
                                col=exc.colno) from None  # (printed FILE:LINE:COL: …)
    except RecursionError:
        raise ConversationError(f"{name}: the JSON nests too deeply") from None
    except ValueError as exc:  # (Python's int limit: Go would read the digits where it skips)
        raise ConversationError(f"{name}: a number this tool cannot read ({exc})") from None
    try:
        return chat_request(body, text)
    except ConversationError as exc:
        raise ConversationError(f"{name}: {exc}") from None


def read_chat_request_file(path: str) -> ChatRequest:
    """`read_chat_request` of a file (`-` for standard input), which must be UTF-8."""
    name = "<stdin>" if path == "-" else path
    raw = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConversationError(f"{name}: not UTF-8 ({exc.reason})") from None
    return read_chat_request(text, name)


def checked_by_go(request: ChatRequest) -> ChatRequest:
    """`request`, once Go has decoded its body and its reading alike where the template can
    see (else ConversationError: a reading that is not Go's is never used)."""
    differs = shared_renderer().same_request(request.text, request.conversation)
    if differs:
        raise ConversationError(
            f"conversation: Ollama decodes this request's {differs} otherwise than it is read "
            "here: not used (please report it)")
    return request


# --- the generator's requests as clients send them ------------------------------------------


class SentAs(dict[str, Any]):
    """A conversation (the reading, which the Jinja side gets) that remembers the body it was
    read from (`body`, which the Go side decodes, as Ollama's server would)."""

    body: dict[str, Any]


#: What clients add that cannot reach the template (an /api/chat body as Ollama's docs give it).
_CLIENT_KEYS = {"model": "qwen3:8b", "stream": False, "options": {"temperature": 0},
                "keep_alive": "5m"}


def _recased(key: str, variant: int) -> str:
    return (key.capitalize(), key.upper(), key)[variant % 3]


def _as_body(value: Any, struct: str, variant: int) -> Any:
    """`value` (of the documented shape) as a client might send it: some keys in another case,
    an empty or absent content as null, unknown and client-only keys added."""
    if not isinstance(value, dict):
        return value
    fields = _STRUCTS[struct]
    out: dict[str, Any] = {}
    for i, (key, item) in enumerate(value.items()):
        kind = fields.get(key)
        if kind is None:  # a host flag or a call's `type`: as spelled
            out[key] = item
            continue
        base, _, inner = kind.partition(":")
        if base == "struct":
            item = _as_body(item, inner, variant + i)
        elif base == "list" and isinstance(item, list):
            item = [_as_body(x, inner, variant + i + j) for j, x in enumerate(item)]
        if key == "content" and item == "" and variant % 2:
            item = None
        out[_recased(key, variant + i)] = item
    if struct == "message":
        if "content" not in value and variant % 2:
            out["Content"] = None  # (Go's zero value, as absent)
        # (no "images": [] — Go keeps it as an empty list, which `json` of a message prints as
        # `[]` where the reading, which has no images, prints `null`)
        out["x_unknown"] = variant
    if struct == "request":
        out.update(_CLIENT_KEYS)
    return out


def sent_now_and_then(conv: dict[str, Any]) -> dict[str, Any]:
    """`conv` itself, or one time in eight (by its content: the draw's choices stay as they
    were) a SentAs: the body a client would send for it (keys in other cases, `null` for an
    empty content, the keys Ollama ignores) and, as its items, the reading of that body. The Go
    side renders the body, the Jinja side the reading: both see what the hosts get."""
    digest = zlib.crc32(json.dumps(conv, sort_keys=True, ensure_ascii=False).encode("utf-8",
                                                                                  "surrogatepass"))
    if digest % 8:
        return conv
    body = _as_body(conv, "request", digest >> 3)
    sent = SentAs(chat_request(body).conversation)
    sent.body = body
    return sent
