"""Requests as Ollama decodes them: a real /api/chat body, keys in another case, a null
content and unknown keys are read as Ollama's server reads them (Go's encoding/json into
api.ChatRequest), on the Go side and, through one reading, on the Jinja side; what Ollama
refuses is refused with its reason. Expected prompts are written by hand from the template."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gotmpl2jinja.cli.main import cli
from gotmpl2jinja.emit import translate
from gotmpl2jinja.engines.registry import get_engines
from gotmpl2jinja.ollama.reference import render
from gotmpl2jinja.verify.conversation import ConversationError, jinja_context, validate
from gotmpl2jinja.verify.request import checked_by_go, go_fold, read_chat_request

SEED = Path(__file__).resolve().parent.parent / "fixtures" / "seeds" / "002_qwen-style.gotmpl"

#: The body Ollama's docs and its clients send.
API_CHAT_BODY = {"model": "qwen3:8b", "stream": False, "options": {"temperature": 0},
                 "keep_alive": "5m",
                 "messages": [{"role": "user", "content": "Hi", "images": []}]}


def _prompt(user: str) -> str:
    """The seed's prompt for one user message, by hand: a thinking template, so Ollama's
    absent think is true (IsThinkSet, Think) and the generation prompt opens <think>."""
    return f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n<think>\n"


def _render_cli(tmp_path: Path, body: str):  # noqa: ANN202 - click's Result
    conversation = tmp_path / "body.json"
    conversation.write_text(body, encoding="utf-8")
    return CliRunner().invoke(cli, ["render", str(SEED), str(conversation)])


def test_render_takes_an_api_chat_body_with_one_note_naming_what_it_ignores(
        tmp_path: Path) -> None:
    result = _render_cli(tmp_path, json.dumps(API_CHAT_BODY))
    assert result.exit_code == 0, result.output
    assert result.stdout == _prompt("Hi")
    notes = result.stderr.splitlines()
    assert notes == ["note: ignored what cannot reach the template (Ollama's server reads it, "
                     "the template never sees it): model, stream, options, keep_alive, "
                     "messages[0].images"]


@pytest.mark.parametrize(("body", "user"), [
    ('{"Messages": [{"Role": "user", "Content": "x"}]}', "x"),
    ('{"messages": [{"role": "user", "content": null}]}', ""),
    ('{"MESSAGES": [{"rOLE": "USER", "content": "y", "extra": 1}], "whatever": [1]}', "y"),
])
def test_keys_in_any_case_and_a_null_content_render_what_ollama_renders(
        tmp_path: Path, body: str, user: str) -> None:
    result = _render_cli(tmp_path, body)
    assert result.exit_code == 0, result.output
    assert result.stdout == _prompt(user)
    assert render(SEED.read_text(), body) == _prompt(user)


@pytest.mark.parametrize(("body", "reason"), [
    ('{"messages": [{"role": "user", "content": "x"}], "stream": "yes"}',
     "json: cannot unmarshal string into Go struct field ChatRequest.stream of type bool"),
    ('{"messages": [{"role": "user", "content": "x"}], "top_logprobs": 21}',
     "top_logprobs must be between 0 and 20"),
    ('{"messages": [{"role": "user", "content": "x"}], "keep_alive": true}',
     "Unsupported type: 'bool'"),
    ('{"messages": [{"role": "user", "content": "x"}], "keep_alive": "soon"}',
     'time: invalid duration "soon"'),
    ('{"messages": {}}', "json: cannot unmarshal object into Go struct field "
                         "ChatRequest.messages of type []api.Message"),
    ('{"messages": [{"role": "user", "content": "x", "images": ["%%"]}]}',
     "illegal base64 data at input byte 0"),
])
def test_what_ollama_refuses_is_refused_with_its_reason(
        tmp_path: Path, body: str, reason: str) -> None:
    """Ollama's api types and ChatHandler at fb3076099 (Go's decoder's words, by hand)."""
    result = _render_cli(tmp_path, body)
    assert result.exit_code == 1
    assert reason in result.stderr
    assert "Traceback" not in result.stderr


def test_the_reading_is_the_contracts_conversation_and_go_agrees() -> None:
    body = ('{"MODEL": "m", "Messages": [{"Role": "User", "Content": null, "images": null, '
            '"Tool_Calls": [{"Function": {"Name": "f", "Arguments": {"A": 1}}, "type": '
            '"function"}]}], "Tools": [{"Type": "function", "Function": {"Name": "f", '
            '"Parameters": {"Type": "object", "Properties": {"A": {"Type": "number", '
            '"x-extra": 1}}}}}], "Think": false}')
    request = checked_by_go(read_chat_request(body))
    assert request.conversation == {
        "messages": [{"role": "User", "content": "", "tool_calls": [
            {"function": {"name": "f", "arguments": {"A": 1}}, "type": "function"}]}],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"A": {"type": "number"}}}}}],
        "think": False}
    assert request.ignored == ("MODEL", 'tools[0].function.parameters.properties["A"].x-extra')
    assert validate(request.conversation) is request.conversation


def test_go_folds_keys_as_go_does() -> None:
    """Beyond ASCII, the Kelvin sign and the long s fold into k and s (Go decides: the
    reading of such a key is checked against Go's decoding)."""
    assert go_fold("me\u017f\u017fages") == "MESSAGES"
    assert go_fold("\u212aeep_alive") == "KEEP_ALIVE"
    request = checked_by_go(read_chat_request(
        '{"me\u017f\u017fages": [{"role": "user", "content": "z"}]}'))
    assert request.conversation == {"messages": [{"role": "user", "content": "z"}]}
    assert render(SEED.read_text(), request.text) == _prompt("z")


@pytest.mark.parametrize("body", [
    '{"messages": [], "Messages": [{"role": "user", "content": "x"}]}',
    '{"messages": [{"role": "user", "content": "a", "content": "b"}]}',
])
def test_a_field_given_twice_is_refused_by_the_reading(body: str) -> None:
    """Go decodes a repeated field over what it decoded first (objects merge, array elements
    are reused), a JSON reader keeps the last value: rather than guess, the reading refuses
    it, saying where (Ollama would render it)."""
    with pytest.raises(ConversationError, match="give it once"):
        read_chat_request(body)


def test_the_jinja_side_renders_the_reading_as_go_renders_the_body() -> None:
    jinja = translate(SEED.read_text())
    engine = get_engines(["jinja2"])[0]
    for body in ('{"Messages": [{"Role": "user", "Content": "x"}]}',
                 '{"messages": [{"role": "user", "content": null}]}', json.dumps(API_CHAT_BODY)):
        request = checked_by_go(read_chat_request(body))
        go = render(SEED.read_text(), body)
        assert engine.render(jinja, jinja_context(validate(request.conversation))) == go


def test_the_generator_sends_some_conversations_as_clients_send_them() -> None:
    """One in eight drawn conversations carries a client's body (keys in other cases, a null
    content, ignored keys): Go renders that body, the Jinja its reading; Go decodes both alike
    and renders both alike."""
    import random

    from gotmpl2jinja.ollama.reference import shared_renderer
    from gotmpl2jinja.verify.request import SentAs
    from gotmpl2jinja.verify.strategies import draw_random

    rng = random.Random(7)
    drawn = [draw_random(rng).conversation for _ in range(400)]
    sent = [c for c in drawn if isinstance(c, SentAs)]
    assert 25 <= len(sent) <= 75
    assert any("Messages" in c.body or "MESSAGES" in c.body for c in sent)


    def field(obj: dict, name: str) -> list:
        return [v for k, v in obj.items() if k.lower() == name]

    assert any(content is None for c in sent for messages in field(c.body, "messages")
               for m in messages for content in field(m, "content"))
    template = SEED.read_text()
    renderer = shared_renderer()
    for conv in sent:
        validate(conv)
        assert conv.body != dict(conv)
        assert renderer.same_request(json.dumps(conv.body), dict(conv)) == ""
        try:
            go = render(template, conv)  # the body
        except Exception as exc:  # noqa: BLE001 - a refusal must be the reading's too
            with pytest.raises(type(exc)):
                render(template, dict(conv))
            continue
        assert render(template, dict(conv)) == go
