"""Rendering one conversation: Ollama's prompt (`ollama_prompt`, what the `render` command
prints) and the same conversation on every engine beside Go's (`render`, what a playground
shows side by side).

Why `render` goes through the harness (`verify.harness.render_case`) instead of rendering each
side here: a person comparing the panes must see exactly what `verify` compares — the same Go
call for the host's flags (the closed rendering for add_generation_prompt false), the same
Jinja variables, BOS rule and runtime scope — or a pane could disagree where verify agrees.

May depend on: `emit`, `errors`, `ollama`, `pipeline.reading`, `verify`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import Any

from gotmpl2jinja.emit.legacy import collect_warnings
from gotmpl2jinja.emit.preamble import convert_source
from gotmpl2jinja.ollama.reference import ReferenceRenderer
from gotmpl2jinja.ollama.source import Source
from gotmpl2jinja.ollama.vocab import BosFacts
from gotmpl2jinja.pipeline.reading import Note, Notes, OnNote, go_syntax_placed, placed_in
from gotmpl2jinja.verify.check import bos_rule
from gotmpl2jinja.verify.closed import host_call
from gotmpl2jinja.verify.conversation import validate
from gotmpl2jinja.verify.goside import go_renderer
from gotmpl2jinja.verify.harness import render_case
from gotmpl2jinja.verify.outcomes import Outcome
from gotmpl2jinja.verify.request import checked_by_go, read_chat_request
from gotmpl2jinja.verify.tokens import TRANSFORMERS, TokenLevel, convention, template_specials


def ollama_prompt(source: Source, conversation: str | dict[str, Any], *, now: str | None = None,
                  go_struct_function: bool = False, template_only: bool = False,
                  timeout: float = 5.0) -> str:
    """Exactly what Ollama renders for `source` and `conversation` (the request's JSON text,
    passed to Go as is so that `-0` and escapes reach it, or a dict): its server's steps, the
    Modelfile rule and the family's, then Execute. `now` (RFC 3339) pins the clock (default:
    now, local time zone, as Ollama's server); `go_struct_function` prints a tool's Function
    as Go structs (Ollama v0.33); `template_only` skips the server's steps. The text holds
    lone surrogates (U+DC80–U+DCFF) for bytes that are not UTF-8: encode it with
    "surrogateescape" to get Go's bytes. A Go syntax error is placed in the input."""
    clock = now or dt.datetime.now().astimezone().isoformat()
    with ReferenceRenderer(timeout) as renderer, go_syntax_placed(source):
        return renderer.render(source.template, conversation, now=clock,
                               function_json=not go_struct_function, server=not template_only,
                               modelfile_system=source.system,
                               modelfile_messages=source.messages or None,
                               family=source.family.payload() if source.family else None)


@dataclass
class Rendering:
    """One side's rendering of the conversation: its text, or the error it failed with.

    `raised`: the Jinja called raise_exception (the Jinja side of a Go error: agreeing).
    `refused`: Go side, the capability Ollama refuses the request for (`text` is then the
    request rendered as if the option were absent, as the contract asks of the Jinja).
    `out_of_scope`: an engine's runtime context puts this conversation outside the contract
    (why). `agrees`: the engine gives what Go gives, as verify compares. `expected`: what the
    engine must render for Go's prompt under its host's convention (Go's prompt; on a raw
    engine with BOS facts, the BOS text first). `first_difference`: the index of the first
    character where `text` differs from `expected` (None when equal or failed). `tokens`:
    with a vocabulary, the token view. `server`: a llama-server context (it tokenizes the
    rendering itself, BOS added there)."""

    text: str | None
    error: str | None = None
    raised: bool = False
    refused: str | None = None
    out_of_scope: str | None = None
    agrees: bool | None = None
    expected: str | None = None
    first_difference: int | None = None
    tokens: TokenView | None = None
    server: bool = False


@dataclass
class TokenView:
    """The token IDs and pieces Ollama feeds the model and those this engine's host feeds it,
    and the index of the first that differs (None when they are the same)."""

    ollama: list[tuple[int, str]]
    engine: list[tuple[int, str]]
    first_difference: int | None


@dataclass
class RenderResult:
    """One conversation on Go and on each engine. `call` is the host's call the flags make:
    "ollama" (Ollama's prompt), "closed" (add_generation_prompt false: Go's closed
    rendering) or "continue" (a prefill). `conversation` is the one rendered (flags set),
    `context` the Jinja variables the engines got, `bos` the BOS facts, `skipped` the
    engines not available here and why, `compared_on` how outputs were compared when not as
    bare strings, `specials` the special-token texts of the template and the Jinja (a page
    marks them)."""

    call: str
    go: Rendering
    engines: dict[str, Rendering]
    conversation: dict[str, Any]
    context: dict[str, Any]
    jinja: str
    bos: BosFacts | None = None
    skipped: dict[str, str] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)
    compared_on: str | None = None
    specials: list[str] = field(default_factory=list)

    @property
    def agree(self) -> bool:
        """Every engine in scope gives what Go gives."""
        return all(r.agrees for r in self.engines.values() if r.out_of_scope is None)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data (texts may hold lone surrogates: dump with ensure_ascii)."""
        data = asdict(self)
        data["agree"] = self.agree
        return data


def read_conversation(text: str, name: str = "conversation",
                      on_note: OnNote | None = None) -> dict[str, Any]:
    """A conversation's JSON text read as Ollama's server reads an /api/chat body
    (`verify.request`: the reader of the `render` command and the playground alike), the
    reading checked by Go, as the contract's object. A key that cannot reach the template is
    named in one note; a text that is not JSON is an error at its line and column
    (`FILE:LINE:COL`), one Ollama refuses is refused in Go's words."""
    request = checked_by_go(read_chat_request(text, name))
    note = request.note()
    if note:
        Notes(on_note).add("note", note)
    return validate(request.conversation)


def with_flags(conversation: dict[str, Any], *, think: bool | str | None = None,
               add_generation_prompt: bool | None = None,
               continue_final_message: bool | None = None) -> dict[str, Any]:
    """The conversation with the host's flags set (None leaves a flag as the conversation
    has it), checked against the contract."""
    flags = {"think": think, "add_generation_prompt": add_generation_prompt,
             "continue_final_message": continue_final_message}
    return validate({**conversation, **{k: v for k, v in flags.items() if v is not None}})


def render(source: Source, conversation: str | dict[str, Any], *, jinja: str | None = None,
           engines: list[str] | None = None, think: bool | str | None = None,
           add_generation_prompt: bool | None = None,
           continue_final_message: bool | None = None, bos: BosFacts | None = None,
           tokens: TokenLevel | None = None, now: dt.datetime | None = None,
           on_note: OnNote | None = None) -> RenderResult:
    """Render `conversation` (the contract's object, or its JSON text) with the host's flags
    on Go and on `engines` (default: every available one), the Jinja being `jinja` (a
    hand-written one) or the translation of `source` with the BOS facts `bos` (unchecked:
    the panes show any difference). Engines render with the harness's variables and BOS rule
    (`verify.check.bos_rule(bos)`), or compare on a vocabulary's tokens with `tokens`
    (`token_level`; then each engine has its token view). `now` pins the clock of both sides
    (default: the harness's fixed instant)."""
    notes = Notes(on_note)
    conv = (read_conversation(conversation, on_note=notes) if isinstance(conversation, str)
            else conversation)
    conv = with_flags(conv, think=think, add_generation_prompt=add_generation_prompt,
                      continue_final_message=continue_final_message)
    if jinja is None:
        with placed_in(source):
            jinja, problems = collect_warnings(lambda: convert_source(source, bos))
        notes.warnings(problems)
    level = tokens if tokens is not None else bos_rule(bos)
    with go_syntax_placed(source):
        case = render_case(source.template, jinja, conv, engines=engines,
                           render=go_renderer(source), now=now, tokens=level)
    go = _rendering(case.go, None)
    shown = {}
    for name, outcome in case.engines.items():
        expected = go.text
        if go.text is not None and level is not None and convention(name) == TRANSFORMERS:
            expected = level.host.expected_text(go.text)
        view = None
        if level is not None and level.vocab is not None and go.text is not None \
                and outcome.output is not None:
            view = token_view(level, name, go.text, outcome.output)
        shown[name] = _rendering(outcome, expected, case.agrees[name], case.out_of_scope[name],
                                 view, convention(name) != TRANSFORMERS)
    return RenderResult(
        call=host_call(conv), go=go, engines=shown, conversation=conv, context=case.context,
        jinja=jinja, bos=bos, skipped=case.skipped, notes=list(notes),
        compared_on=level.describe if level is not None else None,
        specials=template_specials(source.template + jinja))


def token_view(tokens: TokenLevel, engine: str, prompt: str, output: str) -> TokenView:
    """The token IDs and pieces Ollama and `engine`'s host feed the model for Go's `prompt`
    and the engine's `output` (`verify.tokens`: each host's own tokenizer call)."""
    a, a_special, b, b_special = tokens.texts(engine, prompt, output)
    ours, theirs = list(tokens.ids(a, a_special)), list(tokens.ids(b, b_special))
    assert tokens.vocab is not None
    first = None if ours == theirs else next(
        (i for i, (x, y) in enumerate(zip(ours, theirs, strict=False)) if x != y),
        min(len(ours), len(theirs)))
    return TokenView(ollama=list(zip(ours, tokens.vocab.pieces(ours), strict=True)),
                     engine=list(zip(theirs, tokens.vocab.pieces(theirs), strict=True)),
                     first_difference=first)


def _rendering(outcome: Outcome, expected: str | None, agrees: bool | None = None,
               scope: str | None = None, view: TokenView | None = None, server: bool = False
               ) -> Rendering:
    """One side's Rendering; an engine's with where it first differs from `expected`."""
    first = None
    if expected is not None and outcome.output is not None and expected != outcome.output:
        pairs = zip(expected, outcome.output, strict=False)
        first = next((i for i, (a, b) in enumerate(pairs) if a != b),
                     min(len(expected), len(outcome.output)))
    return Rendering(text=outcome.output, error=outcome.error, raised=outcome.raised,
                     refused=outcome.refused, out_of_scope=scope, agrees=agrees,
                     expected=expected, first_difference=first, tokens=view, server=server)
