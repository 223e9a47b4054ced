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
a Go execution error. A render that runs past `render_timeout()` seconds (a template that
loops) raises `EngineTimeout`, which is not a RenderError: it stops the check of that template
instead of counting as a case.

The registry (`ENGINES`) holds one `EngineSpec` per engine: its factory, a cheap probe that says
why it is unavailable (None when it is available), and an optional setup step run only by
`gotmpl2jinja engines install` — never during a verification. The harness uses the engines
that are available and names those it skipped (`select_engines`).
"""

from __future__ import annotations

import atexit
import datetime as dt
import functools
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gotmpl2jinja.engines.base import (  # noqa: F401 - re-exported: the engines' shared API
    DEFAULT_NOW,
    Deadline,
    Engine,
    EngineError,
    EngineTimeout,
    TemplateRaised,
    alarm,
    is_raised,
    render_timeout,
    set_render_timeout,
    source_key,
    timed_out,
)
from gotmpl2jinja.engines.cpp import build as cpp_build
from gotmpl2jinja.engines.cpp_engines import CppEngine
from gotmpl2jinja.engines.lifetime import StderrTail, popen_tied, stop
from gotmpl2jinja.engines.transformers_engine import TransformersEngine, transformers_missing
from gotmpl2jinja.errors import RenderError
from gotmpl2jinja.ollama.reference.driver import cache_dir

#: The @huggingface/jinja version the project pins (package.json / package-lock.json).
HFJINJA_VERSION = "0.5.11"


class _Raise(Exception):
    """Internal: carries a template's raise_exception message out of an engine."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _raise_exception(message: Any = "") -> None:
    raise _Raise(str(message))


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


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
        limit = render_timeout()
        try:
            with alarm(limit):
                return compiled.render(**context)
        except Deadline:
            raise timed_out(self.name, limit) from None
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


#: minijinja cannot be interrupted by a signal; its "fuel" (instructions per render) bounds a
#: render instead: about this many per second of timeout (measured ~2.6e7/s on a loaded 2-core
#: machine; real templates use well under 1e6).
FUEL_PER_SECOND = 20_000_000


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
        key = "t" + source_key(template)  # no file extension: no auto-escaping
        if key not in self._known:
            try:
                self._env.add_template(key, template)
            except minijinja.TemplateError as exc:
                raise RenderError(
                    f"template does not compile on {self.name}: {_first_line(exc.message)}"
                ) from None
            self._known.add(key)
        self._now_for_render = now or self.now
        limit = render_timeout()
        self._env.fuel = int(limit * FUEL_PER_SECOND)
        try:  # (no SIGALRM here: an exception raised inside the Rust engine makes it panic)
            return self._env.render_template(key, **context)
        except _Raise as exc:
            raise TemplateRaised(exc.message) from None
        except minijinja.TemplateError as exc:
            if "out of fuel" in exc.message:
                raise timed_out(self.name, limit) from None
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
# Availability and setup

#: Reports the progress of a setup step, one line at a time (the CLI prints it on stderr).
SetupProgress = Callable[[str], None]


def _module_missing(module: str, package: str) -> str | None:
    if importlib.util.find_spec(module) is None:
        return f"the {package} Python package is not installed (pip install {package})"
    return None


def hfjinja_unavailable() -> str | None:
    """Why @huggingface/jinja cannot run here (None when it can): node, then the package."""
    if shutil.which("node") is None:
        return "node not found on PATH (install Node.js 18 or later)"
    if find_node_modules() is None:
        return "not set up: run `gotmpl2jinja engines install hfjinja`"
    return None


def install_hfjinja(progress: SetupProgress) -> None:
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


# --------------------------------------------------------------------------------------------
# Registry


@dataclass(frozen=True)
class EngineSpec:
    """One engine of the registry: how to make it, whether it can run here, how to set it up.

    `probe` is cheap (no process started) and returns None when the engine is available, else
    a one-line reason ("node not found on PATH …", "not set up: run `gotmpl2jinja engines
    install`"). `setup`, when there is one, is what `gotmpl2jinja engines install` runs; it
    is never run during a verification. Calling the spec makes an engine (the factory)."""

    name: str
    factory: Callable[[], Engine]
    probe: Callable[[], str | None] = lambda: None
    setup: Callable[[SetupProgress], None] | None = None
    description: str = ""
    tags: tuple[str, ...] = field(default=())

    def __call__(self) -> Engine:
        return self.factory()

    def unavailable(self) -> str | None:
        """The probe's answer; a probe that itself fails makes the engine unavailable."""
        try:
            return self.probe()
        except Exception as exc:  # noqa: BLE001 - a broken probe must not stop a run
            return f"its availability check failed ({type(exc).__name__}: {exc})"


def cpp_engine_specs() -> list[EngineSpec]:
    """llama.cpp's engine and minja, each in the raw and the llama-server context (one driver
    per engine serves both; `gotmpl2jinja engines install` builds it from its sdist)."""
    specs = []
    for engine, label in (("llamacpp", "llama.cpp common/jinja"), ("minja", "minja")):
        recipe = cpp_build.RECIPES[engine]
        where = f"llama-cpp-python {recipe.package_version} (llama.cpp {recipe.llama_commit})"

        def probe(engine: str = engine) -> str | None:
            return cpp_build.state(engine)

        def setup(progress: SetupProgress, engine: str = engine) -> None:
            try:
                cpp_build.install(engine, progress=progress)
            except cpp_build.EngineSetupError as exc:
                raise EngineError(str(exc)) from None

        for server in (False, True):
            name = f"{engine}-server" if server else engine
            context = ("the prompt llama-server builds from the OpenAI-style request" if server
                       else "the contract's variables")
            specs.append(EngineSpec(
                name, functools.partial(CppEngine, engine, server=server), probe, setup,
                description=f"{label} from {where}: {context}",
                tags=("server",) if server else ()))
    return specs


ENGINES: dict[str, EngineSpec] = {}


def register_engine(spec: EngineSpec) -> None:
    """Add (or replace) an engine; the registry order is the order verdicts list engines in."""
    ENGINES[spec.name] = spec
    _instances.pop(spec.name, None)


_instances: dict[str, Engine] = {}

for _spec in (
    EngineSpec("jinja2", Jinja2Engine, lambda: _module_missing("jinja2", "jinja2"),
               description="jinja2 as Hugging Face transformers configures it"),
    EngineSpec("transformers", TransformersEngine, transformers_missing,
               description="transformers' own render_jinja_template (apply_chat_template)"),
    EngineSpec("hfjinja", HFJinjaEngine, hfjinja_unavailable, install_hfjinja,
               description=f"@huggingface/jinja {HFJINJA_VERSION} (transformers.js) on node"),
    EngineSpec("minijinja", lambda: MiniJinjaEngine(trim=False),
               lambda: _module_missing("minijinja", "minijinja"),
               description="minijinja, trim_blocks/lstrip_blocks off (TGI)"),
    EngineSpec("minijinja-trim", lambda: MiniJinjaEngine(trim=True),
               lambda: _module_missing("minijinja", "minijinja"),
               description="minijinja, trim_blocks/lstrip_blocks on (mistral.rs)"),
    *cpp_engine_specs(),
):
    register_engine(_spec)


def raw_engine_names() -> list[str]:
    """The engines that render the contract's variables themselves (every one but the runtime
    contexts tagged `server`, which build their own from an API request)."""
    return [name for name, spec in ENGINES.items() if "server" not in spec.tags]


def unknown_engine(names: Iterable[str]) -> EngineError:
    return EngineError(f"unknown engine(s) {', '.join(names) or '(none given)'}; "
                       f"choose from {', '.join(ENGINES)}")


def get_engine(name: str) -> Engine:
    """One shared instance per engine name (the node process and compile caches are reused);
    an unavailable engine raises EngineError with the probe's reason."""
    if name not in ENGINES:
        raise unknown_engine([name])
    if name not in _instances:
        reason = ENGINES[name].unavailable()
        if reason is not None:
            raise EngineError(f"engine {name} is unavailable: {reason}")
        _instances[name] = ENGINES[name]()
    return _instances[name]


def get_engines(names: Iterable[str] | None = None) -> list[Engine]:
    """The engines named (every available one, in registry order, when `names` is None)."""
    chosen = select_engines(None if names is None else list(names)).used
    return [get_engine(n) for n in chosen]


@dataclass(frozen=True)
class EngineSelection:
    """The engines a run uses, and those it skipped with the reason each is unavailable."""

    used: list[str]
    skipped: dict[str, str]

    def describe(self) -> str:
        """`engines: jinja2, minijinja (skipped: hfjinja — node not found on PATH …)`."""
        text = "engines: " + ", ".join(self.used)
        if self.skipped:
            text += "; skipped: " + "; ".join(f"{n} ({why})" for n, why in self.skipped.items())
        return text


def select_engines(names: list[str] | None = None, *, require_all: bool = False
                   ) -> EngineSelection:
    """Which engines to run: every available one when `names` is None (the others skipped,
    with why; with `require_all` a skipped one is an error), else exactly those named (an
    unknown or unavailable one is an error: it was asked for)."""
    if names is not None:
        names = [n.strip() for n in names if n.strip()]
        unknown = [n for n in names if n not in ENGINES]
        if unknown or not names:
            raise unknown_engine(unknown)
    candidates = list(ENGINES) if names is None else list(dict.fromkeys(names))
    used: list[str] = []
    skipped: dict[str, str] = {}
    for name in candidates:
        reason = None if name in _instances else ENGINES[name].unavailable()
        if reason is None:
            used.append(name)
        else:
            skipped[name] = reason
    if skipped and (require_all or names is not None):
        listing = "; ".join(f"{n}: {why}" for n, why in skipped.items())
        raise EngineError(f"engine(s) unavailable — {listing} "
                          "(`gotmpl2jinja engines` lists every engine and its state)")
    if not used:
        raise EngineError("no Jinja engine is available (`gotmpl2jinja engines` says why)")
    return EngineSelection(used, skipped)


def setup_engines(names: list[str] | None, progress: SetupProgress
                  ) -> tuple[dict[str, str | None], list[str]]:
    """Run the setup step of the engines named (all with one when None) that need it; returns
    each engine's state afterwards (None = available, else why not) and the engines whose setup
    failed (reported through `progress`; the others still run)."""
    if names is not None:
        unknown = [n for n in names if n not in ENGINES]
        if unknown:
            raise unknown_engine(unknown)
    chosen = list(ENGINES) if names is None else names
    states: dict[str, str | None] = {}
    failed: list[str] = []
    for name in chosen:
        spec = ENGINES[name]
        if spec.setup is not None:
            try:
                spec.setup(progress)
            except (EngineError, OSError) as exc:
                progress(f"{name}: setup failed: {exc}")
                failed.append(name)
        elif names is not None:
            progress(f"{name}: nothing to set up")
        states[name] = spec.unavailable()
    return states, failed
