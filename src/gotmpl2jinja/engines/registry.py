"""The Jinja engines a translated template must render identically on.

Each engine is configured exactly as its real-world host does it (see
docs/jinja-portability.md §1), because equivalence is only meaningful against the environment a
user actually gets:

- `jinja2`         — HF transformers' `ImmutableSandboxedEnvironment` (the reference side);
- `hfjinja`        — @huggingface/jinja (transformers.js, huggingface.js), via one node process;
- `minijinja`      — minijinja with trim_blocks/lstrip_blocks off (TGI's configuration);
- `minijinja-trim` — minijinja with both on (mistral.rs' configuration);
- `ollama-jinja`   — what Ollama itself renders when it runs the Jinja through llama-server
  (its own request conversion, then llama-server's chat code): a report on Ollama's Jinja
  path, run only when asked for (tag `opt-in`: not in the default set).

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

The engines themselves live in modules of their own (`jinja2_engine`, `minijinja_engine`,
`hfjs`, `transformers_engine`, `cpp_engines`, `ollama_jinja`); this module registers them.

May depend on: engines.base, engines.cpp (build), engines.cpp_engines, engines.hfjs,
engines.ollama_jinja, engines.jinja2_engine, engines.minijinja_engine,
engines.transformers_engine, errors.
"""

from __future__ import annotations

import datetime as dt
import functools
import importlib.util
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
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
from gotmpl2jinja.engines.hfjs import (
    HFJINJA_VERSION,
    HFJinjaEngine,
    hfjinja_unavailable,
    install_hfjinja,
)
from gotmpl2jinja.engines.jinja2_engine import Jinja2Engine
from gotmpl2jinja.engines.minijinja_engine import MiniJinjaEngine
from gotmpl2jinja.engines.ollama_jinja import OllamaJinjaEngine
from gotmpl2jinja.engines.transformers_engine import TransformersEngine, transformers_missing
from gotmpl2jinja.errors import RenderError

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


def ollama_jinja_spec(llama_server: EngineSpec) -> EngineSpec:
    """Ollama's own Jinja path: its request conversion, then llama-server's chat code from the
    `llamacpp` driver (`llama_server`'s probe and setup: one build serves both). Opt-in: the
    contract's equivalence is Go against the Jinja's hosts; this context reports what Ollama
    itself would render from the Jinja, and runs when named (`--engines ollama-jinja`,
    `migrate --format gguf`)."""
    recipe = cpp_build.RECIPES["llamacpp"]
    return EngineSpec(
        "ollama-jinja", OllamaJinjaEngine, llama_server.probe, llama_server.setup,
        description=("Ollama fb30760's request conversion for its Jinja path, then llama-server "
                     f"from llama-cpp-python {recipe.package_version} (llama.cpp "
                     f"{recipe.llama_commit}): the prompt Ollama gets from the Jinja"),
        tags=("server", "opt-in"))


ENGINES: dict[str, EngineSpec] = {}


@dataclass(frozen=True)
class ToolSpec:
    """Something `gotmpl2jinja engines install` builds that is not a Jinja engine (never picked
    by `select_engines`): llama.cpp's tokenizer, for the token-level checks (`--gguf`)."""

    name: str
    probe: Callable[[], str | None]
    setup: Callable[[SetupProgress], None]
    description: str = ""

    def unavailable(self) -> str | None:
        return self.probe()


def _install_tokenizer(progress: SetupProgress) -> None:
    try:
        cpp_build.install("tokenizer", progress=progress)
    except cpp_build.EngineSetupError as exc:
        raise EngineError(str(exc)) from None


TOOLS: dict[str, ToolSpec] = {
    "tokenizer": ToolSpec(
        "tokenizer", lambda: cpp_build.state("tokenizer"), _install_tokenizer,
        description=("llama.cpp's own tokenizer (llama-vocab) from llama-cpp-python "
                     f"{cpp_build.RECIPES['tokenizer'].package_version}, with the sdist's "
                     "vocabulary-only GGUFs: token-level checks (--gguf)")),
}


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
    *(_cpp := cpp_engine_specs()),
    ollama_jinja_spec(next(spec for spec in _cpp if spec.name == "llamacpp-server")),
):
    register_engine(_spec)


def raw_engine_names() -> list[str]:
    """The engines that render the contract's variables themselves (every one but the runtime
    contexts tagged `server`, which build their own from an API request)."""
    return [name for name, spec in ENGINES.items() if "server" not in spec.tags]


def default_engine_names() -> list[str]:
    """The engines a run uses when none are named: every one but those tagged `opt-in`."""
    return [name for name, spec in ENGINES.items() if "opt-in" not in spec.tags]


def unknown_engine(names: Iterable[str]) -> EngineError:
    return EngineError(f"unknown engine(s) {', '.join(names) or '(none given)'}; "
                       f"choose from {', '.join([*ENGINES, *TOOLS])}")


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
    candidates = default_engine_names() if names is None else list(dict.fromkeys(names))
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
        unknown = [n for n in names if n not in ENGINES and n not in TOOLS]
        if unknown:
            raise unknown_engine(unknown)
    chosen = [*ENGINES, *TOOLS] if names is None else names
    states: dict[str, str | None] = {}
    failed: list[str] = []
    done: dict[Callable[[SetupProgress], None], bool] = {}  # a step shared (one driver for an
    for name in chosen:                                      # engine and its -server) runs once
        spec = ENGINES[name] if name in ENGINES else TOOLS[name]
        if spec.setup is not None:
            if spec.setup not in done:
                try:
                    spec.setup(progress)
                    done[spec.setup] = True
                except (EngineError, OSError) as exc:
                    progress(f"{name}: setup failed: {exc}")
                    done[spec.setup] = False
            if not done[spec.setup]:
                failed.append(name)
        elif names is not None:
            progress(f"{name}: nothing to set up")
        states[name] = spec.unavailable()
    return states, failed
