"""The harness catches planted bugs and shrinks them to a readable minimal conversation.

Ground truth is Go (the reference renderer). The Jinja templates here are written by hand from
the Go templates (the translator is tested elsewhere); each planted bug is one small edit to a
correct Jinja template, and verify must report it on every engine with a small example.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import FIXTURES

from gotmpl2jinja.cli.main import cli
from gotmpl2jinja.emit.runtime import ADDRESS
from gotmpl2jinja.engines.registry import default_engine_names, raw_engine_names
from gotmpl2jinja.errors import RenderError
from gotmpl2jinja.verify.closed import PREFILL_CONTENT_CHANGED, PREFILL_PAST_CONTENT
from gotmpl2jinja.verify.conversation import jinja_context, validate
from gotmpl2jinja.verify.exhaustive import exhaustive_conversations, exhaustive_count
from gotmpl2jinja.verify.harness import verify_template as _verify_template
from gotmpl2jinja.verify.outcomes import Outcome, VerifyResult, agree, describe_diff, visible

CHATML_GO = (FIXTURES / "corpus" / "ollama" / "template" / "chatml.gotmpl").read_text()

# Ollama's collate(): consecutive same-role messages (except tool) are merged with "\n\n",
# keeping the first message's tool calls. Written once, used by both Jinja templates.
COLLATE = """\
{%- set ns = namespace(msgs=[]) -%}
{%- for m in messages -%}
  {%- if ns.msgs and ns.msgs[-1].role == m.role and m.role != 'tool' -%}
    {%- set prev = ns.msgs[-1] -%}
    {%- set ns.msgs = ns.msgs[:-1] + [{'role': prev.role, 'content': prev.content ~ '\\n\\n' ~ m.content, 'tool_calls': prev.tool_calls}] -%}
  {%- else -%}
    {%- set ns.msgs = ns.msgs + [{'role': m.role, 'content': m.content, 'tool_calls': (m.tool_calls if m.tool_calls is defined else [])}] -%}
  {%- endif -%}
{%- endfor -%}
"""  # noqa: E501

CHATML_JINJA = COLLATE + """\
{%- for m in ns.msgs -%}
{{ '<|im_start|>' ~ m.role ~ '\\n' ~ m.content ~ '<|im_end|>\\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\\n' }}{%- endif -%}
"""

# A chatml variant with tools and tool calls (messages path), and its hand-written Jinja.
TOOLS_GO = """\
{{- if .Tools }}<|im_start|>system
# Tools
{{- range .Tools }}
{"name": "{{ .Function.Name }}", "description": "{{ .Function.Description }}"}
{{- end }}<|im_end|>
{{ end }}
{{- range .Messages }}<|im_start|>{{ .Role }}
{{- if .Content }}
{{ .Content }}
{{- end }}
{{- range .ToolCalls }}
<tool_call>
{"name": "{{ .Function.Name }}"}
</tool_call>
{{- end }}<|im_end|>
{{ end }}<|im_start|>assistant
"""

TOOLS_JINJA = """\
{%- if tools -%}
{{ '<|im_start|>system\\n# Tools' }}
{%- for t in tools -%}
{{ '\\n{"name": "' ~ t.function.name ~ '", "description": "' ~ (t.function.description if t.function.description is defined else '') ~ '"}' }}
{%- endfor -%}
{{ '<|im_end|>\\n' }}
{%- endif -%}
""" + COLLATE + """\
{%- for m in ns.msgs -%}
{{ '<|im_start|>' ~ m.role }}
{%- if m.content -%}{{ '\\n' ~ m.content }}{%- endif -%}
{%- for c in m.tool_calls -%}
{{ '\\n<tool_call>\\n{"name": "' ~ c.function.name ~ '"}\\n</tool_call>' }}
{%- endfor -%}
{{ '<|im_end|>\\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}{{ '<|im_start|>assistant\\n' }}{%- endif -%}
"""  # noqa: E501

ALL_ENGINES = raw_engine_names()  # the llama-server contexts: tests/test_cppengines.py


def verify_template(*args: Any, **kwargs: Any) -> VerifyResult:
    """The harness on the raw engines unless told otherwise: these hand-written templates and
    planted bugs are about the harness itself, not llama-server's reshaping of requests."""
    kwargs.setdefault("engines", ALL_ENGINES)
    return _verify_template(*args, **kwargs)


def mutate(source: str, old: str, new: str) -> str:
    """One planted bug: `old` must occur exactly once, so the mutant is what the test says."""
    assert source.count(old) == 1, old
    return source.replace(old, new)


def assert_caught_everywhere(result: VerifyResult, max_messages: int) -> None:
    assert not result.ok
    assert sorted(d.engine for d in result.divergences) == sorted(ALL_ENGINES)
    for divergence in result.divergences:
        validate(divergence.conversation)
        assert len(divergence.conversation.get("messages", [])) <= max_messages, divergence
        assert divergence.diff
        assert divergence.go_output != divergence.jinja_output or divergence.jinja_error
    for name, tally in result.counts.items():
        assert tally.diverged >= 1, name
        assert tally.cases == tally.equal + tally.both_failed + tally.diverged + tally.refused


@pytest.mark.parametrize("function", ["js", "urlquery"])
def test_a_prefill_transformers_refuses_is_a_kind_not_a_divergence(function: str) -> None:
    """A template that escapes the content: for a prefill whose content it changes ("&" is
    "\\u0026" or "%26") transformers itself raises (the content is not in its rendering), where
    Ollama renders; found by the coverage table on all engines."""
    from gotmpl2jinja.emit import translate
    from gotmpl2jinja.engines.registry import get_engines

    source = f"{{{{ range .Messages }}}}{{{{ .Content | {function} }}}}{{{{ end }}}}"
    jinja = translate(source)
    (engine,) = get_engines(["transformers"])
    prefill = {"messages": [{"role": "assistant", "content": "&"}], "continue_final_message": True}
    with pytest.raises(RenderError, match="final message does not appear in the chat"):
        engine.render(jinja, jinja_context(prefill))
    result = verify_template(source, jinja, cases=300, exhaustive=1, seed=3,
                             engines=["transformers"])
    assert result.ok, result.divergences
    assert result.counts["transformers"].runtime_differs[PREFILL_CONTENT_CHANGED] > 0


def test_hand_written_chatml_is_equivalent_on_every_engine() -> None:
    result = verify_template(CHATML_GO, CHATML_JINJA, cases=150, exhaustive=1, seed=1)
    assert result.divergences == []
    assert result.ok
    assert result.engines == ALL_ENGINES
    assert result.cases == 150 + exhaustive_count(1)
    for tally in result.counts.values():
        # think or tools on a template that has neither: Ollama refuses (400), and the Jinja
        # renders as if the option were absent, checked against Go's rendering of that; a
        # prefill whose open turn is not its content cut (chatml prints the header after
        # it) is outside transformers' continue_final_message
        outside = sum(tally.runtime_differs.values())
        assert set(tally.runtime_differs) <= {PREFILL_PAST_CONTENT}
        assert tally.cases == result.cases == tally.equal + tally.refused + outside
        assert tally.equal > 0 and tally.refused > 0
    assert result.refused == result.counts["jinja2"].refused


def test_hand_written_chatml_with_tools_is_equivalent_on_every_engine() -> None:
    result = verify_template(TOOLS_GO, TOOLS_JINJA, cases=150, exhaustive=1, seed=2)
    assert [d.diff for d in result.divergences] == []


def test_dropped_newline_is_caught_with_one_message() -> None:
    mutant = mutate(CHATML_JINJA, "m.role ~ '\\n' ~ m.content", "m.role ~ m.content")
    result = verify_template(CHATML_GO, mutant, cases=200)
    assert_caught_everywhere(result, max_messages=1)
    divergence = result.divergences[0]
    assert len(divergence.conversation["messages"]) == 1
    # The diff points at the newline after the role, made visible.
    role = divergence.conversation["messages"][0]["role"]
    offset = len("<|im_start|>" + role)
    assert f"first difference at offset {offset} (line 1, column {offset + 1})" in divergence.diff
    assert "⏎" in divergence.diff


def test_forgotten_merge_of_same_role_messages_is_shrunk_to_two_messages() -> None:
    no_collate = CHATML_JINJA.replace(COLLATE, "").replace("ns.msgs", "messages")
    result = verify_template(CHATML_GO, no_collate, cases=300)
    assert_caught_everywhere(result, max_messages=2)
    for divergence in result.divergences:
        messages = divergence.conversation["messages"]
        assert len(messages) == 2
        assert messages[0]["role"] == messages[1]["role"] != "tool"
        assert "\n\n" in (divergence.go_output or "")


def test_swapped_branches_are_caught() -> None:
    merge = ("    {%- set prev = ns.msgs[-1] -%}\n    {%- set ns.msgs = ns.msgs[:-1] + "
             "[{'role': prev.role, 'content': prev.content ~ '\\n\\n' ~ m.content, "
             "'tool_calls': prev.tool_calls}] -%}\n")
    append = ("    {%- set ns.msgs = ns.msgs + [{'role': m.role, 'content': m.content, "
              "'tool_calls': (m.tool_calls if m.tool_calls is defined else [])}] -%}\n")
    swapped = mutate(CHATML_JINJA, merge + "  {%- else -%}\n" + append,
                     append + "  {%- else -%}\n" + merge)
    result = verify_template(CHATML_GO, swapped, cases=200)
    assert_caught_everywhere(result, max_messages=1)


def test_changed_json_spacing_is_caught_with_no_messages() -> None:
    mutant = mutate(TOOLS_JINJA, """'", "description": "'""", """'","description":"'""")
    result = verify_template(TOOLS_GO, mutant, cases=200)
    assert_caught_everywhere(result, max_messages=0)
    for divergence in result.divergences:
        assert len(divergence.conversation["tools"]) == 1
        assert '", "description": "' in (divergence.go_output or "")


def test_wrong_tool_call_json_is_caught_with_one_message() -> None:
    mutant = mutate(TOOLS_JINJA, """'\\n<tool_call>\\n{"name": "'""",
                    """'\\n<tool_call>\\n{"name":"'""")
    result = verify_template(TOOLS_GO, mutant, cases=300)
    assert_caught_everywhere(result, max_messages=1)
    for divergence in result.divergences:
        (message,) = divergence.conversation["messages"]
        assert len(message["tool_calls"]) == 1


# Not `(index .Messages 0).Role`: Ollama's Vars() does not look inside chains, so that template
# would take the legacy path (no .Messages at all) — the harness caught this while writing it.
FIRST_ROLE_GO = "{{ $m := index .Messages 0 }}{{ $m.Role }}"
FIRST_ROLE_JINJA = ("{%- if messages|length == 0 -%}{{ raise_exception('no messages') }}"
                    "{%- endif -%}{{ messages[0].role }}")


def test_go_error_matched_by_raise_exception_counts_as_equal() -> None:
    result = verify_template(FIRST_ROLE_GO, FIRST_ROLE_JINJA, cases=100, exhaustive=0)
    assert result.ok, [d.diff for d in result.divergences]
    for tally in result.counts.values():
        # the empty chat: Ollama renders nothing (refused: "load"); Execute fails there and
        # the Jinja raises alike, which is checked all the same
        assert tally.refused >= 1
        assert tally.equal >= 1


def test_go_error_without_raise_exception_is_a_divergence() -> None:
    result = verify_template(FIRST_ROLE_GO, "{{ messages[0].role }}", cases=100, exhaustive=0)
    assert_caught_everywhere(result, max_messages=0)
    for divergence in result.divergences:
        assert divergence.found_by == "exhaustive"
        assert divergence.go_error is not None
        assert "index" in divergence.go_error
        assert divergence.conversation == {"messages": []}


def test_exhaustive_pass_reports_the_first_and_shortest_divergence() -> None:
    mutant = mutate(CHATML_JINJA, "m.role ~ '\\n' ~ m.content", "m.role ~ m.content")
    result = verify_template(CHATML_GO, mutant, cases=0, exhaustive=2, engines=["jinja2"])
    (divergence,) = result.divergences
    assert divergence.found_by == "exhaustive"
    assert divergence.conversation == {"messages": [{"role": "system", "content": "S0"}]}
    # Stops at the first divergence for the only engine: the empty conversations came first.
    assert result.cases == 2 * 7 + 1


def test_exhaustive_generator_covers_every_shape() -> None:
    convs = list(exhaustive_conversations(1))
    assert len(convs) == exhaustive_count(1) == (1 + 16) * 2 * 7
    shapes = {(m["role"], "thinking" in m, "tool_calls" in m)
              for c in convs for m in c["messages"]}
    assert len(shapes) == 16
    assert {c.get("think", "absent") for c in convs} == {"absent", True, False, "low",
                                                        "medium", "high", "max"}
    for conv in convs:
        validate(conv)


def test_visible_whitespace() -> None:
    assert visible("a b\n\t\r\u00a0\x00") == "a·b⏎⇥␍⍽\\u0000"


def test_diff_names_the_first_differing_offset_with_context() -> None:
    diff = describe_diff(Outcome(output="line1\nabc\n"), Outcome(output="line1\nabd\n"), "x")
    assert diff.splitlines() == [
        "first difference at offset 8 (line 2, column 3); lengths: go 10, x 10",
        "go: line1⏎abc⏎",
        "x:  line1⏎abd⏎",
        " " * len("go: line1⏎ab") + "^",  # under the differing character
    ]


def test_diff_of_a_shorter_output() -> None:
    diff = describe_diff(Outcome(output="ab\n"), Outcome(output="ab"), "jinja2")
    assert diff.splitlines()[0] == ("first difference at offset 2 (line 1, column 3); "
                                    "lengths: go 3, jinja2 2")
    assert "(end of output)" in diff.splitlines()[2]


def test_diff_when_jinja_raises_but_go_renders() -> None:
    diff = describe_diff(Outcome(output="ok"), Outcome(error="boom", raised=True), "hfjinja")
    assert diff == "hfjinja raised: boom\nGo rendered 2 characters"


def test_the_address_failure_agrees_only_where_go_prints_an_address() -> None:
    raised = Outcome(error=f"raise_exception: {ADDRESS}", raised=True)
    assert agree(Outcome(output="[0xc000012340 0xc000012380]"), raised)
    assert not agree(Outcome(output="[]"), raised)  # no pointer printed: Go's bytes are due
    assert agree(Outcome(error="template: boom"), raised)  # Go failed (later on): both fail
    assert not agree(Outcome(output="[0xc000012340]"), Outcome(output="[0xc000012340]x"))
    assert not agree(Outcome(output="[0xc000012340]"), Outcome(error="other", raised=True))


@pytest.mark.parametrize("source, equivalent", [
    # Go prints `[0xc000…]` cut to `xc000…]`: no whole address in it, but other bytes on every
    # render, so the ADDRESS failure is the contract's (found by the generator's slow run)
    ("{{- slice (print .Messages) 2 -}}", True),
    ("{{- slice (print .Messages) 3 -}}", True),
])
def test_the_address_failure_agrees_where_go_prints_part_of_an_address(
    source: str, equivalent: bool
) -> None:
    from gotmpl2jinja.emit import translate

    result = verify_template(source, translate(source), cases=10, exhaustive=1, seed=1,
                             engines=["jinja2"])
    assert result.ok is equivalent, result.divergences


@pytest.fixture()
def chatml_files(tmp_path):  # type: ignore[no-untyped-def]
    go = tmp_path / "chatml.gotmpl"
    go.write_text(CHATML_GO)
    good = tmp_path / "good.jinja"
    good.write_text(CHATML_JINJA)
    bad = tmp_path / "bad.jinja"
    bad.write_text(mutate(CHATML_JINJA, "m.role ~ '\\n' ~ m.content", "m.role ~ m.content"))
    return go, good, bad


def test_cli_exit_status_and_lines(chatml_files) -> None:  # type: ignore[no-untyped-def]
    go, good, bad = chatml_files
    runner = CliRunner()
    ok = runner.invoke(cli, ["verify", str(go), "--jinja", str(good), "--cases", "30",
                             "--engines", "jinja2,minijinja"])
    assert ok.exit_code == 0, ok.output
    first, summary = ok.stdout.splitlines()
    fields = first.split("\t")
    assert fields[:4] + fields[5:] == ["chatml", str(go), "cases=30",
                                       "engines=jinja2,minijinja", "divergences=0", "equivalent"]
    assert fields[4].startswith("refused=") and 0 < int(fields[4].split("=")[1]) < 30
    assert summary == "1 template(s): 1 equivalent, 0 not"

    diverged = runner.invoke(cli, ["verify", str(go), "--jinja", str(bad), "--cases", "30",
                                   "--engines", "jinja2", "--json"])
    assert diverged.exit_code == 1
    (data,) = json.loads(diverged.output)
    assert data["ok"] is False
    assert data["divergences"][0]["engine"] == "jinja2"
    assert len(data["divergences"][0]["conversation"]["messages"]) == 1


def test_cli_rejects_unknown_engine_with_a_sentence(chatml_files) -> None:  # type: ignore[no-untyped-def]
    go, good, _ = chatml_files
    result = CliRunner().invoke(cli, ["verify", str(go), "--jinja", str(good),
                                      "--engines", "jinja2,jinja9"])
    assert result.exit_code == 1
    assert "unknown engine(s) jinja9; choose from jinja2, transformers, hfjinja" in result.output
    assert "Traceback" not in result.output


def _fields_seen(convs: list[dict]) -> set[str]:  # type: ignore[type-arg]
    """What a sample of conversations reaches: roles, think values, keys, JSON types …"""
    seen: set[str] = set()

    def walk(value: object, into: set[str]) -> None:
        if isinstance(value, dict):
            into.update(f"key:{k}" for k in value)
            for item in value.values():
                walk(item, into)
        elif isinstance(value, list):
            for item in value:
                walk(item, into)
        else:
            into.add(f"type:{type(value).__name__}")

    for conv in convs:
        validate(conv)
        messages = conv.get("messages", [])
        seen.update(f"role:{m['role']}" for m in messages)
        seen.add(f"think:{conv.get('think', 'absent')}")
        if "prompt" in conv:
            seen.add("fim")
        if messages and messages[-1]["role"] == "assistant":
            seen.add("prefill")
        if any(a["role"] == b["role"] for a, b in zip(messages, messages[1:], strict=False)):
            seen.add("consecutive same role")
        for m in messages:
            for call in m.get("tool_calls", []):
                walk(call["function"].get("arguments", {}), seen)
        walk(conv.get("tools", []), seen)
        seen.update(f"msgkey:{k}" for m in messages for k in m)
    return seen


EVERY_FIELD = {
    *(f"role:{r}" for r in ("system", "user", "assistant", "tool", "developer")),
    *(f"think:{t}" for t in ("absent", True, False, "low", "medium", "high", "max")),
    "fim", "prefill", "consecutive same role",
    "type:float", "type:int", "type:bool", "type:NoneType", "type:str",
    "key:$defs", "key:anyOf", "key:enum", "key:required", "key:items", "key:properties",
    *(f"msgkey:{k}" for k in ("content", "thinking", "tool_calls", "tool_name",
                              "tool_call_id")),
}


def test_random_conversations_reach_every_field() -> None:
    from hypothesis import HealthCheck, Phase, given, settings

    from gotmpl2jinja.verify.strategies import conversations

    drawn: list[dict] = []  # type: ignore[type-arg]

    @settings(max_examples=400, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(conversations())
    def collect(conv: dict) -> None:  # type: ignore[type-arg]
        drawn.append(conv)

    collect()
    assert EVERY_FIELD - _fields_seen(drawn) == set()


def test_bulk_random_draws_reach_every_field_and_are_seeded() -> None:
    import random

    from gotmpl2jinja.verify.strategies import draw_random

    first = [draw_random(random.Random(7)).conversation for _ in range(3)]
    assert first == [draw_random(random.Random(7)).conversation for _ in range(3)]
    rng = random.Random(0)
    drawn = [draw_random(rng, max_messages=6) for _ in range(400)]
    assert EVERY_FIELD - _fields_seen([d.conversation for d in drawn]) == set()
    assert max(len(d.conversation.get("messages", [])) for d in drawn) == 6


def test_hypothesis_replays_a_bulk_case_and_shrinks_from_it() -> None:
    """The bulk mode's choices are hypothesis's: replaying them gives the very conversation, and
    the shrinker starts from it (deleting messages in the middle, simplifying the rest)."""
    import random

    from gotmpl2jinja.verify.strategies import draw_random, shrink_conversation

    rng = random.Random(3)
    cases = [draw_random(rng) for _ in range(300)]
    for case in cases[:20]:
        seen: list[dict] = []  # type: ignore[type-arg]
        # Everything "fails": the first call is the replay, then it shrinks to the simplest.
        assert shrink_conversation(case, lambda c, s=seen: s.append(c) is None) == {
            "messages": []}
        assert seen[0] == case.conversation

    def late_tool_message(conv: dict) -> bool:  # type: ignore[type-arg]
        roles = [m["role"] for m in conv.get("messages", [])]
        return "tool" in roles[3:]

    # Rare enough that hypothesis's own generation would seldom find it in a few tries.
    case = next(c for c in cases if late_tool_message(c.conversation)
                and len(c.conversation["messages"]) >= 5)
    minimal = shrink_conversation(case, late_tool_message)
    assert minimal["messages"][3:] == [{"role": "tool"}]
    assert all(m == {"role": "system"} for m in minimal["messages"][:3])
    assert set(minimal) == {"messages"}


def test_a_callers_go_renderer_is_used_for_every_case() -> None:
    """`render=` (e.g. the Modelfile rule of migrate) replaces the batch path case by case: a
    Go side that appends a marker diverges everywhere, and every checked case went through it."""
    from gotmpl2jinja.verify.outcomes import go_render

    calls: list[dict] = []  # type: ignore[type-arg]

    def marked(source: str, conv: dict, now: object) -> str:  # type: ignore[type-arg]
        calls.append(conv)
        return go_render(source, conv, now) + ("!" if conv.get("messages") else "")  # type: ignore[arg-type]

    result = verify_template(CHATML_GO, CHATML_JINJA, cases=40, engines=["jinja2"],
                             render=marked, seed=4)
    (divergence,) = result.divergences
    assert len(divergence.conversation["messages"]) == 1
    assert divergence.go_output is not None and divergence.go_output.endswith("!")
    assert len(calls) >= result.cases


# ---------------------------------------------------------------------------------------------
# Planted bugs in REAL translations: the translator's own output for corpus templates, each
# mutated by one precise textual edit (which must apply exactly once).

SEED_GO = (FIXTURES / "seeds" / "002_qwen-style.gotmpl").read_text(encoding="utf-8")
QWEN25_GO = (FIXTURES / "corpus" / "ollama" / "historical"
             / "tools-testdata@6b04cad7e816d1a119559e092d59f4fbaa6c3a0b"
             / "qwen2.5.gotmpl").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def seed_jinja() -> str:
    from gotmpl2jinja import translate

    return translate(SEED_GO, name="002_qwen-style", check=False)  # verified here


@pytest.fixture(scope="module")
def qwen25_jinja() -> str:
    from gotmpl2jinja import translate

    return translate(QWEN25_GO, name="qwen2.5", check=False)  # verified here


def first_offset(a: str, b: str) -> int:
    """Where two texts first differ (computed here, not by the harness)."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return min(len(a), len(b))


def assert_minimal_everywhere(result: VerifyResult, messages: int) -> None:
    """Caught on every engine, each with a conversation of exactly `messages` messages (the
    fewest that can show the bug) and a diff naming the first differing offset."""
    assert_caught_everywhere(result, max_messages=messages)
    for divergence in result.divergences:
        assert len(divergence.conversation.get("messages", [])) == messages, divergence
        go, jinja = divergence.go_output, divergence.jinja_output
        assert go is not None and jinja is not None, divergence
        assert divergence.diff.startswith(
            f"first difference at offset {first_offset(go, jinja)} "), divergence.diff


def test_real_translations_are_equivalent_before_mutation(seed_jinja: str,
                                                          qwen25_jinja: str) -> None:
    """The baseline: without a planted bug the same runs find nothing."""
    assert verify_template(SEED_GO, seed_jinja, cases=60, exhaustive=1).divergences == []
    assert verify_template(QWEN25_GO, qwen25_jinja, cases=60, exhaustive=1).divergences == []


def test_real_translation_dropped_newline_is_caught_with_one_message(seed_jinja: str) -> None:
    mutant = mutate(seed_jinja, "{{- '<|im_start|>user\\n' ~ message['content']",
                    "{{- '<|im_start|>user' ~ message['content']")
    result = verify_template(SEED_GO, mutant, cases=200, exhaustive=1)
    assert_minimal_everywhere(result, messages=1)
    for divergence in result.divergences:
        assert divergence.conversation["messages"][0]["role"] == "user"
        go = divergence.go_output or ""
        assert go[first_offset(go, divergence.jinja_output or "")] == "\n"


def _branch_bodies(jinja: str, first: str, second: str, end: str) -> tuple[str, str]:
    """The bodies of two consecutive branches `first` … `second` … `end` (each once)."""
    for marker in (first, second, end):
        assert jinja.count(marker) == 1, marker
    a, b, c = jinja.index(first), jinja.index(second), jinja.index(end)
    assert a < b < c
    return jinja[a + len(first):b], jinja[b + len(second):c]


def test_real_translation_swapped_role_branches_are_caught_with_one_message(
        seed_jinja: str) -> None:
    first = "{%- if message['role'] == 'user' %}"
    second = "{%- elif message['role'] == 'assistant' %}"
    end = "{%- elif message['role'] == 'tool' %}"
    user, assistant = _branch_bodies(seed_jinja, first, second, end)
    assert "'<|im_start|>user\\n'" in user and "'<|im_start|>assistant\\n'" in assistant
    swapped = mutate(seed_jinja, first + user + second + assistant + end,
                     first + assistant + second + user + end)
    result = verify_template(SEED_GO, swapped, cases=200, exhaustive=1)
    assert_minimal_everywhere(result, messages=1)
    for divergence in result.divergences:
        assert divergence.conversation["messages"][0]["role"] in ("user", "assistant")


def test_real_translation_literal_json_spacing_is_caught_with_one_message(
        qwen25_jinja: str) -> None:
    mutant = mutate(qwen25_jinja, """'{"name": "' ~ tool_call['function']['name']""",
                    """'{"name":"' ~ tool_call['function']['name']""")
    result = verify_template(QWEN25_GO, mutant, cases=200, exhaustive=1)
    assert_minimal_everywhere(result, messages=1)
    for divergence in result.divergences:
        (message,) = divergence.conversation["messages"]
        assert message["role"] == "assistant" and message["tool_calls"]
        assert '{"name": "' in (divergence.go_output or "")


def test_real_translation_runtime_json_spacing_is_caught_with_one_message(
        qwen25_jinja: str) -> None:
    """`':'` → `': '` in json_value's objects: Go's compact JSON of tool-call arguments."""
    line = "~ ':' ~ ((jv_x|tojson"  # a value, its string and small-integer cases in line
    mutant = mutate(qwen25_jinja, line, line.replace("~ ':' ~", "~ ': ' ~"))
    result = verify_template(QWEN25_GO, mutant, cases=200, exhaustive=1)
    assert_minimal_everywhere(result, messages=1)
    for divergence in result.divergences:
        go = divergence.go_output or ""
        offset = first_offset(go, divergence.jinja_output or "")
        assert go[offset - 1] == ":" and divergence.jinja_output[offset] == " "  # type: ignore[index]


def test_real_translation_without_the_merge_is_caught_with_two_messages(
        seed_jinja: str) -> None:
    # collate's first pass no longer marks a message that merges into the one before
    runs = " or ".join(f"'\\n{role}\\n\\n{role}\\n' in collated_roles"
                       for role in ("system", "user", "assistant"))
    mutant = mutate(seed_jinja, f"collated_roles or {runs} %}}", "collated_roles %}")
    result = verify_template(SEED_GO, mutant, cases=300, exhaustive=1)
    assert_minimal_everywhere(result, messages=2)
    for divergence in result.divergences:
        first, second = divergence.conversation["messages"]
        assert first["role"].lower() == second["role"].lower() != "tool"


# ---------------------------------------------------------------------------------------------
# Modelfiles: verified with their SYSTEM/MESSAGE rule on both sides

UNSLOTH_QWEN = (FIXTURES / "corpus" / "unslothai__unsloth" / "modelfiles"
                                    / "qwen-25-coder.Modelfile")


@pytest.fixture()
def qwen_modelfile(tmp_path):  # type: ignore[no-untyped-def]
    """unsloth's qwen-25-coder Modelfile (TEMPLATE and SYSTEM), its placeholders filled."""
    text = UNSLOTH_QWEN.read_text(encoding="utf-8")
    assert "\nSYSTEM " in text and "{__FILE_LOCATION__}" in text
    path = tmp_path / "qwen-25-coder.Modelfile"
    path.write_text(text.replace("{__FILE_LOCATION__}", "model.gguf")
                    .replace("{__EOS_TOKEN__}", "</s>"), encoding="utf-8")
    return path


def test_cli_verifies_a_modelfile_with_its_system_rule(qwen_modelfile) -> None:  # type: ignore[no-untyped-def]
    result = CliRunner().invoke(cli, ["verify", str(qwen_modelfile), "--cases", "60",
                                      "--exhaustive", "1", "--json"])
    assert result.exit_code == 0, result.output
    (data,) = json.loads(result.output)
    assert data["kind"] == "modelfile" and data["ok"] is True and data["error"] is None
    assert data["divergences"] == []
    assert data["cases"] == 60 + exhaustive_count(1)


def test_cli_catches_a_modelfile_jinja_that_forgets_system(qwen_modelfile, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The bare translation (no preamble) is right for the TEMPLATE alone and wrong for the
    Modelfile: Ollama puts SYSTEM first, so even the empty conversation shows it (Go renders
    the system turn, the bare Jinja takes the template's no-messages branch)."""
    from gotmpl2jinja import translate
    from gotmpl2jinja.ollama.source import load_source

    source = load_source(str(qwen_modelfile))
    assert source.system == "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
    bare = tmp_path / "bare.jinja"
    bare.write_text(translate(source.template, name="qwen", check=False), encoding="utf-8")
    result = CliRunner().invoke(cli, ["verify", str(qwen_modelfile), "--jinja", str(bare),
                                      "--cases", "60", "--json"])
    assert result.exit_code == 1, result.output
    (data,) = json.loads(result.output)
    # (the CLI runs every engine, llama-server's contexts too: forgetting SYSTEM is no
    # out-of-scope kind there)
    assert sorted(d["engine"] for d in data["divergences"]) == sorted(default_engine_names())
    for divergence in data["divergences"]:
        if divergence["engine"] in ALL_ENGINES:  # (no messages: out of scope on llama-server)
            assert divergence["conversation"]["messages"] == []
        assert source.system in divergence["go_output"]
        assert source.system not in divergence["jinja_output"]


def test_a_modelfile_go_side_renders_in_batches(qwen_modelfile, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`inputs.go_renderer` goes through `reference.render_many` with the rule, not case by
    case: no single render at all when nothing diverges."""
    import gotmpl2jinja.ollama.reference as reference
    from gotmpl2jinja.emit.preamble import convert_source
    from gotmpl2jinja.ollama.source import load_source
    from gotmpl2jinja.verify.goside import go_renderer

    calls = {"render": 0, "render_many": 0}
    systems: set[str | None] = set()
    render, render_many = reference.render, reference.render_many

    def counted_render(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["render"] += 1
        return render(*args, **kwargs)

    def counted_render_many(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["render_many"] += 1
        systems.add(kwargs.get("modelfile_system"))
        return render_many(*args, **kwargs)

    monkeypatch.setattr(reference, "render", counted_render)
    monkeypatch.setattr(reference, "render_many", counted_render_many)
    source = load_source(str(qwen_modelfile))
    result = verify_template(source.template, convert_source(source), cases=100,
                             engines=["jinja2"], render=go_renderer(source))
    assert result.ok and result.cases == 100
    assert calls["render"] == 0 and 1 <= calls["render_many"] < 100
    assert systems == {source.system}


def test_cli_directory_input_finds_templates_and_modelfiles(qwen_modelfile) -> None:  # type: ignore[no-untyped-def]
    folder = qwen_modelfile.parent
    (folder / "chatml.gotmpl").write_text(CHATML_GO, encoding="utf-8")
    (folder / "notes.md").write_text("FROM nothing\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["verify", str(folder), "--cases", "10",
                                      "--engines", "jinja2"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [line.split("\t")[1] for line in lines[:-1]] == [
        str(folder / "chatml.gotmpl"), str(qwen_modelfile)]
    assert lines[-1] == "2 template(s): 2 equivalent, 0 not"


def test_cli_error_in_a_modelfile_template_points_into_the_modelfile(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "Modelfile"
    path.write_text('FROM x\nSYSTEM hi\nTEMPLATE """{{ range .Messages }}\n'
                    '{{ printf "%#v" . }}{{ end }}"""\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["verify", str(path), "--cases", "5"])
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    # `printf` is at line 2, column 4 of the TEMPLATE value: line 4, column 4 of the file.
    assert f"error: {path}:4:4: printf verb %v" in result.output, \
        result.output
