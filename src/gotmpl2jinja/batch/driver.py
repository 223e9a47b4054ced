"""One source through the pipeline: read → convert → verify, and what became of it (`Verdict`).

`migrate`, `sweep` and `verify` (the command: `batch.files`) run every input through `run`; they
differ only in how they read an input, how they convert it, and how they word a verdict. A
step's failure is part of the verdict, never an exception of the batch — except a broken
reference renderer (Go missing…), which no verdict could be meaningful without: it is raised
(a render that runs past the timeout is the input's verdict, though the renderer restarts).

May depend on: `errors`, `ollama`, `verify`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gotmpl2jinja.errors import Gotmpl2JinjaError, ReferenceRendererError
from gotmpl2jinja.ollama.reference import RenderTimeout
from gotmpl2jinja.ollama.source import Source
from gotmpl2jinja.verify.goside import go_renderer
from gotmpl2jinja.verify.harness import verify_template
from gotmpl2jinja.verify.outcomes import Progress, VerifyResult
from gotmpl2jinja.verify.tokens import TokenLevel

#: The steps, in order; `Verdict.failed` names the one that failed.
READ, CONVERT, VERIFY = "read", "convert", "verify"


@dataclass
class Verdict:
    """What became of one input: its Source, its Jinja and the verification's result, as far
    as the steps went; `failed` and `error` say where and why they stopped."""

    label: str
    source: Source | None = None
    jinja: str | None = None
    result: VerifyResult | None = None
    failed: str | None = None  # READ, CONVERT, VERIFY; None when every step ran
    error: BaseException | None = None


def run(label: str, read: Callable[[], Source], convert: Callable[[Source], str], *,
        cases: int = 200, exhaustive: int | None = None, seed: int = 0,
        engines: list[str] | None = None, name: str | None = None,
        progress: Progress | None = None,
        tokens: TokenLevel | Callable[[], TokenLevel | None] | None = None) -> Verdict:
    """Read the input, convert it (`emit.preamble.convert_source` for the translation with
    the Modelfile preamble, or the caller's own conversion) and verify the Jinja against Go
    (with the Modelfile rule on the Go side when there is one).

    Reading fails with a Gotmpl2JinjaError (any other exception is a bug and propagates);
    converting and verifying may fail with anything, which the verdict keeps for the caller to
    word — a translator crash must not stop a batch. `name` names the template in the result
    (default: the Source's name). `tokens`: compare as the hosts tokenize (`--gguf`), or a
    function giving that after the conversion (the facts the conversion found).
    """
    verdict = Verdict(label=label)
    try:
        verdict.source = source = read()
    except Gotmpl2JinjaError as exc:  # ModelfileError, InputError, StoreError
        verdict.failed, verdict.error = READ, exc
        return verdict
    try:
        verdict.jinja = convert(source)
    except Exception as exc:  # noqa: BLE001 - the caller words a failed conversion
        verdict.failed, verdict.error = CONVERT, exc
        return verdict
    if callable(tokens):
        tokens = tokens()
    try:
        verdict.result = verify_template(
            source.template, verdict.jinja, cases=cases, exhaustive=exhaustive, seed=seed,
            engines=engines, name=source.name if name is None else name, progress=progress,
            render=go_renderer(source) if source.has_modelfile_rule or source.family
            else None, tokens=tokens,
        )
    except RenderTimeout as exc:  # a runaway case: this input's verdict, not the batch's
        verdict.failed, verdict.error = VERIFY, exc
    except ReferenceRendererError:
        raise
    except Exception as exc:  # noqa: BLE001 - the caller words a failed verification
        verdict.failed, verdict.error = VERIFY, exc
    return verdict
