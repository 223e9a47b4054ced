"""A Hugging Face host's flags: add_generation_prompt given explicitly, continue_final_message
(transformers' prefill) and training data (finished conversations, no generation prompt).

Expected bytes are written by hand from Go's own output (the reference renderer, through
`verify.closed`'s marked turn boundary) and from how a hand-written ChatML template renders.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import distinct_corpus_templates

from gotmpl2jinja.cli.main import cli
from gotmpl2jinja.emit.generation import LEGACY, honoured
from gotmpl2jinja.emit.translator import translate
from gotmpl2jinja.engines.registry import DEFAULT_NOW, get_engine
from gotmpl2jinja.errors import RenderError
from gotmpl2jinja.syntax.parser import parse
from gotmpl2jinja.verify.closed import go_case, marked_source
from gotmpl2jinja.verify.conversation import jinja_context, validate
from gotmpl2jinja.verify.harness import verify_template
from gotmpl2jinja.verify.outcomes import BARE, closed_outcome, go_outcome

ROOT = Path(__file__).resolve().parent.parent
SEED = (ROOT / "fixtures/seeds/002_qwen-style.gotmpl").read_text()
CHATML = ("{{ range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}"
          "<|im_start|>assistant\n")

USER = {"role": "user", "content": "hi"}
FINISHED = [USER, {"role": "assistant", "content": "Hello."}]


def go_expected(source: str, conv: dict[str, Any]) -> str | None:
    """Go's bytes for a host's call (Ollama's prompt, or the closed rendering)."""
    src, plain, cut = go_case(source, conv)
    return closed_outcome(go_outcome(BARE, src, plain, DEFAULT_NOW), cut).output


def rendered(engine: str, jinja: str, conv: dict[str, Any]) -> str:
    return get_engine(engine).render(jinja, jinja_context(validate(conv)))


# --- the seed: Go's closed rendering and every engine's --------------------------------------

SEED_CASES = [
    ({"messages": [USER], "add_generation_prompt": False},
     "<|im_start|>user\nhi<|im_end|>\n"),
    ({"messages": [USER]},
     "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n"),
    ({"messages": FINISHED, "add_generation_prompt": False},
     "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
     "Hello.<|im_end|>\n"),
    ({"messages": [USER, {"role": "assistant", "content": "Hel"}]},  # Ollama's prefill
     "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nHel"),
    ({"messages": [USER, {"role": "tool", "content": "20C"}], "add_generation_prompt": False},
     "<|im_start|>user\nhi<|im_end|>\n<|im_start|>user\n<tool_response>\n20C\n"
     "</tool_response><|im_end|>\n"),
]


@pytest.mark.parametrize(("conv", "expected"), SEED_CASES)
def test_seed_honours_the_flags_as_go_renders_them(conv: dict[str, Any], expected: str) -> None:
    assert go_expected(SEED, conv) == expected
    jinja = translate(SEED)
    for engine in ("jinja2", "transformers", "hfjinja", "minijinja", "llamacpp", "minja"):
        assert rendered(engine, jinja, conv) == expected, engine


def test_a_template_printing_the_header_after_its_loop() -> None:
    jinja = translate(CHATML)
    assert "{%- if add_generation_prompt %}" in jinja
    finished = {"messages": FINISHED, "add_generation_prompt": False}
    closed = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n"
    assert go_expected(CHATML, finished) == closed
    assert rendered("jinja2", jinja, finished) == closed
    ollama = closed + "<|im_start|>assistant\n"
    assert rendered("jinja2", jinja, {"messages": FINISHED}) == ollama


def test_continue_final_message_is_transformers_own_prefill() -> None:
    from transformers.utils.chat_template_utils import render_jinja_template

    messages = [USER, {"role": "assistant", "content": "Hel"}]
    out, _ = render_jinja_template([messages], chat_template=translate(SEED),
                                   continue_final_message=True)
    assert out[0] == ("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n"
                      "</think>\n\nHel")


def test_the_harness_checks_every_host_call_on_the_seed() -> None:
    result = verify_template(SEED, cases=120, engines=["jinja2", "transformers"], seed=3)
    assert not result.divergences
    assert result.counts["transformers"].equal > 80


# --- bad input: what the host itself does -----------------------------------------------------

def test_a_flag_of_another_type_is_jinja2_truthiness() -> None:
    jinja = translate(SEED)
    context = jinja_context(validate({"messages": [USER]}))
    engine = get_engine("jinja2")
    with_prompt = engine.render(jinja, context)
    assert engine.render(jinja, {**context, "add_generation_prompt": "no"}) == with_prompt
    assert engine.render(jinja, {**context, "add_generation_prompt": ""}) \
        == "<|im_start|>user\nhi<|im_end|>\n"


def test_an_empty_conversation_with_continue_final_message_is_transformers_error() -> None:
    with pytest.raises(RenderError, match="continue_final_message is set but the "
                                          "conversation is empty"):
        get_engine("transformers").render(translate(SEED), {
            "messages": [], "add_generation_prompt": False, "continue_final_message": True})


# --- which templates honour them, and convert's note ------------------------------------------

@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("{{ .Prompt }}{{ .Response }}", LEGACY),
        ("{{ range .Messages }}{{ .Content }}{{ end }}{{ range .Messages }}{{ .Role }}{{ end }}",
         "1:45: more than one range over .Messages prints turns"),
        ("{{ len .Messages }}{{ range .Messages }}{{ .Content }}{{ end }}",
         "1:8: the template reads .Messages another way"),
        ("{{ range $i, $_ := .Messages }}{{ if eq (len (slice $.Messages $i)) 2 }}x{{ end }}"
         "{{ end }}", "1:42: the chat loop counts the messages left"),
        ("{{ if .Tools }}{{ range .Messages }}{{ .Content }}{{ end }}{{ end }}",
         "1:16: the range over .Messages is inside"),
        # deepseek-r1's way: the last message's thinking only, before its content
        ("{{ range $i, $_ := .Messages }}{{ if eq (len (slice $.Messages $i)) 1 }}<think>"
         "{{ end }}{{ .Content }}{{ end }}",
         "1:32: the last message prints something (1:89) after this test"),
    ],
)
def test_templates_whose_structure_does_not_allow_it(source: str, reason: str) -> None:
    found = honoured(parse(source))
    assert found is not None and found.startswith(reason)
    assert marked_source(source) is None  # Go's side keeps Ollama's prompt there too


def test_convert_says_when_the_generation_prompt_cannot_be_turned_off(tmp_path: Path) -> None:
    legacy = tmp_path / "legacy.gotmpl"
    legacy.write_text("{{ if .Prompt }}<|user|>{{ .Prompt }}{{ end }}<|assistant|>"
                      "{{ .Response }}<|end|>")
    result = CliRunner().invoke(cli, ["convert", "--no-check", str(legacy)])
    assert result.exit_code == 0
    notes = [line for line in result.stderr.splitlines() if "generation prompt" in line]
    assert notes == [f"{legacy}: note: this template's generation prompt cannot be turned off "
                     f"(add_generation_prompt is ignored and a final turn stays open): {LEGACY}"]
    seed = tmp_path / "seed.gotmpl"
    seed.write_text(SEED)
    result = CliRunner().invoke(cli, ["convert", "--no-check", str(seed)])
    assert "generation prompt" not in result.stderr


# --- training data, as TRL formats it ---------------------------------------------------------

TRAINING = [
    [USER, {"role": "assistant", "content": "Hello."}],
    [{"role": "system", "content": "Be brief."}, USER, {"role": "assistant", "content": "Hi."},
     {"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}],
]


def test_training_formatting_closes_the_final_turn_on_the_corpus() -> None:
    """Full conversations ending with the assistant, add_generation_prompt=False, through
    transformers' own render_jinja_template (what TRL's SFTTrainer calls): the Jinja gives
    Go's closed rendering on every corpus template whose structure allows it, and that
    differs from Ollama's open prompt on most of them."""
    from transformers.utils.chat_template_utils import render_jinja_template

    honoured_count = closed_differs = 0
    for path in distinct_corpus_templates():
        source = path.read_text()
        if honoured(parse(source)) is not None:
            continue
        honoured_count += 1
        jinja = translate(source, name=path.parent.name)
        for messages in TRAINING:
            conv = {"messages": messages, "add_generation_prompt": False}
            expected = go_expected(source, conv)
            out, _ = render_jinja_template([jinja_context(validate(conv))["messages"]],
                                           chat_template=jinja, add_generation_prompt=False)
            assert out[0] == expected, path.parent.name
            closed_differs += expected != go_expected(source, {"messages": messages})
    assert honoured_count == 35
    assert closed_differs > honoured_count  # most templates leave Ollama's final turn open


def test_the_flags_table_is_current(monkeypatch: pytest.MonkeyPatch) -> None:
    from gotmpl2jinja.batch import flags as flagging

    monkeypatch.chdir(ROOT)
    paths = ["fixtures/corpus", "fixtures/seeds"]
    text = flagging.markdown(flagging.table(paths),
                             "gotmpl2jinja flags fixtures/corpus fixtures/seeds -o docs/flags.md")
    assert text == (ROOT / "docs/flags.md").read_text(), \
        "run: gotmpl2jinja flags fixtures/corpus fixtures/seeds -o docs/flags.md --force"


def test_compare_in_training_mode_compares_the_closing_of_the_final_turn() -> None:
    from gotmpl2jinja.batch.compare_training import compare_entry

    own = ("{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + "
           "'<|im_end|>\\n' }}{% endfor %}"
           "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
    assert compare_entry(CHATML, own, "", "") is None
    # a model's template that closes the turn without the newline Ollama's prints
    unlike = own.replace("'<|im_end|>\\n'", "'<|im_end|>'")
    assert compare_entry(CHATML, unlike, "", "") == ("<|im_end|>\n", "<|im_end|>")


def test_the_turn_marker_keeps_ollamas_thinking_tags() -> None:
    # Ollama infers the thinking tags from the loop body's first text node: a marker action
    # there took the capability away on Go's side (ThinkLevel empty: no "raw")
    source = ('{{ and .ThinkLevel "raw" }}{{ range .Messages }}<think>{{ .Thinking }}'
              '</think>{{ end }}')
    conv = {"messages": [USER], "think": True, "add_generation_prompt": False}
    assert go_expected(source, conv) == "raw<think></think>"
    assert rendered("jinja2", translate(source), conv) == "raw<think></think>"


def test_a_closed_call_go_fails_on_is_counted_not_compared() -> None:
    """`slice .Content 3` fails on the added message's empty content: Go's closed rendering
    fails and Execute returns no text, so where the failure lies is unknown; the harness counts
    such a case as its own kind on every engine instead of comparing it (a divergence before),
    while the same template's other calls are still compared."""
    from gotmpl2jinja.verify.closed import CLOSED_GO_FAILS

    source = "{{ range .Messages }}[{{ slice .Content 3 }}]{{ end }}"
    conv = {"messages": [{"role": "user", "content": "abcd"}], "add_generation_prompt": False}
    go = go_outcome(BARE, *go_case(source, conv)[:2], DEFAULT_NOW)
    assert go.output is None and "index out of range: 3" in (go.error or "")
    jinja = translate(source)
    assert rendered("jinja2", jinja, conv) == "[d]"
    result = verify_template(source, cases=60, engines=["jinja2", "minijinja"], seed=1)
    assert not result.divergences
    for engine in ("jinja2", "minijinja"):
        tally = result.counts[engine]
        assert tally.runtime_differs.get(CLOSED_GO_FAILS, 0) > 0 and tally.equal > 0


def test_a_chat_loop_that_can_break_keeps_ollamas_prompt() -> None:
    """Found by the generator (seed 19, 1,500 templates): with a `break` of the chat loop's own,
    the message added after the conversation gets no turn, and the cut fell at the first
    message's turn (Go's closed rendering "", every engine "a"). Such a loop does not honour
    the flags: both sides keep Ollama's prompt. An inner range's break ends that range only."""
    from gotmpl2jinja.emit.generation import chat_loop

    source = "{{- range $x := .Messages -}}a{{- break -}}{{- end -}}"
    reason = chat_loop(parse(source))
    assert isinstance(reason, str) and reason.startswith("1:31: the chat loop can stop early")
    conv = {"messages": [{"role": "system"}], "add_generation_prompt": False}
    assert go_expected(source, conv) == "a"
    assert rendered("jinja2", translate(source), conv) == "a"
    result = verify_template(source, cases=60, engines=["jinja2", "minijinja"], seed=1)
    assert not result.divergences
    inner = "{{ range .Messages }}{{ range .ToolCalls }}{{ break }}{{ end }}{{ .Content }}{{ end }}"
    assert not isinstance(chat_loop(parse(inner)), str)


@pytest.mark.parametrize(("source", "at"), [
    # a loop before the chat loop leaves the added message's role in $r (Go's closed rendering
    # "next-turn:", the Jinja "system:"), and one inside it the added message itself
    ('{{ $r := "" }}{{ range .Messages }}{{ $r = .Role }}{{ end }}'
     "{{ range .Messages }}{{ $r }}:{{ .Content }}{{ end }}", "1:39"),
    ("{{ range $m := .Messages }}{{ $x := $m }}{{ range $.Messages }}{{ $x = . }}{{ end }}"
     "{{ $x.Role }}{{ end }}", "1:67"),
])
def test_another_range_over_the_messages_that_assigns_keeps_ollamas_prompt(
        source: str, at: str) -> None:
    """It walks the message added after the conversation too, so what it leaves differs in
    the closed rendering before the cut: such a template does not honour the flags."""
    from gotmpl2jinja.emit.generation import chat_loop

    reason = chat_loop(parse(source))
    assert isinstance(reason, str) and reason.startswith(f"{at}: another range over .Messages")
    conv = {"messages": [{"role": "system"}], "add_generation_prompt": False}
    assert go_expected(source, conv).startswith("system")  # Ollama's prompt
    assert rendered("jinja2", translate(source), conv) == go_expected(source, conv)
    result = verify_template(source, cases=60, engines=["jinja2", "minijinja"], seed=1)
    assert not result.divergences


@pytest.mark.parametrize("guard", ['eq .Role "user"', 'and .Content (eq $m.Role "user" "tool")',
                                   'and (ge (len .Role) 7) (eq (slice .Role 0 7) "control")'])
def test_a_loop_assigning_only_for_a_named_role_still_honours_the_flags(guard: str) -> None:
    """The last-user-message loop (the seed, Devstral, Granite's "control" roles): the added
    message's role (`next-turn`) never passes its test, so it leaves the same values."""
    from gotmpl2jinja.emit.generation import ChatLoop, chat_loop

    source = (f"{{{{ $u := -1 }}}}{{{{ range $i, $m := .Messages }}}}{{{{ if {guard} }}}}"
              "{{ $u = $i }}{{ end }}{{ end }}{{ range $i, $m := .Messages }}"
              "{{ if eq $i $u }}*{{ end }}{{ .Role }}:{{ .Content }};{{ end }}")
    assert isinstance(chat_loop(parse(source)), ChatLoop)
    result = verify_template(source, cases=60, engines=["jinja2", "minijinja"], seed=1)
    assert not result.divergences
    unguarded = source.replace(f"{{{{ if {guard} }}}}{{{{ $u = $i }}}}{{{{ end }}}}",
                               "{{ $u = $i }}")
    assert isinstance(chat_loop(parse(unguarded)), str)
    next_turn = source.replace('"user"', '"next-turn"', 1)
    assert 'next-turn' not in guard and (next_turn == source or isinstance(
        chat_loop(parse(next_turn)), str))
