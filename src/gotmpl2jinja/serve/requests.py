"""The page's requests, each answered by the pipeline's library API (`gotmpl2jinja.pipeline`:
the same read, convert, render and verify the commands call), as plain JSON data.

Only what is the page's own lives here: which of its fields is which argument (an uploaded
file's id, a shipped vocabulary's name), and how a result is laid out for the page (the lines
of the runtime-macro block it folds). Everything runs inside the worker process
(`serve.worker`), one request at a time.

May depend on: emit (the runtime block's markers), engines (the shipped vocabularies),
errors, ollama, pipeline, verify (the conversation read as Ollama's server reads a request).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from gotmpl2jinja import pipeline
from gotmpl2jinja.emit.runtime import MACROS_INTRO, MACROS_OUTRO
from gotmpl2jinja.engines.registry import select_engines
from gotmpl2jinja.engines.tokenizer import shipped_vocabularies, tokenizer_state
from gotmpl2jinja.errors import Gotmpl2JinjaError
from gotmpl2jinja.ollama.source import OLLAMA_PREFIX, Source
from gotmpl2jinja.ollama.store import list_models
from gotmpl2jinja.ollama.vocab import (
    BosFacts,
    explicit_facts,
    facts_from_gguf,
    facts_from_tokenizer_config,
)
from gotmpl2jinja.pipeline.reading import Notes
from gotmpl2jinja.pipeline.rendering import with_flags
from gotmpl2jinja.verify.conversation import ConversationError

#: The host flags the page sets beside the conversation.
FLAGS = ("think", "add_generation_prompt", "continue_final_message")


class PlaygroundError(Gotmpl2JinjaError):
    """A request the playground cannot act on (a missing field, an upload that is gone)."""


def error_json(exc: Gotmpl2JinjaError) -> dict[str, Any]:
    """An error for the page: the CLI's one line, and where (line, column) when it has one;
    `where` says which editor it belongs to."""
    where = "conversation" if isinstance(exc, ConversationError) else "input"
    return {"message": str(exc), "line": exc.line, "col": exc.col, "where": where}


# ---------------------------------------------------------------------------------------------
# The request's fields


def read_input(request: dict[str, Any], models_dir: Path | None) -> Source:
    """The Source a request names: pasted or uploaded text (a Go template or a Modelfile), or
    an installed model (read-only from the store)."""
    model = request.get("model")
    if model:
        return pipeline.read_input(f"{OLLAMA_PREFIX}{model}", store=models_dir)
    text = request.get("text")
    if not isinstance(text, str):
        raise PlaygroundError("give a Go template or a Modelfile")
    return pipeline.read_input(text=text, name=str(request.get("name") or "template"),
                               kind=request.get("kind") or "auto", store=models_dir)


def upload(key: str, uploads: dict[str, Path]) -> Path:
    if key not in uploads:
        raise PlaygroundError("that uploaded file is gone (the server was restarted): "
                              "upload it again")
    return uploads[key]


def vocab_path(name: str, uploads: dict[str, Path]) -> Path:
    """A vocabulary: `shipped:NAME` (llama.cpp's vocabulary-only GGUFs) or an upload's id."""
    if name.startswith("shipped:"):
        found = shipped_vocabularies().get(name.removeprefix("shipped:"))
        if found is None:
            raise PlaygroundError(f"no shipped vocabulary {name.removeprefix('shipped:')!r} "
                                  "(`gotmpl2jinja engines install tokenizer` copies them)")
        return found
    return upload(name, uploads)


def bos_options(request: dict[str, Any], uploads: dict[str, Path]) -> dict[str, Any]:
    """`convert`'s BOS arguments from the page: --gguf (a vocabulary), --tokenizer-config,
    --bos/--no-bos."""
    bos = request.get("bos")
    return {"gguf": vocab_path(request["vocab"], uploads) if request.get("vocab") else None,
            "tokenizer_config": (upload(request["tokenizer_config"], uploads)
                                 if request.get("tokenizer_config") else None),
            "bos": {"on": True, "off": False}.get(bos) if isinstance(bos, str) else None}


def given_jinja(request: dict[str, Any], what: str) -> str:
    jinja = request.get("jinja")
    if not isinstance(jinja, str):
        raise PlaygroundError(f"translate first: there is no Jinja to {what}")
    return jinja


def flags(request: dict[str, Any]) -> dict[str, Any]:
    given = request.get("flags") or {}
    return {key: given.get(key) for key in FLAGS} if isinstance(given, dict) else {}


# ---------------------------------------------------------------------------------------------
# The answers


def choices(models_dir: Path | None) -> dict[str, Any]:
    """What the page offers: installed models, shipped vocabularies, the engines."""
    selection = select_engines()
    try:
        models = list_models(models_dir)
    except OSError:
        models = []
    return {"models": models, "vocabularies": sorted(shipped_vocabularies()),
            "engines": selection.used, "skipped": selection.skipped}


def convert(request: dict[str, Any], models_dir: Path | None,
            uploads: dict[str, Path]) -> dict[str, Any]:
    """`convert` (the page's own Jinja checked instead when it is edited): the Jinja, the
    check's verdict per engine, `convert`'s notes, the BOS facts, the files it writes."""
    source = read_input(request, models_dir)
    edited = request.get("jinja")
    done = pipeline.convert(source, **bos_options(request, uploads), strict=False,
                            check=bool(request.get("check", True)),
                            jinja=edited if isinstance(edited, str) else None)
    data: dict[str, Any] = {
        "jinja": done.jinja, "runtime": runtime_lines(done.jinja), "name": done.name,
        "kind": done.kind, "system": source.system, "edited": isinstance(edited, str),
        "facts": facts_json(done.bos),
        "notes": [note.text for note in done.notes if note.kind != "checked"],
        "verdict": {}, "files": {f.format: {"filename": f.name, "text": f.text}
                                 for f in done.files}}
    if done.check is not None:
        data["verdict"] = verdicts(done.check)
        engines = sorted({d.engine for d in done.check.divergences})
        data["check"] = next((n.text for n in done.notes if n.kind == "checked"),
                             f"renders other bytes than Ollama on {', '.join(engines)}")
        data["divergences"] = [divergence_json(d) for d in done.check.divergences]
    return data


def runtime_lines(jinja: str) -> list[int] | None:
    """The 1-based first and last lines of the runtime-macro block (the page folds it under
    its name), None when the Jinja has none."""
    lines = jinja.split("\n")
    try:
        first = lines.index(MACROS_INTRO)
        last = lines.index(MACROS_OUTRO, first)
    except ValueError:
        return None
    return [first + 1, last]


def verdicts(result: Any) -> dict[str, str]:
    """Per engine: equivalent on N cases (and those out of scope on a runtime), or diverges."""
    diverged = {d.engine for d in result.divergences}
    found = {}
    for name, tally in result.counts.items():
        outside = sum(tally.runtime_differs.values())
        found[name] = "diverges" if name in diverged else (
            f"equivalent on {tally.cases - outside} cases"
            + (f" ({outside} out of scope on this runtime)" if outside else ""))
    return found


def divergence_json(div: Any) -> dict[str, Any]:
    return {"engine": div.engine, "conversation": div.conversation, "diff": div.diff,
            "go_output": div.go_output, "go_error": div.go_error,
            "jinja_output": div.jinja_output, "jinja_error": div.jinja_error,
            "found_by": div.found_by}


def facts_json(facts: BosFacts | None) -> dict[str, Any] | None:
    if facts is None:
        return None
    return {"adds_bos": facts.adds_bos, "bos_token": facts.bos_token,
            "eos_token": facts.eos_token, "source": facts.source, "rule": facts.rule}


def facts(request: dict[str, Any], models_dir: Path | None,
          uploads: dict[str, Path]) -> dict[str, Any] | None:
    """The BOS facts of an uploaded GGUF or tokenizer_config.json (as --gguf and
    --tokenizer-config read them)."""
    if request.get("vocab"):
        found = facts_from_gguf(vocab_path(request["vocab"], uploads))
    else:
        found = facts_from_tokenizer_config(upload(str(request.get("tokenizer_config")),
                                                   uploads))
    bos = request.get("bos")
    return facts_json(explicit_facts(bos == "on", found) if bos in ("on", "off") else found)


def read_conversation(request: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The conversation editor's text read as the `render` command reads a conversation file:
    as Ollama's server reads an /api/chat body (`verify.request`; a key that cannot reach
    the template is named in a note), the reading checked by Go; and its notes."""
    text = request.get("conversation")
    if not isinstance(text, str):
        raise ConversationError("give the conversation as JSON text")
    notes = Notes()
    return pipeline.read_conversation(text, on_note=notes), [n.text for n in notes]


def check_conversation(request: dict[str, Any], models_dir: Path | None,
                       uploads: dict[str, Path]) -> dict[str, Any]:
    """The conversation editor's text with the host's flags, checked as `render` reads it."""
    conversation, notes = read_conversation(request)
    return {"conversation": with_flags(conversation, **flags(request)), "notes": notes}


def render(request: dict[str, Any], models_dir: Path | None,
           uploads: dict[str, Path]) -> dict[str, Any]:
    """One conversation on Go and every engine (`pipeline.render`): each engine's text or
    error, whether it agrees with Go, where it first differs, its tokens with a vocabulary."""
    source = read_input(request, models_dir)
    jinja = given_jinja(request, "render")
    conversation, notes = read_conversation(request)
    options = bos_options(request, uploads)
    bos = pipeline.bos_facts(source, **options)
    found = pipeline.render(source, conversation, jinja=jinja, bos=bos,
                            tokens=tokens_of(options["gguf"]), **flags(request))
    rows = [{"engine": name, "server": r.server, "text": r.text, "error": r.error,
             "out_of_scope": r.out_of_scope, "agrees": r.agrees, "expected": r.expected,
             "diff_at": r.first_difference,
             "tokens": None if r.tokens is None else {
                 "ollama": r.tokens.ollama, "engine": r.tokens.engine,
                 "first_difference": r.tokens.first_difference}}
            for name, r in found.engines.items()]
    return {"go": {"text": found.go.text, "error": found.go.error, "refused": found.go.refused},
            "engines": rows, "conversation": found.conversation, "call": found.call,
            "specials": found.specials, "compared_on": found.compared_on,
            "notes": notes + [note.text for note in found.notes]}


def tokens_of(gguf: Path | None) -> Any:
    """The token view's vocabulary, when there is one and llama.cpp's tokenizer is built
    (without it the BOS rule is compared as text)."""
    if gguf is None or tokenizer_state() is not None:
        return None
    return pipeline.token_level(gguf)


def verify(request: dict[str, Any], models_dir: Path | None, uploads: dict[str, Path],
           progress: Callable[[int], None]) -> dict[str, Any]:
    """`verify` (`--jinja` with the page's Jinja) on N generated conversations and every
    available engine; each divergence with its minimal conversation and diff."""
    source = read_input(request, models_dir)
    jinja = given_jinja(request, "verify")
    cases = request.get("cases", 50)
    if isinstance(cases, bool) or not isinstance(cases, int) or not 1 <= cases <= 5000:
        raise PlaygroundError("cases: give a whole number from 1 to 5000")
    seed = request.get("seed", 0)
    gguf = bos_options(request, uploads)["gguf"]
    found = pipeline.verify(source, jinja=jinja, cases=cases, progress=progress,
                            seed=seed if isinstance(seed, int) else 0, tokens=tokens_of(gguf))
    if found.result is None:
        raise PlaygroundError(found.error or "verify failed")
    result = found.result
    return {"cases": result.cases, "engines": result.engines, "ok": result.ok,
            "verdict": verdicts(result), "refused": result.refused,
            "divergences": [divergence_json(d) for d in result.divergences],
            "skipped": result.skipped, "warnings": found.warnings}


def download(request: dict[str, Any], models_dir: Path | None,
             uploads: dict[str, Path]) -> dict[str, Any]:
    """The file `convert --format FMT` writes for the page's Jinja: its name and text."""
    source = read_input(request, models_dir)
    done = pipeline.convert(source, **bos_options(request, uploads), check=False,
                            jinja=given_jinja(request, "download"))
    fmt = request.get("format")
    for file in done.files:
        if file.format == fmt:
            return {"filename": file.name, "text": file.text}
    raise PlaygroundError(f"unknown format {fmt!r}; choose from "
                          f"{', '.join(f.format for f in done.files)}")
