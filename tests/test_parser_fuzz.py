"""Our parser against Go's on thousands of broken and re-assembled corpus templates.

Why mutate the corpus: hand-written snippets cover the rules we thought of; cutting, repeating,
swapping and splicing real templates (and dropping Go-template fragments into them) reaches
the combinations we did not. Ground truth is Go itself (`reference.check_parse`, Ollama's
`Parse` on Go's text/template): the verdicts must agree; when both reject, our line must be
Go's line; when both accept, Ollama's facts (`Vars()` and the execute path) must be Go's.
Disagreements found this way are pinned in REGRESSIONS below, checked against Go as well.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_parser import CORPUS_TEMPLATES

from gotmpl2jinja.errors import TemplateSyntaxError
from gotmpl2jinja.ollama import facts as ollama
from gotmpl2jinja.syntax.parser import parse

#: Fragments that matter to Go's lexer and parser, dropped at random places.
FRAGMENTS = (
    "{{", "}}", "{{-", "-}}", "{{- ", " -}}", "{{ end }}", "{{ else }}", "{{ else if .X }}",
    "{{ else with .X }}", "{{ break }}", "{{ continue }}", "$x", "$x :=", "$x =", "$", ":=",
    "=", "|", "(", ")", '"', "`", "'", "/*", "*/", "{{/*", "*/}}", " -3", "-3", "0x1_0", "1e3",
    "1_", ".5", "+1i", ".Foo", ".", "..", "nil", "true", ",", '{{ define "x" }}',
    '{{ template "x" . }}', '{{ template "x" }}', '{{ block "b" . }}', "range", "with", "if",
    "else", "end", "define", "len", "json", "nosuch", "\n", " ", "\t", "\r\n", "é", "\\",
    "{{ $x }}", "{{ range $i, $v := . }}", "{{ if . }}", "{{ with . }}", "{{ range . }}",
)

_OPS = ("delete", "duplicate", "swap", "insert", "splice",
        "drop_action", "copy_action", "move_action")
# An action as a person would see it (good enough to pick whole actions; strings with `}}`
# inside just give a different cut).
_ACTION = re.compile(r"\{\{.*?\}\}", re.DOTALL)


@dataclass(frozen=True)
class Mutation:
    """One edit of a template: `a`, `b`, `c` are cut points (scaled to the text's length)."""

    op: str
    a: float
    b: float
    c: float
    fragment: str = ""
    other: str = ""   # the second template of a splice

    def apply(self, source: str) -> str:
        size = len(source)
        i, j = sorted((int(self.a * size), int(self.b * size)))
        if self.op == "delete":
            return source[:i] + source[j:]
        if self.op == "duplicate":
            return source[:j] + source[i:j] + source[j:]
        if self.op == "swap":
            # swap source[i:j] with the slice as wide at k; if they overlap, move it to k
            k, width = int(self.c * size), j - i
            if k >= j and k + width <= size:
                return (source[:i] + source[k:k + width] + source[j:k] + source[i:j]
                        + source[k + width:])
            if k + width <= i:
                return (source[:k] + source[i:j] + source[k + width:i] + source[k:k + width]
                        + source[j:])
            rest = source[:i] + source[j:]
            k = min(k, len(rest))
            return rest[:k] + source[i:j] + rest[k:]
        if self.op == "insert":
            return source[:i] + self.fragment + source[i:]
        if self.op == "splice":
            cut = int(self.c * len(self.other))
            return source[:i] + self.other[cut:]
        if self.op.endswith("_action"):
            # whole actions: these keep the lexer happy and upset nesting, scopes and Vars()
            actions = list(_ACTION.finditer(source))
            if not actions:
                return source
            picked = actions[min(int(self.a * len(actions)), len(actions) - 1)]
            text, start, end = picked.group(), picked.start(), picked.end()
            target = actions[min(int(self.c * len(actions)), len(actions) - 1)].start()
            if self.op == "drop_action":
                return source[:start] + source[end:]
            if self.op == "copy_action":
                return source[:target] + text + source[target:]
            rest = source[:start] + source[end:]
            target = target if target < start else max(target - len(text), start)
            return rest[:target] + text + rest[target:]
        raise ValueError(self.op)  # pragma: no cover


def _fraction() -> st.SearchStrategy[float]:
    return st.integers(0, 1000).map(lambda k: k / 1000)


_SOURCES = [src for _, src in CORPUS_TEMPLATES]

mutations = st.builds(
    Mutation,
    op=st.sampled_from(_OPS),
    a=_fraction(), b=_fraction(), c=_fraction(),
    fragment=st.sampled_from(FRAGMENTS),
    other=st.sampled_from(_SOURCES),
)


def mutated_template() -> st.SearchStrategy[str]:
    """A corpus template after one to three mutations."""
    return st.builds(
        lambda source, edits: _apply_all(source, edits),
        st.sampled_from(_SOURCES), st.lists(mutations, min_size=1, max_size=3),
    )


def _apply_all(source: str, edits: list[Mutation]) -> str:
    for edit in edits:
        source = edit.apply(source)
    return source


@dataclass(frozen=True)
class Outcome:
    """What one side says about a source: accepted with Ollama's facts, or rejected at a line."""

    ok: bool
    line: int | None = None
    vars: tuple[str, ...] = ()
    path: str | None = None
    message: str = ""


def ours(source: str) -> Outcome:
    """Our parser followed by Ollama's parse-time facts (its `Parse` runs `Vars()`)."""
    try:
        template = parse(source)
        facts = tuple(ollama.vars(template))
        path = ollama.execute_path(template)
    except TemplateSyntaxError as err:
        return Outcome(False, err.line, message=str(err))
    return Outcome(True, vars=facts, path=path)


def go(source: str) -> Outcome:
    from gotmpl2jinja.ollama.reference import check_parse

    verdict = check_parse(source)
    return Outcome(verdict.ok, verdict.line, verdict.vars, verdict.path, verdict.message)


def assert_agrees(source: str) -> None:
    """Verdict, Go's error line (when Go reports one) and, on acceptance, Ollama's facts."""
    mine, theirs = ours(source), go(source)
    detail = f"source={source!r}\nours={mine.message!r}\ngo={theirs.message!r}"
    assert mine.ok == theirs.ok, detail
    if theirs.ok:
        assert (mine.vars, mine.path) == (theirs.vars, theirs.path), detail
    elif theirs.line is not None:
        assert mine.line == theirs.line, detail


@settings(max_examples=3000)
@given(mutated_template())
def test_mutated_corpus_agrees_with_go(source: str) -> None:
    assert_agrees(source)


@settings(max_examples=1000)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=12).map("".join))
def test_fragment_soup_agrees_with_go(source: str) -> None:
    """Short sources made only of fragments: dense in the corner cases of Go's parser."""
    assert_agrees(source)


#: Characters and short words for the character soup: Go's lexer decides on each of them.
ATOMS = (
    *"{}-/*$.()|\"'`:=, \n\t\rabx019_+eEipP\\", "{{", "}}", "{{ ", " }}", "if ", "end", "else ",
    "range ", "with ", "nil", "true", "len ", "$x", ".A", "0x", "\u00e9", "\x00", "\u2028",
    "\u00b2", "\u216b", "\u0661", "\u0301",
)


@settings(max_examples=1000)
@given(st.lists(st.sampled_from(ATOMS), min_size=1, max_size=18).map(lambda a: "{{" + "".join(a)))
def test_character_soup_agrees_with_go(source: str) -> None:
    """An action opened and filled with characters: dense in the corners of Go's lexer
    (this found fields after a constant, next to a lexical error)."""
    assert_agrees(source)


# --- templates built from Go's grammar: mostly accepted, so Vars() and the path get compared ---

_FIELDS = (".Messages", ".messages", ".Prompt", ".Response", ".System", ".Tools", ".Suffix",
           ".Content", ".Role", ".ToolCalls", ".Function.Name", ".Function.Arguments",
           "$.Messages", "$.System", "$", ".", "$x", "$i", "$m", "$x.Content", "$m.Role")
_ARGS = (*_FIELDS, '"user"', "`raw`", "1", "-1", "0x1F", "1e3", "'a'", "true", "nil")
_CALLS = ("len", "index", "slice", "eq", "ne", "and", "or", "not", "print", "printf",
          "json", "currentDate", "toTypeScriptType", "html")


def _pipelines() -> st.SearchStrategy[str]:
    operand = st.sampled_from(_ARGS)
    call = st.builds(lambda f, args: " ".join((f, *args)), st.sampled_from(_CALLS),
                     st.lists(operand, max_size=3))
    command = st.one_of(operand, call, call.map(lambda c: f"({c})"),
                        st.builds(lambda c, f: f"({c}){f}", call,
                                  st.sampled_from((".Content", ".A.B", ""))))
    stages = st.lists(command, min_size=1, max_size=3).map(" | ".join)
    declare = st.sampled_from(("", "", "$x := ", "$x = ", "$m := ", "$i, $m := "))
    return st.builds(lambda d, p: d + p, declare, stages)


def _action(body: str, trim_left: bool, trim_right: bool) -> str:
    return ("{{- " if trim_left else "{{ ") + body + (" -}}" if trim_right else " }}")


def _grammar_templates() -> st.SearchStrategy[str]:
    pipe = _pipelines()
    trims = st.booleans()
    leaf = st.one_of(
        st.sampled_from(("hi ", "\n", "  ", "<|im_start|>", "é", "{{/* c */}}", "{{- /* c */ -}}")),
        st.builds(_action, pipe, trims, trims),
        st.sampled_from(('{{ template "t" . }}', '{{ template "t" }}', "{{ break }}",
                         "{{ continue }}")),
    )

    def extend(body: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        seq = st.lists(body, min_size=1, max_size=4).map("".join)
        return st.one_of(
            seq,
            st.builds(lambda p, a, b: f"{{{{ if {p} }}}}{a}{{{{ else }}}}{b}{{{{ end }}}}",
                      pipe, seq, seq),
            st.builds(lambda p, q, a, b: f"{{{{ if {p} }}}}{a}{{{{ else if {q} }}}}{b}"
                      "{{ end }}", pipe, pipe, seq, seq),
            st.builds(lambda p, a: f"{{{{ range {p} }}}}{a}{{{{ end }}}}", pipe, seq),
            st.builds(lambda p, a, b: f"{{{{ range {p} }}}}{a}{{{{ else }}}}{b}{{{{ end }}}}",
                      pipe, seq, seq),
            st.builds(lambda p, a: f"{{{{ with {p} }}}}{a}{{{{ end }}}}", pipe, seq),
            st.builds(lambda p, q, a, b: f"{{{{ with {p} }}}}{a}{{{{ else with {q} }}}}{b}"
                      "{{ end }}", pipe, pipe, seq, seq),
            st.builds(lambda a: f'{{{{ define "t" }}}}{a}{{{{ end }}}}', seq),
            st.builds(lambda p, a: f'{{{{ block "b" {p} }}}}{a}{{{{ end }}}}', pipe, seq),
        )

    return st.recursive(leaf, extend, max_leaves=12)


@settings(max_examples=500)
@given(_grammar_templates())
def test_grammar_built_templates_agree_with_go(source: str) -> None:
    """Templates assembled from Go's constructs (Ollama's fields, functions, declarations,
    trims): mostly accepted, so Ollama's facts are compared on many of them."""
    assert_agrees(source)


# Disagreements the fuzzing found, each fixed in parser.py/grammar and checked against Go here.
REGRESSIONS: list[str] = [
    # Go stops at the first error in source order, also inside the action the grammar rejects:
    # an undefined function, variable or a bad literal before the syntax error wins.
    "{{ sistant\n",
    "{{ user\n{{ .A }}",
    "{{ print $x\n) }}",
    "{{ $x\n) }}",
    "{{ .A $x\n:= 1 }}",
    "{{ 1__0\n) }}",
    '{{ "\\q"\n) }}',
    "{{ 'ab'\n) }}",
    '{{ template "\\q"\n) }}',
    "{{ print (len $z)\n) }}",
    "{{ define \"t\" }}{{ print $x\n) }}",
    "{{ $x := 1 }}{{ if . }}{{ $y := 2 }}{{ end }}{{ print $x $y\n) }}",
    # ... but a variable declared earlier in that action is in scope
    "{{ $x := 1 | print $x\n) }}",
    "{{ range $i, $v := .\n) }}{{ end }}",
    "{{ range $i, $v\n) }}",
    "{{ if $x, $y := .\n}}",
    # a misplaced {{else if}}/{{else with}} or {{define}} is seen before its pipeline
    "{{ else if\n) }}",
    "{{ if . }}{{ else }}{{ else with\n) }}",
    "{{ with . }}{{ else if .\n) }}",
    "{{ if . }}{{ define\n) }}",
    # the action before the rejected one is found by the lexer, not by searching for "{{"
    # (here one sits inside a string)
    '{{ end }}\n{{ print "a{{ b"x" }}',
    # fields after a constant: Go complains once the chain ends, before what follows
    "{{ nil.A\n.B\\ }}",
    "{{ nil.A\n) }}",
    '{{ "a".B.C\n) }}',
    "{{ ..A\n) }}",
    # Go takes only letters, decimal digits and `_` into a name; other numerals end it
    "{{ .A\u00b2 }}",
    "{{ $x\u00b2 := 1 }}",
    "{{ .A\u216b }}",
    "{{ if\u2160 . }}{{ end }}",
    "{{ .A\u0661 }}",
    # an undefined variable with fields: Go's line is the variable's, not the chain's end
    "{{ $q.A\n}}",
    "{{ print $q.A\n}}",
    "{{ $q.A\n.B }}",
    "{{ ($q.A\n) }}",
    "{{ print $q.A.B\n| len }}",
    "{{ $q\n.B }}",
    "{{ $q\n -}}",
]


@pytest.mark.parametrize("source", REGRESSIONS)
def test_regressions_agree_with_go(source: str) -> None:
    assert_agrees(source)


def test_mutations_do_what_they_say() -> None:
    """The mutation operators themselves (a broken operator would fuzz far less)."""
    s = "0123456789"
    assert Mutation("delete", 0.2, 0.5, 0).apply(s) == "0156789"
    assert Mutation("duplicate", 0.2, 0.5, 0).apply(s) == "0123423456789"
    assert Mutation("insert", 0.3, 0.9, 0, fragment="{{").apply(s) == "012{{3456789"
    assert Mutation("splice", 0.5, 0.5, 0.5, other="abcdef").apply(s) == "01234def"
    assert Mutation("swap", 0.1, 0.3, 0.6).apply(s) == "0673451289"
    assert Mutation("swap", 0.6, 0.8, 0.1).apply(s) == "0673451289"  # symmetric
    assert Mutation("swap", 0.2, 0.6, 0.4).apply(s) == "0167234589"  # overlap: a move
    t = "a{{ 1 }}b{{ 2 }}c{{ 3 }}d"
    assert Mutation("drop_action", 0.5, 0, 0).apply(t) == "a{{ 1 }}bc{{ 3 }}d"
    assert Mutation("copy_action", 0.9, 0, 0.0).apply(t) == "a{{ 3 }}{{ 1 }}b{{ 2 }}c{{ 3 }}d"
    assert Mutation("move_action", 0.0, 0, 0.9).apply(t) == "ab{{ 2 }}c{{ 1 }}{{ 3 }}d"
    assert Mutation("move_action", 0.9, 0, 0.0).apply(t) == "a{{ 3 }}{{ 1 }}b{{ 2 }}cd"
    assert Mutation("drop_action", 0.5, 0, 0).apply("no actions") == "no actions"


def test_driver_builds_the_trees_lark_builds() -> None:
    """The parser's LALR loop runs Lark's tables and callbacks: on every corpus template, a
    mutated copy of each and a copy cut inside an action, it must give Lark's own tree, or
    fail on the same token as Lark."""
    from lark.exceptions import UnexpectedToken

    from gotmpl2jinja.syntax.lexer import _lark, _LexError, _NoToken
    from gotmpl2jinja.syntax.parser import _parser, _Unexpected

    lark, _ = _lark()
    driver, lexer = _parser()

    def outcome(run: Callable[[], object]) -> object:
        try:
            return run()
        except (UnexpectedToken, _Unexpected) as exc:
            where = None if exc.token.type == "$END" else exc.token.start_pos
            return ("unexpected", exc.token.type, where)
        except (_LexError, _NoToken) as exc:
            return ("lexer", type(exc).__name__, exc.offset)

    kinds = set()
    for index, source in enumerate(_SOURCES):
        mutated = Mutation("drop_action", (index * 7 % 10) / 10, 0, 0).apply(source)
        for text in (source, mutated, source + "{{ end", source + "{{ 1a }}"):
            expected = outcome(lambda: lark.parse(text))  # noqa: B023 - called at once
            got = outcome(lambda: driver.parse(iter(lexer.start(text)), len(text)))  # noqa: B023
            assert got == expected, text[:200]
            kinds.add(expected[0] if isinstance(expected, tuple) else "tree")
    assert kinds == {"tree", "unexpected", "lexer"}


@given(st.text(alphabet="ab\n\u00e9\u20ac\U0001f600\udcff", max_size=60), st.data())
def test_positions_are_go_byte_offsets(source: str, data: st.DataObject) -> None:
    """Node positions in Go's terms (byte offset, line, byte column), computed per line."""
    from gotmpl2jinja.syntax.position import _Where

    offset = data.draw(st.integers(0, len(source)))
    pos = _Where(source).pos(offset)
    line_start = source.rfind("\n", 0, offset) + 1
    assert pos.offset == len(source[:offset].encode("utf-8", "surrogatepass"))
    assert pos.line == source.count("\n", 0, offset) + 1
    assert pos.col == len(source[line_start:offset].encode("utf-8", "surrogatepass")) + 1


def test_deep_parentheses_are_a_clear_error() -> None:
    """A known limit, not Go's verdict: Go accepts 1000 nested parentheses (its limit is 10000)
    while the parser's recursion stops earlier; the user gets a sentence, not a traceback."""
    from gotmpl2jinja.ollama.reference import check_parse

    source = "{{ print " + "(" * 1000 + "1" + ")" * 1000 + " }}"
    assert check_parse(source).ok
    with pytest.raises(TemplateSyntaxError, match="nest too deeply") as info:
        parse(source, name="deep.gotmpl")
    assert str(info.value).startswith("deep.gotmpl: ")
    assert_agrees("{{ print " + "(" * 100 + "1" + ")" * 100 + " }}")
