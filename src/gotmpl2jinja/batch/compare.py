"""Where an Ollama template drifts from the model's own Jinja chat template (issue 8).

Ollama's Go template and the model's original Jinja template (from its GGUF) disagree for most
models. This module renders both on the same conversations — the Go side with the real Go
reference renderer, the Jinja side with jinja2 configured as transformers does, plus
`bos_token`/`eos_token` — and explains every disagreement with a small set of *kinds*.

How a disagreement is classified (the rules docs/compare.md states for readers):

- One side fails and the other does not: `jinja raises` / `ollama raises`. Both failing is
  agreement (the contract: where Ollama fails, the Jinja must fail too).
- Otherwise a kind is an *explanation*, and a conversation's kinds are the smallest set of
  explanations under which the two renderings become byte-identical. Explanations are tried by
  size, then in the order of `KINDS`; the first set that works is the answer. Nothing explains
  it → `other`.
  - Feature explanations re-render a *variant* of the conversation (never guessed from text):
    `default system prompt` — the conversation has no system message and a system message is
    added; `tool definitions` — `tools` removed; `tool calls` — assistant tool calls and the
    tool results removed; `thinking` — `thinking` fields and `think` removed.
  - Text explanations normalise both renderings: `BOS/EOS` — every occurrence of the BOS and
    EOS token deleted; `date header` — every line holding a date-like string deleted (the clock
    is pinned, so a date present on one side only is a date header the other side lacks);
    `white space only` — all white space deleted.
  Feature explanations come first in the order, so a difference inside the tool JSON that is
  only spacing is a `tool definitions` drift, not `white space only`.
- A minimal example per kind: the smallest catalogue/generated conversation showing the kind,
  then greedily shrunk (drop a message, a field, a tool, shorten a text) while it still shows it.

May depend on: engines.tokenizer, errors, ollama.vocab, and the modules it is split into —
batch.compare_kinds (the kinds and the classification), batch.compare_cases (the
conversations and the shrinking), batch.compare_report (findings and reports),
batch.compare_tokens (BOS/EOS) — whose names it re-exports: `batch.compare` is the API.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

# `batch.compare` is the API: it re-exports what its sibling modules define
from gotmpl2jinja.batch.compare_cases import (  # noqa: F401 - re-exported
    TIME_TOOL,
    WEATHER_TOOL,
    _reductions,
    catalogue,
    conversations,
    random_conversations,
    shrink,
    size,
)
from gotmpl2jinja.batch.compare_kinds import (  # noqa: F401 - re-exported
    BOS_EOS,
    DATE_HEADER,
    DATE_LIKE,
    DEFAULT_SYSTEM,
    FEATURE_KINDS,
    FEATURE_VARIANTS,
    JINJA_ENGINE,
    JINJA_RAISES,
    KINDS,
    OLLAMA_RAISES,
    OTHER,
    PINNED_NOW,
    PROBE_SYSTEM,
    TEXT_KINDS,
    THINKING,
    TOOL_CALLS,
    TOOL_DEFINITIONS,
    WHITE_SPACE,
    Conversation,
    Pair,
    Rendering,
    classify,
    delete_date_lines,
    delete_tokens,
    delete_white_space,
    has_system,
    has_thinking,
    has_tool_calls,
    normalise,
    with_system,
    without_generation_tags,
    without_thinking,
    without_tool_calls,
    without_tools,
)
from gotmpl2jinja.batch.compare_report import (  # noqa: F401 - re-exported
    CORPUS_COMMAND,
    Comparison,
    EntryResult,
    Finding,
    corpus_json,
    first_difference,
    markdown_table,
    readable_diff,
    text_report,
    visible,
)
from gotmpl2jinja.batch.compare_tokens import (  # noqa: F401 - re-exported
    FAMILY_TOKENS,
    FAMILY_VOCABS,
    tokens_for_entry,
    tokens_from_tokenizer_config,
    vocab_facts,
    vocab_for_entry,
)
from gotmpl2jinja.engines.tokenizer import tokenizer_state, vocabulary
from gotmpl2jinja.errors import Gotmpl2JinjaError
from gotmpl2jinja.ollama.vocab import shipped_vocab

# --------------------------------------------------------------------------------------------
# Comparing a pair


def compare(pair: Pair, cases: int = 20, seed: int = 0, vocab: str = "") -> Comparison:
    """Render both sides on the catalogue plus `cases` seeded conversations; explain the drift.
    `vocab` names where the pair's BOS rule comes from (for the report)."""
    pool = conversations(cases, seed)
    probe = pair.render("jinja", pool[0])
    if probe.error is not None and "does not compile" in probe.error:
        # A broken template is not a drift: say so instead of "raises" on every conversation.
        raise Gotmpl2JinjaError(f"reference Jinja: {probe.error}")
    by_kind: dict[str, list[Conversation]] = {}
    agreeing = 0
    for conversation in pool:
        kinds = classify(pair, conversation)
        if not kinds:
            agreeing += 1
        for kind in kinds:
            by_kind.setdefault(kind, []).append(conversation)
    findings = []
    for kind in sorted(by_kind, key=KINDS.index):
        seen = by_kind[kind]
        smallest = min(seen, key=size)  # min keeps the first of equal sizes: deterministic
        example = shrink(pair, smallest, kind)
        kinds_of_example = classify(pair, example)
        findings.append(Finding(
            kind, len(seen), example, pair.render("ollama", example),
            pair.render("jinja", example), kinds_of_example,
            focus(pair, example, kind, kinds_of_example),
        ))
    return Comparison(len(pool), agreeing, findings, pair.bos, pair.eos, pair.engine, vocab,
                      pair.adds_bos, pair.vocab is not None)


def tokenizer_of(vocab: str | None) -> Any:
    """llama.cpp's tokenizer on shipped vocabulary `vocab`, None when it is not built
    (`gotmpl2jinja engines install tokenizer`): then the BOS rule is compared as text."""
    path = shipped_vocab(vocab) if vocab else None
    if path is None or tokenizer_state() is not None:
        return None
    return vocabulary(path)


def bos_eos_without_rule(pair: Pair, cases: int, seed: int) -> bool:
    """Would BOS/EOS be a kind of this pair without its BOS rule (Ollama's side as Go's bare
    prompt)? Renderings are shared with `pair`, so this costs only the classification."""
    bare = replace(pair, adds_bos=False, strips="", vocab=None)
    return any(BOS_EOS in classify(bare, c) for c in conversations(cases, seed))


def focus(
    pair: Pair, example: Conversation, kind: str, kinds_of_example: Sequence[str]
) -> tuple[Rendering, Rendering]:
    """Both renderings of `example` with every kind but `kind` explained away.

    For `other` nothing explains the drift, but BOS/EOS tokens and date lines are deleted
    anyway (when that changes something), so the residual difference is what the diff shows.
    """
    others = [k for k in kinds_of_example if k != kind and k in FEATURE_KINDS + TEXT_KINDS]
    if kind == OTHER:
        others = [BOS_EOS, DATE_HEADER]
    variant = example
    for other in FEATURE_KINDS:
        if other in others:
            variant = FEATURE_VARIANTS[other][1](variant)
    sides = []
    for side in ("ollama", "jinja"):
        rendering = pair.render(side, variant)
        if rendering.text is not None:
            rendering = Rendering(normalise(rendering.text, others, pair))
        sides.append(rendering)
    return sides[0], sides[1]


# --------------------------------------------------------------------------------------------
# The corpus


def compare_corpus(
    corpus: Path, cases: int = 20, seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> list[EntryResult]:
    """Compare every `entries/*/` pair (template.gotmpl vs gguf_chat_template.jinja)."""
    entries_dir = corpus / "entries" if (corpus / "entries").is_dir() else corpus
    entries = sorted(p for p in entries_dir.iterdir()
                     if (p / "template.gotmpl").is_file()
                     and (p / "gguf_chat_template.jinja").is_file())
    if not entries:
        raise Gotmpl2JinjaError(
            f"{corpus}: no entry folders with template.gotmpl and gguf_chat_template.jinja")
    results = []
    for number, entry in enumerate(entries, 1):
        ollama_template = (entry / "template.gotmpl").read_text(encoding="utf-8")
        jinja = (entry / "gguf_chat_template.jinja").read_text(encoding="utf-8")
        meta_path = entry / "meta.json"
        meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
        bos, eos = tokens_for_entry(meta, ollama_template, jinja)
        vocab = vocab_for_entry(meta, ollama_template, jinja)
        facts = vocab_facts(vocab)
        if facts is None:
            vocab = None
        elif facts.adds_bos and facts.bos_token is not None:  # else the family's stays
            bos = facts.bos_token
        if progress:
            progress(f"[{number}/{len(entries)}] {entry.name}")
        model = str(meta.get("model", ""))
        pair = Pair(ollama_template, jinja, bos, eos,
                    adds_bos=bool(facts and facts.adds_bos), strips=(facts and facts.strips) or "",
                    vocab=tokenizer_of(vocab))
        try:
            comparison = compare(pair, cases=cases, seed=seed, vocab=vocab or "")
        except Gotmpl2JinjaError as exc:  # one broken template must not stop the table
            results.append(EntryResult(entry.name, model, None, str(exc)))
            continue
        before = (bos_eos_without_rule(pair, cases, seed) if pair.adds_bos or pair.strips
                  else None)
        results.append(EntryResult(entry.name, model, comparison, bos_eos_without_rule=before))
    return results


def stderr_progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
