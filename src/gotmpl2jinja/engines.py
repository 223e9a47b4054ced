"""The Jinja engines a translated template must render identically on.

Each engine is configured exactly as its real-world host does it (see
docs/jinja-portability.md §1), because equivalence is only meaningful against the environment a
user actually gets:

- `jinja2`         — HF transformers' `ImmutableSandboxedEnvironment` (the reference side);
- `hfjinja`        — @huggingface/jinja (transformers.js, huggingface.js), via one node process;
- `minijinja`      — minijinja with trim_blocks/lstrip_blocks off (TGI's configuration);
- `minijinja-trim` — minijinja with both on (mistral.rs' configuration).

Every engine takes the same Jinja variables (`conversation.jinja_context`) and a pinned "now"
for `strftime_now`, and raises `errors.RenderError` on failure; a template's own
`raise_exception(...)` raises the subclass `TemplateRaised`, so the harness can match it against
a Go execution error.
"""

from __future__ import annotations

import atexit
import datetime as dt
import hashlib
import json
import math
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from gotmpl2jinja.errors import RenderError

#: The clock every engine reads when no "now" is given: deterministic, and the same instant as
#: the Go reference renderer's default (`reference.DEFAULT_NOW`, 2026-08-21T12:00:00Z).
#: Engines use its wall-clock fields (strftime does not convert time zones).
DEFAULT_NOW = dt.datetime(2026, 8, 21, 12, 0, 0, tzinfo=dt.timezone.utc)

#: The @huggingface/jinja version the project pins (package.json / package-lock.json).
HFJINJA_VERSION = "0.5.11"


class TemplateRaised(RenderError):
    """The template itself called `raise_exception(message)` (the Jinja side of a Go exec error)."""

    raised = True


def is_raised(exc: BaseException) -> bool:
    """True when a render failed because the template raised, not because the engine choked."""
    return isinstance(exc, TemplateRaised)


@runtime_checkable
class Engine(Protocol):
    """A Jinja implementation configured like one real host."""

    name: str

    def render(
        self, template: str, context: dict[str, Any], *, now: dt.datetime | None = None
    ) -> str:
        """Render `template` with `context`; raise RenderError / TemplateRaised on failure."""
        ...


class _Raise(Exception):
    """Internal: carries a template's raise_exception message out of an engine."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _raise_exception(message: Any = "") -> None:
    raise _Raise(str(message))


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def _source_key(template: str) -> str:
    return hashlib.sha1(template.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------------------------
# jinja2, configured as HF transformers does


class Jinja2Engine:
    """jinja2 exactly as `transformers.utils.chat_template_utils._compile_jinja_template`."""

    name = "jinja2"

    def __init__(self, now: dt.datetime | None = None) -> None:
        import jinja2
        import jinja2.ext
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        self._jinja2 = jinja2
        self.now = now or DEFAULT_NOW
        env = ImmutableSandboxedEnvironment(
            trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
        )
        env.filters["tojson"] = _transformers_tojson
        env.globals["raise_exception"] = _raise_exception
        env.globals["strftime_now"] = self._strftime_now
        self._env = env
        self._compiled: dict[str, Any] = {}

    def _strftime_now(self, fmt: str) -> str:
        return self._now_for_render.strftime(fmt)

    _now_for_render: dt.datetime = DEFAULT_NOW

    def render(
        self, template: str, context: dict[str, Any], *, now: dt.datetime | None = None
    ) -> str:
        """Render like `apply_chat_template(..., tokenize=False)` would."""
        jinja2 = self._jinja2
        compiled = self._compiled.get(template)
        if compiled is None:
            try:
                compiled = self._env.from_string(template)
            except jinja2.TemplateSyntaxError as exc:
                raise RenderError(
                    f"template does not compile on jinja2: line {exc.lineno}: {exc.message}"
                ) from None
            except (SyntaxError, RecursionError) as exc:  # CPython refusing jinja2's Python
                raise RenderError(f"template does not compile on jinja2: {exc}") from None
            self._compiled[template] = compiled
        self._now_for_render = now or self.now
        try:
            return compiled.render(**context)
        except _Raise as exc:
            raise TemplateRaised(exc.message) from None
        except RecursionError:
            raise RenderError("jinja2: recursion limit exceeded") from None
        except Exception as exc:  # noqa: BLE001 - any engine failure is a render failure
            raise RenderError(f"jinja2: {type(exc).__name__}: {exc}") from None


def _transformers_tojson(
    x: Any, ensure_ascii: bool = False, indent: int | None = None,
    separators: tuple[str, str] | None = None, sort_keys: bool = False,
) -> str:
    """transformers' override: plain `json.dumps`, no HTML escaping, insertion order."""
    return json.dumps(
        x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


# --------------------------------------------------------------------------------------------
# minijinja (Python binding), as TGI (no trim) and mistral.rs (trim + lstrip) configure it


class MiniJinjaEngine:
    """minijinja with pycompat and host functions `raise_exception` / `strftime_now`."""

    def __init__(self, *, trim: bool, now: dt.datetime | None = None) -> None:
        import minijinja

        self._minijinja = minijinja
        self.name = "minijinja-trim" if trim else "minijinja"
        self.now = now or DEFAULT_NOW
        self._now_for_render = self.now
        env = minijinja.Environment(
            trim_blocks=trim, lstrip_blocks=trim, pycompat=True, debug=False
        )
        # (add_function exists at run time; minijinja's type stubs omit it)
        env.add_function("raise_exception", _raise_exception)  # type: ignore[attr-defined]
        env.add_function("strftime_now", self._strftime_now)  # type: ignore[attr-defined]
        self._env = env
        self._known: set[str] = set()

    def _strftime_now(self, fmt: str) -> str:
        return self._now_for_render.strftime(fmt)

    def render(
        self, template: str, context: dict[str, Any], *, now: dt.datetime | None = None
    ) -> str:
        """Render; compiled templates are kept in the environment under a hash of the source."""
        minijinja = self._minijinja
        key = "t" + _source_key(template)  # no file extension: no auto-escaping
        if key not in self._known:
            try:
                self._env.add_template(key, template)
            except minijinja.TemplateError as exc:
                raise RenderError(
                    f"template does not compile on {self.name}: {_first_line(exc.message)}"
                ) from None
            self._known.add(key)
        self._now_for_render = now or self.now
        try:
            return self._env.render_template(key, **context)
        except _Raise as exc:
            raise TemplateRaised(exc.message) from None
        except minijinja.TemplateError as exc:
            raise RenderError(f"{self.name}: {_first_line(exc.message)}") from None
        except Exception as exc:  # noqa: BLE001 - a host callback failed
            raise RenderError(f"{self.name}: {type(exc).__name__}: {exc}") from None


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


def find_node_modules() -> Path | None:
    """The node_modules holding @huggingface/jinja: $GOTMPL2JINJA_NODE_MODULES, else the repo's."""
    env = os.environ.get("GOTMPL2JINJA_NODE_MODULES")
    candidates = [Path(env)] if env else []
    here = Path(__file__).resolve().parent
    candidates += [parent / "node_modules" for parent in (here, *here.parents)]
    candidates.append(Path.cwd() / "node_modules")
    for candidate in candidates:
        if (candidate / "@huggingface" / "jinja" / "package.json").is_file():
            return candidate
    return None


class HFJinjaEngine:
    """@huggingface/jinja rendering through `hfjinja_driver.mjs` (JSON lines over a pipe)."""

    name = "hfjinja"

    def __init__(self, now: dt.datetime | None = None) -> None:
        self.now = now or DEFAULT_NOW
        node = shutil.which("node")
        if node is None:
            raise RenderError(
                "the hfjinja engine needs node (Node.js ≥ 18) on PATH; install it, or choose "
                "other engines with --engines"
            )
        modules = find_node_modules()
        if modules is None:
            raise RenderError(
                "@huggingface/jinja is not installed: run `npm ci` in the repository root "
                "(or set GOTMPL2JINJA_NODE_MODULES to a node_modules that has it)"
            )
        package_dir = modules / "@huggingface" / "jinja"
        package = json.loads((package_dir / "package.json").read_text(encoding="utf-8"))
        self.version: str = package.get("version", "?")
        entry = package.get("exports", {}).get(".", {}).get("import") or package.get("module")
        if not entry:
            raise RenderError(f"{package_dir}: no ESM entry point in package.json")
        driver = Path(__file__).resolve().parent / "hfjinja_driver.mjs"
        environ = dict(os.environ)
        environ["GOTMPL2JINJA_HFJINJA_ENTRY"] = (package_dir / entry).resolve().as_uri()
        self._proc = subprocess.Popen(
            [node, str(driver)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=environ, text=True, encoding="utf-8", bufsize=1,
        )
        self._lock = threading.Lock()
        self._sent: set[str] = set()
        self._next_id = 0
        atexit.register(self.close)

    def close(self) -> None:
        """Stop the node process (also done at interpreter exit)."""
        proc = getattr(self, "_proc", None)
        if proc is not None and proc.poll() is None:
            try:
                proc.stdin.close()  # type: ignore[union-attr]
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                proc.kill()

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
        response = self._send(template, {"contexts": [to_node_json(c) for c in contexts]}, now)
        if "results" not in response:  # the template itself failed: every case fails alike
            return [self._failure(response)] * len(contexts)
        results: list[str | RenderError] = [
            str(r["output"]) if r.get("ok") else self._failure(r) for r in response["results"]
        ]
        if len(results) != len(contexts):
            raise RenderError("hfjinja driver answered a short batch")
        return results

    def _send(self, template: str, payload: dict[str, Any],
              now: dt.datetime | None) -> dict[str, Any]:
        """One request to node: the template's source goes only the first time (node keeps
        it by key, and keeps only templates that compiled), the clock pinned to `now`."""
        when = now or self.now
        key = _source_key(template)
        with self._lock:
            self._next_id += 1
            request: dict[str, Any] = {
                "id": self._next_id, "key": key, **payload,
                "now": [when.year, when.month, when.day, when.hour, when.minute, when.second,
                        when.microsecond // 1000],
            }
            if key not in self._sent:
                request["template"] = template
            response = self._exchange(request)
            if not response.get("compile"):
                self._sent.add(key)
        return response

    @staticmethod
    def _failure(response: dict[str, Any]) -> RenderError:
        if response.get("raised"):
            return TemplateRaised(str(response.get("error", "")))
        return RenderError(f"hfjinja: {response.get('error', 'unknown error')}")

    def _exchange(self, request: dict[str, Any]) -> dict[str, Any]:
        proc = self._proc
        if proc.poll() is not None:
            raise RenderError(f"the hfjinja node process has exited: {self._stderr_tail()}")
        try:
            proc.stdin.write(json.dumps(request) + "\n")  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]
            line = proc.stdout.readline()  # type: ignore[union-attr]
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            raise RenderError(f"the hfjinja node process died: {self._stderr_tail()}")
        response: dict[str, Any] = json.loads(line)
        if response.get("id") != request["id"]:
            raise RenderError("hfjinja driver answered out of order")
        return response

    def _stderr_tail(self) -> str:
        proc = self._proc
        if proc.poll() is None or proc.stderr is None:
            return "no message"
        text = proc.stderr.read()
        return text.strip()[-2000:] or f"exit status {proc.returncode}"


# --------------------------------------------------------------------------------------------
# Batches


def render_many(
    engine: Engine, template: str, contexts: list[dict[str, Any]], *,
    now: dt.datetime | None = None,
) -> list[str | RenderError]:
    """Render a batch on one engine: its own `render_many` when it has one (a process engine
    saves a round trip per case), else `render` in a loop. Failures are items, not raised."""
    batch = getattr(engine, "render_many", None)
    if batch is not None:
        return batch(template, contexts, now=now)  # type: ignore[no-any-return]
    results: list[str | RenderError] = []
    for context in contexts:
        try:
            results.append(engine.render(template, context, now=now))
        except RenderError as exc:
            results.append(exc)
    return results


# --------------------------------------------------------------------------------------------
# Registry

ENGINES: dict[str, Callable[[], Engine]] = {
    "jinja2": Jinja2Engine,
    "hfjinja": HFJinjaEngine,
    "minijinja": lambda: MiniJinjaEngine(trim=False),
    "minijinja-trim": lambda: MiniJinjaEngine(trim=True),
}

_instances: dict[str, Engine] = {}


def get_engine(name: str) -> Engine:
    """One shared instance per engine name (the node process and compile caches are reused)."""
    if name not in ENGINES:
        raise RenderError(
            f"unknown engine {name!r}; choose from {', '.join(ENGINES)}"
        )
    if name not in _instances:
        _instances[name] = ENGINES[name]()
    return _instances[name]


def get_engines(names: Iterable[str] | None = None) -> list[Engine]:
    """The engines named (all of them, in registry order, when `names` is None)."""
    chosen = list(ENGINES) if names is None else [n.strip() for n in names if n.strip()]
    return [get_engine(n) for n in chosen]
