"""`migrate --format gguf`: does Ollama's own Jinja path give its Go path's bytes, per model?

A GGUF whose chat template is the translation is what Ollama serves through llama-server when
the model has no Go TEMPLATE (or prefers the GGUF's template): then the prompt is the one the
`ollama-jinja` context renders (Ollama's request conversion, then llama-server's chat code). So
a gguf migration verifies on that context too and reports, per model, whether it gave the Go
path's bytes on every case in its scope, and each kind of case where Ollama's own conversion
(or llama-server after it) makes that impossible, counted — never hidden. It is a report: the
contract's equivalence (the other engines) decides whether the file is written.

May depend on: `engines`, `errors`, `ollama`, `verify`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gotmpl2jinja.engines.registry import ENGINES
from gotmpl2jinja.errors import Gotmpl2JinjaError
from gotmpl2jinja.ollama.modelfile import parse_modelfile
from gotmpl2jinja.ollama.source import OLLAMA_PREFIX
from gotmpl2jinja.ollama.store import load_model
from gotmpl2jinja.verify.outcomes import VerifyResult

ENGINE = "ollama-jinja"


def with_ollama_jinja(fmt: str, engines: list[str], skipped: dict[str, str]
                      ) -> tuple[list[str], dict[str, str]]:
    """The engines of a migration: a gguf one adds `ollama-jinja` (or says why it cannot)."""
    if fmt != "gguf" or ENGINE in engines:
        return engines, skipped
    why = ENGINES[ENGINE].unavailable()
    if why is not None:
        return engines, {**skipped, ENGINE: why}
    return [*engines, ENGINE], skipped


def report(result: VerifyResult) -> dict[str, Any] | None:
    """What Ollama's Jinja path did on one model: `same_bytes` (every case in scope agreed),
    the cases compared, the out-of-scope kinds counted, and the first divergence's diff."""
    tally = result.counts.get(ENGINE)
    if tally is None:
        return None
    divergence = next((d for d in result.divergences if d.engine == ENGINE), None)
    return {
        "same_bytes": divergence is None,
        "compared": tally.equal + tally.both_failed + tally.refused,
        "out_of_scope": dict(sorted(tally.runtime_differs.items())),
        "diff": None if divergence is None else divergence.diff,
        "conversation": None if divergence is None else divergence.conversation,
    }


def sentence(found: dict[str, Any]) -> str:
    """One line for a model's row: same bytes or not, then each kind and its count."""
    head = (f"same bytes as the Go path on {found['compared']} case(s) in scope"
            if found["same_bytes"] else
            f"differs from the Go path: {' '.join(str(found['diff']).split())[:200]}")
    kinds = found["out_of_scope"]
    if not kinds:
        return head
    return head + "; Ollama's conversion or llama-server makes these impossible: " + ", ".join(
        f"{kind} {n}" for kind, n in kinds.items())


def markdown_section(items: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """The report's section on Ollama's own Jinja path (empty when nothing was checked)."""
    if not items:
        return []
    lines = ["## Ollama's own Jinja path", "",
             "What Ollama itself renders from each GGUF's chat template (no Go TEMPLATE: "
             "its request conversion, then llama-server's chat code; engine `ollama-jinja`, "
             "docs/equivalence-contract.md, *On Ollama's own Jinja path*). A report: it does "
             "not decide whether the file is written.", "",
             "| input | Ollama's Jinja path |", "| --- | --- |"]
    for label, found in items:
        text = sentence(found).replace("|", "\\|").replace("`", "'")
        lines.append(f"| `{label}` | {text} |")
    lines.append("")
    return lines


def gguf_source(path: Path | None, label: str, models_dir: Path | None,
                is_modelfile: bool) -> Path | str:
    """The GGUF a gguf migration copies with the template set, or why there is none: an
    installed model's weights layer, or the file a Modelfile's FROM names (relative to the
    Modelfile); a bare template has no model."""
    if path is None:
        model = load_model(label[len(OLLAMA_PREFIX):], models_dir)
        return model.model_path or "the installed model has no weights layer to copy"
    if not is_modelfile:
        return ("a bare template has no model to copy (a Modelfile whose FROM names a .gguf "
                "file, or an installed model, has one)")
    try:
        modelfile = parse_modelfile(path.read_bytes(), label)
    except (OSError, Gotmpl2JinjaError) as exc:
        return f"its model cannot be found ({exc})"
    named = modelfile.from_ or ""
    if not named.lower().endswith(".gguf"):
        return f"its FROM {named!r} is not a .gguf file to copy"
    candidate = path.parent / Path(named).expanduser()
    return candidate if candidate.is_file() else f"its FROM {named!r} is not a file here"
