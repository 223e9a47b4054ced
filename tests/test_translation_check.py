"""Never silently wrong: the translations a template generator found diverging, each translated
exactly or refused with its place; `convert` and `translate()` checking their own Jinja against
Go before handing it out; and nothing from outside the template's text becoming Jinja code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import gotmpl2jinja
from gotmpl2jinja.cli.main import cli
from gotmpl2jinja.emit import translate
from gotmpl2jinja.emit.preamble import convert_source
from gotmpl2jinja.engines.registry import get_engines, raw_engine_names
from gotmpl2jinja.errors import TranslationError
from gotmpl2jinja.ollama import reference
from gotmpl2jinja.ollama.source import load_source
from gotmpl2jinja.verify.check import TranslationDiverged, check_engines, check_translation
from gotmpl2jinja.verify.conversation import jinja_context
from gotmpl2jinja.verify.goside import go_renderer
from gotmpl2jinja.verify.harness import verify_template

ROOT = Path(__file__).resolve().parent.parent
CHATML = ROOT / "fixtures" / "corpus" / "ollama" / "template" / "chatml.gotmpl"
NESTED = "{{ range $.Messages }}" * 21 + "x" + "{{ end }}" * 21

#: The issue's examples: (template, conversation, what Go renders) for those translated
#: exactly, the Go output checked against the reference renderer below as well.
EXACT = {
    "and-last-constant": ('{{ range .Messages }}{{ and .Content "X" }}|{{ end }}',
                          {"messages": [{"role": "user", "content": "hi"},
                                        {"role": "user", "content": ""}]}, "X|"),
    "and-eq-constant": ('{{ range .Messages }}{{ and (eq .Role "user") "U" }}|{{ end }}',
                        {"messages": [{"role": "user", "content": "a"},
                                      {"role": "assistant", "content": "b"}]}, "U|false|"),
    # (a template that can think: think on any other is refused by Ollama's server)
    "and-think-level": ('{{ and .ThinkLevel "raw" }}{{ range .Messages }}<think>{{ .Thinking }}'
                        '</think>{{ end }}',
                        {"messages": [], "think": True}, "raw"),
    "if-index-out-of-range": ("{{ if index .Messages 1 }}yes{{ end }}",
                              {"messages": [{"role": "user", "content": "a"},
                                            {"role": "user", "content": "b"}]}, None),
    "or-missing-operand": ("{{ or .System .Suffix }}{{ range .Messages }}{{ end }}",
                           {"messages": []}, "<no value>"),
    # found by the generator (seed 15): Go's eq stops at the first equal operand, so the
    # int it cannot compare with a string after it is never reached
    "eq-stops-at-the-first-equal": ("{{- range .Messages -}}{{- end -}}"
                                    "{{- eq .System .System 0 -}}", {"messages": []}, "true"),
    # refused until strings were counted in bytes at run time (go_len); len of the bool fails
    "or-piped-into-len": ("{{ or .ThinkLevel .Think | len }}{{ range .Messages }}<think>"
                          "{{ .Thinking }}</think>{{ end }}",
                          {"messages": [], "think": "high"}, "4"),
    "legacy-unknown-chain": ("{{ .Foo.Bar }}{{ .Prompt }}",
                             {"messages": [{"role": "user", "content": "hi"}]},
                             "<no value>hi"),
}

#: The examples refused, with the place of the construct that cannot be exact.
REFUSED = {
    "eq-of-two-slices": ("{{ eq .Tools .Messages }}", "template:1:4:"),
    "21-nested-ranges": (NESTED, "template:1:441:"),
    # found by the slow generator run: a decoded-JSON value against a slice
    "eq-of-json-and-a-slice": ("{{ range .Tools }}{{ eq .Items $.Messages }}{{ end }}",
                               "template:1:22:"),
}


@pytest.mark.parametrize("name", sorted(EXACT))
def test_issue_examples_are_translated_exactly(name: str) -> None:
    source, conversation, expected = EXACT[name]
    jinja = translate(source)
    if expected is not None:
        # the Go truth, as reviewed (lenient: an empty chat is Execute's answer, which the
        # contract's Jinja renders where Ollama renders nothing)
        assert reference.render(source, conversation, lenient=True) == expected
        for engine in get_engines(raw_engine_names()):
            assert engine.render(jinja, jinja_context(conversation)) == expected, engine.name
    result = verify_template(source, jinja, cases=100, exhaustive=1, engines=raw_engine_names())
    assert result.ok, [d.diff for d in result.divergences]


def test_index_out_of_range_in_a_condition_raises_like_go() -> None:
    source = EXACT["if-index-out-of-range"][0]
    jinja = translate(source)
    short = {"messages": [{"role": "user", "content": "a"}]}
    with pytest.raises(gotmpl2jinja.RenderError, match="index out of range"):
        reference.render(source, short)
    for engine in get_engines(raw_engine_names()):
        with pytest.raises(gotmpl2jinja.RenderError):
            engine.render(jinja, jinja_context(short))


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_issue_examples_are_refused_with_their_place(name: str) -> None:
    source, place = REFUSED[name]
    with pytest.raises(TranslationError) as caught:
        translate(source)
    message = str(caught.value)
    assert message.startswith(place), message
    assert "\n" not in message


def test_a_chain_of_and_or_values_keeps_each_operands_go_printing() -> None:
    """The whole family of kind 1/3: operands of different Go types, each printed its own
    way, through functions and fields as well (lifted over the operands)."""
    source = ('{{ range .Messages }}{{ or .Content (eq .Role "user") 7 }}|'
              '{{ len (or .ToolCalls .ToolCalls) }}|{{ print (and .Content 1.5) }}|'
              '{{ (or .ToolName .ToolCallID 3) | printf "%v" }};{{ end }}')
    jinja = translate(source)
    result = verify_template(source, jinja, cases=150, exhaustive=1, engines=raw_engine_names())
    assert result.ok, [d.diff for d in result.divergences]


def test_verify_reports_jinja_that_does_not_compile_instead_of_crashing() -> None:
    jinja = "{% for a in messages %}" * 21 + "{% endfor %}" * 21
    result = verify_template("{{ range .Messages }}{{ end }}", jinja, cases=2,
                             engines=["jinja2"])
    assert not result.ok
    assert "does not compile" in (result.divergences[0].jinja_error or "")


# --- the check before writing -----------------------------------------------------------------


def run(*args: str, input: str | None = None):  # noqa: A002 - click's name
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def test_convert_prints_the_same_jinja_now_checked_in_one_stderr_line() -> None:
    result = run("convert", str(CHATML))
    assert result.exit_code == 0
    assert result.stdout == translate(CHATML.read_text(), name=str(CHATML))
    lines = result.stderr.splitlines()
    assert len(lines) == 2, lines  # the check, and that no tokenizer facts decided BOS
    assert re.fullmatch(r"checked: renders what Ollama renders on \d+ conversations on "
                        + re.escape(", ".join(check_engines())), lines[0])
    assert lines[1].startswith("note: BOS not decided: ")


def test_convert_no_check_says_so() -> None:
    result = run("convert", "--no-check", str(CHATML))
    assert result.exit_code == 0
    assert result.stdout == translate(CHATML.read_text(), name=str(CHATML))
    assert result.stderr.splitlines()[0] == (
        "warning: not checked against Ollama's rendering (--no-check)")


def _broken_translation(source, name="template", **options):  # noqa: ANN001, ANN003, ANN202
    """A translator bug stand-in: the right Jinja with one byte changed."""
    return translate(source, name=name, **options).replace("<|im_end|>", "<|im_end|]", 1)


def test_convert_refuses_a_translation_that_diverges(monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    monkeypatch.setattr("gotmpl2jinja.emit.preamble.translate", _broken_translation)
    out = tmp_path / "chat_template.jinja"
    result = run("convert", str(CHATML), "-o", str(out))
    assert result.exit_code == 1
    assert not out.exists()
    assert "renders other bytes than Ollama" in result.stderr
    assert "please report it" in result.stderr
    assert '{"messages": [' in result.stderr  # the minimal counterexample
    assert "Traceback" not in result.stderr


def test_translate_api_checks_unless_told_not_to(monkeypatch: pytest.MonkeyPatch) -> None:
    source = CHATML.read_text()
    assert gotmpl2jinja.translate(source) == translate(source)
    monkeypatch.setattr("gotmpl2jinja.emit.translate", _broken_translation)
    with pytest.raises(TranslationDiverged) as caught:
        gotmpl2jinja.translate(source)
    assert isinstance(caught.value, TranslationError)
    assert caught.value.result.divergences
    assert gotmpl2jinja.translate(source, check=False) == _broken_translation(source)


# --- nothing from outside the template becomes Jinja code ---------------------------------------

HOSTILE = ["evil#}{{ 7*7 }}{#", "x{%- set messages = [] %}", "a{#b", "{{ raise_exception('x') }}",
           "#}{% for m in messages %}{{ m }}{% endfor %}{#", "\\#}\n{{'"]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_file_names_change_nothing_the_jinja_renders(hostile: str,
                                                             tmp_path: Path) -> None:
    plain = tmp_path / "plain.gotmpl"
    plain.write_text(CHATML.read_text(), encoding="utf-8")
    evil = tmp_path / (hostile.replace("/", "_").replace("\n", "_") + ".gotmpl")
    evil.write_text(CHATML.read_text(), encoding="utf-8")
    conversation = {"messages": [{"role": "user", "content": "Hi"}]}
    expected = reference.render(CHATML.read_text(), conversation)
    for path in (plain, evil):
        jinja = convert_source(load_source(str(path)))
        for engine in get_engines(raw_engine_names()):
            assert engine.render(jinja, jinja_context(conversation)) == expected, engine.name
    jinja = translate(CHATML.read_text(), name=hostile)
    header_end = "reasoning_effort). #}"
    assert jinja.index("#}") == jinja.index(header_end) + len(header_end) - 2  # closes at its end
    assert "{{" not in jinja[:jinja.index(header_end)] and "{%" not in jinja[:jinja.index("#}")]


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_modelfile_text_is_data(hostile: str, tmp_path: Path) -> None:
    """SYSTEM and MESSAGE text and the Modelfile's own name holding `#}`, `{{`, `{%`, `{#`:
    the Jinja renders what Ollama renders with that Modelfile, on every engine."""
    safe = hostile.replace('"', "'")
    modelfile = tmp_path / (re.sub(r"[/\n]", "_", hostile) + ".modelfile")
    modelfile.write_text(
        f'FROM x\nTEMPLATE """{CHATML.read_text()}"""\nSYSTEM """{safe}"""\n'
        f'MESSAGE user """{safe}"""\nMESSAGE assistant """{safe}"""\n', encoding="utf-8")
    source = load_source(str(modelfile))
    assert source.system == safe
    jinja = convert_source(source)
    check_translation(source.template, jinja, render=go_renderer(source))


def test_no_output_holds_the_inputs_absolute_path(tmp_path: Path) -> None:
    where = tmp_path / "very-private-dir"
    where.mkdir()
    template = where / "chatml.gotmpl"
    template.write_text(CHATML.read_text(), encoding="utf-8")
    modelfile = where / "Modelfile"
    modelfile.write_text(f'FROM x\nTEMPLATE """{CHATML.read_text()}"""\nSYSTEM hi\n'
                         "PARAMETER stop <|im_end|>\n", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    for n, spec in enumerate((template, modelfile)):
        printed = run("convert", str(spec.resolve()))
        assert printed.exit_code == 0, printed.stderr
        assert str(where) not in printed.stdout and "very-private-dir" not in printed.stdout
        for fmt, name in (("jinja", "t.jinja"), ("hf", "tokenizer_config.json"),
                          ("lmstudio", "lm.json")):
            target = out / f"{n}-{name}"
            result = run("convert", str(spec.resolve()), "--format", fmt, "-o", str(target),
                         "--no-check")
            assert result.exit_code == 0, result.stderr
            written = target.read_text(encoding="utf-8")
            assert "very-private-dir" not in written, fmt
            assert "chatml.gotmpl" in written or "Modelfile" in written  # still named


#: Found by tests/template_generator.py, each minimal: (template, what Go renders on an empty
#: chat, or None where Go fails there). Fixed at the root: a constant written with `.eEpP` is a
#: float64 in Go; a bare `nil` command parses but fails when run.
GENERATOR_FINDINGS = {
    "float-syntax-constant": ("{{ 1e6 }}|{{ 2E3 }}|{{ 0x1p4 }}|{{ 0x10 }}|{{ 1_000 }}"
                              "{{ range .Messages }}{{ end }}", "1e+06|2000|16|16|1000"),
    "float-constant-is-not-an-int": ("{{ eq 1e6 1000000 }}{{ range .Messages }}{{ end }}",
                                     None),
    "nil-command-in-template-call": ('{{ template "t" nil }}{{ define "t" }}x{{ end }}'
                                     "{{ range .Messages }}{{ end }}", None),
    "nil-command-in-if": ("{{ if nil }}a{{ end }}{{ range .Messages }}{{ end }}", None),
    "nil-command-in-legacy": ("{{ $x := nil }}{{ .Prompt }}", None),
    "nil-argument-is-fine": ("{{ print nil }}{{ range .Messages }}{{ end }}", "<nil>"),
    # the legacy path re-emits with a variable typed MIXED, as the messages path does
    # a legacy template's fill-in-the-middle rendering calls a definition: its macro is there
    "legacy-fim-calls-a-block": ('{{ if .Suffix }}{{ block "t0" .Prompt }}[{{ . }}]{{ end }}'
                                 "{{ end }}", ""),
    # in a range's else, its variables hold the collection (Go pushes it before iterating)
    "range-else-reads-its-variables": ("{{ range .Messages }}{{ range $i, $c := .ToolCalls }}"
                                       "{{ else }}{{ $c }}{{ len $i }}{{ end }}{{ end }}", ""),
    # an execution error next to a nil in an and/or: the error stays (here in the
    # fill-in-the-middle path, where .Messages is nil and .System missing)
    "and-of-an-error-and-a-nil": ('{{ and .Messages.Foo .System | printf "%s" }}', None),
    # an and/or of two execution errors as a condition: parenthesised, so the Jinja compiles
    "or-of-two-errors-as-a-condition": ("{{ if .Prompt }}{{ else if or $.Messages.Foo "
                                        "$.Think.Foo | print }}x{{ end }}", None),
    "legacy-variable-int-then-string": ("{{ $y := 7 }}{{ $y = `{{x}}` }}{{ $y }}{{ .Prompt }}",
                                        "{{x}}"),
    # a NUL in a template that cannot fail is written raw and renders on every engine
    "nul-text-without-failure": ("{{ range .Messages }}{{ end }}a\x00b", "a\x00b"),
}


@pytest.mark.parametrize("name", sorted(GENERATOR_FINDINGS))
def test_generator_findings_are_translated_exactly(name: str) -> None:
    source, expected = GENERATOR_FINDINGS[name]
    empty = {"messages": []}  # Execute's answer (Ollama itself does not render an empty chat)
    if expected is None:
        with pytest.raises(gotmpl2jinja.RenderError):
            reference.render(source, empty, server=False)
    else:
        assert reference.render(source, empty, server=False) == expected
    result = verify_template(source, translate(source), cases=50, exhaustive=1,
                             engines=raw_engine_names())
    assert result.ok, [d.diff for d in result.divergences]


@pytest.mark.parametrize("source", [
    '{{ range .Messages }}{{ printf "%#v" . }}{{ end }}',  # Go syntax of a message
    '{{ range .Tools }}{{ printf "%#v" . }}{{ end }}{{ range .Messages }}{{ end }}',  # %#v: a tool
    # a legacy template's variable holding an int and a string (slow run, seed 13, 2026-12-03)
    "{{- range $x := 0 -}}{{- $x = . | print -}}{{- end -}}",
])
def test_generator_refusals_carry_name_line_and_column(source: str) -> None:
    with pytest.raises(TranslationError) as caught:
        translate(source)
    assert re.match(r"template:\d+:\d+: \S", str(caught.value)), str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_nul_in_a_template_that_can_fail_keeps_away_from_its_raises() -> None:
    # found by the generator: the Jinja raised where Go fails, but llama.cpp's engine cut its
    # message at the NUL quoted from the source, so the raise looked like an engine error; now
    # each raise_exception stands 100 spaces from anything else (tests/test_emit.py renders it)
    source = "{{ range .Messages }}\n{{ end }}x\x00y{{ .Messages.Foo }}"
    jinja = translate(source)
    assert "x\x00y" in jinja and " " * 100 + "raise_exception(" in jinja
    # a NUL inside the message itself cannot be kept away: refused where it is written
    with pytest.raises(TranslationError) as caught:
        translate('{{ range .Messages }}\n{{ end }}x{{ template "a\x00b" . }}')
    assert str(caught.value).startswith("template:2:11: a NUL character in a message the "
                                        "template fails with"), str(caught.value)


def test_convert_without_go_says_how_to_skip_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    from gotmpl2jinja.errors import ReferenceRendererError

    def no_go(*_args: object, **_kwargs: object) -> None:
        raise ReferenceRendererError("Go not found")

    monkeypatch.setattr("gotmpl2jinja.verify.check.check_translation", no_go)
    result = run("convert", str(CHATML))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == ("cannot check the translation against Ollama's rendering: Go not "
                             "found (--no-check skips the check)\n")
