"""Ollama's collate in the translated Jinja (ollama-semantics.md §4): every branch of the
prelude's two passes, on every raw engine, against Go.

The first pass keeps the request's own list when nothing changes; the second cuts it only
around a merge or a message that changes. Each sequence below reaches a different mix of those
branches: a merge at the start, in the middle, at the end, a run of three, a role to
lower-case alone or inside a run, tool messages (never merged), and a content that is not a
string (llama-server passes an empty one as null; Go's is "").
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from gotmpl2jinja.emit import translate
from gotmpl2jinja.engines.registry import get_engines, raw_engine_names
from gotmpl2jinja.ollama import reference
from gotmpl2jinja.verify.conversation import jinja_context

ROOT = Path(__file__).resolve().parent.parent
SEED = (ROOT / "fixtures" / "seeds" / "002_qwen-style.gotmpl").read_text(encoding="utf-8")
CHATML = (ROOT / "fixtures" / "corpus" / "ollama" / "template" / "chatml.gotmpl").read_text(
    encoding="utf-8")
#: Prints every message with its index and .System: a wrong cut shows as a wrong index.
INDEXED = ("{{ .System }}|{{ range $i, $m := .Messages }}{{ $i }}:{{ $m.Role }}={{ $m.Content }}"
           "({{ len $m.ToolCalls }});{{ end }}")

ROLES = {
    "nothing to change": ["system", "user", "assistant", "user"],
    "merge at the start": ["user", "user", "assistant"],
    "merge in the middle": ["user", "assistant", "assistant", "user"],
    "merge at the end": ["user", "assistant", "user", "user"],
    "a run of three": ["system", "system", "system", "user"],
    "two runs": ["user", "user", "assistant", "assistant", "user"],
    "a role to lower-case alone": ["user", "Assistant", "user"],
    "a role to lower-case in a run": ["user", "USER", "assistant"],
    "system messages to lower-case and join": ["System", "user", "SYSTEM", "system", "user"],
    "tool messages are never merged": ["user", "assistant", "tool", "tool", "user"],
    "one message": ["user"],
    "an unknown role in a run": ["user", "odd", "odd", "assistant"],
    "an unknown role between known ones": ["user", "odd", "user"],
    "a role with newlines naming two": ["user", "user\n\nuser", "assistant"],
}


def conversation(roles: list[str]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for i, role in enumerate(roles):
        message: dict[str, Any] = {"role": role, "content": f"{role[0]}{i}"}
        if role.lower() == "assistant" and i % 2:
            message["tool_calls"] = [{"function": {"name": "f", "arguments": {"i": i}}}]
        messages.append(message)
    return {"messages": messages}


@pytest.fixture(scope="module")
def engines() -> list[Any]:
    return get_engines(raw_engine_names())


@pytest.mark.parametrize("source", [SEED, CHATML, INDEXED], ids=["seed", "chatml", "indexed"])
@pytest.mark.parametrize("case", list(ROLES))
def test_collate_matches_go(engines: list[Any], source: str, case: str) -> None:
    conv = conversation(ROLES[case])
    want = reference.render(source, conv, lenient=True)
    jinja = translate(source)
    context = jinja_context(conv)
    for engine in engines:
        assert engine.render(jinja, context) == want, engine.name


def test_every_short_role_sequence_matches_go(engines: list[Any]) -> None:
    """The first pass looks for runs in the roles joined into one string, for the three roles
    that merge, and sends every other role the long way: every sequence of up to three of
    these roles, on every raw engine."""
    roles = ("system", "user", "assistant", "tool", "User", "odd")
    jinja = translate(INDEXED)
    sequences = [list(seq) for n in range(1, 4) for seq in itertools.product(roles, repeat=n)]
    assert len(sequences) == 6 + 36 + 216
    for seq in sequences:
        conv = conversation(seq)
        want = reference.render(INDEXED, conv, lenient=True)
        context = jinja_context(conv)
        for engine in engines:
            assert engine.render(jinja, context) == want, (engine.name, seq)


@pytest.mark.parametrize("position", [0, 1, 2])
def test_a_content_that_is_not_a_string_is_empty(engines: list[Any], position: int) -> None:
    """The null content llama-server passes for an empty one: Go sees "" (the contract's own
    conversations always carry strings, so the context is changed after it is made)."""
    conv = conversation(["user", "assistant", "user"])
    conv["messages"][position]["content"] = ""
    want = reference.render(INDEXED, conv, lenient=True)
    context = jinja_context(conv)
    context["messages"][position]["content"] = None
    jinja = translate(INDEXED)
    for engine in engines:
        assert engine.render(jinja, context) == want, engine.name
