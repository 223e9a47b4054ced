"""`convert --generation-blocks`: the assistant's own text inside `{% generation %}` blocks.

The masked text is asked of Go itself: the Go template with a marker printed around each
`{{ .Content }}`/`{{ .Thinking }}` of an assistant message (`print "M" .Content "N"`) and around
each iteration of its range over .ToolCalls; the characters between the markers in Go's output
are the ones transformers' `render_jinja_template(…, return_assistant_tokens_mask=True)` must
report inside the generation indices, and the rest of the bytes stay Ollama's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import distinct_corpus_templates

from gotmpl2jinja.cli.main import cli
from gotmpl2jinja.emit.assistant import generation_nodes
from gotmpl2jinja.emit.generation import honoured
from gotmpl2jinja.emit.translator import translate
from gotmpl2jinja.engines.registry import DEFAULT_NOW, get_engine, select_engines
from gotmpl2jinja.ollama.reference import render as go_render
from gotmpl2jinja.syntax import nodes
from gotmpl2jinja.syntax.parser import parse
from gotmpl2jinja.verify.closed import NEXT_MESSAGE, cut_closed, marked_source
from gotmpl2jinja.verify.conversation import jinja_context, validate
from gotmpl2jinja.verify.harness import verify_template

ROOT = Path(__file__).resolve().parent.parent
SEED_PATH = ROOT / "fixtures/seeds/002_qwen-style.gotmpl"
SEED = SEED_PATH.read_text()
OPEN, CLOSE = "\ue002", "\ue003"  # private-use: no template prints them

CALL = {"function": {"name": "get_weather", "arguments": {"city": "Paris"}}}
CONVERSATIONS: list[dict[str, Any]] = [
    {"messages": [{"role": "user", "content": "hi"},
                  {"role": "assistant", "content": "Hello.", "thinking": "greet"},
                  {"role": "user", "content": "weather?"}]},
    {"messages": [{"role": "system", "content": "be brief"},
                  {"role": "user", "content": "weather in Paris?"},
                  {"role": "assistant", "content": "", "tool_calls": [CALL, CALL]},
                  {"role": "tool", "content": "20C"},
                  {"role": "assistant", "content": "It is 20C."},
                  {"role": "user", "content": "thanks"}], "think": True},
    {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                  {"role": "user", "content": "c"}, {"role": "assistant", "content": "d",
                                                     "tool_calls": [CALL]},
                  {"role": "tool", "content": "e"}]},
]


def _end_of_range(source: str, body: int) -> int:
    """The offset of the `{{ end }}` action closing a range whose body starts at `body`."""
    depth = 0
    for action in re.finditer(r"\{\{-?\s*(range|if|with|define|block|end)\b", source[body:]):
        if action.group(1) != "end":
            depth += 1
        elif depth == 0:
            return body + action.start()
        else:
            depth -= 1
    raise AssertionError("no end")


def marked_go(source: str) -> str:
    """The Go source printing OPEN/CLOSE around the assistant's own text (see the module)."""
    template = parse(source)
    ids = generation_nodes(template)
    assert not isinstance(ids, tuple), ids
    raw = source.encode()
    edits: list[tuple[int, str]] = []
    for n in template.root.walk():
        if id(n) not in ids:
            continue
        if isinstance(n, nodes.ActionNode):  # {{ .Content }} → {{ print "M" .Content "N" }}
            start = n.pipe.cmds[0].args[0].pos.offset
            name = raw[start:raw.index(b"}}", start)].rstrip(b" \t\r\n-")
            role = ids[id(n)]
            if role is None:
                edits.append((start, f'print "{OPEN}" '))
                edits.append((start + len(name), f' "{CLOSE}"'))
            else:  # the markers for an assistant message only: Go's own role test
                test = f'eq {"." if isinstance(role, nodes.FieldNode) else ""}' \
                    f'{".".join(role.ident)} "assistant"'
                edits.append((start, f'print (or (and ({test}) "{OPEN}") "") '))
                edits.append((start + len(name), f' (or (and ({test}) "{CLOSE}") "")'))
        else:  # the range over .ToolCalls: a marker at each iteration's start and end
            close = raw.index(b"}}", n.pos.offset)
            trimmed = raw[close - 2:close] == b" -"
            edits.append((close + 2, ('{{- "%s" -}}' if trimmed else '{{"%s"}}') % OPEN))
            end = len(source[:_end_of_range(source, len(raw[:close + 2].decode()))].encode())
            trim_end = raw[end:end + 3] == b"{{-"
            edits.append((end, ('{{- "%s" -}}' if trim_end else '{{"%s"}}') % CLOSE))
    for at, text in sorted(edits, reverse=True):
        raw = raw[:at] + text.encode() + raw[at:]
    return raw.decode()


def go_mask(source: str, conv: dict[str, Any]) -> tuple[str, set[int]]:
    """Ollama's bytes for `conv`, and the positions of the assistant's own text in them."""
    return _unmarked(go_render(marked_go(source), conv, now=DEFAULT_NOW.isoformat()))


def go_mask_closed(source: str, conv: dict[str, Any]) -> tuple[str, set[int]]:
    """The same for a finished conversation rendered closed (add_generation_prompt false: the
    training call), Go's closed rendering (`verify.closed`) of the marked template."""
    marked = marked_source(marked_go(source))
    assert marked is not None
    messages = [*conv["messages"], dict(NEXT_MESSAGE)]
    out = cut_closed(go_render(marked, {**conv, "messages": messages},
                               now=DEFAULT_NOW.isoformat()))
    assert out is not None
    return _unmarked(out)


def _unmarked(out: str) -> tuple[str, set[int]]:
    text: list[str] = []
    masked: set[int] = set()
    inside = 0
    for ch in out:
        if ch == OPEN:
            inside += 1
        elif ch == CLOSE:
            inside -= 1
        else:
            if inside:
                masked.add(len(text))
            text.append(ch)
    return "".join(text), masked


def jinja_mask(jinja: str, conv: dict[str, Any], *, generation: bool = True
               ) -> tuple[str, set[int]]:
    """transformers' rendering and the characters inside its generation indices."""
    from transformers.utils.chat_template_utils import render_jinja_template

    context = jinja_context(validate(conv))
    kwargs = {k: v for k, v in context.items()
              if k not in ("messages", "tools", "add_generation_prompt")}
    out, indices = render_jinja_template(
        [context["messages"]], tools=context.get("tools"), chat_template=jinja,
        add_generation_prompt=generation, return_assistant_tokens_mask=True, **kwargs)
    return out[0], {i for start, end in indices[0] for i in range(start, end)}


def test_default_output_has_no_blocks() -> None:
    assert "generation %}" not in translate(SEED)
    assert translate(SEED, generation_blocks=True).count("{%- generation %}") == 3


def test_the_seed_masks_exactly_the_assistants_text_go_prints() -> None:
    jinja = translate(SEED, generation_blocks=True)
    for conv in CONVERSATIONS:
        expected, masked = go_mask(SEED, conv)
        assert masked  # every conversation has an assistant turn with text
        assert jinja_mask(jinja, conv) == (expected, masked)
    # written by hand from Go's output: the masked text of the second conversation
    expected, masked = go_mask(SEED, CONVERSATIONS[1])
    text = "".join(expected[i] for i in sorted(masked))
    call = '\n<tool_call>\n{"name": "get_weather", "arguments": {"city":"Paris"}}\n</tool_call>'
    assert text == call + call + "It is 20C."


def test_a_content_printed_for_every_role_is_masked_for_the_assistant_only() -> None:
    source = "{{ range .Messages }}<|{{ .Role }}|>{{ .Content }}\n{{ end }}<|assistant|>"
    jinja = translate(source, generation_blocks=True)
    conv = {"messages": [{"role": "user", "content": "hi"},
                         {"role": "assistant", "content": "yo"},
                         {"role": "user", "content": "x"}]}
    text, masked = jinja_mask(jinja, conv)
    assert text == "<|user|>hi\n<|assistant|>yo\n<|user|>x\n<|assistant|>"
    assert [text[i] for i in sorted(masked)] == ["y", "o"]
    assert (text, masked) == go_mask(source, conv)


def test_the_corpus_masks_exactly_the_assistants_text_go_prints() -> None:
    """Every corpus template the option accepts: the mask is Go's assistant text, the bytes
    are Ollama's, on transformers' own render_jinja_template."""
    accepted = 0
    for path in distinct_corpus_templates():
        source = path.read_text()
        if isinstance(generation_nodes(parse(source)), tuple):
            continue
        accepted += 1
        jinja = translate(source, name=path.parent.name, generation_blocks=True)
        for conv in CONVERSATIONS:
            conv = {"messages": conv["messages"]}  # think: refused where no thinking
            assert jinja_mask(jinja, conv) == go_mask(source, conv), path.parent.name
    assert accepted == 41


TRAINING = [conv["messages"][:-1] for conv in CONVERSATIONS[:2]]  # ending with the assistant


def test_training_data_masks_the_assistants_text_of_the_closed_turns() -> None:
    """TRL's call: finished conversations, add_generation_prompt false, the mask asked for; on
    every accepted corpus template whose structure honours the flag (emit.generation)."""
    count = 0
    for path in [SEED_PATH, *distinct_corpus_templates()]:
        source = path.read_text()
        if isinstance(generation_nodes(parse(source)), tuple) \
                or honoured(parse(source)) is not None:
            continue
        count += 1
        jinja = translate(source, name=path.parent.name, generation_blocks=True)
        for messages in TRAINING:
            conv = {"messages": messages}
            expected = go_mask_closed(source, conv)
            assert expected[1]
            assert jinja_mask(jinja, conv, generation=False) == expected, path.parent.name
    assert count == 28  # the seed and 27 corpus templates


@pytest.mark.parametrize("source, reason", [
    ("{{ range .Messages }}{{ len .Content }}{{ end }}",
     "1:29: --generation-blocks: a message's content"),
    ("{{ .Prompt }}", "no .Messages"),
    ('{{ range .Messages }}{{ if eq .Role "assistant" }}{{ $c := .Content }}{{ $c }}'
     "{{ end }}{{ end }}", "1:74: --generation-blocks"),
    ('{{ define "t" }}{{ .Content }}{{ end }}{{ range .Messages }}{{ if eq .Role "assistant" }}'
     '{{ template "t" . }}{{ end }}{{ end }}', "a template called in the chat loop"),
])
def test_refused_where_the_assistants_text_is_not_known(source: str, reason: str,
                                                         tmp_path: Path) -> None:
    path = tmp_path / "t.gotmpl"
    path.write_text(source)
    result = CliRunner().invoke(cli, ["convert", str(path), "--generation-blocks",
                                      "--no-check"])
    assert result.exit_code == 1
    assert reason in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert result.stdout == ""


def test_convert_checks_on_the_engines_that_parse_the_tag(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["convert", str(SEED_PATH), "--generation-blocks"])
    assert result.exit_code == 0, result.stderr
    checked = next(line for line in result.stderr.splitlines() if line.startswith("checked"))
    assert "transformers" in checked and "minijinja" not in checked \
        and "jinja2," not in checked
    assert result.stdout.count("{%- generation %}") == 3


@pytest.mark.parametrize("engine, outcome", [
    ("transformers", "ok"), ("hfjinja", "ok"), ("llamacpp", "ok"), ("minja", "ok"),
    ("jinja2", "unknown tag 'generation'"), ("minijinja", "unknown statement generation"),
    ("minijinja-trim", "unknown statement generation"),
])
def test_which_engines_parse_generation_blocks(engine: str, outcome: str) -> None:
    """The measurements behind the option's help and docs/jinja-portability.md."""
    if engine not in select_engines().used:
        pytest.skip(f"{engine} is not available here")
    jinja = translate(SEED, generation_blocks=True)
    conv = CONVERSATIONS[1]
    if outcome == "ok":
        assert get_engine(engine).render(jinja, jinja_context(validate(conv))) \
            == go_mask(SEED, conv)[0]
    else:
        with pytest.raises(Exception, match=outcome):
            get_engine(engine).render(jinja, jinja_context(validate(conv)))


def test_the_harness_finds_ollamas_bytes_on_those_engines() -> None:
    jinja = translate(SEED, generation_blocks=True)
    result = verify_template(SEED, jinja, cases=40, engines=["transformers", "hfjinja"],
                             name="seed")
    assert result.ok, result


@pytest.mark.slow
def test_the_corpus_translations_with_blocks_render_ollamas_bytes_on_every_parsing_engine(
) -> None:
    """~20 s: the 41 accepted corpus templates, 40 cases each, 0 divergences."""
    engines = [e for e in ("transformers", "hfjinja", "llamacpp", "minja")
               if e in select_engines().used]
    for path in distinct_corpus_templates():
        source = path.read_text()
        if isinstance(generation_nodes(parse(source)), tuple):
            continue
        jinja = translate(source, name=path.parent.name, generation_blocks=True)
        result = verify_template(source, jinja, cases=40, engines=engines,
                                 name=path.parent.name)
        assert result.ok, path.parent.name
