"""The emit stage's entry points: a parsed template → Jinja (`emit`), source → Jinja
(`translate`); the Messages path, the legacy path or both behind the FIM switch.

May depend on: `analysis`, `emit.emitter`, `emit.family`, `emit.legacy`, `emit.paths`,
`emit.values`, `errors`, `ollama`, `syntax`.
"""

from __future__ import annotations

import re
import textwrap
from typing import TYPE_CHECKING

from gotmpl2jinja.analysis import analyze
from gotmpl2jinja.emit.assistant import Blocks, generation_nodes
from gotmpl2jinja.emit.emitter import Emitter
from gotmpl2jinja.emit.family import translating_for
from gotmpl2jinja.emit.generation import ChatLoop, chat_loop
from gotmpl2jinja.emit.legacy import translate_legacy
from gotmpl2jinja.emit.paths import header_name
from gotmpl2jinja.emit.values import Retype, retype_refusal
from gotmpl2jinja.errors import TranslationError
from gotmpl2jinja.ollama import facts
from gotmpl2jinja.ollama.family import FamilySteps
from gotmpl2jinja.syntax import nodes
from gotmpl2jinja.syntax.parser import parse

if TYPE_CHECKING:  # a type only: the gguf package is imported where facts are read
    from gotmpl2jinja.ollama.vocab import BosFacts


def uses_messages(template: nodes.Template) -> bool:
    """Ollama's Vars() test (§2): the template takes the messages path."""
    return bool(facts.uses_messages(template))


def emit(template: nodes.Template, *, generation_blocks: bool = False) -> str:
    """Jinja for a parsed template, messages or legacy path (raises TranslationError when
    unfaithful); `generation_blocks`: the assistant's own text inside `{% generation %}`
    blocks (`emit.assistant`), refused where it cannot be decided."""
    return _without_nul_near_a_raise(template, _emit(template, generation_blocks))


#: A `raise_exception` call on one string literal, as the emitter writes every one.
_RAISE = re.compile(r"""raise_exception\((?:'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\)""", re.S)
#: White space put on both sides of each such call in a template with a NUL: more than the
#: characters llama.cpp quotes around a failing call (under 60, measured).
_NUL_GAP = " " * 100


def _without_nul_near_a_raise(template: nodes.Template, jinja: str) -> str:
    """Keep every NUL character of Jinja that can raise away from its `raise_exception` calls.
    A NUL has no portable escape, so it is written raw; llama.cpp's engine quotes the source
    around a failing call in its error message and hands the message on as a C string, cut at
    a NUL there: the template's `raise_exception` then cannot be told from an engine error
    (found by the template generator: `\x00{{- .Messages.Foo -}}`). Only the innermost call's
    surroundings are quoted, so white space inside the expression around each call is enough;
    a NUL in a call's own message is refused."""
    if "\x00" not in jinja or "raise_exception(" not in jinja:
        return jinja
    calls = list(_RAISE.finditer(jinja))
    if len(calls) == jinja.count("raise_exception(") \
            and not any("\x00" in call.group() for call in calls):
        return _RAISE.sub(lambda call: _NUL_GAP + call.group() + _NUL_GAP, jinja)
    reason = ("a NUL character in a message the template fails with: llama.cpp's engine cuts "
              "its error message at the NUL (its raise_exception could not be told from an "
              "engine error): not supported")
    for _, tree in template.trees():
        for node in tree.walk():
            if isinstance(node, (nodes.TextNode, nodes.StringNode, nodes.TemplateNode)) \
                    and "\x00" in (node.name if isinstance(node, nodes.TemplateNode)
                                   else node.text):
                raise TranslationError(reason, name=template.name, line=node.pos.line,
                                       col=node.pos.col)
    raise TranslationError(reason, name=template.name)


def _assistant_text(template: nodes.Template) -> Blocks:
    found = generation_nodes(template)
    if isinstance(found, tuple):
        line, col, why = found
        raise TranslationError("--generation-blocks: " + why, name=template.name,
                               line=line or None, col=col or None)
    return found


def _emit(template: nodes.Template, generation_blocks: bool = False) -> str:
    if not uses_messages(template):  # the per-turn path (ollama-semantics.md §9)
        if generation_blocks:
            raise TranslationError("--generation-blocks: the template has no .Messages "
                                   "(a per-turn template): no chat loop to mark",
                                   name=template.name)
        return translate_legacy(template, template.name)
    generation = _assistant_text(template) if generation_blocks else {}
    analysis = analyze(template)
    found = chat_loop(template)
    chat = found if isinstance(found, ChatLoop) else None
    last: Retype | None = None
    for _ in range(8):
        try:
            return Emitter(template, analysis, chat=chat, generation=generation).run()
        except Retype as retype:
            last = retype
            if analysis.mixed.get(retype.var_id) == retype.types:  # no progress: give up here
                break
            analysis.mixed[retype.var_id] = retype.types
    raise retype_refusal(last, analysis.variables.values(), template.name)


def translate(source: str, name: str = "template", *, bos: BosFacts | None = None,
              family: FamilySteps | None = None, generation_blocks: bool = False) -> str:
    """Go template source → equivalent Jinja source; with `bos` facts whose `adds_bos` is true,
    the Jinja writes `bos_token` first (`with_bos`); `family`: the steps Ollama takes for the
    model's family, parser and config (ollama.family), written into the Jinja too."""
    template = parse(source, name=name)
    with translating_for(family):
        jinja = emit(template, generation_blocks=generation_blocks)
    if bos is None or not bos.adds_bos:
        return jinja
    _refuse_stripped_bos(template, bos)
    return with_bos(jinja, bos)


def with_bos(jinja: str, bos: BosFacts) -> str:
    """`jinja` writing `bos_token` before anything else, the facts said in its header.

    Ollama tokenizes its prompt with add_special, so its tokenizer puts BOS first when the
    vocabulary says so; transformers and vLLM tokenize a template's output without added
    specials, so the template must write it (the Hugging Face convention: the host supplies
    the text as `bos_token`). A template that writes the BOS text itself keeps it: Ollama then
    feeds two BOS tokens, and so does the translation. Whitespace-exact: the header's newline
    is trimmed by `{{-`, and every line after the header starts with a left-trimming tag."""
    end = jinja.find("#}") if jinja.startswith("{#") else -1
    if end < 0:  # no header comment (never so today): BOS still first
        return "{{- bos_token }}" + jinja
    said = bos.bos_token if bos.bos_token is not None else "the model's BOS"
    why = header_name(bos.rule or "adds BOS")
    if bos.source != bos.rule:
        why += f"; from {header_name(bos.source)}"
    note = (f"BOS: bos_token is written first, as Ollama's tokenizer adds {header_name(said)} "
            f"before the prompt ({why}).")
    head = jinja[:end].rstrip(" ")
    lines = textwrap.wrap(note, width=88, break_long_words=False, break_on_hyphens=False)
    header = head + "".join(f"\n    {line}" for line in lines) + " #}"
    return header + "\n{{- bos_token }}" + jinja[end + 2:]


def _refuse_stripped_bos(template: nodes.Template, bos: BosFacts) -> None:
    """Ollama's server cuts a leading `<bos>` text off the prompt when it judges that the
    tokenizer adds BOS (its completionPrompt): a template that starts with that text feeds one
    BOS there, which bos_token plus the text would not. Refused rather than written wrong."""
    if not bos.strips:
        return
    first = template.root.nodes[0] if template.root.nodes else None
    if isinstance(first, nodes.TextNode) and first.text.startswith(bos.strips):
        raise TranslationError(
            f"the template starts with {bos.strips}, which Ollama's server cuts off the prompt "
            "before its tokenizer adds BOS: writing bos_token before it would feed the model "
            "two; not supported with these tokenizer facts (--no-bos translates it as is)",
            name=template.name, line=first.pos.line, col=first.pos.col)
