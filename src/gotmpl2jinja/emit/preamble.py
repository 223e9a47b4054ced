"""A Modelfile's rule in the template itself: the Jinja preamble that rewrites `messages` as
Ollama's server does for a Modelfile's SYSTEM and MESSAGE lines (ollama-semantics.md §8), and
`convert_source`, the translation of a Source with its preamble inside.

May depend on: `emit` (`translator`, `paths`, `runtime`), `ollama.source`, `ollama.vocab`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gotmpl2jinja.emit import runtime
from gotmpl2jinja.emit.paths import FIM_CONDITION
from gotmpl2jinja.emit.translator import translate
from gotmpl2jinja.ollama.source import Source

if TYPE_CHECKING:  # a type only: the gguf package is imported where facts are read
    from gotmpl2jinja.ollama.vocab import BosFacts

# ---------------------------------------------------------------------------------------------
# The Modelfile rule in Jinja


def jinja_string(text: str) -> str:
    """A single-quoted Jinja string literal every engine reads back as `text` exactly
    (`runtime.literal`: only the portable escapes, other characters as themselves)."""
    return runtime.literal(text)


def _message_literal(role: str, content: str) -> str:
    return f"{{'role': {jinja_string(role)}, 'content': {jinja_string(content)}}}"


def modelfile_preamble(system: str | None, messages: list[dict[str, str]]) -> str:
    """Jinja that rewrites `messages` as Ollama's server does for a Modelfile (§8).

    Modelfile SYSTEM comes first unless the conversation's first message is a system message
    (compared lower-cased: Ollama lower-cases roles when it decodes a request), then the MESSAGE
    lines, then the conversation. A fill-in-the-middle request (`prompt` and `suffix` given, as
    the translated template tests it) is left alone: Ollama's suffix path sees no messages.
    `add_generation_prompt` and every other variable are left as the caller gave them. Empty
    when there is nothing to add. Every tag is `{%-`/`{#-` (so the
    newlines between them never print) and the text ends with a tag, not a newline: what follows
    it is `with_preamble`'s business.
    """
    if not system and not messages:
        return ""
    lines = ["{#- Ollama's Modelfile rule (chat only, not fill-in-the-middle): SYSTEM comes "
             "first unless the conversation starts with a system message; the MESSAGE lines "
             "come before the conversation. #}"]
    lines.append("{%- set modelfile_messages = [] %}")
    for message in messages:
        literal = _message_literal(message["role"], message.get("content", ""))
        lines.append(f"{{%- set modelfile_messages = modelfile_messages + [{literal}] %}}")
    if system:
        lines.append(f"{{%- set modelfile_system = [{_message_literal('system', system)}] %}}")
        lines.append(
            "{%- set modelfile_messages = (modelfile_system if messages|length == 0 or "
            "(messages[0].role|lower) != 'system' else []) + modelfile_messages %}"
        )
    lines.append(f"{{%- set messages = messages if ({FIM_CONDITION}) "
                 "else (modelfile_messages + messages) %}")
    return "\n".join(lines)


_LEFT_TRIMMING_TAGS = ("{%-", "{{-", "{#-")


def _split_header(jinja: str) -> tuple[str, str]:
    """The translator's leading `{#- … #}` header comment (with its newline), and the rest."""
    if not jinja.startswith("{#"):
        return "", jinja
    end = jinja.find("#}")
    if end < 0:
        return "", jinja
    end += 2
    if jinja.startswith("\n", end):
        end += 1
    return jinja[:end], jinja[end:]


def with_preamble(preamble: str, jinja: str) -> str:
    """`jinja` with `preamble` placed after its leading header comment (before it if none).

    Whitespace-safe on every engine: the header's newline is trimmed by the preamble's first
    `{#-`; a newline follows the preamble only when the body starts with a left-trimming tag
    (which trims it), else `{{ '' }}` separates them, so trim_blocks cannot eat the body's first
    newline.
    """
    if not preamble:
        return jinja
    header, body = _split_header(jinja)
    separator = "\n" if body.startswith(_LEFT_TRIMMING_TAGS) else "{{ '' }}"
    return header + preamble + separator + body


def convert_source(source: Source, bos: BosFacts | None = None, *,
                   generation_blocks: bool = False) -> str:
    """The Jinja for a Source: the translated template with the Modelfile preamble inside.

    The translator's header comment stays first; the preamble goes right after it, so the
    rewritten `messages` is what the translated prelude (collate and the rest) reads. Raises
    TranslationError (with FILE:LINE:COL) for what cannot be translated faithfully. `bos`:
    the model's tokenizer facts (the Jinja writes bos_token first when it adds BOS);
    `generation_blocks`: the assistant's own text inside `{% generation %}` blocks.
    """
    jinja = translate(source.template, name=source.name, bos=bos,
                      family=source.family, generation_blocks=generation_blocks)
    return with_preamble(modelfile_preamble(source.system, source.messages), jinja)
