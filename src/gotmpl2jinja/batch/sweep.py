"""The corpus sweep: translate and verify every Go template of a corpus, one table row each.

Why: the translator's real test is the templates people use. The sweep finds every Go template
under the given folders — `*.gotmpl` files and the TEMPLATE of every Modelfile (unsloth's
`{__FILE_LOCATION__}` / `{__EOS_TOKEN__}` placeholders filled) — and for each one reports the
path Ollama renders it by, whether it translates (or the TranslationError, placed in the file
the user has: a Modelfile position is a Modelfile position), and what the differential harness
(`verify.verify_template`: Go against every engine) found, with the first minimal
counterexample. A Modelfile is verified as Ollama serves it: with its SYSTEM/MESSAGE rule, the
Jinja being `inputs.convert_source`'s (translation plus preamble) and the Go side Ollama's render
with the rule (`inputs.go_renderer`), as the `verify` command does. The Markdown table is
committed as docs/sweep.md; `--json` gives the same rows for tools.

Identical inputs (the corpus has many copies of a few templates; same template and same
SYSTEM/MESSAGE rule) are verified once and the result is reused: same input, same seed, same
answer.

May depend on: `batch.driver`, `emit`, `errors`, `ollama`, `syntax`, `verify` (tokens).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gotmpl2jinja.batch import driver
from gotmpl2jinja.emit.preamble import convert_source
from gotmpl2jinja.emit.translator import translate
from gotmpl2jinja.errors import (
    Gotmpl2JinjaError,
    ModelfileError,
    TemplateSyntaxError,
    translator_crash,
)
from gotmpl2jinja.ollama import facts
from gotmpl2jinja.ollama.modelfile import looks_like_modelfile, parse_modelfile
from gotmpl2jinja.ollama.reference import RenderTimeout
from gotmpl2jinja.ollama.source import (
    InputError,
    Source,
    char_column,
    no_such_file,
    source_from_modelfile,
    template_origin,
)
from gotmpl2jinja.syntax.parser import parse
from gotmpl2jinja.verify.tokens import TokenLevel

#: Unsloth's Modelfiles are templates for a generator; these stand in for its placeholders.
PLACEHOLDERS = {"{__FILE_LOCATION__}": "model.gguf", "{__EOS_TOKEN__}": "</s>"}

#: How long a counterexample may be in the table (the JSON output has it whole).
SHORT = 160

#: What a Modelfile's row label ends with (its TEMPLATE is the Go template).
TEMPLATE_LABEL = "#TEMPLATE"

#: Status words of a row.
EQUIVALENT = "equivalent"
DIVERGES = "diverges"
NOT_TRANSLATED = "not translated"
INVALID = "invalid input"
ERROR = "error"


@dataclass(frozen=True)
class SweepInput:
    """One Go template found in the corpus: where it came from and its source."""

    label: str  # path relative to the swept folder's parent, `#TEMPLATE` for a Modelfile's
    kind: str  # "gotmpl" or "Modelfile"
    source: str | None  # None when the Modelfile is invalid (see `problem`)
    problem: str | None = None
    #: A Modelfile's TEMPLATE with its SYSTEM/MESSAGE rule and where the template starts in it.
    modelfile: Source | None = None

    @property
    def key(self) -> str:
        """Same key, same verdict: the template and the Modelfile rule it is served with (a
        Modelfile without SYSTEM or MESSAGE is verified exactly as its bare template)."""
        served = self.modelfile
        rule = ([served.system, served.messages]
                if served is not None and served.has_modelfile_rule else None)
        text = json.dumps([self.source, rule], ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    @property
    def file(self) -> str:
        """The file a position is in: the Modelfile itself for a `#TEMPLATE` label."""
        return self.label.removesuffix(TEMPLATE_LABEL)


@dataclass
class SweepRow:
    """What the sweep found for one template."""

    template: str
    kind: str
    path: str = "—"  # "messages" / "legacy", "+ FIM" when the template reads .Suffix
    status: str = ERROR
    reason: str = ""  # why not translated / invalid / the harness error
    cases: int = 0
    #: Of `cases`, those Ollama refuses for a capability (think on a template that cannot
    #: think, tools on one without .Tools, a suffix on one without .Suffix): their own class,
    #: the Jinja checked against Go's rendering of the request without the refused option.
    refused: int = 0
    engines: list[str] = field(default_factory=list)
    diverging: list[str] = field(default_factory=list)  # engines with a divergence
    #: Per engine: cases a runtime context (llama-server) rendered differently for a kind the
    #: contract puts out of its scope, by kind (verify's EngineTally.runtime_differs).
    runtime_differs: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Per runtime context: the cases it compared (its own draws included: verify.percontext),
    #: and why it compared fewer than its share, where it did.
    compared: dict[str, int] = field(default_factory=dict)
    short: dict[str, str] = field(default_factory=dict)
    counterexample: dict[str, Any] | None = None  # the first divergence (minimal conversation)
    same_as: str | None = None  # an earlier row with the identical source
    seconds: float = 0.0


# ---------------------------------------------------------------------------------------------
# Finding the templates


def _is_modelfile(path: Path) -> bool:
    name = path.name.lower()
    if name == "modelfile" or name.endswith(".modelfile"):
        return True
    if path.suffix:  # README.md, SOURCE.md, LICENSE.txt, *.json … are never Modelfiles
        return False
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return looks_like_modelfile(path, text)


def find_inputs(folders: Iterable[str | Path]) -> list[SweepInput]:
    """Every Go template under `folders` (or the files given), sorted by label: .gotmpl files
    and the TEMPLATE of each Modelfile that has one (a Modelfile Ollama would reject is an
    input too, with its error). A folder's files are labelled from the folder's own name down,
    a file given by name by the path as given."""

    found: list[SweepInput] = []
    for folder in folders:
        root = Path(folder)
        if not root.exists():
            raise Gotmpl2JinjaError(no_such_file(str(folder)))
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        base = root.parent
        for path in files:
            # a file given by name is labelled as given: two `template.gotmpl` stay apart
            label = root.as_posix() if root.is_file() else path.relative_to(base).as_posix()
            if path.suffix == ".gotmpl":
                found.append(SweepInput(label, "gotmpl", path.read_bytes().decode("utf-8")))
            elif _is_modelfile(path):
                text = path.read_bytes().decode("utf-8")
                for placeholder, value in PLACEHOLDERS.items():
                    text = text.replace(placeholder, value)
                try:
                    modelfile = parse_modelfile(text, name=label)
                except ModelfileError as exc:
                    exc.name = label
                    found.append(SweepInput(label, "Modelfile", None, str(exc)))
                    continue
                if modelfile.template:  # an empty TEMPLATE sets nothing (`ollama create`)
                    try:
                        served = source_from_modelfile(modelfile)
                    except InputError as exc:  # a RENDERER: the template is not what it sees
                        found.append(SweepInput(label + TEMPLATE_LABEL, "Modelfile", None,
                                                str(exc)))
                        continue
                    served.origin = template_origin(text, modelfile, served)
                    found.append(SweepInput(label + TEMPLATE_LABEL, "Modelfile",
                                            served.template, modelfile=served))
    return sorted(found, key=lambda i: i.label)


# ---------------------------------------------------------------------------------------------
# One template


def execute_path(source: str, name: str) -> str:
    """Ollama's path for a chat ("messages"/"legacy"), "+ FIM" when it reads `.Suffix` (Ollama
    then also serves fill-in-the-middle requests with it)."""

    template = parse(source, name=name)
    path = facts.execute_path(template)
    return f"{path} + FIM" if "suffix" in facts.vars(template) else path


def sweep_one(item: SweepInput, *, cases: int, exhaustive: int | None, seed: int,
              engines: list[str] | None, tokens: TokenLevel | None = None) -> SweepRow:
    """Translate and verify one template; every expected failure is a row, not an exception
    (a broken reference renderer — Go missing — is raised: no row would be meaningful)."""
    row = SweepRow(template=item.label, kind=item.kind)
    served = item.modelfile
    start = time.perf_counter()
    try:
        if item.source is None:
            row.status, row.reason = INVALID, item.problem or "invalid"
            return row
        text = item.source

        def convert(_: Source) -> str:
            row.path = execute_path(text, item.file)
            bos = tokens.host.facts if tokens is not None else None
            return (translate(text, name=item.file, bos=bos) if served is None
                    else convert_source(served, bos))

        ran = driver.run(item.label, lambda: served or Source(item.file, text, "template"),
                         convert=convert, cases=cases, exhaustive=exhaustive, seed=seed,
                         engines=engines, name=item.label, tokens=tokens)
        exc = ran.error
        if ran.failed == driver.CONVERT:
            if isinstance(exc, TemplateSyntaxError):
                row.status, row.reason = INVALID, placed(exc, item)
            elif isinstance(exc, Gotmpl2JinjaError):  # TranslationError and the like
                row.status, row.reason = NOT_TRANSLATED, placed(exc, item)
            else:  # one translator bug must not stop the sweep
                row.status = ERROR
                row.reason = translator_crash(exc)
            return row
        if ran.failed == driver.VERIFY:
            if isinstance(exc, RenderTimeout):  # a runaway case: this template's verdict
                row.status, row.reason = ERROR, str(exc)
            elif isinstance(exc, Gotmpl2JinjaError):
                row.status, row.reason = ERROR, f"verification failed: {exc}"
            else:
                raise exc
            return row
        result = ran.result
        assert result is not None
        row.cases, row.engines = result.cases, list(result.engines)
        row.refused = result.refused
        row.diverging = [d.engine for d in result.divergences]
        row.runtime_differs = {name: dict(tally.runtime_differs)
                               for name, tally in result.counts.items() if tally.runtime_differs}
        row.compared = {name: tally.compared for name, tally in result.counts.items()
                        if name in result.contexts}
        row.short = {name: tally.short for name, tally in result.counts.items() if tally.short}
        row.status = EQUIVALENT if result.ok else DIVERGES
        if result.divergences:
            first = result.divergences[0]
            row.counterexample = {
                "engine": first.engine, "found_by": first.found_by,
                "conversation": first.conversation, "diff": first.diff,
                "go_output": first.go_output, "go_error": first.go_error,
                "jinja_output": first.jinja_output, "jinja_error": first.jinja_error,
            }
        return row
    finally:
        row.seconds = time.perf_counter() - start


def placed(exc: Gotmpl2JinjaError, item: SweepInput) -> str:
    """The error as FILE:LINE:COL: message in the file swept (a Modelfile's TEMPLATE position
    becomes a position in the Modelfile)."""
    if exc.line is not None and item.modelfile is not None:
        exc.line, exc.col = item.modelfile.locate(exc.line, exc.col)
    elif exc.line is not None and item.source is not None:
        exc.col = char_column(item.source, exc.line, exc.col)
    exc.name = item.file
    return str(exc)


def sweep(
    folders: Iterable[str | Path], *, cases: int = 2000, exhaustive: int | None = 1,
    seed: int = 0, engines: list[str] | None = None,
    progress: Callable[[int, int, SweepRow], None] | None = None,
    tokens: TokenLevel | None = None,
) -> list[SweepRow]:
    """A row for every template under `folders`, in label order."""
    inputs = find_inputs(folders)
    rows: list[SweepRow] = []
    done: dict[str, SweepRow] = {}
    for number, item in enumerate(inputs, 1):
        key = item.key
        earlier = done.get(key) if item.source is not None else None
        if earlier is not None:
            row = SweepRow(**{**asdict(earlier), "template": item.label, "kind": item.kind,
                              "same_as": earlier.same_as or earlier.template, "seconds": 0.0})
        else:
            row = sweep_one(item, cases=cases, exhaustive=exhaustive, seed=seed,
                            engines=engines, tokens=tokens)
            if item.source is not None:
                done[key] = row
        rows.append(row)
        if progress is not None:
            progress(number, len(inputs), row)
    return rows


# ---------------------------------------------------------------------------------------------
# Output


def _cell(text: str) -> str:
    """Text safe in a Markdown table cell: one line, pipes escaped, HTML-looking text kept."""
    flat = text.replace("\r\n", "⏎").replace("\n", "⏎").replace("\r", "␍")
    return flat.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(
        ">", "&gt;")


def _code(text: str) -> str:
    """An inline code span in a table cell (pipes must still be escaped there)."""
    flat = text.replace("\n", "⏎").replace("\r", "␍").replace("|", "\\|")
    fence = "`"
    while fence in flat:
        fence += "`"
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{flat}{pad}{fence}"


def short(text: str, limit: int = SHORT) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def engine_cell(row: SweepRow, engine: str) -> str:
    """One engine's verdict on a row: `=` (every case equal), `diverges`, `=, C compared; N out
    of scope: kind…` (a runtime context: the cases it compared, its own draws included, and
    the main draw's out-of-scope kinds; why it compared fewer than its share, where it did),
    or `—` (not run)."""
    if engine not in row.engines:
        return "—"
    if engine in row.diverging:
        return "**diverges**"
    kinds = row.runtime_differs.get(engine, {})
    compared = (f"{row.compared[engine]} compared"
                + (f" (short: {_cell(row.short[engine])})" if engine in row.short else "")
                if engine in row.compared else "")
    if not kinds:
        return "=" + (f", {compared}" if compared else "")
    listed = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
    return (f"=, {compared + '; ' if compared else ''}{sum(kinds.values())} out of scope: "
            f"{_cell(listed)}")


def row_cells(row: SweepRow, engines: list[str]) -> list[str]:
    """The table's cells for one row, in `table_columns(engines)` order."""
    if row.status in (EQUIVALENT, DIVERGES):
        translation = "translated"
    else:
        translation = f"{row.status}: {_cell(short(row.reason, 300))}"
    if row.same_as:
        translation += f" (same source as {_cell(row.same_as)})"
    example = "—"
    if row.counterexample is not None:
        conv = json.dumps(row.counterexample["conversation"], ensure_ascii=False)
        first_line = str(row.counterexample["diff"]).splitlines()[0]
        example = (f"{row.counterexample['engine']}: {_code(short(conv))} — "
                   f"{_cell(short(first_line, 120))}")
    verified = row.status in (EQUIVALENT, DIVERGES)
    counted = str(row.cases) if verified else "—"
    return [_cell(row.template), row.path, translation, counted,
            str(row.refused) if verified else "—",
            *(engine_cell(row, e) if verified else "—" for e in engines), example]


#: The columns before and after the engines' (one column per engine and context).
COLUMNS_BEFORE = ["template", "path", "translated or why not", "cases", "refused by Ollama"]
COLUMNS_AFTER = ["first counterexample (minimal conversation)"]


def table_columns(engines: list[str]) -> list[str]:
    """The table's header: the fixed columns around one column per engine."""
    return [*COLUMNS_BEFORE, *engines, *COLUMNS_AFTER]


def row_engines(rows: list[SweepRow]) -> list[str]:
    """Every engine some row ran on, in the order the rows name them."""
    return list(dict.fromkeys(e for row in rows for e in row.engines))


def summary(rows: list[SweepRow]) -> dict[str, int]:
    """How many rows have each status."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row.status] = counts.get(row.status, 0) + 1
    return counts


def summary_sentence(rows: list[SweepRow]) -> str:
    """The totals as a person reads them: `197 templates: 190 equivalent, 1 invalid input.`"""
    counts = summary(rows)
    noun = "template" if len(rows) == 1 else "templates"
    parts = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    totals = f"; {_case_totals(rows)}" if any(row.cases for row in rows) else ""
    return f"{len(rows)} {noun}: {parts or 'none found'}{totals}."


def _case_totals(rows: list[SweepRow]) -> str:
    """Cases over the verified rows (a reused row is not counted again), refusals apart."""
    unique = [row for row in rows if row.same_as is None]
    cases = sum(row.cases for row in unique)
    refused = sum(row.refused for row in unique)
    return (f"{cases} cases checked, {refused} of them refused by Ollama for a capability"
            " (rendered as if the option were absent)")


def to_markdown(rows: list[SweepRow], *, command: str, cases: int, exhaustive: int | None,
                seed: int, skipped: dict[str, str] | None = None) -> str:
    """The committed report: the command that made it, totals, then one row per template."""
    counts = summary(rows)
    engines = sorted({e for row in rows for e in row.engines})
    engines_run = row_engines(rows)
    lines = [
        "# Corpus sweep",
        "",
        f"Generated by `{command}` (seed {seed}; per template: the bounded-exhaustive pass "
        f"to depth {exhaustive if exhaustive is not None else 'none'}, then {cases} random "
        "conversations; a divergence stops the search on that engine, so a diverging row "
        "counts fewer cases).",
        "",
        f"Engines: {', '.join(engines) if engines else 'none ran'}"
        + ("".join(f"; skipped {name} ({why})" for name, why in (skipped or {}).items()))
        + ". Ground truth: the Go "
        "reference renderer (Ollama's server steps and Execute on Go's text/template). Equal "
        "means byte for byte, or Go failing exactly where the template raises. A request "
        "Ollama refuses for a capability (400: think on a template that cannot think, tools "
        "on one without .Tools, a suffix on one without .Suffix) is its own class, \"refused "
        "by Ollama\": the Jinja must render it as if the refused option were absent, checked "
        "against Go's rendering of that request.",
        "",
        "Templates: every `.gotmpl` file and the TEMPLATE of every Modelfile under the swept "
        f"folders (unsloth's placeholders filled: {', '.join(f'`{k}` → `{v}`' for k, v in PLACEHOLDERS.items())}). "  # noqa: E501
        "A Modelfile is verified with its SYSTEM/MESSAGE rule, as Ollama's server applies it: "
        "the Jinja is the translation plus the preamble `convert` writes, the Go side Ollama's "
        "render with the rule; a position in a Modelfile's row (LINE:COL) is a position in "
        "the Modelfile (placeholders filled). Identical inputs (same template, same rule) are "
        "verified once (\"same source as\").",
        "",
        f"**{len(rows)} templates:** "
        + ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        + f"; {_case_totals(rows)}.",
        "",
        *_runtime_differs_lines(rows),
        *_compared_lines(rows),
        "| " + " | ".join(table_columns(engines_run)) + " |",
        "|" + "---|" * len(table_columns(engines_run)),
    ]
    lines += ["| " + " | ".join(row_cells(row, engines_run)) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _runtime_differs_lines(rows: list[SweepRow]) -> list[str]:
    """The out-of-scope cases of the runtime contexts, totalled by engine and kind."""
    totals: dict[tuple[str, str], int] = {}
    for row in rows:
        if row.same_as is None:
            for engine, kinds in row.runtime_differs.items():
                for kind, n in kinds.items():
                    totals[(engine, kind)] = totals.get((engine, kind), 0) + n
    if not totals:
        return []
    listed = "; ".join(f"{engine}: {kind} {n}" for (engine, kind), n in sorted(totals.items()))
    sections = "*On llama-server*" + (", *On Ollama's own Jinja path*" if any(
        engine == "ollama-jinja" for engine, _ in totals) else "")
    return ["**Out of scope on a runtime context** (not compared: kinds of conversation no "
            "template can make that runtime render as Ollama, and requests it refuses: "
            f"docs/equivalence-contract.md, {sections}): " + listed + ".", ""]


def _compared_lines(rows: list[SweepRow]) -> list[str]:
    """The cases each runtime context compared, over the rows verified there, against the
    case budget; the templates where it compared fewer than its share, with why."""
    unique = [row for row in rows if row.same_as is None]
    engines = list(dict.fromkeys(e for row in unique for e in row.compared))
    if not engines:
        return []
    totals = []
    for engine in engines:
        ran = [row for row in unique if engine in row.compared]
        compared, budget = sum(r.compared[engine] for r in ran), sum(r.cases for r in ran)
        short = [r for r in ran if engine in r.short]
        totals.append(f"{engine} {compared} of {budget} ({compared / max(budget, 1):.0%})"
                      + (f", {len(short)} template(s) short: " + "; ".join(
                          f"{_cell(r.template)} ({_cell(r.short[engine])})" for r in short)
                         if short else ""))
    return ["**Compared per runtime context** (the main draw's cases in scope there and the "
            "context's own draws, steered to its scope until it compared 90% of the cases: "
            "docs/equivalence-contract.md, *On llama-server*): " + "; ".join(totals) + ".", ""]


def to_json(rows: list[SweepRow]) -> list[dict[str, Any]]:
    """The rows as JSON-ready dicts (counterexamples whole)."""
    return [asdict(row) for row in rows]


def progress_line(number: int, total: int, row: SweepRow) -> str:
    """One line per template for stderr while sweeping."""
    what = row.status
    if row.status in (EQUIVALENT, DIVERGES):
        what += f", {row.cases} cases ({row.refused} refused by Ollama)"
        if row.diverging:
            what += f" (diverges on {', '.join(row.diverging)})"
        if row.compared:
            what += "; compared " + ", ".join(f"{name} {n}" for name, n in row.compared.items())
    if row.same_as:
        what += f" (same source as {row.same_as})"
    return f"[{number}/{total}] {row.template}: {what} ({row.seconds:.1f} s)"
