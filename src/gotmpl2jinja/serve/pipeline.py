"""The playground's one way into the pipeline: read an input, translate and check it, render
one conversation on Go and every engine, verify, write the files `convert` writes.

A thin adapter over the stages the CLI calls (`ollama.source`, `emit.preamble`,
`verify.check`, `verify.harness`, `formats.writers`), so that the page does what the commands
do and no step is written twice. The helpers that place an error in the file the user has open
(`pipeline.reading.placed_in`, `go_syntax_placed`, `pipeline.converting.flags_line`) come in
as `Placement`, handed over by the `serve` command. Everything here
runs inside the worker process (`serve.worker`), one request at a time, and answers plain JSON
data.

May depend on: emit, engines, errors, formats, ollama, verify.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gotmpl2jinja.emit.legacy import collect_warnings
from gotmpl2jinja.emit.preamble import convert_source
from gotmpl2jinja.emit.runtime import MACROS_INTRO, MACROS_OUTRO
from gotmpl2jinja.engines.base import DEFAULT_NOW
from gotmpl2jinja.engines.registry import ENGINES, get_engine, select_engines
from gotmpl2jinja.errors import Gotmpl2JinjaError
from gotmpl2jinja.formats.writers import write_output
from gotmpl2jinja.ollama.source import (
    OLLAMA_PREFIX,
    Source,
    load_source,
    source_from_bytes,
)
from gotmpl2jinja.ollama.store import list_models
from gotmpl2jinja.ollama.vocab import (
    BosFacts,
    explicit_facts,
    facts_from_gguf,
    facts_from_tokenizer_config,
    undecided_line,
)
from gotmpl2jinja.verify import harness
from gotmpl2jinja.verify.check import bos_rule, check_engines, check_line, check_translation
from gotmpl2jinja.verify.conversation import validate
from gotmpl2jinja.verify.goside import go_renderer
from gotmpl2jinja.verify.outcomes import Outcome
from gotmpl2jinja.verify.tokens import HostTokens, TokenLevel, convention, template_specials

#: What the page downloads, as `convert --format` names them, with the file each one writes.
DOWNLOADS = {"jinja": "chat_template.jinja", "hf": "tokenizer_config.json",
             "lmstudio": "lmstudio-config.json"}


@dataclass(frozen=True)
class Placement:
    """The CLI's helpers that place an error in the file the user has open (a Modelfile's
    TEMPLATE position → a position in the Modelfile; Go's parse error → line and column) and
    word `convert`'s note on add_generation_prompt."""

    placed_in: Callable[[Source], AbstractContextManager[None]]
    go_syntax_placed: Callable[[Source], AbstractContextManager[None]]
    flags_note: Callable[[str, Callable[[int, int], tuple[int, int | None]]], str | None]


class PlaygroundError(Gotmpl2JinjaError):
    """A request the playground cannot act on (a missing field, an unknown upload)."""


# ---------------------------------------------------------------------------------------------
# Reading the input


def read_input(request: dict[str, Any], models_dir: Path | None) -> Source:
    """The Source a request names: pasted or uploaded text (a Go template or a Modelfile, read
    as `convert` reads a file of that name), or an installed model `ollama:NAME`."""
    model = request.get("model")
    if model:
        return load_source(f"{OLLAMA_PREFIX}{model}", models_dir=models_dir)
    text = request.get("text")
    if not isinstance(text, str):
        raise PlaygroundError("give a Go template or a Modelfile")
    name = str(request.get("name") or "template")
    kind = request.get("kind") or "auto"
    source = source_from_bytes(text.encode("utf-8", "surrogatepass"), name, kind=kind)
    source.model_path = None  # a pasted Modelfile's FROM names no file of this machine
    return source


def bos_facts(request: dict[str, Any], uploads: dict[str, Path]) -> BosFacts | None:
    """The BOS facts a request chooses: a shipped vocabulary, an uploaded GGUF or
    tokenizer_config.json, or none; `bos` ("on"/"off") has the last word, as --bos/--no-bos."""
    found: BosFacts | None = None
    vocab = request.get("vocab")
    if vocab:
        found = facts_from_gguf(vocab_path(vocab, uploads))
    elif request.get("tokenizer_config"):
        found = facts_from_tokenizer_config(upload(request["tokenizer_config"], uploads))
    bos = request.get("bos")
    if bos in ("on", "off"):
        return explicit_facts(bos == "on", found)
    return found


def vocab_path(name: str, uploads: dict[str, Path]) -> Path:
    """A vocabulary: `shipped:NAME` (llama.cpp's vocabulary-only GGUFs) or an upload's id."""
    if name.startswith("shipped:"):
        from gotmpl2jinja.engines.tokenizer import shipped_vocabularies  # deferred: a C++ tool

        found = shipped_vocabularies().get(name.removeprefix("shipped:"))
        if found is None:
            raise PlaygroundError(f"no shipped vocabulary {name.removeprefix('shipped:')!r} "
                                  "(`gotmpl2jinja engines install tokenizer` copies them)")
        return found
    return upload(name, uploads)


def upload(key: str, uploads: dict[str, Path]) -> Path:
    if key not in uploads:
        raise PlaygroundError("that uploaded file is gone (the server was restarted): "
                              "upload it again")
    return uploads[key]


def choices(models_dir: Path | None) -> dict[str, Any]:
    """What the page offers: installed models, shipped vocabularies, the engines."""
    from gotmpl2jinja.engines.tokenizer import shipped_vocabularies  # deferred: a C++ tool

    selection = select_engines()
    try:
        models = list_models(models_dir)
    except OSError:
        models = []
    return {"models": models, "vocabularies": sorted(shipped_vocabularies()),
            "engines": selection.used, "skipped": selection.skipped,
            "downloads": DOWNLOADS}


def error_json(exc: Gotmpl2JinjaError) -> dict[str, Any]:
    """An error for the page: the CLI's one line, and where (line, column) when it has one;
    `where` says which editor it belongs to."""
    from gotmpl2jinja.verify.conversation import ConversationError  # deferred: one name

    where = "conversation" if isinstance(exc, ConversationError) else "input"
    return {"message": str(exc), "line": exc.line, "col": exc.col, "where": where}


# ---------------------------------------------------------------------------------------------
# convert


def convert(request: dict[str, Any], place: Placement, models_dir: Path | None,
            uploads: dict[str, Path]) -> dict[str, Any]:
    """`convert`'s path for the page: read, translate (or take the page's own Jinja), check
    against Go on the engines `convert` checks on; the verdict per engine and every note
    `convert` prints."""
    source = read_input(request, models_dir)
    facts = bos_facts(request, uploads)
    notes = [f"warning: {w}" for w in source.warnings]
    edited = request.get("jinja")
    if isinstance(edited, str):
        jinja = edited
    else:
        with place.placed_in(source):
            jinja, problems = collect_warnings(lambda: convert_source(source, facts))
        notes += [f"warning: {p}" for p in problems]
        unhonoured = place.flags_note(source.template, source.locate)
        if unhonoured is not None:
            notes.append(f"{source.name}:{unhonoured}")
    result: dict[str, Any] = {"jinja": jinja, "runtime": runtime_lines(jinja),
                              "name": source.name, "kind": source.kind,
                              "system": source.system, "facts": facts_json(facts),
                              "edited": isinstance(edited, str), "verdict": {}, "notes": notes}
    if (undecided := undecided_line(facts)) is not None:
        notes.append(f"note: {undecided}")
    if request.get("check", True):
        from gotmpl2jinja.verify.check import TranslationDiverged  # deferred: one name

        try:
            with place.go_syntax_placed(source):
                checked = check_translation(source.template, jinja, name=source.name,
                                            render=go_renderer(source), bos=facts,
                                            engines=check_engines())
            result["check"] = check_line(checked)
        except TranslationDiverged as exc:
            checked = exc.result
            result["check"] = str(exc).splitlines()[0]
            result["divergences"] = [divergence_json(d) for d in checked.divergences]
        result["verdict"] = verdicts(checked)
    return result


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


def facts(request: dict[str, Any], place: Placement, models_dir: Path | None,
          uploads: dict[str, Path]) -> dict[str, Any] | None:
    """The BOS facts of an uploaded GGUF or tokenizer_config.json (read as `convert` reads
    --gguf and --tokenizer-config)."""
    return facts_json(bos_facts(request, uploads))


def facts_json(facts: BosFacts | None) -> dict[str, Any] | None:
    if facts is None:
        return None
    return {"adds_bos": facts.adds_bos, "bos_token": facts.bos_token,
            "eos_token": facts.eos_token, "source": facts.source, "rule": facts.rule}


def verdicts(result: Any) -> dict[str, str]:
    """Per engine: equivalent on N cases, or diverges (a VerifyResult's tallies)."""
    diverged = {d.engine for d in result.divergences}
    found = {}
    for name, tally in result.counts.items():
        if name in diverged:
            found[name] = "diverges"
        else:
            outside = sum(tally.runtime_differs.values())
            found[name] = (f"equivalent on {tally.cases - outside} cases"
                           + (f" ({outside} out of scope on this runtime)" if outside else ""))
    return found


def divergence_json(div: Any) -> dict[str, Any]:
    return {"engine": div.engine, "conversation": div.conversation, "diff": div.diff,
            "go_output": div.go_output, "go_error": div.go_error,
            "jinja_output": div.jinja_output, "jinja_error": div.jinja_error,
            "found_by": div.found_by}


# ---------------------------------------------------------------------------------------------
# render


def read_conversation(text: Any, flags: dict[str, Any]) -> dict[str, Any]:
    """The conversation editor's JSON with the host's flags set, validated as `verify`
    validates a conversation (`verify.conversation.validate`): an error says where."""
    from gotmpl2jinja.verify.conversation import ConversationError  # deferred: one name

    if not isinstance(text, str):
        raise ConversationError("give the conversation as JSON text")
    try:
        conv = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConversationError(f"not valid JSON: {exc.msg}", name="conversation",
                                line=exc.lineno, col=exc.colno) from None
    except (ValueError, RecursionError) as exc:
        raise ConversationError(f"conversation: not JSON this tool can read ({exc})") from None
    if isinstance(conv, dict):
        for key in ("think", "add_generation_prompt", "continue_final_message"):
            if key in flags and flags[key] is not None:
                conv[key] = flags[key]
    return validate(conv)


def check_conversation(request: dict[str, Any], place: Placement, models_dir: Path | None,
                       uploads: dict[str, Path]) -> dict[str, Any]:
    """The conversation editor's text, checked as `render` will read it."""
    return {"conversation": read_conversation(request.get("conversation"),
                                              request.get("flags") or {})}


def render(request: dict[str, Any], place: Placement, models_dir: Path | None,
           uploads: dict[str, Path]) -> dict[str, Any]:
    """One conversation on Go (Ollama's prompt, with the Modelfile rule and the host's call) and
    on every available engine, as `verify` renders and compares a case: each engine's text or
    error, whether it agrees with Go, and where it first differs."""
    source = read_input(request, models_dir)
    facts = bos_facts(request, uploads)
    conv = read_conversation(request.get("conversation"), request.get("flags") or {})
    jinja = request.get("jinja")
    if not isinstance(jinja, str):
        raise PlaygroundError("translate first: there is no Jinja to render")
    tokens = token_level(request, uploads, facts)
    engines = [get_engine(name) for name in select_engines().used]
    go_side = go_renderer(source)
    checker = harness._Checker(source.template, jinja, engines, go_side, go_side.many,
                               DEFAULT_NOW, None, tokens)
    with place.go_syntax_placed(source):
        go, outcomes = checker.outcomes(conv, engines)
    rows = []
    for engine in engines:
        item = outcomes[engine.name]
        scope = checker.scope(engine, conv, go)
        agrees = checker.agrees(go, item, conv, engine)
        expected = expected_text(tokens, engine.name, go.output)
        row = {"engine": engine.name, "server": "server" in ENGINES[engine.name].tags,
               "text": item.output, "error": item.error, "out_of_scope": scope,
               "agrees": agrees, "expected": expected,
               "diff_at": first_difference(expected, item.output)}
        if tokens is not None and tokens.vocab is not None and go.output is not None \
                and item.output is not None:
            row["tokens"] = token_rows(tokens, engine.name, go.output, item.output)
        rows.append(row)
    return {"go": outcome_json(go), "engines": rows, "conversation": conv,
            "specials": template_specials(source.template + jinja),
            "compared_on": tokens.describe if tokens is not None else None}


def outcome_json(go: Outcome) -> dict[str, Any]:
    return {"text": go.output, "error": go.error, "refused": go.refused}


def token_level(request: dict[str, Any], uploads: dict[str, Path], facts: BosFacts | None
                ) -> TokenLevel | None:
    """With a vocabulary and llama.cpp's tokenizer built: token IDs; else the BOS rule as
    text when BOS is decided (`verify.check.bos_rule`); else None (bare strings)."""
    vocab = request.get("vocab")
    if vocab:
        from gotmpl2jinja.engines.tokenizer import tokenizer_state, vocabulary  # deferred

        if tokenizer_state() is None:
            loaded = vocabulary(vocab_path(vocab, uploads))
            host = HostTokens.of_vocabulary(loaded, facts)
            if facts is not None and facts.adds_bos is not None:
                host = HostTokens(host.bos_token, host.eos_token, facts.adds_bos, host.add_eos,
                                  host.strips, host.source, facts)
            return TokenLevel(host, loaded)
    return bos_rule(facts)


def expected_text(tokens: TokenLevel | None, engine: str, prompt: str | None) -> str | None:
    """What `engine` must render for Go's `prompt` under its host's convention: Go's prompt,
    with the BOS text first on a raw engine when the tokenizer adds BOS."""
    if prompt is None or tokens is None or convention(engine) != "transformers/vLLM":
        return prompt
    return tokens.host.expected_text(prompt)


def first_difference(a: str | None, b: str | None) -> int | None:
    """The first character offset where `a` and `b` differ (None when equal or absent)."""
    if a is None or b is None or a == b:
        return None
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                min(len(a), len(b)))


def token_rows(tokens: TokenLevel, engine: str, prompt: str, output: str) -> dict[str, Any]:
    """The token IDs and pieces Ollama and this engine's host feed the model, and the index
    of the first that differs."""
    a, a_special, b, b_special = tokens.texts(engine, prompt, output)
    ours, theirs = list(tokens.ids(a, a_special)), list(tokens.ids(b, b_special))
    assert tokens.vocab is not None
    index = next((i for i, (x, y) in enumerate(zip(ours, theirs, strict=False)) if x != y),
                 None if ours == theirs else min(len(ours), len(theirs)))
    return {"ollama": list(zip(ours, tokens.vocab.pieces(ours), strict=True)),
            "engine": list(zip(theirs, tokens.vocab.pieces(theirs), strict=True)),
            "first_difference": index}


# ---------------------------------------------------------------------------------------------
# verify and downloads


def verify(request: dict[str, Any], place: Placement, models_dir: Path | None,
           uploads: dict[str, Path], progress: Callable[[int], None]) -> dict[str, Any]:
    """`verify` (with `--jinja` when the page's Jinja is edited) on N generated conversations
    and every available engine; each divergence with its minimal conversation and diff."""
    source = read_input(request, models_dir)
    facts = bos_facts(request, uploads)
    jinja = request.get("jinja")
    if not isinstance(jinja, str):
        raise PlaygroundError("translate first: there is no Jinja to verify")
    cases = request.get("cases", 50)
    if isinstance(cases, bool) or not isinstance(cases, int) or not 1 <= cases <= 5000:
        raise PlaygroundError("cases: give a whole number from 1 to 5000")
    with place.go_syntax_placed(source):
        result = harness.verify_template(
            source.template, jinja, cases=cases, engines=select_engines().used,
            name=source.name, render=go_renderer(source), progress=progress,
            tokens=token_level(request, uploads, facts), seed=int(request.get("seed", 0)))
    return {"cases": result.cases, "engines": result.engines, "ok": result.ok,
            "verdict": verdicts(result), "refused": result.refused,
            "divergences": [divergence_json(d) for d in result.divergences],
            "skipped": result.skipped}


def download(request: dict[str, Any], place: Placement, models_dir: Path | None,
             uploads: dict[str, Path]) -> dict[str, Any]:
    """The file `convert --format FMT` writes for the page's Jinja (written by the same
    writer into a scratch folder, then read back): its name and text."""
    fmt = request.get("format")
    if fmt not in DOWNLOADS:
        raise PlaygroundError(f"unknown format {fmt!r}; choose from {', '.join(DOWNLOADS)}")
    source = read_input(request, models_dir)
    jinja = request.get("jinja")
    if not isinstance(jinja, str):
        raise PlaygroundError("translate first: there is no Jinja to download")
    with _scratch() as folder:
        target = folder / DOWNLOADS[fmt]
        written = write_output(jinja, fmt, target, stop=source.stop,
                               bos=bos_facts(request, uploads))
        data = written.read_bytes()
    return {"filename": DOWNLOADS[fmt], "text": data.decode("utf-8")}


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="gotmpl2jinja-serve-") as folder:
        yield Path(folder)
