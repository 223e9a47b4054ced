"""The `verify` command's job: every input file named (a template or a Modelfile, or the
folders holding them), read, translated when no Jinja is given, and verified; one verdict each.

May depend on: `batch.driver`, `batch.migrate` (finding inputs), `emit`, `engines`, `errors`,
`ollama`, `verify`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gotmpl2jinja.batch import driver
from gotmpl2jinja.batch.migrate import discover
from gotmpl2jinja.emit.preamble import convert_source
from gotmpl2jinja.emit.translator import translate
from gotmpl2jinja.engines.registry import (
    ENGINES,
    EngineTimeout,
    unknown_engine,
)
from gotmpl2jinja.errors import (
    Gotmpl2JinjaError,
    reporting_crash,
)
from gotmpl2jinja.ollama.reference import RenderTimeout
from gotmpl2jinja.ollama.source import (
    Source,
    apply_family,
    jinja_hint,
    load_source,
    no_such_file,
)
from gotmpl2jinja.ollama.vocab import BosFacts
from gotmpl2jinja.verify.outcomes import Progress, VerifyResult
from gotmpl2jinja.verify.tokens import TokenLevel


def template_inputs(paths: Iterable[str]) -> list[Path]:
    """The inputs named: files as given (a template or a Modelfile), directories recursively —
    templates (*.gotmpl, *.tmpl) and Modelfiles, found as `migrate` finds them, sorted."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(discover(path))
        elif path.is_file():
            found.append(path)
        else:
            raise Gotmpl2JinjaError(no_such_file(str(raw)))
    return found


def parse_engine_list(text: str | None) -> list[str] | None:
    """`a,b` → ["a", "b"], checking each name (None means every engine)."""
    if text is None:
        return None
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in ENGINES]
    if unknown or not names:
        raise unknown_engine(unknown)
    return names


@dataclass
class FileVerdict:
    """One input file's result: a VerifyResult, or why it could not be verified."""

    path: str
    result: VerifyResult | None = None
    error: str | None = None
    kind: str = "template"  # or "modelfile" (verified with its SYSTEM/MESSAGE rule)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.result is not None and self.result.ok


def verify_file(
    path: Path, *, jinja_path: Path | None = None, cases: int = 200,
    exhaustive: int | None = None, engines: list[str] | None = None, seed: int = 0,
    progress: Progress | None = None, kind: str = "auto", tokens: TokenLevel | None = None,
    family: str | None = None,
) -> FileVerdict:
    """Verify one input file — a Go template, or a Modelfile with its SYSTEM/MESSAGE rule on
    both sides (`inputs.convert_source`'s preamble against Ollama's render with the rule) —
    against `jinja_path`, or against its translation. An unreadable, unparsable or
    untranslatable input is a verdict (its message placed in the file), not a crash; so is a
    render that runs past the timeout, on Go or an engine. `kind` is `load_source`'s;
    `family` the model's family (`--family`), whose steps both sides take."""
    def read() -> Source:
        return load_source(str(path), kind=kind)

    jinja = None if jinja_path is None else (lambda: jinja_path.read_bytes().decode("utf-8"))
    return verify_input(str(path), read, jinja=jinja, cases=cases, exhaustive=exhaustive,
                        engines=engines, seed=seed, progress=progress, tokens=tokens,
                        family=family, name=path.stem)


def verify_input(
    label: str, read: Callable[[], Source], *, jinja: Callable[[], str] | None = None,
    cases: int = 200, exhaustive: int | None = None, engines: list[str] | None = None,
    seed: int = 0, progress: Progress | None = None, tokens: TokenLevel | None = None,
    family: str | None = None, name: str | None = None,
) -> FileVerdict:
    """`verify_file` for any input: `read` gives its Source (a file, a pasted text, an
    installed model), `label` names it in messages (the file's path), `jinja` gives the Jinja
    to compare (None: the translation), `name` names the template in the result (default:
    the label's stem). The verdict's error is placed in the input as the user sees it."""
    verdict = FileVerdict(path=label)
    stem = Path(label).stem if name is None else name

    def convert(source: Source) -> str:
        if jinja is not None:
            return jinja()
        return _converted(source, stem, tokens.host.facts if tokens else None)

    def read_with_family() -> Source:
        source = read()
        notice = apply_family(source, family)
        if notice:
            source.warnings.append(notice.removeprefix("note: "))
        return source

    ran = driver.run(label, read_with_family, convert=convert,
                     cases=cases, exhaustive=exhaustive, engines=engines, seed=seed,
                     name=stem, progress=progress, tokens=tokens)
    exc = ran.error
    if ran.failed == driver.READ:  # ModelfileError, InputError: placed already
        assert isinstance(exc, Gotmpl2JinjaError)
        if exc.name is None:
            exc.name = label
        verdict.error = str(exc)
        return verdict
    source = ran.source
    assert source is not None
    verdict.kind, verdict.warnings = source.kind, list(source.warnings)
    if isinstance(exc, (RenderTimeout, EngineTimeout)):  # this input's fault: say so, go on
        verdict.error = f"{label}: {exc}"
    elif isinstance(exc, Gotmpl2JinjaError):
        if exc.line is not None:  # a Modelfile's TEMPLATE position → a position in the file
            exc.line, exc.col = source.locate(exc.line, exc.col)
        exc.name = label
        jinja_hint(exc, source.template)
        verdict.error = str(exc)
    elif exc is not None:  # not an input's fault (an unreadable --jinja file is checked first)
        raise exc
    verdict.result = ran.result
    return verdict


def _converted(source: Source, name: str, bos: BosFacts | None = None) -> str:
    """The Jinja to verify: a Modelfile's translation plus preamble, a template's translation
    (named `name`, as the command names the file), with the BOS facts of --gguf when given; a
    crash is a sentence (`reporting_crash`)."""
    if source.kind == "modelfile":
        return reporting_crash(lambda: convert_source(source, bos))
    return reporting_crash(lambda: translate(source.template, name=name, bos=bos,
                                             family=source.family))


def summary_line(result: VerifyResult, path: str) -> str:
    """One line per template: name, path, cases, engines, divergences; the cases a runtime
    context put out of scope, per engine with the number it compared (the contexts draw
    different kinds, so a sum over them would say nothing); a context that compared fewer
    than its share says so in the verdict."""
    verdict = "equivalent" if result.ok else "DIVERGES"
    if result.shortfalls:
        verdict += " (" + "; ".join(f"{name}: {why}"
                                    for name, why in result.shortfalls.items()) + ")"
    differs = runtime_differs_field(result)
    return (f"{result.name}\t{path}\tcases={result.cases}\tengines={','.join(result.engines)}"
            f"\trefused={result.refused}"
            + (f"\truntime-differs={differs}" if differs else "")
            + f"\tdivergences={len(result.divergences)}\t{verdict}")


def runtime_differs_field(result: VerifyResult) -> str:
    """`llamacpp-server:144 (compared 181 of 200),minja-server:193 (compared 180 of 200)`: the
    main draw's out-of-scope cases, and the cases compared, a runtime context's own draws
    (`verify.percontext`) included."""
    parts = []
    for name, tally in result.counts.items():
        out = sum(tally.runtime_differs.values())
        if out:
            parts.append(f"{name}:{out} (compared {tally.compared} of {tally.cases})")
    return ",".join(parts)
