"""Draws per runtime context (verify.percontext): each of llama-server's contexts compares its
share of the cases, steered to its scope, and says so when it cannot."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import record_renders

from gotmpl2jinja.batch.files import summary_line
from gotmpl2jinja.batch.sweep import SweepRow, engine_cell, to_markdown
from gotmpl2jinja.emit import translate
from gotmpl2jinja.engines.registry import get_engine
from gotmpl2jinja.verify import percontext
from gotmpl2jinja.verify.exhaustive import exhaustive_conversations
from gotmpl2jinja.verify.harness import verify_template
from gotmpl2jinja.verify.outcomes import out_of_scope
from gotmpl2jinja.verify.percontext import STEERING, steered
from gotmpl2jinja.verify.steer import FREE, Steer
from gotmpl2jinja.verify.strategies import draw_random, shrink_conversation

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "fixtures" / "seeds" / "002_qwen-style.gotmpl"
CONTEXTS = ["llamacpp-server", "minja-server", "ollama-jinja"]
#: A template llama-server will not load (its tool-call parser generator fails on it).
PHI4_MINI = (ROOT / "fixtures" / "corpus" / "huggingface__huggingface.js" / "entries"
             / "072__library_phi4-mini_3.8b" / "template.gotmpl")


def _accounted(tally: Any) -> bool:
    """Every conversation drawn is compared or counted out of scope, main draw and own draws."""
    return tally.cases + tally.drawn == tally.compared + sum(tally.runtime_differs.values()) \
        + sum(tally.drawn_out_of_scope.values())


# ---------------------------------------------------------------------------------------------
# The steered generator


#: Per steer: what no conversation it draws may hold.
def _breaks(steer: Steer, conv: dict[str, Any]) -> list[str]:
    messages = conv.get("messages", [])
    calls = [c for m in messages for c in m.get("tool_calls", [])]
    found = {
        "fim": "prompt" in conv,
        "empty_chat": "messages" in conv and not messages,
        "final_assistant": bool(messages) and messages[-1]["role"] == "assistant",
        "closed_call": conv.get("add_generation_prompt") is False
        or bool(conv.get("continue_final_message")),
        "thinking": any("thinking" in m for m in messages),
        "tool_calls": bool(calls),
        "call_index": any("index" in c["function"] for c in calls),
        "bare_calls": any("arguments" not in c["function"] for c in calls),
        "tools": "tools" in conv,
        "empty_tools": conv.get("tools") == [],
        "tool_items": any("items" in t for t in conv.get("tools") or []),
    }
    broken = [name for name, there in found.items() if there and not getattr(steer, name)]
    broken += [f"role {m['role']}" for m in messages if m["role"] in steer.dropped_roles]
    if "think" in conv and steer.think is not None and conv["think"] not in steer.think:
        broken.append(f"think {conv['think']}")
    return broken


@pytest.mark.parametrize("kind", sorted(STEERING))
def test_a_steered_draw_never_holds_the_kind_it_is_steered_from(kind: str) -> None:
    steer = steered(FREE, [kind])
    assert steer != FREE
    rng = random.Random(kind)
    for _ in range(300):
        conv = draw_random(rng, steer=steer).conversation
        assert not _breaks(steer, conv), (kind, conv)


def test_the_steers_of_llama_servers_minja_era_leave_only_plain_chats() -> None:
    steer = steered(FREE, STEERING)
    rng = random.Random(1)
    drawn = [draw_random(rng, steer=steer).conversation for _ in range(200)]
    assert all(not _breaks(steer, conv) for conv in drawn)
    assert all(conv["messages"] and "think" not in conv and "tools" not in conv
               for conv in drawn)
    assert {m["role"] for conv in drawn for m in conv["messages"]} == {
        "user", "assistant", "ipython"}


def test_the_free_steer_draws_what_it_always_drew() -> None:
    """Steering off, a draw makes the same choices in the same order: the main draw (and so
    the main draw's counts) is what it was. A steered draw of the same stream differs."""
    free = [draw_random(random.Random(7)) for _ in range(1)]
    again = [draw_random(random.Random(7), steer=Steer()) for _ in range(1)]
    assert free == again
    steer = steered(FREE, ["prefill", "tool-call index"])
    assert draw_random(random.Random(7), steer=steer).steer == steer


def test_a_steered_case_shrinks_within_its_steer() -> None:
    """Hypothesis replays a steered case's choices through the steered strategy: the same
    conversation comes back, and what it shrinks to is still of that steer."""
    steer = steered(FREE, ["fill-in-the-middle", "prefill", "developer role",
                           "tool use (minja-era polyfills)"])
    rng = random.Random(3)
    cases = [draw_random(rng, steer=steer) for _ in range(60)]
    case = max(cases, key=lambda c: len(c.conversation["messages"]))
    assert shrink_conversation(case, lambda conv: conv == case.conversation) \
        == case.conversation
    shrunk = shrink_conversation(case, lambda conv: len(conv.get("messages", [])) >= 2)
    assert len(shrunk["messages"]) == 2 and not _breaks(steer, shrunk)


def test_the_exhaustive_shapes_of_a_steer() -> None:
    steer = steered(FREE, ["no messages", "prefill", "tool-call index",
                           "thinking control (minja era)"])
    shapes = list(exhaustive_conversations(1, steer))
    assert shapes and all(not _breaks(steer, conv) for conv in shapes)
    # a prefill's shape is kept, closed by a user's turn
    assert {"messages": [{"role": "assistant", "content": "A0"},
                         {"role": "user", "content": "U1"}]} in shapes
    assert list(exhaustive_conversations(1, FREE)) == list(exhaustive_conversations(1))


# ---------------------------------------------------------------------------------------------
# The harness: each runtime context compares its share


def test_each_runtime_context_compares_its_share_at_small_cases() -> None:
    """Before these draws, 20 cases of the main draw left 1-4 compared on each context."""
    go = SEED.read_text(encoding="utf-8")
    result = verify_template(go, translate(go), cases=20, engines=["jinja2", *CONTEXTS], seed=0)
    assert result.ok and result.cases == 20 and result.contexts == CONTEXTS
    assert result.counts["jinja2"].compared == 20 and result.counts["jinja2"].drawn == 0
    for name in CONTEXTS:
        tally = result.counts[name]
        assert tally.compared >= 18 and tally.drawn > 0 and tally.short is None, name
        assert sum(tally.runtime_differs.values()) > 10, name  # the main draw's kinds, kept
        assert _accounted(tally), name
    assert result.shortfalls == {}
    assert "runtime-differs=llamacpp-server:" in summary_line(result, "seed.gotmpl")
    assert result.refused == result.counts["jinja2"].refused
    data = result.to_json()
    assert data["counts"]["minja-server"]["compared"] >= 18 and data["shortfalls"] == {}
    again = verify_template(go, translate(go), cases=20, engines=CONTEXTS, seed=0)
    assert {n: (t.compared, t.drawn) for n, t in again.counts.items()} == {
        n: (result.counts[n].compared, result.counts[n].drawn) for n in CONTEXTS}


def test_refused_counts_the_main_draws_cases_only() -> None:
    """chatml has no .Tools: Ollama refuses a request with tools (its own class, compared with
    Go's rendering without them). llama-server's context draws such requests of its own; the
    result's `refused` is still of the main draw's cases, as the raw engine counts them."""
    go = (ROOT / "fixtures" / "corpus" / "ollama" / "template" / "chatml.gotmpl").read_text(
        encoding="utf-8")
    result = verify_template(go, translate(go), cases=20, engines=["jinja2", "llamacpp-server"],
                             seed=0)
    server = result.counts["llamacpp-server"]
    assert result.ok and server.drawn_refused > 0
    assert result.refused == result.counts["jinja2"].refused > 0
    alone = verify_template(go, translate(go), cases=20, engines=["llamacpp-server"], seed=0)
    assert alone.refused == server.refused - server.drawn_refused < result.refused


def test_the_main_draw_is_rendered_first_and_every_own_draw_is_in_scope(
        monkeypatch: pytest.MonkeyPatch) -> None:
    go = SEED.read_text(encoding="utf-8")
    jinja = translate(go)
    engine = get_engine("minja-server")
    sent = record_renders(monkeypatch, engine)
    result = verify_template(go, jinja, cases=30, engines=["minja-server"], seed=4)
    tally = result.counts["minja-server"]
    rng = random.Random(4)
    main = [draw_random(rng).conversation for _ in range(30)]
    in_main = [c for c in main if out_of_scope(engine, c, jinja) is None]
    assert result.ok and tally.compared == math.ceil(0.9 * 30) == len(sent)
    assert len(in_main) < 5 and tally.drawn == len(sent) - len(in_main) + sum(
        tally.drawn_out_of_scope.values())
    assert _accounted(tally)


def test_the_exhaustive_pass_gives_each_context_the_shapes_in_its_scope() -> None:
    go = SEED.read_text(encoding="utf-8")
    result = verify_template(go, translate(go), cases=0, exhaustive=1,
                             engines=["llamacpp-server"], seed=0)
    tally = result.counts["llamacpp-server"]
    main = result.cases - sum(tally.runtime_differs.values())
    # the prefill and tool-call shapes the main pass left out, without the index, closed
    assert result.ok and tally.compared > main + 50 and tally.drawn > 0
    assert _accounted(tally)


def test_a_template_llama_server_will_not_load_says_so_in_the_verdict() -> None:
    go = PHI4_MINI.read_text(encoding="utf-8")
    result = verify_template(go, translate(go), cases=10, engines=["llamacpp-server"], seed=0)
    tally = result.counts["llamacpp-server"]
    assert result.ok and tally.compared == 0 and tally.drawn == 0
    why = result.shortfalls["llamacpp-server"]
    assert why.startswith("0 of 10 compared, llama-server refuses the template (")
    assert summary_line(result, "t").endswith(f"\tequivalent (llamacpp-server: {why})")


def test_the_cap_is_reported_with_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the cap at a quarter of a draw per case, minja-server cannot reach its share: the
    verdict says how many it compared, that the cap was reached, and what its draws met."""
    monkeypatch.setattr(percontext, "CAP", 0.25)
    go = SEED.read_text(encoding="utf-8")
    result = verify_template(go, translate(go), cases=20, engines=["minja-server"], seed=0)
    tally = result.counts["minja-server"]
    assert result.ok and tally.drawn == 5 and tally.compared < 18
    assert tally.short is not None and tally.short.startswith("cap reached: 5 draws of its own")
    line = summary_line(result, "t")
    assert line.endswith(f"\tequivalent (minja-server: {tally.compared} of 20 compared, "
                         f"{tally.short})")
    assert json.loads(json.dumps(result.to_json()))["shortfalls"] == {
        "minja-server": f"{tally.compared} of 20 compared, {tally.short}"}


# ---------------------------------------------------------------------------------------------
# The sweep's rows and totals


def test_the_sweep_gives_the_compared_count_per_context_and_its_totals() -> None:
    rows = [
        SweepRow(template="a", kind="gotmpl", status="equivalent", cases=200,
                 engines=["jinja2", "minja-server"], compared={"minja-server": 180},
                 runtime_differs={"minja-server": {"prefill": 193}}),
        SweepRow(template="b", kind="gotmpl", status="equivalent", cases=200,
                 engines=["jinja2", "minja-server"], compared={"minja-server": 31},
                 short={"minja-server": "cap reached: 4000 draws of its own"},
                 runtime_differs={"minja-server": {"prefill": 193}}),
    ]
    assert engine_cell(rows[0], "minja-server") == "=, 180 compared; 193 out of scope: prefill 193"
    assert engine_cell(rows[1], "minja-server").startswith(
        "=, 31 compared (short: cap reached: 4000 draws of its own); 193 out of scope")
    assert engine_cell(rows[0], "jinja2") == "="
    text = to_markdown(rows, command="c", cases=200, exhaustive=None, seed=0)
    assert ("**Compared per runtime context**" in text
            and "minja-server 211 of 400 (53%), 1 template(s) short: b (cap reached: 4000 "
                "draws of its own)." in text)


# ---------------------------------------------------------------------------------------------
# The regenerated sweeps


@pytest.mark.parametrize(("document", "contexts"), [
    ("sweep.md", ["llamacpp-server", "minja-server"]),
    ("sweep-llama-server.md", ["llamacpp-server", "minja-server"]),
    ("sweep-ollama-jinja.md", ["ollama-jinja"]),
])
def test_the_sweeps_give_each_contexts_compared_cases(document: str,
                                                      contexts: list[str]) -> None:
    """Each row gives the cases a runtime context compared; the totals are 90% of the case
    budget on each context, or the templates short of it are named with why."""
    text = (ROOT / "docs" / document).read_text(encoding="utf-8")
    line = text.split("**Compared per runtime context**", 1)[1].split("\n", 1)[0]
    rows = [row for row in text.splitlines() if row.startswith("| ") and "| translated |" in row]
    assert rows
    for context in contexts:
        total = line.split(f" {context} ", 1)[1].split(";", 1)[0]
        compared, budget = (int(n) for n in total.split(" (", 1)[0].split(" of "))
        assert compared >= 0.9 * budget or "template(s) short: " in total, total
        for row in rows:
            assert " compared" in row, row
