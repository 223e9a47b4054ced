"""`verify`: one input checked against Go on generated conversations — its translation, or a
Jinja the user wrote — with progress, and every divergence shrunk to a minimal conversation.

Why here: the `verify` command and the playground's verify button run the same check on the
same inputs (a file, a pasted text, an installed model), and word a failed input alike; a
failure of the input (it does not parse, a render loops) is the verdict's `error`, never an
exception that would end a batch or take a server down.

May depend on: `batch.files`, `engines` (the tokenizer), `ollama`, `verify`.
"""

from __future__ import annotations

from pathlib import Path

from gotmpl2jinja.batch.files import FileVerdict, verify_file, verify_input
from gotmpl2jinja.engines.tokenizer import vocabulary
from gotmpl2jinja.ollama.source import Source, load_source
from gotmpl2jinja.ollama.vocab import facts_from_gguf
from gotmpl2jinja.verify.exhaustive import exhaustive_count
from gotmpl2jinja.verify.outcomes import Progress
from gotmpl2jinja.verify.tokens import HostTokens, TokenLevel

#: What `verify` returns: the input's label (`path`), its kind, warnings, and the
#: `VerifyResult` (cases, engines, divergences with their minimal conversations) or `error`.
Verification = FileVerdict


def planned_cases(cases: int, exhaustive: int | None = None) -> int:
    """How many conversations a verification checks (a progress bar's total)."""
    return cases + (exhaustive_count(exhaustive) if exhaustive is not None else 0)


def token_level(gguf: str | Path | None) -> TokenLevel | None:
    """Compare as the hosts tokenize, on this GGUF's vocabulary (llama.cpp's tokenizer; None
    without one); a file that is not a GGUF with a tokenizer is one sentence naming it."""
    if gguf is None:
        return None
    vocab = vocabulary(gguf)  # (llama.cpp's own reading first: its sentence names the file)
    return TokenLevel(HostTokens.of_vocabulary(vocab, facts_from_gguf(gguf)), vocab)


def verify(source: Source | Path, *, jinja: str | Path | None = None, cases: int = 200,
           exhaustive: int | None = None, seed: int = 0, engines: list[str] | None = None,
           progress: Progress | None = None, tokens: TokenLevel | None = None,
           kind: str = "auto", family: str | None = None) -> Verification:
    """Verify an input — a file (`Path`: a Go template or a Modelfile, read as `kind`) or a
    `Source` from `read_input` — against `jinja` (a Jinja text, or a `Path` to one) or its
    translation, on `engines` (default: every available one), with `cases` random
    conversations after an exhaustive pass of depth `exhaustive`, drawn from `seed`.
    `progress` is called with the number of cases checked so far (`planned_cases` is the
    total). `tokens`: compare as the hosts tokenize (`token_level`). `family`: the model's
    family (`--family`). Returns a `Verification`; `ok` when nothing diverged."""
    if isinstance(source, Path) and not isinstance(jinja, str):
        return verify_file(source, jinja_path=jinja, cases=cases, exhaustive=exhaustive,
                           engines=engines, seed=seed, progress=progress, kind=kind,
                           tokens=tokens, family=family)
    if isinstance(source, Path):
        path = source
        label = str(path)

        def read() -> Source:
            return load_source(str(path), kind=kind)
    else:
        given = source
        label = given.name

        def read() -> Source:
            return given

    def text() -> str:
        return jinja.read_bytes().decode("utf-8") if isinstance(jinja, Path) else jinja or ""

    return verify_input(label, read, jinja=text if jinja is not None else None, cases=cases,
                        exhaustive=exhaustive, engines=engines, seed=seed, progress=progress,
                        tokens=tokens, family=family)
