"""What a comparison found and how it reads: findings, diffs, the text report, the corpus table.

May depend on: batch.compare_kinds.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from gotmpl2jinja.batch.compare_kinds import (
    BOS_EOS,
    JINJA_ENGINE,
    KINDS,
    OTHER,
    PINNED_NOW,
    PROBE_SYSTEM,
    Conversation,
    Rendering,
)

# --------------------------------------------------------------------------------------------
# Reports


@dataclass
class Finding:
    """One kind of disagreement: how often it showed and its minimal example.

    `focused` is the example's pair of renderings with the example's *other* kinds explained
    away (their variants applied, their normalisations done), so its first difference is this
    kind's; it equals (`ollama`, `jinja`) when the example shows this kind alone.
    """

    kind: str
    count: int
    example: Conversation
    ollama: Rendering
    jinja: Rendering
    kinds_of_example: tuple[str, ...]
    focused: tuple[Rendering, Rendering]


@dataclass
class Comparison:
    """The outcome for one pair over all conversations."""

    total: int
    agreeing: int
    findings: list[Finding]
    bos: str
    eos: str
    engine: str = "jinja2"
    vocab: str = ""  # the shipped vocabulary whose BOS rule the Ollama side follows, if any
    adds_bos: bool = False
    on_tokens: bool = False  # texts that differ agree when their token IDs are the same

    @property
    def agree(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        return {
            "conversations": self.total, "agreeing": self.agreeing, "agree": self.agree,
            "bos_token": self.bos, "eos_token": self.eos, "engine": self.engine,
            "vocabulary": self.vocab or None, "adds_bos": self.adds_bos,
            "on_tokens": self.on_tokens,
            "kinds": [
                {"kind": f.kind, "count": f.count, "example": f.example,
                 "kinds_of_example": list(f.kinds_of_example),
                 "ollama": f.ollama.text, "ollama_error": f.ollama.error,
                 "jinja": f.jinja.text, "jinja_error": f.jinja.error,
                 "first_difference": first_difference(f.ollama.text, f.jinja.text),
                 "focused_ollama": f.focused[0].text, "focused_jinja": f.focused[1].text}
                for f in self.findings
            ],
        }


def first_difference(a: str | None, b: str | None) -> int | None:
    """Offset of the first differing character; None when equal or a side has no text."""
    if a is None or b is None or a == b:
        return None
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def visible(text: str) -> str:
    """White space made visible on one line: `·` space, `⏎` newline, `→` tab."""
    return (text.replace(" ", "·").replace("\n", "⏎").replace("\t", "→")
            .replace("\r", "␍"))


def readable_diff(ollama: Rendering, jinja: Rendering, before: int = 60, after: int = 100) -> str:
    """Both renderings around the first differing offset, white space visible, a caret under it."""
    if not ollama.ok or not jinja.ok:
        lines = []
        for name, side in (("ollama", ollama), ("jinja ", jinja)):
            lines.append(f"{name}: " + (f"ERROR {side.error}" if not side.ok
                                        else visible(_clip(side.text or "", 0, before + after))))
        return "\n".join(lines)
    a, b = ollama.text or "", jinja.text or ""
    offset = first_difference(a, b)
    if offset is None:
        return "identical"
    line = a.count("\n", 0, offset) + 1
    col = offset - (a.rfind("\n", 0, offset) + 1) + 1
    start = max(0, offset - before)
    prefix = "…" if start else ""
    shown_a = prefix + visible(a[start:offset + after]) + ("…" if offset + after < len(a) else "")
    shown_b = prefix + visible(b[start:offset + after]) + ("…" if offset + after < len(b) else "")
    caret = " " * (8 + len(prefix) + (offset - start)) + "^"
    return (f"first difference at offset {offset} (ollama line {line}, column {col}); "
            f"lengths {len(a)} vs {len(b)}\n"
            f"ollama: {shown_a}\njinja : {shown_b}\n{caret}")


def _others(finding: Finding) -> str:
    if finding.kind == OTHER:
        return "BOS/EOS tokens and date lines"
    return ", ".join(k for k in finding.kinds_of_example if k != finding.kind)


def _focus_differs(finding: Finding) -> bool:
    """Is the focused view worth showing (it differs from the plain one)?"""
    return finding.focused != (finding.ollama, finding.jinja)


def _clip(text: str, start: int, length: int) -> str:
    return text[start:start + length] + ("…" if len(text) > start + length else "")


def text_report(comparison: Comparison) -> str:
    """Human-readable report of one comparison (the CLI's default output)."""
    lines = [
        f"{comparison.agreeing}/{comparison.total} conversations agree "
        f"(bos_token={comparison.bos!r}, eos_token={comparison.eos!r}"
        + (f"; Ollama's side as its tokenizer is fed ({comparison.vocab} "
           f"{'adds BOS' if comparison.adds_bos else 'adds no BOS'})" if comparison.vocab
           else "")
        + "; the model's Jinja "
        f"rendered by {comparison.engine}"
        + (", as transformers renders it)" if comparison.engine == JINJA_ENGINE else ")"),
    ]
    if comparison.agree:
        lines.append("agree: no drift found")
    for f in comparison.findings:
        lines += [
            "", f"== {f.kind}: {f.count} conversation(s)",
            "minimal conversation: " + json.dumps(f.example, ensure_ascii=False),
            "its kinds: " + ", ".join(f.kinds_of_example),
            readable_diff(f.ollama, f.jinja),
        ]
        if _focus_differs(f):
            lines += [f"with {_others(f)} explained away:", readable_diff(*f.focused)]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The corpus table


@dataclass
class EntryResult:
    """One corpus entry's comparison."""

    name: str
    model: str
    comparison: Comparison | None
    error: str | None = None  # a template that cannot be compared at all (does not compile)
    #: Whether BOS/EOS is one of its kinds with the vocabulary's BOS rule left out (the Go side
    #: the bare prompt); None when no rule applies (no vocabulary, or one that adds no BOS).
    bos_eos_without_rule: bool | None = None

    @property
    def bos_eos_now(self) -> bool:
        return self.comparison is not None and any(
            f.kind == BOS_EOS for f in self.comparison.findings)


def _md_cell_code(text: str) -> str:
    """Code in a Markdown table cell: a `|` must be escaped even inside backticks (GFM)."""
    text = text.replace("|", "\\|").replace("\n", " ")
    return "`` " + text + " ``" if "`" in text else f"`{text}`"


CORPUS_COMMAND = ("gotmpl2jinja compare --corpus fixtures/corpus/huggingface__huggingface.js "
                  "--cases {cases} --seed {seed} -o docs/compare.md")


def markdown_table(results: list[EntryResult], cases: int, seed: int) -> str:
    """docs/compare.md: the command, the rules, the table, then one section per entry."""
    totals: dict[str, int] = {}
    compared = [r.comparison for r in results if r.comparison is not None]
    for comparison in compared:
        for f in comparison.findings:
            totals[f.kind] = totals.get(f.kind, 0) + 1
    agreeing = sum(c.agree for c in compared)
    failed = [r for r in results if r.comparison is None]
    out = [
        "# Where Ollama's templates drift from the models' own Jinja templates",
        "",
        "Generated — do not edit. Reproduce from a clean checkout with:",
        "",
        "```sh",
        CORPUS_COMMAND.format(cases=cases, seed=seed),
        "```",
        "",
        "For each of the corpus's paired entries (`fixtures/corpus/huggingface__huggingface.js/"
        "entries/*`: Ollama's Go `template.gotmpl` and the GGUF's `gguf_chat_template.jinja`), "
        f"both sides render the same {compared[0].total if compared else 0} "
        f"conversations (13 hand-picked shapes + {cases} generated with seed {seed}). "
        "The Go side is Ollama's template on Go's real `text/template` (the reference renderer); "
        "the Jinja side is jinja2 configured as transformers does, with the contract's "
        "variables plus `bos_token`/`eos_token`. The clock is pinned on both sides to "
        f"{PINNED_NOW.isoformat(sep=' ')}.",
        "",
        "## How a disagreement is classified",
        "",
        "- **jinja raises** / **ollama raises**: one side fails (e.g. `raise_exception(\"roles "
        "must alternate\")`, a Go execution error) where the other renders. Both failing counts "
        "as agreement.",
        "- Otherwise the kinds of a conversation are the *smallest set of explanations* under "
        "which both renderings become byte-identical (sets tried by size, then in the order "
        "below; nothing explains it → **other**):",
        "  - **default system prompt**: the conversation has no system message, and the "
        f"variant with a system message (`{PROBE_SYSTEM}`) added agrees — one side renders "
        "a system section of its own (a default prompt, or an empty system block) when none "
        "is given;",
        "  - **tool definitions**: the variant without `tools` agrees;",
        "  - **tool calls**: the variant without assistant `tool_calls` and `tool` messages "
        "agrees;",
        "  - **thinking**: the variant without `thinking` fields and `think` agrees;",
        "  - **BOS/EOS**: equal after deleting every BOS and EOS token on both sides;",
        "  - **date header**: equal after deleting every line holding a date-like string "
        "(`2026-01-15`, `15 Jan 2026`, `January 15, 2026`, `December 2023`);",
        "  - **white space only**: equal after deleting all white space.",
        "  Feature variants (re-rendered, never guessed) come before text normalisations, so "
        "spacing inside tool JSON is *tool definitions*.",
        "- Each kind's example is the smallest conversation that showed it, shrunk greedily "
        "(dropping messages, fields, tools, shortening texts) while it still shows that kind. "
        "*Its kinds* lists every kind that example needs, since one conversation can show "
        "several; a second diff then shows the example with those other kinds explained away (for "
        "*other*: with BOS/EOS tokens and date lines deleted). Diffs show white space as `·` "
        "(space), `⏎` (newline), `→` (tab).",
        "- Count = how many of the conversations showed the kind.",
        "- **BOS/EOS tokens**: meta.json carries none, so each entry gets its family's "
        "tokenizer BOS/EOS chosen by a special token its templates use "
        "(`compare.FAMILY_TOKENS`; shown per entry). Entries with no known family get none "
        "(`\"\"`), and then BOS/EOS is never a kind for them.",
        "- **The BOS rule**: Ollama tokenizes its prompt with `add_special`, so the model is fed "
        "BOS first whenever its vocabulary says so (llama.cpp's rule: "
        "`tokenizer.ggml.add_bos_token`, else its default for the vocabulary type and "
        "pre-tokenizer), while transformers tokenizes the Jinja's output without added "
        "specials and the template writes `bos_token` itself. Where a family has one of the "
        "vocabulary-only GGUFs llama.cpp ships (`compare.FAMILY_VOCABS`, read from the "
        "llama-cpp-python 0.3.36 sdist), the Go side is what Ollama feeds its tokenizer, as "
        "text: the vocabulary's BOS text before the prompt when it adds BOS (after cutting a "
        "leading `<bos>` where Ollama's server does), and that vocabulary's BOS text is the "
        "`bos_token`. Both sides are then tokenized with special-token text parsed, so equal "
        "text is equal tokens: a BOS the model's Jinja writes and Ollama's tokenizer adds is "
        "agreement, not drift. The vocabulary's EOS is its base tokenizer's, so the family's "
        "EOS stays.",
        "",
        f"**{agreeing} of {len(results)} entries agree on every conversation**"
        + (f"; {len(failed)} could not be compared (a template does not compile)"
           if failed else "") + ". Entries per kind: "
        + ", ".join(f"{k} {totals[k]}" for k in KINDS if k in totals) + ".",
        "",
        _vocab_note(results),
        "",
        "| # | entry | model | agree? | kinds (conversations) | BOS / EOS (vocabulary) |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for number, r in enumerate(results):
        c = r.comparison
        if c is None:
            out.append(f"| {number} | [{r.name}](#{_anchor(r.name)}) | {r.model} | "
                       "not compared | — | — |")
            continue
        kinds = ", ".join(f"[{f.kind}](#{_anchor(r.name, f.kind)}) ({f.count})"
                          for f in c.findings) or "—"
        verdict = "yes" if c.agree else f"no ({c.agreeing}/{c.total})"
        out.append(f"| {number} | [{r.name}](#{_anchor(r.name)}) | {r.model} | {verdict} | "
                   f"{kinds} | {_md_cell_code(c.bos) if c.bos else '—'} / "
                   f"{_md_cell_code(c.eos) if c.eos else '—'}{_vocab_cell(c)} |")
    out.append("")
    for r in results:
        c = r.comparison
        out += [f'<a id="{_anchor(r.name)}"></a>', "", f"## {r.name}", ""]
        if c is None:
            out += [f"`{r.model}` — not compared: {r.error}", ""]
            continue
        out += [f"`{r.model}` — {c.agreeing}/{c.total} conversations agree.", ""]
        for f in c.findings:
            out += [
                f'<a id="{_anchor(r.name, f.kind)}"></a>', "",
                f"### {r.name}: {f.kind} ({_conversations(f.count)})", "",
                "<details><summary>minimal conversation and diff</summary>", "",
                "Its kinds: " + ", ".join(f.kinds_of_example), "",
                "```json", json.dumps(f.example, ensure_ascii=False), "```", "",
                "```text", readable_diff(f.ollama, f.jinja), "```", "",
            ]
            if _focus_differs(f):
                out += [f"With {_others(f)} explained away:", "",
                        "```text", readable_diff(*f.focused), "```", ""]
            out += ["</details>", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _vocab_cell(comparison: Comparison) -> str:
    if not comparison.vocab:
        return ""
    adds = "adds BOS" if comparison.adds_bos else "no BOS"
    return f" ({comparison.vocab}: {adds}{', tokens' if comparison.on_tokens else ''})"


def _vocab_note(results: list[EntryResult]) -> str:
    """How many entries had a vocabulary, which had none, how many lost the BOS/EOS kind."""
    compared = [r for r in results if r.comparison is not None]
    with_vocab = [r for r in compared if r.comparison and r.comparison.vocab]
    without = [r.name for r in compared if not (r.comparison and r.comparison.vocab)]
    lost = [r.name for r in compared if r.bos_eos_without_rule and not r.bos_eos_now]
    gained = [r.name for r in compared
              if r.bos_eos_without_rule is False and r.bos_eos_now]
    return (f"**The BOS rule**: {len(with_vocab)} entries compared with their family's "
            f"vocabulary ({sum(bool(r.comparison and r.comparison.adds_bos) for r in with_vocab)}"
            f" of them add BOS); **{len(lost)} entries lost the BOS/EOS kind** with it (BOS/EOS "
            "was a kind of theirs with the Go side as the bare prompt, and no longer is): "
            + (", ".join(lost) or "none") + f". {len(gained)} entries gained it (the model's "
            "Jinja does not write the BOS Ollama's tokenizer adds, or the Go template writes the "
            "BOS text itself, so Ollama feeds two): " + (", ".join(gained) or "none")
            + f". {len(without)} entries had no shipped vocabulary (no BOS rule; the Go side is "
            "the bare prompt): " + (", ".join(without) or "none") + ". "
            + (f"{sum(bool(r.comparison and r.comparison.on_tokens) for r in with_vocab)} "
               "entries were also compared on token IDs with llama.cpp's own tokenizer on their "
               "vocabulary (`, tokens` in the table): two renderings whose texts differ agree when "
               "Ollama's prompt (tokenized with add_special) and the Jinja's output (without) "
               "give the same IDs — special tokens that strip the white space beside them, as "
               "Phi-3's do, make some white-space differences invisible to the model."
               if any(r.comparison and r.comparison.on_tokens for r in with_vocab) else
               "llama.cpp's tokenizer was not built (`gotmpl2jinja engines install tokenizer`), "
               "so no entry was compared on token IDs."))


def _conversations(count: int) -> str:
    return f"{count} conversation" + ("" if count == 1 else "s")


def _anchor(entry: str, kind: str | None = None) -> str:
    raw = entry if kind is None else f"{entry}-{kind}"
    return re.sub(r"[^a-z0-9]+", "-", raw.lower()).strip("-")


def corpus_json(results: list[EntryResult]) -> list[dict[str, Any]]:
    return [{"entry": r.name, "model": r.model,
             **(r.comparison.to_json() if r.comparison else {"error": r.error})}
            for r in results]
