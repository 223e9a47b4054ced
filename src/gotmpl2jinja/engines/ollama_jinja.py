"""The `ollama-jinja` context: the prompt Ollama itself gets when it runs a model's Jinja.

Since v0.30 Ollama (fb30760 read) serves a GGUF chat model whose Jinja it prefers (no Go
TEMPLATE, or `PreferChatTemplate`, unless OLLAMA_GO_TEMPLATE says otherwise) through
llama-server's own chat code: ChatHandler's native branch converts the /api/chat request into
an OpenAI-style /v1/chat/completions body (its llama-server client), and llama-server renders
the prompt. So this context is two real steps:

1. Ollama's conversion, done by Go in the reference renderer (`llamaserver.go`, op
   `llama_server_body`): messages without their thinking, tool calls with Ollama's shapes and
   Go's JSON of the arguments, tools as Go marshals api.Tools, `chat_template_kwargs` with
   `enable_thinking` and `reasoning_effort`. Before it, what ChatHandler decides from the
   capabilities Ollama reads in the Jinja's text (`jinja_thinks`, `jinja_has_tools`): an
   absent think is true on a template that can think; think or tools on one that cannot is
   Ollama's 400 (no prompt).
2. llama-server's request parsing and chat-template code: the `llamacpp` driver in its server
   mode, with the options Ollama starts llama-server with (none that changes a prompt: no
   `--chat-template-kwargs`, `--reasoning-format` or `--no-prefill-assistant`; `--jinja` is
   llama-server's default), i.e. exactly `llamacpp-server`'s defaults.

The kinds of conversation on which Ollama's own conversion makes the Go path's bytes impossible
are out of scope here (`scope`), named and counted like llama-server's kinds, which apply too.

May depend on: engines.base, engines.cpp_engines, errors, ollama.reference.
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from gotmpl2jinja.engines.base import RuntimeRefused
from gotmpl2jinja.engines.cpp_engines import CppEngine, first_message_line
from gotmpl2jinja.errors import Gotmpl2JinjaError, RenderError

#: Ollama's conversion leaves out every message's thinking; where the Jinja reads it
#: (`reasoning_content`), no template can print the thinking Ollama's Go path prints.
THINKING_DROPPED = "thinking dropped (Ollama passes no message's thinking to llama-server)"
#: think (true or a level) on a model whose Jinja Ollama finds no thinking in: its 400.
THINK_REFUSED = "think refused (Ollama reads no <think>…</think> in the Jinja: 400)"
#: tools on a model whose Jinja Ollama finds no tool support in: its 400.
TOOLS_REFUSED = "tools refused (Ollama reads no `tools` or `tool_call` in the Jinja: 400)"

#: Ollama sends a tool call without arguments as `"arguments": "{}"`; where the Jinja prints a
#: call's arguments as JSON (Go's `json` of them is `null` then), no template can tell.
NO_ARGUMENTS = "tool call without arguments (Ollama sends {}; the Go path's json prints null)"

#: Ollama sends a call's arguments as the JSON text Go marshals, where a float64 -0 is `-0`,
#: which llama-server's JSON reader takes for the integer 0: where the Jinja reads a call's
#: arguments, no template can print the `-0` Ollama's Go path prints.
NEGATIVE_ZERO = "tool-call argument -0 (Ollama sends -0, which llama-server reads as the integer 0)"

#: Ollama's own kinds, in the order `ollama_scope` checks them (llama-server's come after).
OLLAMA_OUT_OF_SCOPE = (THINK_REFUSED, TOOLS_REFUSED, THINKING_DROPPED, NO_ARGUMENTS,
                       NEGATIVE_ZERO)

#: The runtime macros through which a translation prints a tool call's arguments as JSON (and
#: so `null` for absent ones, as Go's `json` does).
_JSON_OF_ARGUMENTS = ("json_arguments", "json_tool_call", "json_message")


def jinja_thinks(template: str) -> bool:
    """Ollama's thinking capability of a chat template (server/images.go at fb30760): both
    `<think>` and `</think>` in its text, or a split of the content at `</think>` in a template
    that has no `reasoning_content` (nor `<SPECIAL_12>`)."""
    if "<think>" in template and "</think>" in template:
        return True
    splits = "content.split('</think>')" in template or 'content.split("</think>")' in template
    return splits and "reasoning_content" not in template and "<SPECIAL_12>" not in template


def jinja_has_tools(template: str) -> bool:
    """Ollama's tools capability of a chat template: `tools` or `tool_call` in its text."""
    return "tools" in template or "tool_call" in template


def _thinks_on(conv: dict[str, Any]) -> bool:
    think = conv.get("think")
    return think is True or isinstance(think, str)


def ollama_scope(conv: dict[str, Any], template: str) -> str | None:
    """The first of OLLAMA_OUT_OF_SCOPE that `conv` (a contract conversation) is of with the
    Jinja `template` on Ollama's Jinja path, or None."""
    if _thinks_on(conv) and not jinja_thinks(template):
        return THINK_REFUSED
    if conv.get("tools") and not jinja_has_tools(template):
        return TOOLS_REFUSED
    if "reasoning_content" in template and any(
            m.get("thinking") for m in conv.get("messages", [])):
        return THINKING_DROPPED
    if any(name in template for name in _JSON_OF_ARGUMENTS) and any(
            "arguments" not in call.get("function", {})
            for m in conv.get("messages", []) for call in m.get("tool_calls", [])):
        return NO_ARGUMENTS
    if "arguments" in template and any(
            _negative_zero(call.get("function", {}).get("arguments"))
            for m in conv.get("messages", []) for call in m.get("tool_calls", [])):
        return NEGATIVE_ZERO
    return None


def _negative_zero(value: Any) -> bool:
    """A float -0 anywhere in a JSON value."""
    if isinstance(value, float):
        return value == 0 and math.copysign(1.0, value) < 0
    if isinstance(value, dict):
        return any(_negative_zero(v) for v in value.values())
    if isinstance(value, list):
        return any(_negative_zero(v) for v in value)
    return False


def ollama_request(context: dict[str, Any]) -> dict[str, Any]:
    """The /api/chat request a contract context stands for (the inverse of the contract's
    `jinja_context`): `reasoning_content` is the thinking, `name` the tool name, and think is
    read back from `enable_thinking` and `reasoning_effort`."""
    messages = []
    for message in context.get("messages", []):
        out: dict[str, Any] = {"role": message["role"], "content": message.get("content", "")}
        if "reasoning_content" in message:
            out["thinking"] = message["reasoning_content"]
        if "tool_calls" in message:
            out["tool_calls"] = [
                {**({"id": call["id"]} if "id" in call else {}),
                 "function": {key: call["function"][key] for key in ("index", "name", "arguments")
                              if key in call["function"]}}
                for call in message["tool_calls"]]
        if "name" in message:
            out["tool_name"] = message["name"]
        if "tool_call_id" in message:
            out["tool_call_id"] = message["tool_call_id"]
        messages.append(out)
    request: dict[str, Any] = {"messages": messages}
    if "tools" in context:
        request["tools"] = context["tools"]
    if "enable_thinking" in context:
        request["think"] = (context.get("reasoning_effort", True) if context["enable_thinking"]
                            else False)
    return request


class OllamaJinjaEngine(CppEngine):
    """llama-server's chat code (the `llamacpp` driver) given the body Ollama builds."""

    #: Ollama sends no message's thinking (so llama.cpp's gpt-oss handler erases no content)
    sends_thinking = False

    def __init__(self, now: dt.datetime | None = None) -> None:
        super().__init__("llamacpp", server=True, now=now)
        self.name = "ollama-jinja"

    def scope(self, conv: dict[str, Any], template: str) -> str | None:
        """No chat at all, or a template llama-server will not load, first; then Ollama's own
        kinds (its conversion happens before llama-server sees the request); then
        llama-server's."""
        kind = super().scope(conv, template)
        if kind in ("fill-in-the-middle", "no messages") or \
                (kind or "").startswith("llama-server refuses the template"):
            return kind
        return ollama_scope(conv, template) or kind

    def _failure(self, template: str, item: dict[str, Any]) -> RenderError:
        """llama-server's failure to build the output parser for one request is its refusal of
        that request (a 400): Ollama sends a tool without properties as `"properties": null`,
        which its JSON-schema conversion refuses."""
        error = super()._failure(template, item)
        message = str(item.get("error", ""))
        if type(error) is RenderError and "JSON schema error" in message:
            why = first_message_line(message).rsplit(": ", 1)[-1]
            return RuntimeRefused(first_message_line(message),
                                  f"llama-server refuses the request (JSON schema: {why})")
        return error

    def request_bodies(self, template: str, contexts: list[dict[str, Any]]
                       ) -> list[dict[str, Any]]:
        return contexts  # already Ollama's bodies: render_many built them

    def ollama_bodies(self, template: str, contexts: list[dict[str, Any]]
                      ) -> list[dict[str, Any] | RenderError]:
        """Ollama's body for each context, or why Ollama renders no prompt for it."""
        from gotmpl2jinja.ollama import reference  # deferred: starts Go only when used

        bodies: list[dict[str, Any] | RenderError | None] = []
        requests = []
        for context in contexts:
            request = ollama_request(context)
            if "prompt" in context or "suffix" in context:
                bodies.append(RenderError("fill-in-the-middle: Ollama renders its Go template's "
                                          "suffix path, not the Jinja"))
                continue
            if _thinks_on(request) and not jinja_thinks(template):
                bodies.append(RuntimeRefused("Ollama answers 400: the model does not support "
                                             "thinking", THINK_REFUSED))
                continue
            if request.get("tools") and not jinja_has_tools(template):
                bodies.append(RuntimeRefused("Ollama answers 400: the model does not support "
                                             "tools", TOOLS_REFUSED))
                continue
            if "think" not in request and jinja_thinks(template):
                request["think"] = True  # ChatHandler: a thinking model thinks unless told
            bodies.append(None)
            requests.append(request)
        try:
            built = iter(reference.llama_server_bodies(requests))
        except Gotmpl2JinjaError as exc:
            error = RenderError(f"{self.name}: Ollama's request conversion failed: {exc}")
            return [error if body is None else body for body in bodies]
        return [next(built) if body is None else body for body in bodies]

    def render_many(self, template: str, contexts: list[dict[str, Any]], *,
                    now: dt.datetime | None = None) -> list[str | RenderError]:
        """Ollama's bodies rendered by llama-server's chat code; a context Ollama renders no
        prompt for is its RenderError (a RuntimeRefused for Ollama's 400)."""
        bodies = self.ollama_bodies(template, contexts)
        sendable = [body for body in bodies if not isinstance(body, RenderError)]
        rendered = iter(super().render_many(template, sendable, now=now) if sendable else [])
        return [body if isinstance(body, RenderError) else next(rendered) for body in bodies]
