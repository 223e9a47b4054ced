"""The `hfjinja` engine: @huggingface/jinja (transformers.js, huggingface.js) through one
long-lived node process running `hfjinja_driver.mjs`, beside this module; where its
node_modules are found, and its setup (`gotmpl2jinja engines install hfjinja`).

May depend on: engines.base, lifetime, errors, ollama.reference.driver (the per-user
cache folder).
"""

from __future__ import annotations

import atexit
import datetime as dt
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gotmpl2jinja.engines.base import (
    DEFAULT_NOW,
    EngineError,
    TemplateRaised,
    render_timeout,
    source_key,
    timed_out,
)
from gotmpl2jinja.errors import RenderError
from gotmpl2jinja.lifetime import StderrTail, popen_tied, stop
from gotmpl2jinja.ollama.reference.driver import cache_dir

#: The @huggingface/jinja version the project pins (package.json / package-lock.json).
HFJINJA_VERSION = "0.5.11"


# --------------------------------------------------------------------------------------------
# @huggingface/jinja through one long-lived node process

_FLOAT_TAG = "\u0000float"


def to_node_json(value: Any) -> Any:
    """Prepare a context for JSON transport to node without losing "this is a float".

    JSON has a single number type: an integral float (1.0, 1e21, -0.0) would reach JavaScript as
    an integer and print as `1` instead of `1.0`. Such floats are sent as a tagged object the
    driver turns back into the library's FloatValue. Known limit: integers beyond ±2**53 are
    rounded to the nearest double by JavaScript (exactly what a transformers.js user gets).
    NaN/Infinity are not JSON and are refused by `conversation.validate`.
    """
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value):
            return {_FLOAT_TAG: repr(value)}
        return value
    if isinstance(value, dict):
        return {str(k): to_node_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_node_json(v) for v in value]
    return value


def node_cache_dir() -> Path:
    """Where `gotmpl2jinja engines install hfjinja` puts @huggingface/jinja: the per-user cache
    (`$GOTMPL2JINJA_CACHE`, else `$XDG_CACHE_HOME/gotmpl2jinja`, else ~/.cache/gotmpl2jinja)
    plus `node`."""
    return cache_dir() / "node"


def find_node_modules() -> Path | None:
    """The node_modules holding @huggingface/jinja: $GOTMPL2JINJA_NODE_MODULES if set, else a
    repository checkout's (beside the package or the working directory), else the per-user
    cache that `gotmpl2jinja engines install` fills."""
    env = os.environ.get("GOTMPL2JINJA_NODE_MODULES")
    candidates = [Path(env)] if env else []
    here = Path(__file__).resolve().parent
    candidates += [parent / "node_modules" for parent in (here, *here.parents)]
    candidates.append(Path.cwd() / "node_modules")
    candidates.append(node_cache_dir() / "node_modules")
    for candidate in candidates:
        if (candidate / "@huggingface" / "jinja" / "package.json").is_file():
            return candidate
    return None


#: A JavaScript array index as an object key ("0", "10", not "01"): JS objects list such keys
#: first, in numeric order, whatever order the JSON gave them in.
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]{0,9}")

#: The out-of-scope kind on @huggingface/jinja (equivalence-contract.md, *On transformers.js*).
INTEGER_LIKE_PROPERTY = "a nested property name that is an array index (JavaScript orders it first)"


def _nested_property_has_index_key(prop: Any) -> bool:
    """A property whose own `properties` (printed in the request's order: Ollama keeps it)
    hold an array-index key, at any depth (through `properties` and `anyOf`)."""
    if not isinstance(prop, dict):
        return False
    inner = prop.get("properties")
    if isinstance(inner, dict):
        if any(_ARRAY_INDEX.fullmatch(k) and int(k) < 2**32 - 1 for k in inner):
            return True
        if any(_nested_property_has_index_key(v) for v in inner.values()):
            return True
    any_of = prop.get("anyOf")
    return isinstance(any_of, list) and any(_nested_property_has_index_key(v) for v in any_of)


def integer_like_nested_property(conv: dict[str, Any]) -> bool:
    """Whether a tool of `conv` has a nested property map with an array-index key: the order
    Go prints it in cannot reach a JavaScript host's template."""
    for tool in conv.get("tools") or ():
        function = tool.get("function") if isinstance(tool, dict) else None
        params = function.get("parameters") if isinstance(function, dict) else None
        props = params.get("properties") if isinstance(params, dict) else None
        if isinstance(props, dict) and any(_nested_property_has_index_key(v)
                                           for v in props.values()):
            return True
    return False


class HFJinjaEngine:
    """@huggingface/jinja rendering through `hfjinja_driver.mjs` (JSON lines over a pipe)."""

    name = "hfjinja"
    #: it renders in a process of its own: the harness may wait on it from a worker thread
    out_of_process = True

    def scope(self, conv: dict[str, Any], template: str) -> str | None:
        """The out-of-scope kind of `conv` here: JavaScript objects put array-index keys first,
        so a nested property map holding one reaches the template in another order than Go
        prints (a transformers.js host parses the request into such objects too)."""
        return INTEGER_LIKE_PROPERTY if integer_like_nested_property(conv) else None

    def __init__(self, now: dt.datetime | None = None) -> None:
        self.now = now or DEFAULT_NOW
        reason = hfjinja_unavailable()
        node, modules = shutil.which("node"), find_node_modules()
        if reason is not None or node is None or modules is None:
            raise EngineError(f"the hfjinja engine is unavailable: {reason}")
        package_dir = modules / "@huggingface" / "jinja"
        package = json.loads((package_dir / "package.json").read_text(encoding="utf-8"))
        self.version: str = package.get("version", "?")
        entry = package.get("exports", {}).get(".", {}).get("import") or package.get("module")
        if not entry:
            raise RenderError(f"{package_dir}: no ESM entry point in package.json")
        self._argv = [node, str(Path(__file__).resolve().parent / "hfjinja_driver.mjs")]
        self._environ = dict(os.environ)
        self._environ["GOTMPL2JINJA_HFJINJA_ENTRY"] = (package_dir / entry).resolve().as_uri()
        self._lock = threading.Lock()
        self._next_id = 0
        self._spawn()
        atexit.register(self.close)

    def _spawn(self) -> None:
        """Start (or restart, after a timeout) the node process; it forgets every template."""
        self._proc = popen_tied(
            self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=self._environ, text=True, encoding="utf-8", bufsize=1,
        )
        self._stderr = StderrTail(self._proc)
        self._sent: set[str] = set()

    def close(self) -> None:
        """Stop the node process (also done at interpreter exit)."""
        stop(getattr(self, "_proc", None))

    def render(
        self, template: str, context: dict[str, Any], *, now: dt.datetime | None = None
    ) -> str:
        """Send one render request to node and wait for its answer."""
        response = self._send(template, {"context": to_node_json(context)}, now)
        if response.get("ok"):
            return str(response["output"])
        raise self._failure(response)

    def render_many(
        self, template: str, contexts: list[dict[str, Any]], *, now: dt.datetime | None = None
    ) -> list[str | RenderError]:
        """`render` for a batch in one request (node renders them in turn): each item is the
        output or the RenderError / TemplateRaised of that context alone."""
        if not contexts:
            return []
        response = self._send(template, {"contexts": [to_node_json(c) for c in contexts]}, now,
                              cases=len(contexts))
        if "results" not in response:  # the template itself failed: every case fails alike
            return [self._failure(response)] * len(contexts)
        results: list[str | RenderError] = [
            str(r["output"]) if r.get("ok") else self._failure(r) for r in response["results"]
        ]
        if len(results) != len(contexts):
            raise RenderError("hfjinja driver answered a short batch")
        return results

    def _send(self, template: str, payload: dict[str, Any],
              now: dt.datetime | None, cases: int = 1) -> dict[str, Any]:
        """One request to node: the template's source goes only the first time (node keeps
        it by key, and keeps only templates that compiled), the clock pinned to `now`; a
        batch of `cases` gets the render timeout scaled by its size."""
        when = now or self.now
        key = source_key(template)
        with self._lock:
            self._next_id += 1
            request: dict[str, Any] = {
                "id": self._next_id, "key": key, **payload,
                "now": [when.year, when.month, when.day, when.hour, when.minute, when.second,
                        when.microsecond // 1000],
            }
            if key not in self._sent:
                request["template"] = template
            limit = render_timeout() * (1 + (cases - 1) / 10)
            response = self._exchange(request, limit)
            if not response.get("compile"):
                self._sent.add(key)
        return response

    @staticmethod
    def _failure(response: dict[str, Any]) -> RenderError:
        if response.get("raised"):
            return TemplateRaised(str(response.get("error", "")))
        return RenderError(f"hfjinja: {response.get('error', 'unknown error')}")

    def _exchange(self, request: dict[str, Any], limit: float) -> dict[str, Any]:
        """Send one request and read its answer; past `limit` seconds a watchdog kills node
        (a render cannot be interrupted otherwise), which is restarted for the next request."""
        proc = self._proc
        if proc.poll() is not None:
            raise RenderError(f"the hfjinja node process has exited: {self._stderr_tail()}")
        fired = threading.Event()

        def kill() -> None:
            fired.set()
            proc.kill()

        watchdog = threading.Timer(limit, kill)
        watchdog.daemon = True
        watchdog.start()
        try:
            proc.stdin.write(json.dumps(request) + "\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            line = proc.stdout.readline()  # type: ignore[union-attr]
        except (BrokenPipeError, OSError):
            line = ""
        finally:
            watchdog.cancel()
        if not line and fired.is_set():
            proc.wait()
            self._spawn()
            raise timed_out(self.name, limit)
        if not line:
            raise RenderError(f"the hfjinja node process died: {self._stderr_tail()}")
        response: dict[str, Any] = json.loads(line)
        if response.get("id") != request["id"]:
            raise RenderError("hfjinja driver answered out of order")
        return response

    def _stderr_tail(self) -> str:
        proc = self._proc
        if proc.poll() is None:
            return "no message"
        return self._stderr.text()[-2000:] or f"exit status {proc.returncode}"


# --------------------------------------------------------------------------------------------
# Availability and setup


def hfjinja_unavailable() -> str | None:
    """Why @huggingface/jinja cannot run here (None when it can): node, then the package."""
    if shutil.which("node") is None:
        return "node not found on PATH (install Node.js 18 or later)"
    if find_node_modules() is None:
        return "not set up: run `gotmpl2jinja engines install hfjinja`"
    return None


def install_hfjinja(progress: Callable[[str], None]) -> None:
    """`npm install` the pinned @huggingface/jinja into the per-user cache (`node_cache_dir`),
    built beside it and renamed into place, so a failed install leaves the old one."""
    npm = shutil.which("npm")
    if npm is None:
        raise EngineError("the hfjinja setup needs npm (it comes with Node.js 18 or later)")
    target = node_cache_dir()
    target.parent.mkdir(parents=True, exist_ok=True)
    progress(f"hfjinja: npm install @huggingface/jinja@{HFJINJA_VERSION} into {target} …")
    work = tempfile.mkdtemp(dir=target.parent, prefix="node-")
    try:
        package = {"name": "gotmpl2jinja-engines", "private": True,
                   "dependencies": {"@huggingface/jinja": HFJINJA_VERSION}}
        Path(work, "package.json").write_text(json.dumps(package, indent=1) + "\n",
                                              encoding="utf-8")
        try:
            done = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=work, capture_output=True, text=True, timeout=600,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise EngineError(f"hfjinja: could not run npm ({exc})") from None
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip()[-1500:]
            raise EngineError(f"hfjinja: npm install failed (exit {done.returncode}): {tail}")
        installed = Path(work, "node_modules", "@huggingface", "jinja", "package.json")
        if not installed.is_file():
            raise EngineError("hfjinja: npm install did not install @huggingface/jinja")
        old = target.with_name(target.name + ".old")
        if target.exists():
            shutil.rmtree(old, ignore_errors=True)
            os.replace(target, old)
        os.replace(work, target)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    progress(f"hfjinja: installed in {target}")
