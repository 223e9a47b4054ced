"""Parser tests: the corpus, a verdict table checked against Go itself, trims, literals.

Ground truth is Go: every row of SNIPPETS is sent to the reference renderer
(`gotmpl2jinja.ollama.reference.check_parse`, Go's text/template plus Ollama's `Vars()`), and our
accept/reject verdict and our error LINE must equal Go's. Go does not report a column for parse
errors, so the column in each row is our own reviewed value (the place we blame), checked only
against the table.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gotmpl2jinja.errors import ModelfileError, TemplateSyntaxError
from gotmpl2jinja.ollama import facts as ollama
from gotmpl2jinja.ollama.modelfile import parse_modelfile
from gotmpl2jinja.syntax import nodes as n
from gotmpl2jinja.syntax.parser import parse

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CORPUS = FIXTURES / "corpus"
# A Modelfile in the corpus that is invalid on purpose (role `robot`, see its SOURCE.md).
INVALID_MODELFILE = "ahnafnafee__modelfile-syntax/syntaxes/tests/messages.modelfile"


def _modelfile_paths() -> list[Path]:
    paths = [p for p in CORPUS.rglob("*") if p.is_file() and (
        p.name == "Modelfile" or p.suffix == ".Modelfile" or p.suffix == ".modelfile"
        or "replikation__modelfiles/opencode/" in p.as_posix())]
    return sorted(paths)


def corpus_templates() -> list[tuple[str, str]]:
    """(id, Go template source) for every template in fixtures/: .gotmpl files and the
    TEMPLATE of every Modelfile (unsloth's placeholders filled in)."""
    out: list[tuple[str, str]] = []
    for path in sorted(FIXTURES.rglob("*.gotmpl")):
        if path.is_file():
            out.append((path.relative_to(FIXTURES).as_posix(), path.read_bytes().decode()))
    for path in _modelfile_paths():
        rel = path.relative_to(CORPUS).as_posix()
        if rel == INVALID_MODELFILE:
            continue
        text = path.read_bytes().decode()
        text = text.replace("{__FILE_LOCATION__}", "model.gguf")
        text = text.replace("{__EOS_TOKEN__}", "</s>")
        template = parse_modelfile(text).template
        if template is not None:
            out.append((rel + "#TEMPLATE", template))
    return out


CORPUS_TEMPLATES = corpus_templates()


def test_corpus_is_complete() -> None:
    """The enumeration really covers the corpus (guards against a glob that finds nothing)."""
    ids = [i for i, _ in CORPUS_TEMPLATES]
    assert sum(i.startswith("corpus/huggingface__huggingface.js/entries/") for i in ids) == 97
    assert sum(i.startswith("corpus/ollama/template/") for i in ids) == 20
    assert sum("unslothai__unsloth" in i for i in ids) >= 40
    assert any("examples-modelfiles" in i for i in ids)
    # replikation's Modelfiles parse but carry no TEMPLATE (see its SOURCE.md)
    replik = [p for p in _modelfile_paths() if "replikation__modelfiles" in p.as_posix()]
    assert len(replik) == 5
    assert all(parse_modelfile(p.read_bytes().decode()).template is None for p in replik)
    assert "seeds/002_qwen-style.gotmpl" in ids


def test_invalid_corpus_modelfile_is_rejected() -> None:
    with pytest.raises(ModelfileError):
        parse_modelfile((CORPUS / INVALID_MODELFILE).read_bytes().decode())


def _texts(node: n.Node) -> list[str]:
    """Text nodes in the order Go's tree holds them (lists, then else lists)."""
    return [t.text for t in node.walk() if isinstance(t, n.TextNode)]


@pytest.mark.parametrize(("ident", "source"), CORPUS_TEMPLATES,
                         ids=[i for i, _ in CORPUS_TEMPLATES])
def test_corpus_parses(ident: str, source: str) -> None:
    """Every corpus template parses, and Ollama's facts match Go's (the reference renderer)."""
    from gotmpl2jinja.ollama.reference import check_parse

    template = parse(source, name=ident)
    verdict = check_parse(source)
    assert verdict.ok, verdict.message
    assert tuple(ollama.vars(template)) == verdict.vars
    assert ollama.execute_path(template) == verdict.path


# (snippet, Go accepts, line, column) — line checked against Go at test time, column reviewed.
SNIPPETS: list[tuple[str, bool, int | None, int | None]] = [
    ('a {{- 3}} b', True, None, None),
    ('{{-3}}', True, None, None),
    ('{{- 3 -}}', True, None, None),
    ('a  {{- /* c */ -}}  b', True, None, None),
    ('a {{/* c */}} b', True, None, None),
    ('{{ /* c */ }}', False, 1, 4),
    ('{{/* c */ }}', False, 1, 3),
    ('{{/* a */ b */}}', False, 1, 3),
    ('{{/* unclosed }}', False, 1, 3),
    ('x\n{{- /* c */}}\ny', True, None, None),
    ('{{.A}}', True, None, None),
    ('{{ .A.B }}', True, None, None),
    ('{{ $.A }}', True, None, None),
    ('{{ $x := 1 }}{{ $x }}', True, None, None),
    ('{{ $x }}', False, 1, 4),
    ('{{ $x\n}}', False, 2, 4),
    ('{{ $x.A }}', False, 1, 4),
    ('{{ len $x }}', False, 1, 8),
    ('{{ $y := $x }}', False, 1, 10),
    ('{{$x=1}}', False, 1, 5),
    ('{{ $x = 1 }}', True, None, None),
    ('{{ $x := 1 }}{{ $x = 2 }}', True, None, None),
    ('{{ if . }}a{{ else }}b{{ end }}', True, None, None),
    ('{{ if . }}a{{ else }}b{{ else }}c{{ end }}', False, 1, 31),
    ('{{ if . }}a{{ else if .B }}b{{ else }}c{{ end }}', True, None, None),
    ('{{ range . }}{{ break }}{{ end }}', True, None, None),
    ('{{ break }}', False, 1, 10),
    ('{{ range . }}{{ else }}{{ break }}{{ end }}', False, 1, 33),
    ('{{ range . }}{{ if . }}{{ continue }}{{ end }}{{ end }}', True, None, None),
    ('{{ continue }}', False, 1, 13),
    ('{{ if . }}', False, 1, 11),
    ('{{ if . }}\n\n', False, 3, 1),
    ('{{ end }}', False, 1, 8),
    ('{{ else }}', False, 1, 9),
    ('{{ else if . }}', False, 1, 9),
    ('{{ }}', False, 1, 4),
    ('{{ if }}{{ end }}', False, 1, 7),
    ('{{ . | 1 }}', False, 1, 10),
    ('{{ . | }}', True, None, None),
    ('{{ . | | . }}', False, 1, 8),
    ('{{ | . }}', False, 1, 4),
    ('{{ template .X }}', False, 1, 13),
    ('{{ template "x" }}', False, None, 1),
    ('{{ template `x` . }}', True, None, None),
    ('{{ define "x" }}a{{ end }}', True, None, None),
    ('{{ define "x" }}a{{ end }}{{ define "x" }}b{{ end }}', False, 1, 51),
    ('{{ define "x" }}a{{ end }}{{ define "x" }} {{ end }}', True, None, None),
    ('{{ define "x" }} {{ end }}{{ define "x" }}b{{ end }}', True, None, None),
    ('{{ if . }}{{ define "x" }}{{ end }}{{ end }}', False, 1, 14),
    ('{{ block "b" . }}x{{ end }}', True, None, None),
    ('{{ block "b" . }}x{{ else }}{{ end }}', False, 1, 16),
    ('{{ range $i, $v := . }}{{ $i }}{{ $v }}{{ end }}', True, None, None),
    ('{{ range $i, $v, $w := . }}{{ end }}', False, 1, 16),
    ('{{ range $i, 1 }}{{ end }}', False, 1, 14),
    ('{{ if $a, $b := . }}{{ end }}', False, 1, 9),
    ('{{ range $v := . }}{{ end }}{{ $v }}', False, 1, 32),
    ('{{ if . }}{{ $y := 1 }}{{ else }}{{ $y }}{{ end }}', True, None, None),
    ('{{ with $x := . }}{{ $x }}{{ end }}', True, None, None),
    ('{{ with . }}{{ else with .B }}{{ end }}', True, None, None),
    ('{{ if . }}{{ else with .B }}{{ end }}', False, 1, 19),
    ('{{ range . }}{{ else if . }}{{ end }}', False, 1, 22),
    ('{{ nosuch }}', False, 1, 4),
    ('{{ json . }}', True, None, None),
    ('{{ currentDate }}', True, None, None),
    ('{{ "abc }}', False, 1, 4),
    ('{{ `abc\ndef` }}', True, None, None),
    ("{{ 'a' }}", True, None, None),
    ("{{ 'ab' }}", False, 1, 4),
    ("{{ '\\n' }}", True, None, None),
    ('{{ "\\q" }}', False, 1, 4),
    ('{{ 0x1F }}', True, None, None),
    ('{{ 0b101 }}', True, None, None),
    ('{{ 0o17 }}', True, None, None),
    ('{{ 017 }}', True, None, None),
    ('{{ 1_000 }}', True, None, None),
    ('{{ 1__0 }}', False, 1, 4),
    ('{{ 1e3 }}', True, None, None),
    ('{{ 0x1p-2 }}', True, None, None),
    ('{{ 0x1.8 }}', False, 1, 4),
    ('{{ 1i }}', True, None, None),
    ('{{ 1+2i }}', True, None, None),
    ('{{ 1-2 }}', False, 1, 5),
    ('{{ 99999999999999999999 }}', False, 1, 4),
    ('{{ 1e400 }}', False, 1, 4),
    ('{{ .5 }}', True, None, None),
    ('{{ -.5 }}', True, None, None),
    ('{{ 1.A }}', False, 1, 4),
    ('{{ 1a }}', False, 1, 4),
    ('{{ "a".B }}', False, 1, 9),
    ('{{ (.A).B }}', True, None, None),
    ('{{ (.A) }}', True, None, None),
    ('{{ (.A }}', False, 1, 8),
    ('{{ .A) }}', False, 1, 6),
    ('{{ .A"x" }}', False, 1, 6),
    ('{{ "a""b" }}', False, 1, 7),
    ('{{ .A(.B) }}', False, 1, 6),
    ('{{ . .A }}', True, None, None),
    ('{{ ..A }}', False, 1, 7),
    ('{{ nil }}', True, None, None),
    ('{{ true }}', True, None, None),
    ('{{ true.A }}', False, 1, 10),
    ('{{ .A -}}\n\n x', True, None, None),
    ('{{ .A-}}', False, 1, 6),
    ('a\n\t {{- .A }}', True, None, None),
    ('{{ .A }}\r\n', True, None, None),
    ('{{- .A -}}', True, None, None),
    ('{{ if .A -}} \n x {{- end }}', True, None, None),
    ('{{ .A', False, 1, 1),
    ('{{ .A\n\n', False, 3, 1),
    ('a{{', False, 1, 2),
    ('{{{ .A }}', False, 1, 3),
    ('{{ $ }}', True, None, None),
    ('{{ $.Messages }}', True, None, None),
    ('{{ len.A }}', True, None, None),
    ('{{ index .A 1 }}', True, None, None),
    ('{{ printf "%d" 1 }}', True, None, None),
    ('{{ .A | printf "%s" }}', True, None, None),
    ('{{ .A | 1 | nosuch }}', False, 1, 13),
    ('{{ if . }}{{ end }}{{ end }}', False, 1, 27),
    ('{{ range . }}{{ range . }}{{ break }}{{ end }}{{ break }}{{ end }}', True, None, None),
    ('{{ define "a" }}{{ range . }}{{ break }}{{ end }}{{ end }}', True, None, None),
    ('{{ range . }}{{ define "a" }}{{ end }}{{ end }}', False, 1, 17),
    ('{{ range . }}{{ block "b" . }}{{ break }}{{ end }}{{ end }}', False, 1, 40),
    ('{{ $x := 1 }}{{ define "a" }}{{ $x }}{{ end }}', False, 1, 33),
    ('{{ define "" }}X{{ end }}', True, None, None),
    ('{{ define "" }}X{{ end }}Y', False, 1, 27),
    ('{{ if .A }}x{{ else if .B }}y{{ else if .C }}z{{ end }}', True, None, None),
    ('{{ if .A }}{{ else if .B }}{{ else }}{{ else }}{{ end }}', False, 1, 46),
    ('{{ .A }}\n{{ $x }}\n{{ .B', False, 2, 4),
    ('{{ nosuch\n}}', False, 1, 4),
    ('{{ "\\x41" }}', True, None, None),
    ('{{ "\\u00e9" }}', True, None, None),
    ('{{ "\\U0010FFFF" }}', True, None, None),
    ('{{ "\\uD800" }}', False, 1, 4),
    ('{{ "\\400" }}', False, 1, 4),
    ("{{ '\\'' }}", True, None, None),
    ('{{ "\\\'" }}', False, 1, 4),
    ('{{ \'"\' }}', True, None, None),
    ("{{ '' }}", False, 1, 4),
    ("{{ 'a }}", False, 1, 4),
    ('{{ $x := 1 | $y := 2 }}', False, 1, 14),  # Go: undefined variable "$y"
    ('{{ ($x := 1) }}{{ $x }}', True, None, None),
    ('{{ range $i, $v }}{{ end }}', False, 1, 14),
    ('{{ $v := 1 }}{{ range $i, $v }}{{ end }}', True, None, None),
    ('{{ range 5 }}{{ . }}{{ end }}', True, None, None),
    ('{{ else }}{{ end }}', False, 1, 9),
    ('{{ template "x" . | len }}', True, None, None),
    ('{{ define "x" }}', False, 1, 17),
    ('{{ define x }}{{ end }}', False, 1, 11),
    ('{{ with . }}{{ else }}{{ else }}{{ end }}', False, 1, 31),
    ('{{ if .A }}\n{{ else }}\n{{ end }}\n{{ end }}', False, 4, 8),
    ('{{ 0x }}', False, 1, 4),
    ('{{ 0x_1 }}', True, None, None),
    ('{{ 1_ }}', False, 1, 4),
    ('{{ 0_7 }}', True, None, None),
    ('{{ 08 }}', False, 1, 4),
    ('{{ 08.5 }}', True, None, None),
    ('{{ 0x1e+2i }}', False, 1, 4),
    ('{{ +5 }}', True, None, None),
    ('{{ 1.5e }}', False, 1, 4),
    ('{{ - }}', False, 1, 4),
    ('{{ .A := 1 }}', False, 1, 7),
    ('{{ $x : = 1 }}', False, 1, 4),  # Go: undefined variable "$x" (before the ':')
    ('{{ $x :=1 }}{{ $x }}', True, None, None),
    ('{{ print 1,2 }}', False, 1, 11),
    ('{{ if(.A) }}{{ end }}', True, None, None),
    ('{{ if.A }}{{ end }}', True, None, None),
    ('{{ .A . }}', True, None, None),
    ('{{ . }}{{ .A.B.C }}{{ $.A.B }}', True, None, None),
    ('{{/**/}}', True, None, None),
    ('{{- /**/ -}}', True, None, None),
    ('{{-/**/}}', False, 1, 3),
    ('a {{- /* c */}}', True, None, None),
    ('{{/* c */ -}}  a', True, None, None),
    ('{{/* c */-}}', False, 1, 3),
    ('{{ . }} {{/*\nmulti\n*/}} {{ . }}', True, None, None),
    ('{{ "a" | printf }}', True, None, None),
    ('{{ (1) | printf }}', True, None, None),
    ('{{ .A | (printf "x") }}', True, None, None),
    # comments and trims next to them
    ("a {{- /* c */ -}} b", True, None, None),
    ("{{- /* c */ -}}", True, None, None),
    ("{{/* multi\nline\n*/}}{{ . }}", True, None, None),
    ("{{ . }}\n{{/* c */ -}}\n\n{{ $x }}", False, 4, 4),
    # raw strings over lines, positions after them
    ("{{ `a\nb\nc` }}{{ nosuch }}", False, 3, 9),
    ("{{ printf `%s\n` .A }}", True, None, None),
    # numbers
    ("{{ 0x_1F }}", True, None, None),
    ("{{ 1_000.5 }}", True, None, None),
    ("{{ 0x1p-2i }}", True, None, None),
    ("{{ 1e3i }}", True, None, None),
    ("{{ 'xy' }}", False, 1, 4),
    # variables in scopes
    ("{{ with $x := . }}{{ end }}{{ $x }}", False, 1, 31),
    ("{{ range $i, $e := . }}{{ if $i }}{{ $e }}{{ end }}{{ end }}", True, None, None),
    ("{{ if $x := . }}{{ else }}{{ $x }}{{ end }}", True, None, None),
    ("{{ define \"t\" }}{{ $ }}{{ end }}{{ template \"t\" . }}", True, None, None),
    ("{{ $x := 1 }}{{ block \"b\" $x }}{{ $x }}{{ end }}", False, 1, 35),
    # Ollama's Vars() rejections (Go's parser accepts them)
    ("{{ define \"x\" }}{{ template \"x\" }}{{ end }}", False, None, 17),
]


@pytest.mark.parametrize(("source", "accepts", "line", "col"), SNIPPETS)
def test_verdicts_match_go(source: str, accepts: bool, line: int | None,
                           col: int | None) -> None:
    """Our verdict and line equal Go's; the column equals the reviewed table value."""
    from gotmpl2jinja.ollama.reference import check_parse

    verdict = check_parse(source)
    assert verdict.ok is accepts, f"table disagrees with Go: {verdict.message}"
    if accepts:
        ollama.vars(parse(source))  # Ollama's Parse runs Vars() too
        return
    with pytest.raises(TemplateSyntaxError) as info:
        ollama.vars(parse(source))
    err = info.value
    assert err.line == verdict.line or verdict.line is None, (str(err), verdict.message)
    if verdict.line is None:
        assert line is None
    else:
        assert line == verdict.line
    assert err.col == col, str(err)
    assert err.name == "template"
    assert err.message


def test_table_is_large_and_mixed() -> None:
    accepted = sum(1 for _, ok, _, _ in SNIPPETS if ok)
    assert len(SNIPPETS) >= 100
    assert accepted >= 30 and len(SNIPPETS) - accepted >= 60


# Tricky trims: the text Go executes (messages path forced by a branch that never runs, every
# action prints nothing) must equal the concatenation of our text nodes.
TRIMS = [
    "a \n\t{{- \"\" }}\r\n b",
    "a {{- \"\" -}} \n\r\t b",
    "a  {{- /* c */ -}}  b",
    "a {{/* c */ -}}\n b",
    "a\n{{- /* c */}}\n b",
    "x{{-3}}y".replace("{{-3}}", "{{- \"\" }}") + " {{/**/}} z",
    "\u00a0a {{- \"\" -}} \u00a0",
    "a {{ \"\" -}}",
    "{{- \"\" }}  a  {{ \"\" -}}  b",
    "a\t\t{{- if false }}{{ .Messages }}{{ end -}}\t\tb",
]


@pytest.mark.parametrize("source", TRIMS)
def test_trimmed_text_equals_go_output(source: str) -> None:
    from gotmpl2jinja.ollama.reference import render

    full = source + "{{ if false }}{{ .Messages }}{{ end }}"
    expected = render(full, {"messages": []}, server=False)
    ours = "".join(_texts(parse(full).root))
    assert ours == expected


def test_minus_three_is_a_number() -> None:
    root = parse("a {{-3}} b").root
    assert [type(x).__name__ for x in root.nodes] == ["TextNode", "ActionNode", "TextNode"]
    assert root.nodes[0] == n.TextNode("a ")
    action = root.nodes[1]
    assert isinstance(action, n.ActionNode)
    number = action.pipe.cmds[0].args[0]
    assert isinstance(number, n.NumberNode)
    assert (number.text, number.int64, number.is_int, number.is_uint) == ("-3", -3, True, False)


@pytest.mark.parametrize(("spelling", "flags", "value"), [
    # (is_int, is_uint, is_float, is_complex), reviewed against Go's newNumber rules
    ("42", (True, True, True, False), 42),
    ("-1", (True, False, True, False), -1),
    ("0x1F", (True, True, True, False), 31),
    ("0b101", (True, True, True, False), 5),
    ("0o17", (True, True, True, False), 15),
    ("017", (True, True, True, False), 15),
    ("1_000", (True, True, True, False), 1000),
    ("1e3", (True, True, True, False), 1000),
    ("1.5", (False, False, True, False), 1.5),
    ("0x1p-2", (False, False, True, False), 0.25),
    ("18446744073709551615", (False, True, True, False), 18446744073709551615),
    ("'a'", (True, True, True, False), 97),
    ("'\\n'", (True, True, True, False), 10),
    ("1i", (False, False, False, True), None),
    ("0i", (True, True, True, True), 0),
    ("1+0i", (True, True, True, True), 1),
])
def test_number_flags(spelling: str, flags: tuple[bool, bool, bool, bool],
                      value: float | None) -> None:
    action = parse("{{ " + spelling + " }}").root.nodes[0]
    assert isinstance(action, n.ActionNode)
    num = action.pipe.cmds[0].args[0]
    assert isinstance(num, n.NumberNode)
    assert (num.is_int, num.is_uint, num.is_float, num.is_complex) == flags
    if value is not None:
        if num.is_uint:
            assert num.uint64 == value
        if num.is_int:
            assert num.int64 == value
        assert num.float64 == float(value)


@pytest.mark.parametrize(("literal", "text"), [
    ('"a\\tb"', "a\tb"),
    ('"\\x41\\u00e9\\U0001F600\\101"', "A\u00e9\U0001F600A"),
    ('"\\""', '"'),
    ("`a\\n\r\nb`", "a\\n\nb"),  # raw: no escapes, carriage returns dropped
])
def test_string_literals(literal: str, text: str) -> None:
    action = parse("{{ " + literal + " }}").root.nodes[0]
    assert isinstance(action, n.ActionNode)
    node = action.pipe.cmds[0].args[0]
    assert isinstance(node, n.StringNode)
    assert (node.quoted, node.text) == (literal, text)


def test_shapes() -> None:
    """The AST shape Go builds for chains, else-if chains, range declarations and blocks."""
    t = parse(
        "{{ (.A).B }}{{ $.C.D }}{{ .E.F }}"
        "{{ if .X }}1{{ else if .Y }}2{{ else }}3{{ end }}"
        "{{ range $i, $v := .L }}{{ break }}{{ end }}"
        "{{ block \"b\" . }}B{{ end }}"
    )
    chain, var, fld, if_node, range_node, tmpl = t.root.nodes
    assert isinstance(chain, n.ActionNode) and isinstance(var, n.ActionNode)
    c = chain.pipe.cmds[0].args[0]
    assert isinstance(c, n.ChainNode) and c.field == ["B"] and isinstance(c.node, n.PipeNode)
    assert var.pipe.cmds[0].args[0] == n.VariableNode(["$", "C", "D"])
    assert isinstance(fld, n.ActionNode)
    assert fld.pipe.cmds[0].args[0] == n.FieldNode(["E", "F"])
    assert isinstance(if_node, n.IfNode) and if_node.else_list is not None
    inner = if_node.else_list.nodes[0]
    assert isinstance(inner, n.IfNode)
    assert inner.else_list is not None and inner.else_list.nodes == [n.TextNode("3")]
    assert isinstance(range_node, n.RangeNode)
    assert [v.ident for v in range_node.pipe.decl] == [["$i"], ["$v"]]
    assert range_node.list.nodes == [n.BreakNode()]
    assert tmpl == n.TemplateNode("b", tmpl.pipe, from_block=True)  # type: ignore[union-attr]
    assert list(t.defines) == ["b"] and t.defines["b"].nodes == [n.TextNode("B")]


def test_positions_are_go_byte_columns() -> None:
    t = parse("é{{ .A }}\n  {{ nosuchfield }}".replace("nosuchfield", ".B"))
    action = t.root.nodes[1]
    assert action.pos == n.Pos(2, 1, 3)  # "é" is two bytes
    with pytest.raises(TemplateSyntaxError) as info:
        parse("é\n  é{{ nosuch }}", name="f.gotmpl")
    assert str(info.value).startswith("f.gotmpl:2:8: ")


def test_define_redefinition_rules() -> None:
    """Go: an empty definition never replaces a non-empty one and may be replaced by one."""
    t = parse('{{ define "x" }} {{ end }}{{ define "x" }}B{{ end }}')
    assert t.defines["x"].nodes == [n.TextNode("B")]
    t = parse('{{ define "x" }}A{{ end }}{{ define "x" }}{{/* c */}}{{ end }}')
    assert t.defines["x"].nodes == [n.TextNode("A")]
    t = parse('{{ define "" }}X{{ end }}')
    assert t.root.nodes == [n.TextNode("X")] and t.defines == {}
