"""The C++ engines: llama.cpp's common/jinja and minja, raw and in llama-server's context."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import record_renders

from gotmpl2jinja.emit import translate
from gotmpl2jinja.engines.base import (
    EngineTimeout,
    TemplateRaised,
    render_timeout,
    set_render_timeout,
)
from gotmpl2jinja.engines.cpp import build
from gotmpl2jinja.engines.cpp_engines import (
    GPT_OSS_CONTENT,
    MALLOC_TUNING,
    SERVER_OUT_OF_SCOPE,
    CppEngine,
    openai_body,
    server_scope,
)
from gotmpl2jinja.engines.registry import get_engine
from gotmpl2jinja.errors import RenderError
from gotmpl2jinja.ollama import reference
from gotmpl2jinja.verify.conversation import jinja_context
from gotmpl2jinja.verify.harness import verify_template
from gotmpl2jinja.verify.outcomes import out_of_scope
from gotmpl2jinja.verify.strategies import draw_random

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "fixtures" / "seeds" / "002_qwen-style.gotmpl"
RAW = ["llamacpp", "minja"]
SERVER = ["llamacpp-server", "minja-server"]


def test_both_engines_are_built_and_cached() -> None:
    for name in RAW:
        path = build.driver_path(name)
        assert path is not None and path.is_file(), build.state(name)
        assert build.state(name) is None
        # the cache key is the recipe and the driver source: same key, same folder
        assert path.parent == build.engine_dir(name)


@pytest.mark.parametrize("name", RAW)
def test_raw_context_renders_a_batch(name: str) -> None:
    engine = get_engine(name)
    template = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    contexts = [{"messages": [{"role": "user", "content": f"hi {i}"}]} for i in range(5)]
    assert engine.render_many(template, contexts) == [f"<user>hi {i}" for i in range(5)]


@pytest.mark.parametrize("name", RAW)
def test_raise_exception_is_the_templates_own(name: str) -> None:
    engine = get_engine(name)
    template = "a{{ raise_exception(\"can't go on\") if x else '' }}"
    ok, raised = engine.render_many(template, [{"x": False}, {"x": True}])
    assert ok == "a"
    assert isinstance(raised, TemplateRaised) and "can't go on" in str(raised)
    broken = engine.render_many("{{ undefined_function() }}", [{}])[0]
    assert isinstance(broken, RenderError) and not isinstance(broken, TemplateRaised)


@pytest.mark.parametrize("name", RAW)
def test_clock_is_pinned(name: str) -> None:
    import datetime as dt

    engine = get_engine(name)
    when = dt.datetime(2024, 2, 29, 23, 59, tzinfo=dt.timezone.utc)
    assert engine.render("{{ strftime_now('%Y-%m-%d %H:%M') }}", {}, now=when) == \
        "2024-02-29 23:59"


@pytest.mark.parametrize("name", RAW)
def test_a_dead_driver_is_restarted(name: str) -> None:
    engine = CppEngine(name, server=False)
    try:
        assert engine.render("{{ 1 + 1 }}", {}) == "2"
        assert engine._proc is not None
        engine._proc.kill()
        engine._proc.wait()
        assert engine.render("{{ 2 + 2 }}", {}) == "4"  # a new process, the template resent
    finally:
        engine.close()


def _driver_environ(engine: CppEngine) -> dict[str, str]:
    assert engine._proc is not None
    raw = Path(f"/proc/{engine._proc.pid}/environ").read_bytes()
    return dict(item.split("=", 1) for item in raw.decode().split("\0") if "=" in item)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux's /proc")
def test_drivers_get_the_malloc_tuning_unless_the_user_set_their_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    engine = CppEngine("llamacpp", server=False)
    try:
        assert engine.render("{{ 1 }}", {}) == "1"
        assert _driver_environ(engine)["GLIBC_TUNABLES"] == MALLOC_TUNING
    finally:
        engine.close()
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.tcache_count=7")
    engine = CppEngine("llamacpp", server=False)
    try:
        assert engine.render("{{ 1 }}", {}) == "1"
        assert _driver_environ(engine)["GLIBC_TUNABLES"] == "glibc.malloc.tcache_count=7"
    finally:
        engine.close()


def test_a_runaway_render_times_out_and_the_next_one_runs() -> None:
    engine = CppEngine("llamacpp", server=False)
    before = render_timeout()
    set_render_timeout(1.0)
    try:
        with pytest.raises(EngineTimeout):
            engine.render("{% for i in range(100000000) %}{{ i }}{% endfor %}", {})
        assert engine.render("ok", {}) == "ok"
    finally:
        set_render_timeout(before)
        engine.close()


def test_a_template_that_does_not_compile_is_a_render_error_for_every_case() -> None:
    results = get_engine("llamacpp").render_many("{{ 'x\\u0041' }}", [{}, {}])
    assert all(isinstance(r, RenderError) and "does not compile" in str(r) for r in results)
    assert "unknown escape" in str(results[0])


def test_openai_body_is_what_a_client_sends() -> None:
    context = jinja_context({
        "messages": [
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": "", "thinking": "hm", "tool_calls": [
                {"id": "c1", "function": {"index": 2, "name": "f", "arguments": {"a": 1.5}}}]},
            {"role": "tool", "content": "r", "tool_name": "f", "tool_call_id": "c1"},
        ],
        "tools": [{"type": "function", "function": {"name": "f"}}],
        "think": "high",
    })
    body = openai_body(context)
    assert body["messages"][1] == {
        "role": "assistant", "content": "", "reasoning_content": "hm",
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": '{"a": 1.5}'},
                        "id": "c1"}]}
    assert body["messages"][2] == {"role": "tool", "content": "r", "name": "f",
                                   "tool_call_id": "c1"}
    assert body["tools"] == context["tools"]
    assert body["chat_template_kwargs"] == {"enable_thinking": True}
    assert body["reasoning_effort"] == "high"
    assert "add_generation_prompt" not in body


def test_out_of_scope_kinds_on_llama_server() -> None:
    user = {"role": "user", "content": "x"}
    assert server_scope({"prompt": "a", "suffix": "b"}) == "fill-in-the-middle"
    assert server_scope({"messages": []}) == "no messages"
    assert server_scope({"messages": [{"role": "developer", "content": "d"}, user]}) == \
        "developer role"
    assert server_scope({"messages": [user, {"role": "assistant", "content": "a"}]}) == "prefill"
    assert server_scope({"messages": [user], "tools": []}) == "empty tool list"
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "f", "index": 0}}]}
    assert server_scope({"messages": [call, user]}) == "tool-call index"
    tool = {"type": "function", "function": {"name": "f"}}
    assert server_scope({"messages": [user], "tools": [tool]}) is None
    assert server_scope({"messages": [user], "tools": [{**tool, "items": None}]}) == \
        "tool-level items"
    assert server_scope({"messages": [{"role": "system", "content": "s"}, user]},
                        system_role=False).startswith("system message")
    named = {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f"}}]}
    assert server_scope({"messages": [user, named, user]}) is None
    assert server_scope({"messages": [user, named, user]},
                        object_arguments=False).startswith("tool-call arguments as a string")
    assert server_scope({"messages": [user], "think": False}) is None
    assert server_scope({"messages": [user], "think": False}, minja=True) == \
        "thinking control (minja era)"
    assert server_scope({"messages": [user]}) is None
    thought = {**named, "thinking": ""}
    assert server_scope({"messages": [user, thought, user]}, gpt_oss=True) == GPT_OSS_CONTENT
    assert server_scope({"messages": [user, thought, user]}) is None
    assert server_scope({"messages": [user, named, user]}, gpt_oss=True) is None
    assert len(SERVER_OUT_OF_SCOPE) == 7


def test_llama_servers_gpt_oss_handler_erases_content_beside_thinking_and_tool_calls() -> None:
    """Found by the corpus sweep (unsloth's gpt-oss Modelfile): on a template holding
    `<|channel|>`, llama-server drops the content of a message with reasoning_content and
    tool calls, while Go and the raw engine print it: a kind of its own on llamacpp-server."""
    source = ("{{ range .Messages }}<|channel|>{{ .Content }}|{{ .Thinking }}"
              "{{ range .ToolCalls }}:{{ .Function.Name }}{{ end }};{{ end }}")
    jinja = translate(source)
    message = {"role": "assistant", "content": "C", "thinking": "T",
               "tool_calls": [{"function": {"name": "f", "arguments": {}}}]}
    conv = {"messages": [{"role": "user", "content": "q"}, message,
                         {"role": "user", "content": "r"}]}
    printed = "<|channel|>q|;<|channel|>C|T:f;<|channel|>r|;"
    assert reference.render(source, conv) == printed
    assert get_engine("llamacpp").render(jinja, jinja_context(conv)) == printed
    server = get_engine("llamacpp-server")
    erased = "<|channel|>q|;<|channel|>|T:f;<|channel|>r|;"
    assert server.render(jinja, jinja_context(conv)) == erased
    assert server.scope(conv, jinja) == GPT_OSS_CONTENT
    assert get_engine("ollama-jinja").scope(conv, jinja) != GPT_OSS_CONTENT


def test_llama_server_drops_a_tools_own_items() -> None:
    """api.Tool's `items` reaches Ollama's template; llama-server drops it from the request
    before its template runs, so such a conversation is a kind of its own there."""
    source = "{{ range .Messages }}{{ .Content }}{{ end }}{{ json .Tools }}"
    jinja = translate(source)
    tool = {"type": "function", "items": {"type": "string"},
            "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}
    conv = {"messages": [{"role": "user", "content": "q"}], "tools": [tool]}
    printed = ('q[{"type":"function","items":{"type":"string"},"function":{"name":"f",'
               '"description":"d","parameters":{"type":"object","properties":null}}}]')
    assert reference.render(source, conv) == printed
    assert get_engine("llamacpp").render(jinja, jinja_context(conv)) == printed
    server = get_engine("llamacpp-server")
    assert server.render(jinja, jinja_context(conv)) == printed.replace(
        '"items":{"type":"string"},', "")
    assert server.scope(conv, jinja) == "tool-level items"


def test_arguments_the_probe_does_not_see_are_out_of_scope_not_divergent() -> None:
    # `index .Messages 0` prints the first message whole, tool calls and arguments included;
    # llama.cpp's probe puts its tool call in the second message, finds no object arguments,
    # and llama-server then hands the template every `arguments` as the request's JSON string
    go = "{{ index .Messages 0 }}"
    jinja = translate(go)
    engine = get_engine("llamacpp-server")
    assert not engine.caps(jinja)["supports_object_arguments"]  # type: ignore[attr-defined]
    conv = {"messages": [{"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "f", "arguments": {}}}]}, {"role": "user", "content": "u"}]}
    assert engine.render(jinja, jinja_context(conv)) != reference.render(go, conv)
    assert engine.scope(conv, jinja).startswith(  # type: ignore[attr-defined]
        "tool-call arguments as a string")
    assert engine.scope(conv, translate(SEED.read_text(encoding="utf-8"))) is None  # type: ignore[attr-defined]


def test_the_probe_sees_what_the_seed_supports() -> None:
    jinja = translate(SEED.read_text(encoding="utf-8"))
    caps = get_engine("llamacpp-server").caps(jinja)  # type: ignore[attr-defined]
    assert caps["supports_system_role"] and caps["supports_tools"]
    assert caps["supports_tool_calls"] and caps["supports_object_arguments"]


SEED_CONVERSATIONS: list[dict[str, Any]] = [
    # multi-turn
    {"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
                  {"role": "assistant", "content": "Hello!"},
                  {"role": "user", "content": "And now?"}]},
    # thinking: on, off, a level, and a previous turn's thinking
    {"messages": [{"role": "user", "content": "2+2?"}], "think": True},
    {"messages": [{"role": "user", "content": "2+2?"}], "think": False},
    {"messages": [{"role": "user", "content": "2+2?"}], "think": "low"},
    {"messages": [{"role": "user", "content": "a"},
                  {"role": "assistant", "content": "4", "thinking": "2+2 is 4"},
                  {"role": "user", "content": "b"}], "think": True},
    # tool calling: tools, a call with arguments, its result, the answer, a new question
    {"tools": [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather <now> & \"later\"",
        "parameters": {"type": "object", "required": ["city"], "properties": {
            "city": {"type": "string", "description": "City"},
            "days": {"type": ["integer", "null"], "enum": [1, 2]}}}}}],
     "messages": [
         {"role": "user", "content": "Weather in Paris?"},
         {"role": "assistant", "content": "", "tool_calls": [
             {"id": "call_1", "function": {"name": "get_weather",
                                           "arguments": {"city": "Paris", "days": 2,
                                                         "units": {"t": "C", "w": 0.5}}}}]},
         {"role": "tool", "content": "{\"t\": 21}", "tool_name": "get_weather",
          "tool_call_id": "call_1"},
         {"role": "assistant", "content": "21 °C."},
         {"role": "user", "content": "Thanks"}], "think": False},
]


def test_seed_translation_gives_ollamas_bytes_on_llama_server() -> None:
    """Acceptance: tool calling, thinking and multi-turn conversations, the prompt llama-server
    builds from the request equal to Ollama's."""
    go = SEED.read_text(encoding="utf-8")
    jinja = translate(go)
    engine = get_engine("llamacpp-server")
    for conv in SEED_CONVERSATIONS:
        assert server_scope(conv) is None, conv  # every one is in the contract's scope
        want = reference.render(go, conv)
        got = engine.render(jinja, jinja_context(conv))
        assert got == want, json.dumps(conv)[:200]


def test_verify_renders_only_in_scope_cases_on_llama_server(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A case out of scope on llama-server's context is never compared, so it is not rendered
    there: it is counted under its kind (all of them are, agreeing or not), and every case in
    scope is rendered and compared; then the context's own draws (verify.percontext), each in
    its scope, until it compared 90% of the cases."""
    go = SEED.read_text(encoding="utf-8")
    jinja = translate(go)
    engine = get_engine("llamacpp-server")
    sent = record_renders(monkeypatch, engine)
    result = verify_template(go, jinja, cases=120, engines=["llamacpp-server"], seed=3)
    tally = result.counts["llamacpp-server"]
    rng = random.Random(3)
    drawn = [draw_random(rng).conversation for _ in range(120)]
    # (the runtime's kinds, and a host's call without a generation prompt: verify.outcomes)
    kinds = [out_of_scope(engine, conv, jinja) for conv in drawn]
    in_scope = [jinja_context(conv) for conv, kind in zip(drawn, kinds, strict=True)
                if kind is None]
    assert result.ok and tally.cases == 120
    assert 0 < len(in_scope) < 108 and sent[:len(in_scope)] == in_scope
    own = sent[len(in_scope):]  # the own draws llama-server refused count apart, by kind
    refused = sum(tally.drawn_out_of_scope.get(kind, 0) for kind in tally.drawn_out_of_scope
                  if kind.startswith("llama-server refuses the request"))
    assert tally.equal == len(sent) - refused == 108 and len(own) >= 108 - len(in_scope)
    assert tally.runtime_differs == {kind: kinds.count(kind) for kind in set(kinds) - {None}}


def test_a_template_llama_server_will_not_load_is_named() -> None:
    """Ollama's phi4-mini template prints unbalanced JSON for tool calls: llama-server's
    tool-call parser generator fails on it, so no request can be served."""
    path = (ROOT / "fixtures/corpus/huggingface__huggingface.js/entries/"
            "072__library_phi4-mini_3.8b/template.gotmpl")
    jinja = translate(path.read_text(encoding="utf-8"))
    engine = get_engine("llamacpp-server")
    (result,) = engine.render_many(jinja, [jinja_context({"messages": []})])
    assert isinstance(result, RenderError) and "Unable to generate parser" in str(result)
    assert engine.scope({"messages": [{"role": "user", "content": "x"}]}, jinja) == \
        "llama-server refuses the template (Unable to generate parser for this template)"


def test_a_template_that_fails_to_load_leaves_nothing_for_the_next_ones() -> None:
    """The driver keeps llama-server's template analysis per template and clock. A template
    whose analysis fails is freed, and the next ones may be allocated at its address: kept by
    address, its failure refused every template after it in the driver's life (seen in a
    sweep). Kept by the template's text, only the failing one is refused."""
    entries = ROOT / "fixtures/corpus/huggingface__huggingface.js/entries"
    failing = entries / "072__library_phi4-mini_3.8b/template.gotmpl"
    others = sorted(entries.glob("0[0-2]*/template.gotmpl"))[:8]
    engine = CppEngine("llamacpp", server=True)
    conv = jinja_context({"messages": [{"role": "user", "content": "x"}]})
    try:
        (refused,) = engine.render_many(translate(failing.read_text(encoding="utf-8")), [conv])
        assert isinstance(refused, RenderError) and "Unable to generate parser" in str(refused)
        for path in others:
            jinja = translate(path.read_text(encoding="utf-8"))
            (prompt,) = engine.render_many(jinja, [conv])
            assert isinstance(prompt, str) and "x" in prompt, (path.parent.name, prompt)
    finally:
        engine.close()


def test_a_kept_analysis_gives_the_prompts_of_a_fresh_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The llamacpp driver keeps llama-server's per-request template analysis, once per template
    and pinned clock (llamacpp_driver.cpp, kept_analysis), and does not render a request again
    for its generation prompt (kept_render); G2J_FRESH_ANALYSIS=1 runs both on every request, as
    llama-server does. The prompts, and the failures, must be the same bytes: on templates
    whose analysis finds thinking, tool calls, neither, or fails (phi4-mini), on requests with
    and without a prefill."""
    entries = ROOT / "fixtures/corpus/huggingface__huggingface.js/entries"
    sources = [SEED, *(entries / name / "template.gotmpl" for name in (
        "082__library_qwen3_0.6b", "068__library_phi3_14b", "072__library_phi4-mini_3.8b",
        "036__library_granite3.2_8b"))]
    rng = random.Random(7)
    contexts = [jinja_context(draw_random(rng).conversation) for _ in range(40)]
    contexts += [jinja_context(conv) for conv in SEED_CONVERSATIONS]
    count = {"id": 10**6, "key": "", "mode": "kept"}
    kept = CppEngine("llamacpp", server=True)
    assert kept._exchange(count)["kept"] == 0  # (its process starts here, before the setenv)
    monkeypatch.setenv("G2J_FRESH_ANALYSIS", "1")
    fresh = CppEngine("llamacpp", server=True)
    try:
        for source in sources:
            jinja = translate(source.read_text(encoding="utf-8"))
            want = [str(r) for r in fresh.render_many(jinja, contexts)]
            assert [str(r) for r in kept.render_many(jinja, contexts)] == want, source
            assert [str(r) for r in kept.render_many(jinja, contexts[:5])] == want[:5], source
        assert kept._exchange(count)["kept"] >= len(sources)  # one per template (and clock)
        assert kept._exchange(count)["reused"] > len(contexts)  # the kept render was used
        assert fresh._exchange(count) | {"id": 0} == {"id": 0, "kept": 0, "reused": 0}
    finally:
        kept.close()
        fresh.close()


def test_a_driver_that_logs_on_every_template_never_blocks_on_its_stderr() -> None:
    """minja logs "Failed to generate tool call example: …" (about 300 bytes) for each template
    whose probe fails; unread, the pipe filled after a few hundred templates and the driver
    blocked mid-render, which the harness reported as a template that never ends."""
    engine = CppEngine("minja", server=False)
    before = render_timeout()
    set_render_timeout(5.0)
    try:
        for i in range(400):  # > 64 KiB of log: more than a pipe holds
            template = "{{ undefined_" + str(i) + ".x.y }}" + "{{ messages|length }}" * (i % 3)
            assert isinstance(engine.render_many(template, [{"messages": []}])[0], RenderError)
        assert engine.render("{{ 'ok' }}", {}) == "ok"
        assert engine._proc is not None and engine._proc.poll() is None  # the same process
    finally:
        set_render_timeout(before)
        engine.close()
