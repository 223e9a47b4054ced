"""The C++ engines in the harness: llama.cpp's `common/jinja` and minja, each in two contexts.

- `llamacpp`, `minja` — the **raw** context: exactly the contract's Jinja variables
  (`conversation.jinja_context`), handed to the engine the way llama.cpp hands its variables to
  it (`global_from_json`; minja's `chat_template::apply` with polyfills off). This checks the
  engine itself.
- `llamacpp-server`, `minja-server` — the **server** context: the OpenAI-style
  `/v1/chat/completions` body that corresponds to the conversation (`openai_body`), turned into
  a prompt by llama-server's own request parsing and chat-template code
  (`oaicompat_chat_params_parse` → `common_chat_templates_apply`), compiled in from the same
  sources with llama-server's defaults. What a llama-server user gets.

Each engine is one long-lived driver process (`cpp/*_driver.cpp`, built by `cpp.build`), spoken
to in JSON lines, a whole batch per request; it is restarted after a crash or a timeout. The
clock is pinned through the request (`now`), TZ is UTC, as for the other engines.

May depend on: errors, engines.base, lifetime, engines.cpp.build (never on the registry in
`engines`).
"""

from __future__ import annotations

import atexit
import datetime as dt
import json
import os
import re
import select
import subprocess
import threading
from typing import Any

from gotmpl2jinja.engines.base import (
    DEFAULT_NOW,
    EngineError,
    RuntimeRefused,
    TemplateRaised,
    render_timeout,
    source_key,
    timed_out,
)
from gotmpl2jinja.engines.cpp import build
from gotmpl2jinja.errors import RenderError
from gotmpl2jinja.lifetime import StderrTail, popen_tied, stop

#: glibc's allocator for the drivers: a larger per-thread cache of freed blocks. llama.cpp's
#: engine allocates and frees a value, a map node or a string for nearly every step (a third
#: of its time is malloc and free); this makes about 15% less CPU per render and changes
#: nothing else (a user's own GLIBC_TUNABLES wins; other C libraries ignore it).
MALLOC_TUNING = "glibc.malloc.tcache_count=1000"

_RAISE_CALL = re.compile(r"""raise_exception\(\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)")""")


def openai_body(context: dict[str, Any]) -> dict[str, Any]:
    """The /v1/chat/completions body an OpenAI-style client sends for a contract context.

    Messages keep their fields (`reasoning_content`, `tool_calls`, `name`, `tool_call_id`); a
    tool call's `arguments` becomes the JSON string the API carries (`json.dumps`, which
    round-trips every value) and its `index` is left out (the API has none); `tools` as given;
    thinking as llama-server takes it: `chat_template_kwargs.enable_thinking` and
    `reasoning_effort`; the host's `bos_token`/`eos_token` when the context has them. The
    generation prompt is not sent: the server decides it (a trailing assistant message is a
    prefill).
    """
    messages = []
    for message in context.get("messages", []):
        out = {k: v for k, v in message.items() if k != "tool_calls"}
        if "tool_calls" in message:
            calls = []
            for call in message["tool_calls"]:
                function = {"name": call["function"].get("name", "")}
                if "arguments" in call["function"]:
                    function["arguments"] = json.dumps(call["function"]["arguments"])
                item: dict[str, Any] = {"type": "function", "function": function}
                if "id" in call:
                    item["id"] = call["id"]
                calls.append(item)
            out["tool_calls"] = calls
        messages.append(out)
    body: dict[str, Any] = {"messages": messages}
    if "tools" in context:
        body["tools"] = context["tools"]
    kwargs = {key: context[key] for key in ("enable_thinking", "bos_token", "eos_token")
              if key in context}
    if kwargs:
        # bos_token/eos_token: the model's, which llama-server takes from its vocabulary; with
        # no model loaded here they reach the template as kwargs, which both eras of
        # llama-server set over their own (the strip of a leading BOS is verify.tokens')
        body["chat_template_kwargs"] = kwargs
    if "reasoning_effort" in context:
        body["reasoning_effort"] = context["reasoning_effort"]
    return body


#: The kinds of conversation on which llama-server reshapes the request before any template
#: sees it, so that no template can render Ollama's prompt (docs/equivalence-contract.md,
#: "On llama-server"): checked in this order, the first that applies names the case.
SERVER_OUT_OF_SCOPE = (
    "fill-in-the-middle",  # not a chat request: /infill does not use the chat template
    "no messages",         # Ollama only loads the model for an empty chat; no prompt either
    "developer role",      # llama-server renames it `system`; Ollama keeps `developer`
    "prefill",             # a trailing assistant message: rendered without it, then appended
    "empty tool list",     # `tools: []` is dropped; Ollama's template sees an empty list
    "tool-call index",     # never passed on; Ollama prints the index it was given
    "tool-level items",    # a tool's own `items` is dropped; Ollama's api.Tool keeps and prints it
)


#: minja-era llama-server also passes no reasoning_effort to the template, and rewrites tools,
#: tool calls and tool messages through minja's polyfills wherever its probe finds the template
#: lacking (and fails on some such requests): tool use there is outside the contract.
MINJA_SERVER_OUT_OF_SCOPE = ("thinking control (minja era)", "tool use (minja-era polyfills)")

#: Where the runtime's capability probe finds no system role, llama-server merges a system
#: message into the next one (llama.cpp) or polyfills it (minja): a template that leaves system
#: messages out (as Ollama's does for these models) cannot be rendered as Ollama renders it.
NO_SYSTEM_ROLE = "system message (the runtime's probe finds no system role)"

#: Where llama.cpp's probe does not see the template print a tool call's argument value (a
#: template that prints tool calls only of some messages, say), llama-server passes every
#: tool call's `arguments` on as the request's JSON string, which no Jinja can parse back
#: into the map Ollama's template prints.
STRING_ARGUMENTS = "tool-call arguments as a string (the runtime's probe sees no object arguments)"

#: llama.cpp's gpt-oss handler (a template holding `<|channel|>`) copies `reasoning_content` to
#: `thinking` and erases the `content` of a message that also has tool calls, before the
#: template runs: Ollama's template sees that content and prints it.
GPT_OSS_CONTENT = ("content beside thinking and tool calls (llama-server's gpt-oss handler "
                   "erases it)")

#: How llama-server answers 400 to a request it cannot parse or convert (before any template
#: runs): such a case is the runtime refusing the request, a kind of its own.
_REFUSED_REQUEST = ("Failed to parse tools", "JSON schema conversion failed",
                    "Failed to parse messages", "Cannot have 2 or more assistant messages",
                    "Cannot continue an assistant message", "Assistant message must contain",
                    "All non-assistant messages must contain", "Expected 'content'")


#: The message with which llama-server refuses to load a template (its tool-call parser
#: generator renders the template and fails on what it prints): no request can be served.
_REFUSED_TEMPLATE = "Unable to generate parser for this template"


def server_scope(conv: dict[str, Any], *, minja: bool = False, system_role: bool = True,
                 object_arguments: bool = True, gpt_oss: bool = False) -> str | None:
    """The first kind of SERVER_OUT_OF_SCOPE (and, for minja's era, MINJA_SERVER_OUT_OF_SCOPE,
    NO_SYSTEM_ROLE or STRING_ARGUMENTS where the probe says so, GPT_OSS_CONTENT where llama.cpp
    takes the template for gpt-oss's) that `conv` (a contract conversation) is of."""
    if "prompt" in conv or "suffix" in conv:
        return "fill-in-the-middle"
    messages = conv.get("messages", [])
    if not messages:
        return "no messages"
    if any(str(m.get("role", "")).lower() == "developer" for m in messages):
        return "developer role"
    if messages and str(messages[-1].get("role", "")).lower() == "assistant":
        return "prefill"
    if conv.get("tools") == []:
        return "empty tool list"
    if any("index" in c.get("function", {}) for m in messages for c in m.get("tool_calls", [])):
        return "tool-call index"
    if any("items" in tool for tool in conv.get("tools") or []):
        return "tool-level items"
    if not system_role and any(str(m.get("role", "")).lower() == "system" for m in messages):
        return NO_SYSTEM_ROLE
    if gpt_oss and any("thinking" in m and m.get("tool_calls") for m in messages):
        return GPT_OSS_CONTENT
    if minja and "think" in conv:
        return "thinking control (minja era)"
    if minja and (conv.get("tools") or any(m.get("tool_calls") or m.get("role") == "tool"
                                           for m in messages)):
        return "tool use (minja-era polyfills)"
    if not object_arguments and any(m.get("tool_calls") for m in messages):
        return STRING_ARGUMENTS  # (last: it must not take cases from the kinds above)
    return None


class CppEngine:
    """One C++ engine in one context, through its driver process."""

    #: it renders in a process of its own: the harness may wait on it from a worker thread
    out_of_process = True
    #: the request may carry thinking (`reasoning_content`), which llama.cpp's gpt-oss handler
    #: acts on (GPT_OSS_CONTENT); Ollama's own request never does
    sends_thinking = True

    def __init__(self, engine: str, *, server: bool, now: dt.datetime | None = None) -> None:
        self.engine = engine
        self.server = server
        self.name = f"{engine}-server" if server else engine
        self.now = now or DEFAULT_NOW
        path = build.driver_path(engine)
        if path is None:
            raise EngineError(f"the {self.name} engine is {build.state(engine)}")
        self._path = path
        self._proc: subprocess.Popen[str] | None = None
        self._stderr: StderrTail
        self._lock = threading.Lock()
        self._sent: set[str] = set()
        self._refused: dict[str, str] = {}  # template key -> why llama-server will not load it
        self._caps: dict[str, dict[str, Any]] = {}
        self._next_id = 0
        atexit.register(self.close)

    def scope(self, conv: dict[str, Any], template: str) -> str | None:
        """Out-of-scope kind of `conv` in this context (the raw context has none); every
        conversation is, for a template the server refuses to load."""
        if not self.server:
            return None
        refused = self._refused.get(source_key(template))
        if refused is not None:
            return f"llama-server refuses the template ({refused})"
        caps = self.caps(template)
        object_arguments = caps.get("supports_object_arguments",
                                    caps.get("requires_object_arguments", True))
        return server_scope(conv, minja=self.engine == "minja",
                            system_role=bool(caps.get("supports_system_role", True)),
                            object_arguments=bool(object_arguments),
                            gpt_oss=(self.sends_thinking and self.engine == "llamacpp"
                                     and "<|channel|>" in template))

    def caps(self, template: str) -> dict[str, Any]:
        """What the runtime's capability probe finds `template` supports (cached)."""
        key = source_key(template)
        if key not in self._caps:
            with self._lock:
                self._next_id += 1
                response = self._exchange({"id": self._next_id, "key": key, "mode": "caps",
                                           "template": template})
            self._caps[key] = dict(response.get("caps", {}))
        return self._caps[key]

    # -- process ------------------------------------------------------------------------------

    def _start(self) -> subprocess.Popen[str]:
        if self._proc is None or self._proc.poll() is not None:
            self._sent.clear()
            env = dict(os.environ, TZ="UTC")
            env.setdefault("GLIBC_TUNABLES", MALLOC_TUNING)
            self._proc = popen_tied(
                [str(self._path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="surrogateescape",
                env=env, bufsize=1,
            )
            self._stderr = StderrTail(self._proc)
        return self._proc

    def close(self) -> None:
        """Stop the driver (also done at interpreter exit)."""
        stop(self._proc)
        self._proc = None

    def _kill(self, why: str) -> RenderError:
        proc = self._proc
        tail = ""
        if proc is not None:
            proc.kill()
            proc.wait()
            tail = self._stderr.text()[-500:]
        self._proc = None
        return RenderError(f"{self.name}: {why}" + (f": {tail}" if tail else ""))

    def _exchange(self, request: dict[str, Any], limit: float | None = None) -> dict[str, Any]:
        """One request and its answer; past the time limit (per render, times the batch, unless
        `limit` says) the driver is killed and EngineTimeout raised (the next request starts a
        new one)."""
        if limit is None:
            limit = render_timeout() * max(1, len(request.get("contexts", ())))
        proc = self._start()
        try:
            proc.stdin.write(json.dumps(request, ensure_ascii=False) + "\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            ready, _, _ = select.select([proc.stdout], [], [], limit)
            if not ready:
                self._kill("timed out")
                raise timed_out(self.name, limit)
            line = proc.stdout.readline()  # type: ignore[union-attr]
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            raise self._kill("the driver process died")
        response: dict[str, Any] = json.loads(line)
        if response.get("id") != request["id"]:
            raise self._kill("the driver answered out of order")
        return response

    # -- rendering ----------------------------------------------------------------------------

    def _failure(self, template: str, item: dict[str, Any]) -> RenderError:
        message = str(item.get("error", "unknown error"))
        raised = item.get("raised")
        if raised is None:  # minja: its raise_exception carries only the template's message,
            # followed by where it was raised
            said = [_unescape(single or double) for single, double in _RAISE_CALL.findall(template)]
            said = [text for text in said if message.startswith(text)]
            if said:
                return TemplateRaised(max(said, key=len))
        if raised:
            return TemplateRaised(message)
        if self.server and message.startswith(_REFUSED_REQUEST):
            line = first_message_line(message)
            return RuntimeRefused(line, f"llama-server refuses the request ({line.split(':')[0]})")
        return RenderError(f"{self.name}: {first_message_line(message)}")

    def request_bodies(self, template: str, contexts: list[dict[str, Any]]
                       ) -> list[dict[str, Any]]:
        """The request the server context sends for each context: an OpenAI-style client's
        body (the `ollama-jinja` context sends Ollama's own instead)."""
        return [openai_body(c) for c in contexts]

    def render_many(self, template: str, contexts: list[dict[str, Any]], *,
                    now: dt.datetime | None = None) -> list[str | RenderError]:
        """Render a batch: each item is the output, or the failure of that context alone."""
        if not contexts:
            return []
        when = now or self.now
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.timezone.utc)
        key = source_key(template)
        payload = self.request_bodies(template, contexts) if self.server else contexts
        with self._lock:
            self._next_id += 1
            request: dict[str, Any] = {
                "id": self._next_id, "key": key, "mode": "server" if self.server else "raw",
                "now": when.timestamp(), "contexts": payload,
            }
            if key not in self._sent:
                request["template"] = template
            response = self._exchange(request)
            if response.get("unknown"):  # the driver was restarted: send the source again
                request["template"] = template
                response = self._exchange(request)
            if "results" not in response:
                why = first_message_line(str(response.get("error", "")))
                if self.server and why.startswith(_REFUSED_TEMPLATE):
                    self._refused[key] = why.split(". ", 1)[0]
                elif self.server and why.startswith("Jinja Exception: "):
                    # its capability probes render the template: one that raises on them
                    # (Ollama's own would fail those requests too) is not loaded at all
                    self._refused[key] = "the template raises on its capability probes"
                error = RenderError(f"template does not compile on {self.name}: {why}")
                return [error] * len(contexts)
            self._sent.add(key)
        results = response["results"]
        if len(results) != len(contexts):
            raise RenderError(f"{self.name} driver answered a short batch")
        return [str(r["output"]) if r.get("ok") else self._failure(template, r) for r in results]

    def render(self, template: str, context: dict[str, Any], *,
               now: dt.datetime | None = None) -> str:
        """Render one context; raise RenderError / TemplateRaised on failure."""
        result = self.render_many(template, [context], now=now)[0]
        if isinstance(result, RenderError):
            raise result
        return result


def first_message_line(message: str) -> str:
    """The line of an engine's error that says what went wrong (llama.cpp frames it with the
    source excerpt: its `Error: …` line is the message)."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip("- ")]
    for line in lines:
        if line.startswith("Error: "):
            return line[len("Error: "):]
    return lines[0] if lines else "(no message)"


def _unescape(literal: str) -> str:
    """A single-quoted Jinja literal's text (only the portable escapes occur in our output)."""
    escapes = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "\\": "\\", "'": "'",
               '"': '"'}
    return re.sub(r"\\(.)", lambda m: escapes.get(m.group(1), m.group(0)), literal)
