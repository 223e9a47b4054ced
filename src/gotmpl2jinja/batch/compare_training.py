"""`compare --corpus DIR --training`: do the model's own template and Ollama's agree on how a
finished conversation's final turn is closed (training data, as TRL formats it)?

For each paired entry (template.gotmpl, gguf_chat_template.jinja) whose translation honours
`add_generation_prompt` (`emit.generation`), finished conversations (ending with the
assistant's answer) are rendered with `add_generation_prompt=False`: Ollama's side as Go's
closed rendering (`verify.closed`, what the translation renders), the model's own template on
jinja2 as transformers renders it. The closing is the text after the final answer's content;
a pair agrees when every conversation's closing is the same bytes on both sides (the rest of
the rendering drifts for the reasons `compare` explains).

May depend on: `batch.compare_kinds`, `batch.compare_tokens`, `emit`, `engines`, `errors`,
`syntax`, `verify`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gotmpl2jinja.batch.compare_kinds import JINJA_ENGINE, without_generation_tags
from gotmpl2jinja.batch.compare_tokens import tokens_for_entry
from gotmpl2jinja.emit.generation import honoured
from gotmpl2jinja.engines.registry import DEFAULT_NOW, get_engine
from gotmpl2jinja.errors import Gotmpl2JinjaError, RenderError
from gotmpl2jinja.syntax.parser import parse
from gotmpl2jinja.verify.closed import go_case
from gotmpl2jinja.verify.conversation import jinja_context
from gotmpl2jinja.verify.outcomes import BARE, closed_outcome, go_outcome

#: Finished conversations: one exchange, with a system message, two exchanges.
FINISHED: list[list[dict[str, str]]] = [
    [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi there."}],
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"},
     {"role": "assistant", "content": "Four."}],
    [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello."},
     {"role": "user", "content": "Bye"}, {"role": "assistant", "content": "Goodbye."}],
]


@dataclass
class TrainingRow:
    """One entry: why it is not compared, or both sides' closings where they differ."""

    entry: str
    skipped: str | None = None
    closings: tuple[str, str] | None = None  # (Ollama's, the model's) where they differ


def _closing(text: str | None, content: str) -> str | None:
    """What follows the final answer's content (None where the content is not printed)."""
    if text is None or content not in text:
        return None
    return text[text.rindex(content) + len(content):]


def compare_entry(go: str, jinja: str, bos: str, eos: str) -> tuple[str, str] | None:
    """None where every finished conversation closes the same way on both sides, else the
    first pair of closings that differ (`<not printed>` where a side fails or drops it)."""
    engine = get_engine(JINJA_ENGINE)
    for messages in FINISHED:
        conv: dict[str, Any] = {"messages": messages, "add_generation_prompt": False}
        source, plain, cut = go_case(go, conv)
        ours = closed_outcome(go_outcome(BARE, source, plain, DEFAULT_NOW, BARE.as_lenient()),
                              cut).output
        context = {**jinja_context(conv), "bos_token": bos, "eos_token": eos}
        try:
            theirs: str | None = engine.render(without_generation_tags(jinja), context,
                                               now=DEFAULT_NOW)
        except RenderError:
            theirs = None
        content = messages[-1]["content"]
        a, b = _closing(ours, content), _closing(theirs, content)
        if a != b:
            return (a if a is not None else "<not printed>",
                    b if b is not None else "<not printed>")
    return None


def compare_training(corpus: Path, progress: Callable[[str], None] | None = None
                     ) -> list[TrainingRow]:
    """A row per paired entry of `corpus`."""
    entries_dir = corpus / "entries" if (corpus / "entries").is_dir() else corpus
    rows = []
    for entry in sorted(p for p in entries_dir.iterdir()
                        if (p / "template.gotmpl").is_file()
                        and (p / "gguf_chat_template.jinja").is_file()):
        go = (entry / "template.gotmpl").read_text(encoding="utf-8")
        jinja = (entry / "gguf_chat_template.jinja").read_text(encoding="utf-8")
        meta_path = entry / "meta.json"
        meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
        if progress:
            progress(entry.name)
        try:
            reason = honoured(parse(go, name=entry.name))
            if reason is not None:
                rows.append(TrainingRow(entry.name, f"flags not honoured: {reason}"))
                continue
            bos, eos = tokens_for_entry(meta, go, jinja)
            rows.append(TrainingRow(entry.name, closings=compare_entry(go, jinja, bos, eos)))
        except Gotmpl2JinjaError as exc:
            rows.append(TrainingRow(entry.name, f"not compared: {exc}"))
    return rows


def training_markdown(rows: list[TrainingRow], command: str) -> str:
    """The counts, then the pairs that disagree with both closings."""
    compared = [r for r in rows if r.skipped is None]
    agree = [r for r in compared if r.closings is None]
    lines = [
        "# The closed final turn: Ollama's template vs the model's own",
        "",
        f"Generated by `{command}` (`gotmpl2jinja.batch.compare_training`).",
        "",
        f"{len(rows)} paired entries; {len(compared)} whose translation honours "
        f"add_generation_prompt; of those, **{len(agree)} agree** on how a finished "
        f"conversation's final turn is closed ({len(FINISHED)} conversations, "
        "add_generation_prompt=False), "
        f"{len(compared) - len(agree)} do not.",
        "",
        "| entry | Ollama's closing | the model's closing |",
        "|---|---|---|",
    ]
    for r in compared:
        if r.closings is not None:
            ours, theirs = (json.dumps(c, ensure_ascii=False) for c in r.closings)
            lines.append(f"| {r.entry} | `{ours}` | `{theirs}` |")
    return "\n".join(lines) + "\n"
