"""Variable scopes and Jinja homes, as Go's parser scopes them (analysis.py)."""

from __future__ import annotations

import pytest

from gotmpl2jinja.analysis import GoType, analyze, jinja_identifier, messages_alike_when_nil
from gotmpl2jinja.errors import Gotmpl2JinjaError, TranslationError
from gotmpl2jinja.syntax import nodes
from gotmpl2jinja.syntax.parser import parse


def _vars(source: str) -> dict[str, list]:
    template = parse(source)
    analysis = analyze(template)
    found: dict[str, list] = {}
    for node in template.root.walk():
        if isinstance(node, nodes.VariableNode) and id(node) in analysis.variables:
            var = analysis.variables[id(node)]
            if var not in found.setdefault(var.go_name, []):
                found[var.go_name].append(var)
    return found


def test_reassigned_in_a_loop_lives_in_a_namespace() -> None:
    found = _vars('{{ $s := "" }}{{ range .Messages }}{{ $s = .Content }}{{ end }}{{ $s }}')
    (s,) = found["$s"]
    assert s.namespace == "ns" and s.ref == "ns.s"


def test_assigned_where_declared_stays_plain() -> None:
    (s,) = _vars('{{ $s := "" }}{{ if .System }}{{ $s = .System }}{{ end }}{{ $s }}')["$s"]
    assert s.namespace is None and s.ref == "s"


def test_declared_per_iteration_is_not_shared() -> None:
    (last,) = _vars("{{ range $i, $_ := .Messages }}{{ $last := $i }}{{ $last }}{{ end }}")[
        "$last"]
    assert last.loop_depth == 1 and last.namespace is None


def test_shadowing_gets_a_new_name() -> None:
    found = _vars('{{ $x := 1 }}{{ if true }}{{ $x := "a" }}{{ $x }}{{ end }}{{ $x }}')
    assert [v.jinja_name for v in found["$x"]] == ["x", "x_2"]


def test_sequential_declarations_keep_their_name() -> None:
    found = _vars("{{ range .Messages }}{{ $l := 1 }}{{ $l }}{{ end }}"
                  "{{ range .Messages }}{{ $l := 2 }}{{ $l }}{{ end }}")
    assert [v.jinja_name for v in found["$l"]] == ["l", "l"]


def test_condition_only_use_is_recorded() -> None:
    (b,) = _vars("{{ range .Messages }}{{ $b := or .Content .Thinking }}"
                 "{{ if and $b (not $b) }}x{{ end }}{{ end }}")["$b"]
    assert b.condition_only
    (c,) = _vars("{{ range .Messages }}{{ $c := .Content }}{{ $c }}{{ end }}")["$c"]
    assert not c.condition_only


@pytest.mark.parametrize(("go", "jinja"), [
    ("$lastUserIdx", "lastUserIdx"), ("$system", "system_var"), ("$loop", "loop_var"),
    ("$in", "in_var"), ("$9", "v_9"),
])
def test_jinja_identifiers(go: str, jinja: str) -> None:
    assert jinja_identifier(go) == jinja


def test_undefined_variable_is_a_translation_error() -> None:
    template = nodes.Template(root=nodes.ListNode(nodes=[nodes.ActionNode(pipe=nodes.PipeNode(
        cmds=[nodes.CommandNode(args=[nodes.VariableNode(ident=["$nope"])])]))]))
    with pytest.raises(TranslationError, match=r"undefined variable \$nope"):
        analyze(template)


def test_types_are_named_as_go_names_them() -> None:
    assert GoType.MESSAGES.value == "[]*templateMessage"


def test_a_definition_has_its_own_scope_and_argument() -> None:
    """Go: variables do not carry into a define; `$` there is the template's argument."""
    source = ('{{ define "d" }}{{ $x := 2 }}{{ range $.Messages }}{{ $x = 3 }}{{ end }}{{ end }}'
              '{{ $x := 1 }}{{ template "d" . }}{{ $x }}')
    template = parse(source)
    analysis = analyze(template)
    assert analysis.template_args["d"].role == "template_arg"
    body = template.defines["d"]
    assert [v.jinja_name for v in analysis.namespaces[id(body)]] == ["x"]  # loop-assigned
    with pytest.raises(Gotmpl2JinjaError, match=r"undefined variable '?\$y"):
        analyze(parse('{{ define "d" }}{{ $y }}{{ end }}{{ $y := 1 }}'))


@pytest.mark.parametrize(("source", "alike"), [
    ("{{ range .Messages }}{{ .Content }}{{ end }}", True),
    ("{{ range $i, $m := .Messages }}{{ len (slice $.Messages $i) }}{{ end }}", True),
    ("{{ if .Messages }}{{ len .Messages }}{{ end }}{{ with $.Messages }}{{ . }}{{ end }}", True),
    ("{{ if and .System .Messages }}{{ index .Messages 0 }}{{ end }}", True),
    ("{{ if and .Messages (gt (len .Messages) 1) }}x{{ end }}", True),
    ("{{ if or (not .Messages) .System }}x{{ end }}", True),
    ("{{ .Prompt }}", True),
    ("{{ len .Messages }}", False),
    ("{{ if gt (len .Messages) 0 }}x{{ end }}", False),
    ("{{ if .Messages }}{{ else }}{{ len .Messages }}{{ end }}", False),
    ("{{ range .Messages }}{{ else }}{{ json .Messages }}{{ end }}", False),
    # a range's variables hold the list itself in its else (the generator's seed 20)
    ("{{ range $x := .Messages }}{{ else }}{{ $x }}{{ end }}", False),
    ("{{ range $i, $m := .Messages }}{{ else }}{{ $i }}{{ end }}", False),
    ("{{ range $i, $m := .Messages }}{{ $m.Content }}{{ else }}none{{ end }}", True),
    ("{{ if or .System .Messages }}{{ len .Messages }}{{ end }}", False),
    ("{{ $m := .Messages }}{{ range $m }}{{ end }}", False),
    ("{{ if $m := .Messages }}{{ end }}", False),
    ("{{ range slice .Messages 1 }}{{ end }}", False),
    ("{{ with .System }}{{ $.Messages }}{{ end }}", False),
    ('{{ define "d" }}{{ len .Messages }}{{ end }}{{ range .Messages }}{{ end }}', False),
])
def test_messages_alike_when_nil(source: str, alike: bool) -> None:
    """Only reads that cannot tell Go's nil from an empty list (the translator then gives the
    fill-in-the-middle path no second body; tests/test_fim.py checks the bytes against Go)."""
    assert messages_alike_when_nil(parse(source)) is alike


@pytest.mark.parametrize(("source", "expected"), [
    # granite's counter: a constant 0, then only `len …` assignments
    ('{{ $c := 0 }}{{ range .Messages }}{{ $c = len (printf "a%*s" $c "") }}{{ end }}', True),
    ("{{ $c := len .Messages }}", True),
    ("{{ $c := -1 }}", False),
    ("{{ $c := 0 }}{{ range .Messages }}{{ $c = 2 }}{{ $c = -2 }}{{ end }}", False),
    ('{{ $c := 0 }}{{ if .System }}{{ $c = "x" }}{{ end }}', False),
    ("{{ $c := 0 }}{{ $c = len .Messages | print }}", False),  # a pipeline ending elsewhere
])
def test_non_negative_counts_every_definition(source: str, expected: bool) -> None:
    (c,) = _vars(source + "{{ $c }}")["$c"]
    assert c.non_negative is expected
    assert len(c.definitions) == 1 + source.count("$c =")
