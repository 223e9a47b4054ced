"""The `ollama-jinja` context: Ollama's own request conversion, then llama-server's chat code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gotmpl2jinja.emit import translate
from gotmpl2jinja.engines.base import RuntimeRefused
from gotmpl2jinja.engines.cpp_engines import NO_SYSTEM_ROLE, SERVER_OUT_OF_SCOPE, STRING_ARGUMENTS
from gotmpl2jinja.engines.ollama_jinja import (
    NEGATIVE_ZERO,
    NO_ARGUMENTS,
    OLLAMA_OUT_OF_SCOPE,
    THINK_REFUSED,
    THINKING_DROPPED,
    TOOLS_REFUSED,
    jinja_thinks,
    ollama_request,
)
from gotmpl2jinja.engines.registry import default_engine_names, get_engine, select_engines
from gotmpl2jinja.ollama import reference
from gotmpl2jinja.verify.conversation import jinja_context
from gotmpl2jinja.verify.harness import verify_template
from gotmpl2jinja.verify.outcomes import CLOSED_ON_SERVER

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "fixtures" / "seeds" / "002_qwen-style.gotmpl"

#: A request with every field Ollama's conversion treats specially.
REQUEST: dict[str, Any] = {
    "messages": [
        {"role": "User", "content": "hi <b>", "thinking": "x"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "f", "arguments": {"z": 1, "a": {"y": 2.5, "b": 1e21},
                                                     "n": 9007199254740993}}},
            {"id": "c1", "function": {"index": 3, "name": "g"}}]},
        {"role": "tool", "content": "r", "tool_name": "f", "tool_call_id": ""},
    ],
    "tools": [{"type": "function", "function": {
        "name": "f", "description": "",
        "parameters": {"type": "object", "properties": {"q": {"type": "string",
                                                                "description": ""}}}}}],
    "think": "high",
}


def test_the_body_is_the_one_ollamas_llama_server_client_builds() -> None:
    """Written by hand from Ollama fb30760 (llm/llama_server.go's chat request): the role as
    its decoder lower-cases it; no thinking; tool_call_id and name only when not empty; every
    tool call with its index (0 when absent), type "function", id only when not empty, and
    the arguments as the JSON text of Ollama's ordered map (request order at the top, Go
    maps sorted below, numbers as float64: 2^53 + 1 is 2^53, 1e21 is `1e+21`, `{}` when
    absent); tools as Go marshals api.Tools (an empty description left out); the level in
    chat_template_kwargs, not at the top."""
    [body] = reference.llama_server_bodies([REQUEST])
    assert body == {
        "messages": [
            {"role": "user", "content": "hi <b>"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"index": 0, "type": "function", "function": {
                    "name": "f", "arguments": '{"z":1,"a":{"b":1e+21,"y":2.5},'
                                              '"n":9007199254740992}'}},
                {"id": "c1", "index": 3, "type": "function",
                 "function": {"name": "g", "arguments": "{}"}}]},
            {"role": "tool", "name": "f", "content": "r"},
        ],
        "tools": [{"type": "function", "function": {
            "name": "f", "parameters": {"type": "object",
                                        "properties": {"q": {"type": "string"}}}}}],
        "chat_template_kwargs": {"enable_thinking": True, "reasoning_effort": "high"},
    }


def test_think_false_and_unset_and_a_tool_without_properties() -> None:
    off, unset = reference.llama_server_bodies([
        {"messages": [{"role": "user", "content": "a"}], "think": False,
         "tools": [{"type": "function", "function": {"name": "t"}}]},
        {"messages": [{"role": "user", "content": "a"}], "tools": []}])
    assert off == {"messages": [{"role": "user", "content": "a"}],
                   "tools": [{"type": "function", "function": {
                       "name": "t", "parameters": {"type": "", "properties": None}}}],
                   "chat_template_kwargs": {"enable_thinking": False}}
    assert unset == {"messages": [{"role": "user", "content": "a"}]}  # `tools: []` not sent


def test_the_request_is_read_back_from_the_contract_context() -> None:
    assert ollama_request(jinja_context(REQUEST)) == {
        **REQUEST, "messages": [{**m, "content": m.get("content", "")}
                                for m in REQUEST["messages"]]}
    for think in (True, False, "low", "max"):
        conv = {"messages": [{"role": "user", "content": "a"}], "think": think}
        assert ollama_request(jinja_context(conv)) == conv


def test_ollamas_thinking_capability_reads_the_jinja_text() -> None:
    assert jinja_thinks("{{ '<think>' }}…{{ '</think>' }}")
    assert jinja_thinks("{{ m.content.split('</think>')[-1] }}")
    assert not jinja_thinks("{{ m.content.split('</think>')[-1] }}{{ m.reasoning_content }}")
    assert not jinja_thinks("<thinking></thinking>")


def test_a_case_in_scope_gives_the_go_paths_bytes() -> None:
    """The seed's translation through Ollama's own Jinja path: tool calls, a tool answer,
    think unset (the Jinja holds <think>…</think>, so Ollama sends enable_thinking=true, as
    its Go path defaults think to true) and a level."""
    go = SEED.read_text(encoding="utf-8")
    jinja = translate(go)
    engine = get_engine("ollama-jinja")
    tools = [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather",
        "parameters": {"type": "object", "required": ["city"],
                       "properties": {"city": {"type": "string", "description": "City"}}}}}]
    conversations = [
        {"messages": [{"role": "system", "content": "Be brief."},
                      {"role": "user", "content": "Weather in Paris?"}], "tools": tools},
        {"messages": [{"role": "user", "content": "Weather in Paris?"},
                      {"role": "assistant", "content": "", "tool_calls": [
                          {"function": {"name": "get_weather",
                                        "arguments": {"city": "Paris", "days": 2}}}]},
                      {"role": "tool", "content": "sunny", "tool_name": "get_weather"}],
         "tools": tools, "think": "high"},
        {"messages": [{"role": "user", "content": "hi"}], "think": False},
    ]
    for conv in conversations:
        assert engine.scope(conv, jinja) is None  # type: ignore[attr-defined]
        assert engine.render(jinja, jinja_context(conv)) == reference.render(go, conv), conv


def test_each_kind_ollamas_conversion_puts_out_of_scope_is_named() -> None:
    engine = get_engine("ollama-jinja")
    jinja = translate(SEED.read_text(encoding="utf-8"))
    plain = "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
    user = [{"role": "user", "content": "a"}]
    scope = engine.scope  # type: ignore[attr-defined]
    # earlier thinking: Ollama sends none, and the seed's Jinja reads it
    thought = [*user, {"role": "assistant", "content": "b", "thinking": "t"}, *user]
    assert scope({"messages": thought}, jinja) == THINKING_DROPPED
    assert scope({"messages": thought}, plain) is None  # a Jinja that never reads it
    # think on a Jinja where Ollama reads no thinking capability: its 400, no prompt
    assert scope({"messages": user, "think": True}, plain) == THINK_REFUSED
    assert scope({"messages": user, "think": False}, plain) is None
    refused = engine.render_many(plain, [jinja_context({"messages": user, "think": "low"})])[0]
    assert isinstance(refused, RuntimeRefused) and refused.kind == THINK_REFUSED
    # tools on a Jinja without `tools` or `tool_call` in its text: its 400
    tools = [{"type": "function", "function": {"name": "f"}}]
    assert scope({"messages": user, "tools": tools}, plain) == TOOLS_REFUSED
    # a call without arguments: Ollama sends {}, where Go's json of them prints null
    granite = (ROOT / "fixtures" / "corpus" / "huggingface__huggingface.js" / "entries"
               / "039__library_granite4_latest" / "template.gotmpl").read_text(encoding="utf-8")
    bare = {"messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f"}}]},
                         *user]}
    assert scope(bare, translate(granite)) == NO_ARGUMENTS
    got = engine.render(translate(granite), jinja_context(bare))
    assert '"arguments": {}' in got and '"arguments": null' in reference.render(granite, bare)
    assert scope(bare, plain) != NO_ARGUMENTS  # a Jinja that never prints them as JSON
    # an argument -0: Ollama sends `-0` (Go's json), which llama-server reads as the integer 0
    for arguments, kind in (({"a": -0.0}, NEGATIVE_ZERO), ({"a": [1, {"b": -0.0}]}, NEGATIVE_ZERO),
                            ({"a": 0.0}, None), ({"a": -0.5}, None), ({"a": 0}, None)):
        signed = [*user, {"role": "assistant", "content": "", "tool_calls": [
            {"function": {"name": "f", "arguments": arguments}}]}, *user]
        assert scope({"messages": signed}, jinja) == kind, arguments
        assert scope({"messages": signed}, plain) != NEGATIVE_ZERO  # a Jinja that never reads them
    zero = [*user, {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "f", "arguments": {"a": -0.0}}}]}, *user]
    assert '"arguments": {"a":-0}}' in reference.render(SEED.read_text(encoding="utf-8"),
                                                         {"messages": zero})
    assert '"arguments": {"a":0}}' in engine.render(jinja, jinja_context({"messages": zero}))
    # llama-server's kinds apply as well (Ollama sends a call's index; llama-server drops it)
    call = [*user, {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"index": 1, "name": "f", "arguments": {}}}]}, *user]
    assert scope({"messages": call}, jinja) == "tool-call index"
    assert scope({"messages": []}, jinja) == "no messages"


def test_a_tool_without_properties_is_llama_servers_refusal_of_ollamas_request() -> None:
    """Ollama sends such a tool's parameters with `"properties": null`; llama-server's JSON
    schema conversion refuses the request: found by rendering, counted under its kind."""
    jinja = translate(SEED.read_text(encoding="utf-8"))
    engine = get_engine("ollama-jinja")
    conv = {"messages": [{"role": "user", "content": "a"}],
            "tools": [{"type": "function", "function": {"name": "f"}}]}
    result = engine.render_many(jinja, [jinja_context(conv)])[0]
    assert isinstance(result, RuntimeRefused)
    assert result.kind == ("llama-server refuses the request "
                           "(JSON schema: properties must be an object)")


def test_verify_on_ollama_jinja_counts_the_kinds_and_agrees_in_scope() -> None:
    go = SEED.read_text(encoding="utf-8")
    result = verify_template(go, translate(go), cases=150, engines=["ollama-jinja"], seed=5)
    tally = result.counts["ollama-jinja"]
    assert result.ok, json.dumps([d.diff for d in result.divergences])[:500]
    assert tally.equal > 0 and THINKING_DROPPED in tally.runtime_differs
    # the main draw and the context's own draws (verify.percontext): each one accounted for
    assert tally.compared >= 135 and tally.drawn > 0
    assert tally.cases + tally.drawn == tally.equal + tally.both_failed + tally.refused + sum(
        tally.runtime_differs.values()) + sum(tally.drawn_out_of_scope.values())


def test_the_context_is_opt_in() -> None:
    """The contract's equivalence is Go against the Jinja's hosts; Ollama's own Jinja path is
    a report, run when named."""
    assert "ollama-jinja" not in default_engine_names()
    assert "llamacpp-server" in default_engine_names()
    assert "ollama-jinja" not in select_engines(None).used
    assert select_engines(["ollama-jinja"]).used == ["ollama-jinja"]


def test_the_sweep_document_is_generated_by_its_header_command() -> None:
    """docs/sweep-ollama-jinja.md: its first lines name the command that made it (on the
    ollama-jinja context alone), no row diverges, and every kind it counts is one the contract
    names for this context (Ollama's own, llama-server's, or a refusal found by rendering)."""
    text = (ROOT / "docs" / "sweep-ollama-jinja.md").read_text(encoding="utf-8")
    assert text.startswith(
        "# Corpus sweep\n\nGenerated by `gotmpl2jinja sweep fixtures/corpus fixtures/seeds -o "
        "docs/sweep-ollama-jinja.md --cases 2000 --exhaustive 1 --seed 0 --engines "
        "ollama-jinja`")
    assert "**diverges**" not in text
    totals = text.split("**Out of scope on a runtime context**", 1)[1].split("\n", 1)[0]
    listed = totals.split("): ollama-jinja: ", 1)[1].rstrip(".").split("; ollama-jinja: ")
    kinds = [part.rsplit(" ", 1)[0] for part in listed]
    known = (*OLLAMA_OUT_OF_SCOPE, *SERVER_OUT_OF_SCOPE, NO_SYSTEM_ROLE, STRING_ARGUMENTS,
             CLOSED_ON_SERVER)
    for kind in kinds:
        assert kind in known or kind.startswith(("llama-server refuses the request (",
                                                 "llama-server refuses the template (")), kind
    assert THINKING_DROPPED in kinds and NO_ARGUMENTS in kinds


def test_a_translation_claims_tools_on_ollamas_jinja_path_only_where_go_has_them() -> None:
    """Ollama grants a chat template the tools capability when its text holds `tools` or
    `tool_call` (jinja_has_tools), its Go template when it reads .Tools: a translation of a
    template without tools must not gain it through its header comment (56 corpus templates
    did), or Ollama's Jinja path would take tools requests its Go path refuses, and prefer
    the Jinja over that Go template (PreferChatTemplate)."""
    from gotmpl2jinja.engines.ollama_jinja import jinja_has_tools
    from gotmpl2jinja.errors import Gotmpl2JinjaError
    from gotmpl2jinja.ollama.capabilities import capabilities
    from gotmpl2jinja.syntax.parser import parse

    wrong, seen = [], 0
    for path in sorted(p for p in (ROOT / "fixtures" / "corpus").rglob("*.gotmpl")
                       if p.is_file()):
        source = path.read_text(encoding="utf-8")
        try:
            jinja = translate(source, name=str(path))
        except Gotmpl2JinjaError:
            continue  # refused with its place: no Jinja to ask
        seen += 1
        if jinja_has_tools(jinja) != ("tools" in capabilities(parse(source, name=str(path)))):
            wrong.append(path.relative_to(ROOT).as_posix())
    assert seen > 100 and wrong == []
