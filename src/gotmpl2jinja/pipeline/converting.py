"""`convert`: one input's translation, checked against Go, with everything a caller hands out —
the Jinja, the check's verdict per engine, the notes, the BOS facts and the files each output
format would write.

Why one function: the `convert` command and the playground do the same steps in the same order
(BOS facts, the family, the translation with Ollama's own failures as warnings, the note on
add_generation_prompt, the check), and a second copy of that order would drift. The command
prints the notes as they arise and writes one file; a page shows them and offers the files.

May depend on: `emit`, `errors`, `formats.writers`, `ollama`, `pipeline.reading`, `syntax`,
`verify`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from gotmpl2jinja.emit.generation import honoured
from gotmpl2jinja.emit.legacy import collect_warnings
from gotmpl2jinja.emit.preamble import convert_source
from gotmpl2jinja.errors import ReferenceRendererError
from gotmpl2jinja.formats.writers import lmstudio_config, tokenizer_config
from gotmpl2jinja.ollama.source import Source
from gotmpl2jinja.ollama.vocab import BosFacts, resolve_facts, undecided_line
from gotmpl2jinja.pipeline.reading import (
    Note,
    Notes,
    OnNote,
    go_syntax_placed,
    placed_in,
    set_timeout,
    with_family,
)
from gotmpl2jinja.syntax.parser import parse
from gotmpl2jinja.verify import check as checks
from gotmpl2jinja.verify.goside import go_renderer
from gotmpl2jinja.verify.outcomes import VerifyResult

#: The file each format is written to by default (`formats.writers`); the LM Studio config
#: has no usual name, so a download takes the one the README's example gives it.
FILE_NAMES = {"jinja": "chat_template.jinja", "hf": "tokenizer_config.json",
              "lmstudio": "lmstudio.json"}


@dataclass(frozen=True)
class OutputFile:
    """One format's file as `convert` writes it new (`hf` as a new tokenizer_config.json)."""

    format: str
    name: str
    text: str


@dataclass
class Conversion:
    """What became of one input: its Jinja, what was said along the way, the BOS facts the
    Jinja was made with, the check (None when skipped) and its verdict per engine
    ("equivalent" or "diverges"), and the files of the text formats."""

    name: str
    kind: str  # "template", "modelfile" or "ollama"
    jinja: str
    notes: list[Note] = field(default_factory=list)
    bos: BosFacts | None = None
    check: VerifyResult | None = None
    verdicts: dict[str, str] = field(default_factory=dict)
    stop: list[str] = field(default_factory=list)
    files: list[OutputFile] = field(default_factory=list)

    @property
    def equivalent(self) -> bool | None:
        """True when checked without a divergence, False with one, None when not checked."""
        return None if self.check is None else self.check.ok

    def file(self, fmt: str) -> OutputFile:
        """The file of format `fmt` (jinja, hf, lmstudio)."""
        return next(f for f in self.files if f.format == fmt)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data (a server's answer)."""
        data = asdict(self)
        data["check"] = None if self.check is None else self.check.to_json()
        data["equivalent"] = self.equivalent
        return data


def bos_facts(source: Source, *, gguf: Path | None = None, tokenizer_config: Path | None = None,
              bos: bool | None = None, notes: Notes | None = None) -> BosFacts | None:
    """The model's tokenizer facts for `source` (`ollama.vocab.resolve_facts`: --gguf, the
    installed model's GGUF, a Modelfile's FROM file, --tokenizer-config; --bos/--no-bos has
    the last word); a model layer that cannot be read is a warning, not an error."""
    unread: list[str] = []
    facts = resolve_facts(gguf=gguf, model_path=source.model_path, bos=bos, warnings=unread,
                          model=source.name, tokenizer_config=tokenizer_config)
    if notes is not None:
        notes.warnings(unread)
    return facts


def convert(source: Source, *, gguf: Path | None = None, tokenizer_config: Path | None = None,
            bos: bool | None = None, family: str | None = None,
            generation_blocks: bool = False, check: bool = True, strict: bool = True,
            timeout: float | None = None, on_note: OnNote | None = None,
            jinja: str | None = None) -> Conversion:
    """Translate `source` (from `read_input`) into equivalent Jinja, as the `convert` command
    does, and check it against Go's rendering on every available raw engine.

    `gguf`, `tokenizer_config`, `bos` decide BOS (`bos_facts`); `family` names the model's
    family (`--family`); `generation_blocks` writes `{% generation %}` blocks (checked on the
    engines that parse them). `check=False` skips the check (a warning says so). With `strict`
    a divergence raises `TranslationDiverged` (the command's exit 1); without, it is in the
    result (`check.divergences`, `verdicts`) for a page to show. `timeout`: seconds one render
    may take (`set_timeout`). Notes go to `on_note` as they arise. Errors are placed in the
    input (`FILE:LINE:COL`). `jinja`: a hand-written or hand-edited Jinja to check (and
    whose files to give) instead of the translation; give it `strict=False`, since a
    divergence of the translation is worded as gotmpl2jinja's bug."""
    notes = Notes(on_note)
    facts = bos_facts(source, gguf=gguf, tokenizer_config=tokenizer_config, bos=bos,
                      notes=notes)
    with_family(source, family, notes)
    if jinja is None:
        with placed_in(source):  # a Modelfile's TEMPLATE position → a position in the file
            jinja, problems = collect_warnings(
                lambda: convert_source(source, facts, generation_blocks=generation_blocks))
        notes.warnings(problems)  # where Ollama itself fails; the Jinja raises the same way
        unhonoured = flags_note(source.template, source.locate)
        if unhonoured is not None:
            line, col = unhonoured[1]
            notes.add("note", f"{source.name}:{unhonoured[0]}", line, col)
    result: VerifyResult | None = None
    if not check:
        notes.add("warning", "warning: not checked against Ollama's rendering (--no-check)")
    else:
        if timeout is not None:
            set_timeout(timeout)
        result = _checked(source, jinja, facts, generation_blocks, strict)
        if result.ok:
            notes.add("checked", checks.check_line(result))
    if (undecided := undecided_line(facts)) is not None:  # after the errors: they stay 1 line
        notes.add("note", f"note: {undecided}")
    return Conversion(
        name=source.name, kind=source.kind, jinja=jinja, notes=list(notes), bos=facts,
        check=result, verdicts=verdicts(result) if result is not None else {},
        stop=list(source.stop), files=output_files(jinja, facts, source.stop))


def _checked(source: Source, jinja: str, facts: BosFacts | None, generation_blocks: bool,
             strict: bool) -> VerifyResult:
    """The check of `convert`; a divergence raises with `strict`, else is the result."""
    try:
        with go_syntax_placed(source):  # a Jinja given by hand: Go's own parse error placed
            # through the module, so that a test (or a host) that replaces the check is heard
            return checks.check_translation(
                source.template, jinja, name=source.name, render=go_renderer(source),
                bos=facts, engines=checks.check_engines(generation_blocks=True)
                if generation_blocks else None)
    except ReferenceRendererError as exc:
        raise ReferenceRendererError(f"cannot check the translation against Ollama's "
                                     f"rendering: {exc} (--no-check skips the check)"
                                     ) from None
    except checks.TranslationDiverged as exc:
        if strict:
            raise
        return exc.result


def verdicts(result: VerifyResult) -> dict[str, str]:
    """Per engine checked, "equivalent" or "diverges"."""
    diverged = {d.engine for d in result.divergences}
    return {name: "diverges" if name in diverged else "equivalent" for name in result.engines}


def output_files(jinja: str, facts: BosFacts | None, stop: list[str]) -> list[OutputFile]:
    """The text formats' files, byte for byte as `convert --format F` writes them new."""
    return [OutputFile("jinja", FILE_NAMES["jinja"], jinja),
            OutputFile("hf", FILE_NAMES["hf"], tokenizer_config(jinja, facts)),
            OutputFile("lmstudio", FILE_NAMES["lmstudio"], lmstudio_config(jinja, stop))]


def flags_note(template: str, locate: Callable[[int, int], tuple[int, int | None]]
               ) -> tuple[str, tuple[int | None, int | None]] | None:
    """Where the translation cannot honour a host's add_generation_prompt (`emit.generation`):
    the line `convert` prints after the input's name, and its (line, col) in the input; else
    None."""
    reason = honoured(parse(template))
    if reason is None:
        return None
    note = ("note: this template's generation prompt cannot be turned off "
            "(add_generation_prompt is ignored and a final turn stays open): ")
    where = re.match(r"(\d+):(\d+): (.*)", reason, re.S)
    if where is None:
        return f" {note}{reason}", (None, None)
    line, col = locate(int(where.group(1)), int(where.group(2)))
    return f"{line}:{col}: {note}{where.group(3)}", (line, col)

