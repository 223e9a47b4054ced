"""Batch migration: every template and Modelfile under a folder (and every installed Ollama
model) converted, verified against Go, written, and reported.

Why verify every item: a conversion nobody checked is a guess. Each item is translated
(`inputs.convert_source`), compared with Ollama's own rendering on random conversations
(`verify.verify_template`, with the Modelfile rule on the Go side too), and only an item that
agreed on every engine is written (`formats.write_output`). The run continues past failures;
the report says for each item what happened and why:

- `converted+verified` — written, equivalent on every case tried;
- `diverged` — translated, but some engine renders differently (the minimal conversation and the
  diff are in the report); not written;
- `not translatable` — the translator refuses a construct (FILE:LINE:COL and why); not written;
- `invalid input` — Ollama itself would reject it (bad Modelfile, Go parse error, not UTF-8…);
- `internal error` — a bug of this tool on that item (the message says which); not written.

With `fmt="gguf"` each item is written into a copy of its model's GGUF (an installed model's
weights, or the file a Modelfile's FROM names) and also verified on `ollama-jinja`, Ollama's
own Jinja path: a per-model report (`batch.ollama_path`), not a condition for writing.

Nothing that exists is overwritten without `force`, and that is checked before any work, so a
refused run leaves OUT as it was. Exit status (CLI): 0 only if every item is converted+verified.

May depend on: `batch.driver`, `batch.ollama_path`, `emit`, `engines`, `errors`, `formats`,
`ollama`, `verify` (tokens).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gotmpl2jinja.batch import driver, ollama_path
from gotmpl2jinja.emit.preamble import convert_source
from gotmpl2jinja.engines.registry import EngineTimeout, select_engines
from gotmpl2jinja.errors import (
    Gotmpl2JinjaError,
    ModelfileError,
    TemplateSyntaxError,
    translator_crash,
)
from gotmpl2jinja.formats.writers import OutputError, write_output
from gotmpl2jinja.ollama.modelfile import looks_like_modelfile
from gotmpl2jinja.ollama.reference import RenderTimeout
from gotmpl2jinja.ollama.source import (
    OLLAMA_PREFIX,
    TEMPLATE_SUFFIXES,
    InputError,
    Source,
    no_such_file,
    source_from_bytes,
    source_from_model,
)
from gotmpl2jinja.ollama.store import default_models_dir, list_models, load_model
from gotmpl2jinja.ollama.vocab import BosFacts, resolve_facts
from gotmpl2jinja.verify.check import bos_rule
from gotmpl2jinja.verify.tokens import TokenLevel

VERIFIED = "converted+verified"
DIVERGED = "diverged"
NOT_TRANSLATABLE = "not translatable"
INVALID_INPUT = "invalid input"
INTERNAL_ERROR = "internal error"
WRITE_FAILED = "not written"
STATUSES: tuple[str, ...] = (VERIFIED, DIVERGED, NOT_TRANSLATABLE, INVALID_INPUT, INTERNAL_ERROR,
                             WRITE_FAILED)

STATUS_MEANINGS = {
    VERIFIED: "written; rendered what Ollama renders on every case and engine",
    DIVERGED: "translated, but an engine rendered differently; not written",
    NOT_TRANSLATABLE: "the translator refuses a construct (where and why given); not written",
    INVALID_INPUT: "Ollama itself would reject the input (where and why given)",
    INTERNAL_ERROR: "a bug of gotmpl2jinja on this item, or its verification did not finish "
    "in time; not written",
    WRITE_FAILED: "verified, but its file could not be written (why given)",
}

MIGRATE_FORMATS: tuple[str, ...] = ("jinja", "hf", "lmstudio", "gguf")
#: What each format's file is called next to the input's mirrored name.
OUTPUT_SUFFIXES = {"jinja": ".jinja", "hf": ".tokenizer_config.json", "lmstudio": ".lmstudio.json",
                   "gguf": ".gguf"}
DEFAULT_CASES = 30
STORE_FOLDER = "ollama-store"  # where installed models' outputs go under OUT
REPORT_NAME = "report.md"

#: Called before each item with (items done, total, label of the next item or "").
Progress = Callable[[int, int, str], None]


class MigrateError(Gotmpl2JinjaError):
    """The run cannot start (SRC missing, outputs exist without force, bad format…)."""


@dataclass
class Planned:
    """One input found, and where its output goes (relative to OUT)."""

    label: str  # the input as the report names it: path relative to SRC, or ollama:NAME
    output: str
    path: Path | None = None  # None for an installed model


@dataclass
class Item:
    """What happened to one input."""

    input: str
    status: str
    kind: str | None = None
    output: str | None = None  # relative to OUT; only set when written
    reason: str | None = None
    warnings: list[str] = field(default_factory=list)
    cases: int = 0
    engines: list[str] = field(default_factory=list)
    divergence: dict[str, Any] | None = None
    #: gguf: what Ollama's own Jinja path did (`batch.ollama_path.report`); a report only.
    ollama_jinja: dict[str, Any] | None = None
    #: What the translation does about BOS, from the installed model's tokenizer (or not decided).
    bos: str | None = None


def bos_note(facts: BosFacts | None) -> str:
    """One item's BOS, as the report says it."""
    if facts is None or facts.adds_bos is None:
        return ("not decided (no tokenizer facts: an installed model's GGUF, or the .gguf a "
                "Modelfile's FROM names, gives them here)")
    if facts.adds_bos:
        return f"bos_token written first ({facts.source}: {facts.rule})"
    return f"no bos_token: Ollama's tokenizer adds none ({facts.source}: {facts.rule})"


@dataclass
class MigrationReport:
    """Every item's result plus how the run was made (so it can be made again)."""

    command: str
    src: str
    out: str
    format: str
    cases: int
    seed: int
    items: list[Item] = field(default_factory=list)
    #: The Jinja engines every item was verified on, and those skipped (unavailable) with why.
    engines: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(item.status == VERIFIED for item in self.items)

    def counts(self) -> dict[str, int]:
        return {status: sum(1 for i in self.items if i.status == status) for status in STATUSES}

    def to_json(self) -> dict[str, Any]:
        return {
            "command": self.command, "src": self.src, "out": self.out, "format": self.format,
            "cases": self.cases, "seed": self.seed, "engines": self.engines,
            "skipped_engines": self.skipped, "ok": self.ok, "counts": self.counts(),
            "items": [asdict(item) for item in self.items],
        }


# ---------------------------------------------------------------------------------------------
# Finding inputs


def is_modelfile_name(path: Path) -> bool:
    """`Modelfile`, `Modelfile.x`, `x.Modelfile`, `x.modelfile` (any case)."""
    name = path.name.lower()
    return name == "modelfile" or name.startswith("modelfile.") or name.endswith(".modelfile")


def _sniff_modelfile(path: Path) -> bool:
    """A file without a suffix is a Modelfile when its first command looks like one."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return looks_like_modelfile(path, head.decode("utf-8", "replace"))


def discover(src: Path, *, exclude: Path | None = None) -> list[Path]:
    """Templates (`*.gotmpl`, `*.tmpl`) and Modelfiles under `src`, sorted; hidden entries and
    `exclude` (OUT, when it is inside SRC) are skipped."""
    if src.is_file():
        return [src]
    found: list[Path] = []
    skip = exclude.resolve() if exclude is not None else None
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if any(part.startswith(".") for part in rel.parts) or not path.is_file():
            continue
        if skip is not None and path.resolve().is_relative_to(skip):
            continue
        if (path.name.lower().endswith(TEMPLATE_SUFFIXES) or is_modelfile_name(path)
                or (not path.suffix and _sniff_modelfile(path))):
            found.append(path)
    return found


def output_name(rel: str, fmt: str) -> str:
    """`a/x.gotmpl` → `a/x.jinja`; `a/Modelfile` → `a/Modelfile.jinja` (hf, lmstudio alike)."""
    base = rel
    for suffix in TEMPLATE_SUFFIXES:
        if base.lower().endswith(suffix):
            base = base[: -len(suffix)]
            break
    return base + OUTPUT_SUFFIXES[fmt]


def store_output_name(model: str, fmt: str) -> str:
    """`qwen3:8b` → `ollama-store/qwen3/8b.jinja` (`:` is not a path character everywhere)."""
    return f"{STORE_FOLDER}/{model.replace(':', '/')}{OUTPUT_SUFFIXES[fmt]}"


def plan(src: Path, fmt: str, *, out: Path | None = None,
         models: list[str] | None = None) -> list[Planned]:
    """Every input with a distinct output path (a clash gets `.2`, `.3`… before the suffix)."""
    planned: list[Planned] = []
    used: set[str] = set()

    def unique(name: str) -> str:
        if name not in used:
            used.add(name)
            return name
        stem, suffix = name[: -len(OUTPUT_SUFFIXES[fmt])], OUTPUT_SUFFIXES[fmt]
        n = 2
        while f"{stem}.{n}{suffix}" in used:
            n += 1
        used.add(f"{stem}.{n}{suffix}")
        return f"{stem}.{n}{suffix}"

    for path in discover(src, exclude=out):
        rel = path.name if src.is_file() else path.relative_to(src).as_posix()
        planned.append(Planned(label=rel, output=unique(output_name(rel, fmt)), path=path))
    for model in models or []:
        planned.append(Planned(label=OLLAMA_PREFIX + model,
                               output=unique(store_output_name(model, fmt))))
    return planned


# ---------------------------------------------------------------------------------------------
# One item


def _read(planned: Planned, models_dir: Path | None) -> Source:
    if planned.path is None:
        model = planned.label[len(OLLAMA_PREFIX):]
        return source_from_model(load_model(model, models_dir), planned.label)
    try:
        data = planned.path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read it ({exc.strerror or exc})", name=planned.label) from None
    return source_from_bytes(data, planned.label, models_dir=models_dir)


def _divergence_json(div: Any) -> dict[str, Any]:
    return {"engine": div.engine, "found_by": div.found_by, "conversation": div.conversation,
            "go_output": div.go_output, "go_error": div.go_error,
            "jinja_output": div.jinja_output, "jinja_error": div.jinja_error, "diff": div.diff}


def migrate_item(planned: Planned, out: Path, *, fmt: str, cases: int, seed: int, force: bool,
                 models_dir: Path | None, engines: list[str] | None = None,
                 tokens: TokenLevel | None = None) -> Item:
    """Convert, verify and (when verified) write one input; every expected failure is an Item.

    A broken reference renderer (Go missing…) is not an item's fault: it is raised.
    """
    item = Item(input=planned.label, status=INVALID_INPUT)
    facts: list[BosFacts | None] = [None]

    def convert(source: Source) -> str:
        model_path = source.model_path
        if model_path is None and planned.path is not None and source.kind == "modelfile":
            found = ollama_path.gguf_source(planned.path, planned.label, models_dir, True)
            model_path = found if isinstance(found, Path) else None
        facts[0] = (tokens.host.facts if tokens is not None and tokens.host.facts is not None
                    else resolve_facts(model_path=model_path, warnings=source.warnings,
                                       model=source.name))
        item.bos = bos_note(facts[0])
        return convert_source(source, facts[0])

    def compared() -> TokenLevel | None:
        """--gguf's comparison, else the BOS rule as text with the facts the item's own model
        gave (its Jinja writes bos_token by them: that is checked too)."""
        return tokens or bos_rule(facts[0])

    ran = driver.run(planned.label, lambda: _read(planned, models_dir), convert=convert,
                     cases=cases, seed=seed, engines=engines, tokens=compared)
    exc = ran.error
    if ran.failed == driver.READ:  # ModelfileError, InputError, StoreError
        item.reason = str(exc)
        return item
    source = ran.source
    assert source is not None
    item.kind, item.warnings = source.kind, list(source.warnings)
    if ran.failed == driver.CONVERT:
        if isinstance(exc, (TemplateSyntaxError, ModelfileError)):
            item.reason = _placed(exc, source)
        elif isinstance(exc, Gotmpl2JinjaError):  # TranslationError and the like
            item.status, item.reason = NOT_TRANSLATABLE, _placed(exc, source)
        else:  # one translator bug must not stop the batch
            item.status = INTERNAL_ERROR
            item.reason = f"{translator_crash(exc)}; please report it"
        return item
    if ran.failed == driver.VERIFY:
        item.status = INTERNAL_ERROR
        if isinstance(exc, (RenderTimeout, EngineTimeout)):  # this item loops: its verdict
            item.reason = f"verification did not finish: {exc}"
        else:  # an engine or harness bug on one item
            item.reason = f"verification failed to run ({type(exc).__name__}: {exc})"
        return item
    result, jinja = ran.result, ran.jinja
    assert result is not None and jinja is not None
    item.cases, item.engines = result.cases, list(result.engines)
    item.ollama_jinja = ollama_path.report(result)
    divergences = [d for d in result.divergences if d.engine != ollama_path.ENGINE]
    if divergences:
        first = divergences[0]
        item.status = DIVERGED
        engines = ", ".join(d.engine for d in divergences)
        item.reason = f"renders differently from Ollama on {engines}"
        item.divergence = _divergence_json(first)
        return item
    target = out / planned.output
    gguf = None
    if fmt == "gguf":  # the model's own GGUF, copied with the template set
        gguf = ollama_path.gguf_source(planned.path, planned.label, models_dir,
                                       source.kind == "modelfile")
        if isinstance(gguf, str):
            item.status, item.reason = WRITE_FAILED, f"no GGUF to write into: {gguf}"
            return item
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_output(jinja, fmt, target, force=force, stop=source.stop, gguf_source=gguf,
                     bos=facts[0])
    except (OSError, OutputError) as exc:  # a full disk, a read-only folder: say so, go on
        item.status = WRITE_FAILED
        item.reason = str(exc) if isinstance(exc, OutputError) else \
            f"cannot write {target}: {exc.strerror or exc}"
        return item
    item.status, item.output = VERIFIED, planned.output
    return item


def _placed(exc: Gotmpl2JinjaError, source: Source) -> str:
    """The error as FILE:LINE:COL: message, placed in the file the user has (a Modelfile's
    TEMPLATE positions become Modelfile positions)."""
    if exc.line is not None:
        exc.line, exc.col = source.locate(exc.line, exc.col)
    exc.name = source.name
    return str(exc)


# ---------------------------------------------------------------------------------------------
# The run


def regenerate_command(src: str, out: str, *, fmt: str, cases: int, seed: int,
                       store: str | None, report: str | None) -> str:
    """The command line that makes this report again (with --force: the outputs exist then)."""
    parts = ["gotmpl2jinja", "migrate", src, out, "--format", fmt, "--cases", str(cases),
             "--seed", str(seed)]
    if store is not None:
        parts += ["--ollama-store", store] if store else ["--ollama-store"]
    if report is not None:
        parts += ["--report", report]
    parts.append("--force")
    return " ".join(_shell_word(p) for p in parts)


def _shell_word(word: str) -> str:
    safe = word and all(c.isalnum() or c in "-_./:=+@%" for c in word)
    return word if safe else "'" + word.replace("'", "'\\''") + "'"


def report_paths(out: Path, report: Path | None) -> tuple[Path, Path]:
    """The Markdown report and its JSON twin (same stem, `.json`)."""
    md = report if report is not None else out / REPORT_NAME
    return md, md.with_suffix(".json")


def migrate(
    src: str | Path, out: str | Path, *, fmt: str = "jinja", cases: int = DEFAULT_CASES,
    seed: int = 0, force: bool = False, store: str | None = None, report: str | Path | None = None,
    progress: Progress | None = None, engines: list[str] | None = None,
    skipped: dict[str, str] | None = None, tokens: TokenLevel | None = None,
) -> MigrationReport:
    """Convert and verify everything under `src` (plus every installed model when `store` is
    not None: "" = the default Ollama store, else its models directory), write the verified
    outputs under `out` mirroring `src`, and write the report. Raises MigrateError before doing
    anything when it cannot run or would overwrite without `force`. `engines`: the Jinja
    engines to verify on (default every available one; `skipped`: those left out and why, for
    the report)."""
    if fmt not in MIGRATE_FORMATS:
        raise MigrateError(f"unknown format {fmt!r}; choose one of {', '.join(MIGRATE_FORMATS)}")
    if cases < 1:
        raise MigrateError("--cases must be at least 1: a conversion is only kept once verified")
    src_path, out_path = Path(src), Path(out)
    if not src_path.exists():
        raise MigrateError(no_such_file(str(src)))
    if out_path.exists() and not out_path.is_dir():
        raise MigrateError(f"{out} exists and is not a directory")
    models_dir: Path | None = None
    models: list[str] = []
    if store is not None:
        models_dir = Path(store) if store else default_models_dir()
        if not models_dir.is_dir():
            raise MigrateError(f"Ollama store {models_dir} does not exist (give its models "
                               "directory: --ollama-store DIR, or set OLLAMA_MODELS)")
        models = list_models(models_dir)

    planned = plan(src_path, fmt, out=out_path, models=models)
    md_path, json_path = report_paths(out_path, Path(report) if report is not None else None)
    if not force:
        existing = [p for p in (out_path / item.output for item in planned) if p.exists()]
        existing += [p for p in (md_path, json_path) if p.exists()]
        if existing:
            more = f" and {len(existing) - 1} more" if len(existing) > 1 else ""
            raise MigrateError(f"{existing[0]}{more} already exist(s); nothing was written "
                               "(pass --force to overwrite)")
    if not md_path.parent.exists() and md_path.parent != out_path:
        raise MigrateError(f"cannot write the report {md_path}: {md_path.parent} does not exist")

    if engines is None:
        selection = select_engines(None)
        engines, skipped = selection.used, selection.skipped
    engines, skipped = ollama_path.with_ollama_jinja(fmt, list(engines), dict(skipped or {}))
    result = MigrationReport(
        command=regenerate_command(str(src), str(out), fmt=fmt, cases=cases, seed=seed,
                                   store=store, report=None if report is None else str(report)),
        src=str(src), out=str(out), format=fmt, cases=cases, seed=seed,
        engines=list(engines), skipped=dict(skipped or {}),
    )
    out_path.mkdir(parents=True, exist_ok=True)
    for index, item in enumerate(planned):
        if progress is not None:
            progress(index, len(planned), item.label)
        result.items.append(migrate_item(item, out_path, fmt=fmt, cases=cases, seed=seed,
                                         force=force, models_dir=models_dir, engines=engines,
                                         tokens=tokens))
    if progress is not None:
        progress(len(planned), len(planned), "")
    write_output(markdown_report(result), "jinja", md_path, force=force)
    write_output(json.dumps(result.to_json(), ensure_ascii=False, indent=1) + "\n", "jinja",
                 json_path, force=force)
    return result


# ---------------------------------------------------------------------------------------------
# Reporting


def _cell(text: str | None, limit: int = 300) -> str:
    """Table-safe text: one line, pipes escaped, long reasons cut (the JSON has them whole)."""
    if not text:
        return ""
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return flat.replace("|", "\\|").replace("`", "'")


def _skipped_note(skipped: dict[str, str]) -> str:
    if not skipped:
        return ""
    return " (skipped, unavailable here: " + "; ".join(
        f"{name} — {why}" for name, why in skipped.items()) + ")"


def markdown_report(report: MigrationReport) -> str:
    """The human report: how to make it again, the counts, then one row per item."""
    counts = report.counts()
    lines = [
        "# Migration report",
        "",
        f"Regenerate: `{report.command}`",
        "",
        f"Source `{report.src}`, outputs under `{report.out}` (format {report.format}); each "
        f"conversion verified against Ollama (Go reference renderer) on {report.cases} random "
        f"conversations (seed {report.seed}) on the Jinja engines "
        f"{', '.join(report.engines) or '(none)'}{_skipped_note(report.skipped)}; only verified "
        "ones are written. Details of every item (minimal diverging conversation, outputs, "
        "warnings) are in the JSON twin of this file.",
        "",
        "| status | items | meaning |",
        "| --- | --- | --- |",
        *(f"| {status} | {counts[status]} | {STATUS_MEANINGS[status]} |" for status in STATUSES),
        f"| **total** | {len(report.items)} | |",
        "",
        "| input | kind | status | output / reason |",
        "| --- | --- | --- | --- |",
    ]
    for item in report.items:
        detail = f"`{item.output}`" if item.output else _cell(item.reason)
        if item.status == DIVERGED and item.divergence is not None:
            detail += " — " + _cell(item.divergence.get("diff"), 200)
        if item.warnings:
            detail += f" ({len(item.warnings)} warning{'s' if len(item.warnings) > 1 else ''})"
        lines.append(f"| `{item.input}` | {item.kind or ''} | {item.status} | {detail} |")
    lines.append("")
    bos = [item for item in report.items if item.status == VERIFIED and item.bos]
    if bos:
        lines += ["BOS (Ollama's tokenizer adds it when the vocabulary says so; transformers and "
                  "vLLM need the template to write `bos_token`):", "",
                  *(f"- `{item.input}`: {item.bos}" for item in bos), ""]
    lines += ollama_path.markdown_section([(item.input, item.ollama_jinja) for item in report.items
                                           if item.ollama_jinja is not None])
    return "\n".join(lines)


def summary(report: MigrationReport) -> str:
    """One line for the terminal."""
    counts = report.counts()
    parts = [f"{counts[s]} {s}" for s in STATUSES if counts[s]]
    return f"{len(report.items)} item(s): " + (", ".join(parts) or "nothing found")


@contextlib.contextmanager
def rich_progress() -> Iterator[Progress | None]:
    """A progress bar on stderr when it is a terminal; nothing otherwise (logs stay clean)."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console  # deferred: only a run on a terminal draws a bar
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("migrate"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("{task.description}"), console=Console(stderr=True),
                   transient=True)
    with bar:
        task = bar.add_task("", total=None)

        def update(done: int, total: int, label: str) -> None:
            bar.update(task, completed=done, total=total, description=label)

        yield update
