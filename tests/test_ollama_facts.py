"""Ollama's parse-time facts: Vars(), the execution path, the auto `{{ .Response }}` and the
legacy cut. Expectations come from ollama-semantics.md §2/§9 ([verified] examples there were
run against Go); Vars and path are also compared with Go's own answer (reference renderer).
"""

from __future__ import annotations

import pytest

from gotmpl2jinja.ollama import facts as ollama
from gotmpl2jinja.syntax import nodes as n
from gotmpl2jinja.syntax.parser import parse


@pytest.mark.parametrize(("source", "expected_vars", "path"), [
    ("{{ range .messages }}{{ end }}", ["messages"], "messages"),   # [verified] lower case
    ("{{ $m := 1 }}", [], "legacy"),                                   # [verified]
    ("{{ $m := 1 }}{{ $m }}", ["$m"], "legacy"),
    ("{{ .Prompt }}", ["prompt"], "legacy"),
    ("{{ $.Messages }}", ["$", "messages"], "messages"),
    ("{{ if false }}{{ .Messages }}{{ end }}", ["messages"], "messages"),  # never runs: counts
    # a chain `(pipeline).Field` is not walked at all, not even its pipeline
    ("{{ (.A).Messages }}", [], "legacy"),
    ("{{ len (index .Messages 0).Content }}", [], "legacy"),
    ("{{ len (index .Messages 0) }}", ["messages"], "messages"),
    ('{{ define "x" }}{{ .Messages }}{{ end }}{{ template "x" . }}', ["messages"], "messages"),
    ("{{ .Foo.Bar }}{{ $x := .Baz }}{{ $x.Qux }}", ["$x", "bar", "baz", "foo", "qux"],
     "legacy"),
    ("{{ with .System }}{{ . }}{{ else }}{{ .Prompt }}{{ end }}", ["prompt", "system"],
     "legacy"),
    ("{{ range $i, $m := .Messages }}{{ $m.Role }}{{ end }}", ["$m", "messages", "role"],
     "messages"),
    ('{{ printf "%s" .System | print }}', ["system"], "legacy"),
])
def test_vars_and_path(source: str, expected_vars: list[str], path: str) -> None:
    from gotmpl2jinja.ollama.reference import check_parse

    template = parse(source)
    assert ollama.vars(template) == expected_vars
    assert ollama.execute_path(template) == path
    assert ollama.uses_messages(template) is (path == "messages")
    verdict = check_parse(source)
    assert verdict.ok and list(verdict.vars) == expected_vars and verdict.path == path


def test_template_without_argument_fails_ollama_parse() -> None:
    template = parse('{{ define "x" }}X{{ end }}\n{{ template "x" }}')
    with pytest.raises(ollama.OllamaTemplateError) as info:
        ollama.vars(template)
    assert "undefined template specified" in str(info.value)
    assert (info.value.line, info.value.col) == (2, 1)


def _texts_and_fields(template: n.Template) -> list[str]:
    out = []
    for node in template.root.walk():
        if isinstance(node, n.TextNode):
            out.append(node.text)
        elif isinstance(node, n.FieldNode):
            out.append("." + ".".join(node.ident))
        elif isinstance(node, n.IdentifierNode):
            out.append(node.ident)
    return out


@pytest.mark.parametrize(("source", "appended"), [
    ("{{ .Prompt }}", True),
    ("{{ .Response }}", False),
    ("{{ .response }}", False),
    ("{{ $.Response }}", False),
    ("{{ range .Messages }}{{ end }}", False),
    ("plain text", True),
])
def test_with_response(source: str, appended: bool) -> None:
    template = parse(source)
    result = ollama.with_response(template)
    assert ollama.appends_response(template) is appended
    extra = len(result.root.nodes) - len(template.root.nodes)
    assert extra == (1 if appended else 0)
    if appended:
        last = result.root.nodes[-1]
        assert isinstance(last, n.ActionNode)
        assert last.pipe.cmds[0].args == [n.FieldNode(["Response"])]
    assert ollama.with_response(result).root == result.root  # idempotent
    assert len(template.root.nodes) == len(parse(source).root.nodes)  # input untouched


@pytest.mark.parametrize(("source", "kept", "did_cut"), [
    # X{{ .Response }}Y → X + response; Y dropped [verified]
    ("X{{ .Response }}Y", ["X", ".Response"], True),
    # text after the cut inside enclosing bodies and after them is dropped [verified]
    ("{{ if true }}{{ if true }}A:{{ .Response }}Z{{ end }}Y{{ end }}X",
     ["A:", ".Response"], True),
    # a pipe whose later command loses all args disappears with its action [verified]
    ('P{{ .Response | printf "%s!" }}Q', ["P"], True),
    # the field as the last argument keeps the action [verified]
    ('P{{ printf "%s!" .Response }}Q', ["P", "printf", ".Response"], True),
    # variables never trigger: the whole template renders [verified]
    ("A{{ $.Response }}B", ["A", "B"], False),
    # condition pipes are not walked; the first .Response inside an action is the trigger
    ("{{ if .Response }}R{{ end }}<{{ .Response }}>", [".Response", "R", "<", ".Response"],
     True),
    # auto-appended .Response is where the cut lands for a template without one
    ("{{ .System }}{{ .Prompt }}", [".System", ".Prompt", ".Response"], True),
    # lower-case .response: no FieldNode "Response", nothing is cut
    ("a{{ .response }}b", ["a", ".response", "b"], False),
    # a .Response in the else list cuts there without a panic
    ("{{ if .Prompt }}P{{ else }}E{{ .Response }}F{{ end }}G",
     [".Prompt", "P", "E", ".Response"], True),
    # parenthesised pipes are walked too
    ('{{ printf "%s" (.Response) }}after', ["printf", ".Response"], True),
])
def test_cut(source: str, kept: list[str], did_cut: bool) -> None:
    template = parse(source)
    cut_template, cut_happened = ollama.cut(template)
    assert cut_happened is did_cut
    assert _texts_and_fields(cut_template) == kept
    assert cut_template.defines == {}


def test_cut_drops_defines_and_copies() -> None:
    template = parse('{{ define "x" }}D{{ end }}A{{ .Response }}B')
    cut_template, _ = ollama.cut(template)
    assert cut_template.defines == {}
    assert [x.text for x in template.root.nodes if isinstance(x, n.TextNode)] == ["A", "B"]


def test_cut_panics_inside_branch_with_else() -> None:
    """[verified] `{{ if .Prompt }}{{ .Prompt }}{{ .Response }}{{ else }}E{{ end }}` panics."""
    template = parse("{{ if .Prompt }}{{ .Prompt }}{{ .Response }}{{ else }}E{{ end }}")
    with pytest.raises(ollama.CutPanicError):
        ollama.cut(template)
    # range/with with an else list panic the same way
    with pytest.raises(ollama.CutPanicError):
        ollama.cut(parse("{{ with .System }}{{ .Response }}{{ else }}E{{ end }}"))
    # no else: no panic
    ollama.cut(parse("{{ if .Prompt }}{{ .Response }}{{ end }}"))
