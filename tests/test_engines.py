"""Every engine is configured like its real host, and the portability facts the project relies on
(docs/jinja-portability.md §2) hold on each of them."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from gotmpl2jinja.engines.registry import (
    ENGINES,
    Engine,
    EngineError,
    TemplateRaised,
    get_engine,
    get_engines,
    is_raised,
    raw_engine_names,
    render_many,
)
from gotmpl2jinja.errors import RenderError

ALL = raw_engine_names()  # the runtime contexts (server) build their own variables
CONTEXT = {
    "messages": [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "héllo <b>&"},
        {"role": "assistant", "content": "A"},
    ],
    "d": {"b": 1, "a": 2},
}


@pytest.fixture(params=ALL)
def engine(request: pytest.FixtureRequest) -> Engine:
    return get_engine(request.param)


def test_registry_has_every_configuration() -> None:
    assert list(ENGINES) == ["jinja2", "transformers", "hfjinja", "minijinja", "minijinja-trim",
                             "llamacpp", "llamacpp-server", "minja", "minja-server",
                             "ollama-jinja"]
    assert ALL == ["jinja2", "transformers", "hfjinja", "minijinja", "minijinja-trim",
                   "llamacpp", "minja"]
    assert [e.name for e in get_engines(["minijinja-trim", "jinja2"])] == ["minijinja-trim",
                                                                          "jinja2"]


def test_unknown_engine_is_a_clear_error() -> None:
    with pytest.raises(EngineError, match=r"unknown engine\(s\) jinja3; choose from jinja2"):
        get_engines(["jinja3"])


def test_renders_a_chat_loop(engine: Engine) -> None:
    template = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{{ '\n' }}{% endfor %}"
    assert engine.render(template, CONTEXT) == "<|system|>S\n<|user|>héllo <b>&\n<|assistant|>A\n"


def test_newline_expression_survives_trim_settings(engine: Engine) -> None:
    template = "{% if true %}\n  a{{ '\n' }}{% endif %}\nb"
    out = engine.render(template, {})
    # The `{{ '\n' }}` newline is kept everywhere; only the block-adjacent text differs by setting.
    if engine.name == "minijinja":
        assert out == "\n  a\n\nb"
    else:
        assert out == "  a\nb"


def test_namespace_assignment_inside_a_loop_is_visible_after_it(engine: Engine) -> None:
    template = ("{%- set ns = namespace(n=0, last='') -%}{%- for m in messages -%}"
                "{%- set ns.n = ns.n + 1 -%}{%- set ns.last = m.role -%}{%- endfor -%}"
                "{{ ns.n }}/{{ ns.last }}")
    assert engine.render(template, CONTEXT) == "3/assistant"


def test_raise_exception_is_distinguishable_from_an_engine_error(engine: Engine) -> None:
    with pytest.raises(TemplateRaised) as info:
        engine.render("a{{ raise_exception('no system role') }}", CONTEXT)
    assert info.value.message == "no system role"
    assert is_raised(info.value)
    with pytest.raises(RenderError) as compile_error:
        engine.render("{% if %}", {})
    assert not is_raised(compile_error.value)


def test_strftime_now_reads_the_pinned_clock(engine: Engine) -> None:
    now = dt.datetime(2024, 2, 29, 23, 58, 7)
    assert engine.render("{{ strftime_now('%Y-%m-%d %H:%M') }}", {}, now=now) == "2024-02-29 23:58"


def test_float_and_int_keep_their_type(engine: Engine) -> None:
    # A Python float that happens to be integral must not become an int on the way (to node).
    context = {"f": 1.0, "i": 1, "big": 1e21, "neg": -0.0, "small": 1e-07, "nested": [{"x": 2.0}]}
    template = "{{ f }} {{ i }} {{ big }} {{ neg }} {{ small }} {{ nested[0].x }}"
    expected = {
        "jinja2": "1.0 1 1e+21 -0.0 1e-07 2.0",
        "transformers": "1.0 1 1e+21 -0.0 1e-07 2.0",
        "hfjinja": "1.0 1 1e+21 -0.0 1e-7 2.0",
        # Rust's f64 Display never uses an exponent.
        "minijinja": "1.0 1 1000000000000000000000.0 -0.0 0.0000001 2.0",
        # six decimals, trailing zeros trimmed (llama.cpp) or kept (minja)
        "llamacpp": "1.0 1 1000000000000000000000.0 -0.0 0.0 2.0",
        "minja": "1.0 1 1e+21 -0.0 1e-07 2.0",
    }
    assert engine.render(template, context) == expected.get(engine.name, expected["minijinja"])


def test_tojson_is_configured_like_the_host(engine: Engine) -> None:
    out = engine.render("{{ messages[1].content|tojson }} {{ d|tojson }}", CONTEXT)
    if engine.name.startswith("minijinja"):
        assert out == '"héllo \\u003cb\\u003e\\u0026" {"b": 1, "a": 2}'  # minijinja escapes
    else:
        assert out == '"héllo <b>&" {"b": 1, "a": 2}'  # transformers: plain json.dumps


def test_transformers_tojson_keyword_arguments() -> None:
    out = get_engine("jinja2").render(
        "{{ d|tojson(indent=2) }}|{{ d|tojson(separators=(',', ':'), sort_keys=true) }}",
        {"d": {"b": 1, "a": "é"}},
    )
    assert out == '{\n  "b": 1,\n  "a": "é"\n}|{"a":"é","b":1}'


def test_immutable_sandbox_forbids_list_append() -> None:
    with pytest.raises(RenderError, match="SecurityError"):
        get_engine("jinja2").render("{% set l = [] %}{{ l.append(1) }}", {})


def test_undefined_attribute_chain_differs_between_engines() -> None:
    # Documented portability fact the emitter must avoid: only hf.js prints '' here.
    with pytest.raises(RenderError):
        get_engine("jinja2").render("{{ foo.bar.baz }}", {})
    assert get_engine("hfjinja").render("{{ foo.bar.baz }}", {}) == ""


def test_hfjinja_is_the_pinned_version() -> None:
    engine = get_engine("hfjinja")
    assert engine.version == "0.5.11"  # type: ignore[attr-defined]


def test_hfjinja_survives_unicode_and_lone_surrogates() -> None:
    text = "\u05e9\u05dc\u05d5\u05dd e\u0301 🙂\u00a0\ud800"
    assert get_engine("hfjinja").render("{{ t }}", {"t": text}) == text


def test_a_batch_renders_what_single_renders_do(engine: Engine) -> None:
    """The bulk path (one request for many contexts on hfjinja) changes nothing per case:
    outputs, raised messages, engine errors and the pinned clock are each case's own."""
    template = ("{%- if messages|length == 0 %}{{ raise_exception('empty') }}{% endif -%}"
                "{%- for m in messages %}{{ m.role }}={{ m.content }};{% endfor -%}"
                "{{ strftime_now('%Y') }}{{ f }}")
    contexts = [CONTEXT, {"messages": []}, {"messages": [{"role": "u", "content": "é"}],
                                            "f": 1.0}, {"messages": 3}]
    when = dt.datetime(2031, 1, 2, 3, 4, 5)
    batch = render_many(engine, template, contexts, now=when)
    assert len(batch) == len(contexts)
    for context, item in zip(contexts, batch, strict=True):
        try:
            single: str | RenderError = engine.render(template, context, now=when)
        except RenderError as exc:
            single = exc
        if isinstance(single, str):
            assert item == single
        else:
            assert isinstance(item, RenderError) and type(item) is type(single)
            assert str(item) == str(single)
    assert batch[0] == "system=S;user=héllo <b>&;assistant=A;2031"
    assert isinstance(batch[1], TemplateRaised) and str(batch[1]) == "empty"
    assert batch[2] == "u=é;20311.0"
    assert isinstance(batch[3], RenderError) and not is_raised(batch[3])
    assert render_many(engine, template, [], now=when) == []


def test_a_batch_with_a_template_that_does_not_compile_fails_every_case(engine: Engine) -> None:
    results = render_many(engine, "{% for %}", [{}, {}])
    assert len(results) == 2
    assert all(isinstance(r, RenderError) and not is_raised(r) for r in results)


def test_a_template_that_does_not_compile_says_so_every_time(engine: Engine) -> None:
    """A compile failure is not remembered as a known template: the second render of the same
    source (which the hfjinja driver would otherwise send by key only) reports the same
    compile error, and a good template still renders afterwards."""
    for _ in range(2):
        with pytest.raises(RenderError, match="(?i)compile"):
            engine.render("{% if %}", {})
        failed = render_many(engine, "{% if %}", [{}])
        assert isinstance(failed[0], RenderError) and "compile" in str(failed[0]).lower()
    assert engine.render("ok", {}) == "ok"


def test_an_array_index_key_in_a_nested_property_map_is_out_of_scope_on_hfjinja_only() -> None:
    """JavaScript objects list array-index keys first: Go prints a nested property map in the
    request's order, which a transformers.js host's template never sees."""
    from gotmpl2jinja.engines.hfjs import INTEGER_LIKE_PROPERTY, integer_like_nested_property

    def conv(keys: list[str], *, via_any_of: bool = False) -> dict[str, Any]:
        nested: dict[str, Any] = {"properties": {k: {} for k in keys}}
        prop = {"anyOf": [nested]} if via_any_of else nested
        return {"messages": [{"role": "user", "content": "hi"}], "tools": [
            {"type": "function", "function": {"name": "f", "parameters": {
                "type": "object", "properties": {"top": prop}}}}]}

    assert integer_like_nested_property(conv(["a", "10"]))
    assert integer_like_nested_property(conv(["a", "0"], via_any_of=True))
    assert not integer_like_nested_property(conv(["a", "01", "-1", "1.5", "4294967295"]))
    # a top-level property map is printed in sorted order on every engine: no matter there
    top = {"messages": [], "tools": [{"type": "function", "function": {"name": "f",
           "parameters": {"type": "object", "properties": {"10": {}, "a": {}}}}}]}
    assert not integer_like_nested_property(top)
    from gotmpl2jinja.verify.outcomes import out_of_scope

    hf = get_engine("hfjinja")
    assert out_of_scope(hf, conv(["a", "10"]), "") == INTEGER_LIKE_PROPERTY
    assert out_of_scope(get_engine("jinja2"), conv(["a", "10"]), "") is None
