"""A Hugging Face host's call of the template, and what Go says it must render.

A conversation of the harness may carry the flags a Hugging Face host passes explicitly
(`add_generation_prompt`, `continue_final_message`; `docs/equivalence-contract.md`, "The host's
flags"). Without them, or with `add_generation_prompt` true, the expectation is Ollama's prompt.
With `add_generation_prompt` false it is the closed rendering, asked of Go itself: the template
with a marker printed where each turn of its chat loop begins, rendered on the conversation
plus one more message (a role no template knows, so nothing merges with it), cut at the marker
of that message's turn. A template whose chat loop the translation cannot honour the flags for
(`emit.generation`) keeps Ollama's prompt there. With `continue_final_message` the expectation is
Ollama's prompt (its prefill): the host renders the turn closed and cuts after the content.

May depend on: `emit`, `errors`, `syntax`, `verify.conversation`.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from gotmpl2jinja.emit.generation import NEXT_ROLE, ChatLoop, chat_loop
from gotmpl2jinja.errors import Gotmpl2JinjaError
from gotmpl2jinja.syntax import nodes
from gotmpl2jinja.syntax.parser import parse

#: The host's flags a harness conversation may carry (never seen by Go).
HOST_FLAGS = ("add_generation_prompt", "continue_final_message")
#: Printed by Go where each turn of the chat loop begins (private-use characters: no template
#: prints them).
TURN_MARK = "\ue000turn\ue001"
#: The message that follows the conversation in the closed rendering.
NEXT_MESSAGE = {"role": NEXT_ROLE, "content": ""}


def host_call(conv: dict[str, Any]) -> str:
    """"ollama" (Ollama's prompt), "closed" (add_generation_prompt false) or "continue"."""
    if conv.get("continue_final_message"):
        return "continue"
    if conv.get("add_generation_prompt") is False:
        return "closed"
    return "ollama"


def without_flags(conv: dict[str, Any]) -> dict[str, Any]:
    """The conversation as Ollama receives it."""
    if not any(flag in conv for flag in HOST_FLAGS):
        return conv
    return {k: v for k, v in conv.items() if k not in HOST_FLAGS}


@functools.lru_cache(maxsize=64)
def marked_source(go_source: str) -> str | None:
    """The Go source with TURN_MARK printed first in each turn of its chat loop; None where the
    translation does not honour the flags (the closed rendering is then Ollama's prompt)."""
    loop = chat_loop(parse(go_source))
    if not isinstance(loop, ChatLoop):
        return None
    source = go_source.encode()  # positions count bytes, as Go's do
    start = loop.node.pos.offset
    close = source.find(b"}}", start)
    body = loop.node.list.nodes[0].pos.offset if loop.node.list.nodes else None
    if close < 0 or (body is not None and body < close + 2):
        raise Gotmpl2JinjaError("the chat loop's range action has no end where expected")
    trimmed = source[close - 2:close] == b" -"
    first = loop.node.list.nodes[0] if loop.node.list.nodes else None
    if isinstance(first, nodes.TextNode) and _GO_SPACE.sub("", first.text):
        # Ollama infers a template's thinking tags from the loop body's first node when it
        # is text: the marker goes into that text, after what the trim marker removes, so
        # the body still starts with text that is not blank
        at = close + 2
        if trimmed:
            while source[at:at + 1] in (b" ", b"\t", b"\r", b"\n"):
                at += 1
        return (source[:at] + TURN_MARK.encode() + source[at:]).decode()
    # a body that starts with an action (or blank text): a marker action, trimmed as the
    # range's own action trims what follows it
    mark = "{{- \"" + TURN_MARK + "\" -}}" if trimmed else "{{\"" + TURN_MARK + "\"}}"
    return (source[:close + 2] + mark.encode() + source[close + 2:]).decode()


#: The characters Go's strings.TrimSpace removes (unicode.IsSpace).
_GO_SPACE = re.compile("[\t\n\v\f\r \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f"
                       "\u205f\u3000]")


def go_case(go_source: str, conv: dict[str, Any]) -> tuple[str, dict[str, Any], bool]:
    """What Go renders for this call: (source, conversation, cut at the last marker?)."""
    plain = without_flags(conv)
    if host_call(conv) != "closed" or not plain.get("messages"):
        return go_source, plain, False
    marked = marked_source(go_source)
    if marked is None:
        return go_source, plain, False
    return marked, {**plain, "messages": [*plain["messages"], dict(NEXT_MESSAGE)]}, True


def cut_closed(output: str) -> str | None:
    """The closed rendering from Go's marked output: everything before the last turn's marker
    (the added message's), markers removed; None when no turn began."""
    at = output.rfind(TURN_MARK)
    if at < 0:
        return None
    return output[:at].replace(TURN_MARK, "")


#: The kind of a host's closed call (add_generation_prompt false) where Go's rendering with the
#: added message fails: Execute returns no text, so where the failure lies (in the added turn or
#: past the chat loop, after the cut, or before it) cannot be told; not compared, counted.
CLOSED_GO_FAILS = ("closed rendering fails in Go (an error with the added message: not "
                   "compared, the failure may lie past the cut)")


#: The kind of a prefill transformers' own mechanism cannot give Ollama's bytes for, as Go
#: itself shows (`prefill_cut`): its prefill is the turn rendered closed, cut after the content.
PREFILL_PAST_CONTENT = ("prefill past the final content (transformers cuts the turn after it; "
                        "Ollama's open turn prints more or other bytes)")
#: The kind of a prefill transformers refuses (ValueError) because the final content, or its
#: tag, does not appear in the rendering: the template changes it (escapes it, cuts it, …).
PREFILL_CONTENT_CHANGED = ("prefill of a content the template changes (transformers refuses "
                           "it: the final content does not appear in the rendering)")
#: What transformers' `render_jinja_template` appends to the final content to find it.
_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


def tagged(conv: dict[str, Any]) -> dict[str, Any]:
    """The conversation as transformers renders it for a prefill (the tag after the final
    content), as Ollama receives it."""
    plain = without_flags(conv)
    messages = [dict(m) for m in plain["messages"]]
    messages[-1]["content"] = messages[-1].get("content", "") + _CONTINUE_TAG
    return {**plain, "messages": messages}


def prefill_refused(conv: dict[str, Any], rendered: str) -> bool:
    """transformers' `render_jinja_template` refuses this prefill: the final content (spaces
    stripped) or the tag is not in the rendering of the tagged conversation."""
    content = conv["messages"][-1].get("content", "")
    return content.strip() not in rendered or _CONTINUE_TAG.strip() not in rendered


def prefill_cut(rendered: str) -> str | None:
    """transformers' cut of a prefill's rendering at the tag (its `render_jinja_template`:
    before the tag where the tag is whole, else before it with trailing spaces stripped)."""
    tag = _CONTINUE_TAG.strip()
    at = rendered.rfind(tag)
    if at < 0:
        return None
    if rendered[at:at + len(_CONTINUE_TAG)] == _CONTINUE_TAG:
        return rendered[:at]
    return rendered[:at].rstrip()
