"""The coverage table: each Go builtin, Ollama function and construct × each operand type.

Why: which constructs translate is a fact about the code, and a hand-kept list goes stale. Each
cell here is a one-line template (the construct applied to an operand of one Go type of
Ollama's data model, reached the way a template reaches it), put through the translator and,
when translated, verified against Go with `verify_template`. `docs/coverage.md` is this
module's `markdown()`, and `tests/test_coverage.py` regenerates it and fails on any change.

May depend on: analysis, emit, errors, verify.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from gotmpl2jinja.analysis import GoType
from gotmpl2jinja.emit import translate
from gotmpl2jinja.errors import Gotmpl2JinjaError, TemplateSyntaxError, TranslationError
from gotmpl2jinja.verify.harness import verify_template


@dataclass(frozen=True)
class Operand:
    """A value of one Go type, as a template reaches it: `before` + expression + `after`."""

    label: str
    go_type: str
    expr: str
    before: str = ""
    after: str = ""


_IN_MESSAGES = "{{ range .Messages }}"
_IN_CALLS = "{{ range .Messages }}{{ range .ToolCalls }}"
_IN_ARGS = "{{ range .Messages }}{{ range .ToolCalls }}{{ range $k, $v := .Function.Arguments }}"
_IN_TOOLS = "{{ range .Tools }}"
_IN_PROPS = "{{ range .Tools }}{{ range $k, $v := .Function.Parameters.Properties }}"

OPERANDS: tuple[Operand, ...] = (
    Operand("string", "string", ".Content", _IN_MESSAGES, "{{ end }}"),
    Operand("int", "int", "$i", "{{ range $i, $m := .Messages }}", "{{ end }}"),
    Operand("float", "float64", "1.5"),
    Operand("bool", "bool", ".IsThinkSet"),
    Operand("nil", "nil interface (a missing key)", ".Nothing"),
    Operand("JSON value", "any (a decoded tool-call argument)", "$v", _IN_ARGS,
            "{{ end }}{{ end }}{{ end }}"),
    Operand("arguments", "map (templateArgs)", ".Function.Arguments", _IN_CALLS,
            "{{ end }}{{ end }}"),
    Operand("messages", "[]*templateMessage", ".Messages"),
    Operand("message", "*templateMessage", ".", _IN_MESSAGES, "{{ end }}"),
    Operand("tool calls", "[]templateToolCall", ".ToolCalls", _IN_MESSAGES, "{{ end }}"),
    Operand("tool call", "templateToolCall", ".", _IN_CALLS, "{{ end }}{{ end }}"),
    Operand("tools", "templateTools", ".Tools"),
    Operand("tool", "templateTool", ".", _IN_TOOLS, "{{ end }}"),
    Operand("properties", "map (templateProperties)", ".Function.Parameters.Properties",
            _IN_TOOLS, "{{ end }}"),
    Operand("property", "api.ToolProperty", "$v", _IN_PROPS, "{{ end }}{{ end }}"),
)


@dataclass(frozen=True)
class Construct:
    """A row: `action` is a template action with `X` where the operand goes."""

    label: str
    action: str


CONSTRUCTS: tuple[Construct, ...] = (
    Construct("printing `{{ X }}`", "{{ X }}"),
    Construct("`if`", "{{ if X }}T{{ else }}F{{ end }}"),
    Construct("`with`", "{{ with X }}W{{ else }}F{{ end }}"),
    Construct("`with $x :=`",
              "{{ with $x := X }}W{{ if $x }}x{{ end }}{{ if . }}d{{ end }}"
              "{{ else }}F{{ if not $x }}n{{ end }}{{ end }}"),
    Construct("`if $x :=`",
              "{{ if $x := X }}T{{ if $x }}x{{ end }}"
              "{{ else }}F{{ if not $x }}n{{ end }}{{ end }}"),
    Construct("`range`", "{{ range X }}R{{ else }}E{{ end }}"),
    Construct("`and X \"c\"` printed", '{{ and X "c" }}'),
    Construct("`or X \"c\"` printed", '{{ or X "c" }}'),
    Construct("`not`", "{{ not X }}"),
    Construct("`len`", "{{ len X }}"),
    Construct("`index X 0`", "{{ index X 0 }}"),
    Construct("`slice X 1`", "{{ slice X 1 }}"),
    Construct("`eq X X`", "{{ eq X X }}"),
    Construct("`lt X X`", "{{ lt X X }}"),
    Construct("`print`", "{{ print X }}"),
    Construct("`println`", "{{ println X }}"),
    Construct("`printf \"%v\"`", '{{ printf "%v" X }}'),
    Construct("`printf \"%s\"`", '{{ printf "%s" X }}'),
    Construct("`printf \"%d\"`", '{{ printf "%d" X }}'),
    Construct("`printf \"%q\"`", '{{ printf "%q" X }}'),
    Construct("`printf \"%c\"`", '{{ printf "%c" X }}'),
    Construct("`printf \"%U\"`", '{{ printf "%U" X }}'),
    Construct("`printf \"%5.2f\"`", '{{ printf "%5.2f" X }}'),
    Construct("`printf \"%-6s.\"`", '{{ printf "%-6s." X }}'),
    Construct("`printf \"%x\"`", '{{ printf "%x" X }}'),
    Construct("`html`", "{{ html X }}"),
    Construct("`js`", "{{ js X }}"),
    Construct("`urlquery`", "{{ urlquery X }}"),
    Construct("`call`", "{{ call X }}"),
    Construct("`json`", "{{ json X }}"),
    Construct("`toTypeScriptType`", "{{ toTypeScriptType X }}"),
)

#: Variable scope: X held by a variable read, and assigned, across nested ranges and withs (a
#: Jinja `for` body sees the enclosing scope's names, keeps its own assignments: issue 41), X
#: itself under a nested range's dot, and `$` inside a block (a template: `$` is its argument).
SCOPES: tuple[Construct, ...] = (
    Construct("`$x := X` read in a nested `range`",
              "{{ $x := X }}{{ range $.Messages }}[{{ $x }}]{{ end }}"),
    Construct("`$x := X` read in a nested `with`",
              "{{ $x := X }}{{ with $.Messages }}[{{ $x }}]{{ end }}"),
    Construct("`$x := X` read two ranges deep",
              "{{ $x := X }}{{ range $.Messages }}{{ range $i, $c := .ToolCalls }}"
              "[{{ $x }}{{ $i }}]{{ end }}{{ end }}"),
    Construct("`$y = $x` in a nested `range`, `$y` read after",
              "{{ $x := X }}{{ $y := $x }}{{ range $.Messages }}{{ $y = $x }}{{ end }}{{ $y }}"),
    Construct("X in a nested `range` (its dot the element)",
              "{{ range $.Messages }}[{{ X }}]{{ end }}"),
    Construct("X in a nested `with` (its dot the value)",
              "{{ with $.Messages }}[{{ X }}]{{ end }}"),
    Construct("`$` in a `block` of X, in its nested `range`",
              '{{ block "b" X }}{{ range $r := 1 }}[{{ $ }}]{{ end }}{{ end }}'),
)

#: A pipeline ending in each builtin: Go passes the piped value as the last argument.
PIPELINES: tuple[Construct, ...] = tuple(
    Construct(f"`X | {call}`", f"{{{{ X | {call} }}}}") for call in (
        'and "c"', 'or ""', "not", "len", "index", "slice", "eq X", "ne X", "lt X", "le X",
        "gt X", "ge X", 'print "p"', "println", 'printf "%v"', "html", "js", "urlquery", "call",
        "json", "currentDate", "yesterdayDate", "toTypeScriptType"))

#: Field access Go evaluates only where it is reached: a failure there (`raise_exception`),
#: not a refusal of the whole template.
FIELDS_AT_RUN_TIME: tuple[Construct, ...] = (
    Construct("`(X).Foo` (no such field)", "{{ (X).Foo }}"),
    Construct("`(X).Function.Name`", "{{ (X).Function.Name }}"),
    Construct("`(X).Foo` reached for tool messages only",
              '{{ range $.Messages }}{{ if eq .Role "tool" }}{{ (X).Foo }}{{ end }}{{ end }}'),
)

#: The tables of docs/coverage.md: a title, what its rows are, its constructs.
GROUPS: tuple[tuple[str, str, tuple[Construct, ...]], ...] = (
    ("Builtins, functions and constructs", "construct", CONSTRUCTS),
    ("Variable scope", "scope", SCOPES),
    ("Pipelines ending in each builtin", "pipeline", PIPELINES),
    ("Field access that fails at run time", "field access", FIELDS_AT_RUN_TIME),
)

#: Functions without operands, one cell each.
NULLARY: tuple[Construct, ...] = (
    Construct("`currentDate`", "{{ currentDate }}"),
    Construct("`yesterdayDate`", "{{ yesterdayDate }}"),
)


@dataclass(frozen=True)
class Cell:
    """One template's fate: "exact" (translated, verified), "refused" (with the reason), or a
    bug: "diverges" (translated but not equal to Go), "malformed refusal" (not one line with
    its line and column); "not Go" is a cell Go's parser rejects."""

    template: str
    status: str
    detail: str = ""


#: Ends every cell that does not read `.Messages` itself: a template that never reads it is
#: rendered on Ollama's legacy path, where `.Tools` is empty and Ollama's functions are absent.
MESSAGES_PATH = "{{ if .Messages }}{{ end }}"


def cell_template(construct: Construct, operand: Operand | None) -> str:
    text = construct.action if operand is None else (
        operand.before + construct.action.replace("X", operand.expr) + operand.after)
    return text if ".Messages" in text else text + MESSAGES_PATH


_POSITION = re.compile(r"^template:\d+:\d+: ")
#: Go type names in a refusal, longest first, so that one reason groups all its operand types.
_TYPE_NAMES = re.compile("(?<![A-Za-z])(?:" + "|".join(re.escape(t.value) for t in sorted(
    GoType, key=lambda t: -len(t.value))) + ")(?![A-Za-z])")


def reason_class(reason: str) -> str:
    """A refusal with its Go type names replaced by `T` (the cell's column says which)."""
    return _TYPE_NAMES.sub("T", reason)


def check_cell(template: str, *, cases: int, engines: list[str] | None) -> Cell:
    """Translate one cell's template and verify it (`cases` random conversations after the
    one-message shapes)."""
    try:
        jinja = translate(template)
    except TemplateSyntaxError as exc:
        return Cell(template, "not Go", _POSITION.sub("", str(exc)))
    except TranslationError as exc:
        if not _POSITION.match(str(exc)) or "\n" in str(exc):  # every refusal: one line, L:C
            return Cell(template, "malformed refusal", str(exc))
        return Cell(template, "refused", _POSITION.sub("", str(exc)))
    try:
        result = verify_template(template, jinja, cases=cases, exhaustive=1, engines=engines,
                                 seed=len(template))
    except Gotmpl2JinjaError as exc:
        return Cell(template, "diverges", str(exc).splitlines()[0])
    if not result.ok:
        first = result.divergences[0]
        return Cell(template, "diverges", f"on {first.engine}")
    return Cell(template, "exact")


def table(*, cases: int = 10, engines: list[str] | None = None,
          progress: Callable[[str], None] | None = None,
          groups: Iterable[str] | None = None) -> dict[tuple[str, str], Cell]:
    """Every cell (of the GROUPS titled `groups`, and the nullary functions, when given),
    keyed (construct label, operand label; "—" for the nullary functions)."""
    cells: dict[tuple[str, str], Cell] = {}
    chosen = set(groups) if groups is not None else {title for title, _, _ in GROUPS}
    jobs: list[tuple[Construct, Operand | None]] = [
        (c, o) for title, _, group in GROUPS if title in chosen for c in group
        for o in OPERANDS] + [(c, None) for c in NULLARY]
    for number, (construct, operand) in enumerate(jobs, 1):
        template = cell_template(construct, operand)
        if progress:
            progress(f"[{number}/{len(jobs)}] {template}")
        cells[(construct.label, operand.label if operand else "—")] = check_cell(
            template, cases=cases, engines=engines)
    return cells


def _mark(cell: Cell, reasons: dict[str, int]) -> str:
    if cell.status == "exact":
        return "="
    if cell.status == "refused":
        number = reasons.setdefault(reason_class(cell.detail), len(reasons) + 1)
        return f"R{number}"
    return f"**{cell.status}**"


def markdown(cells: dict[tuple[str, str], Cell], command: str, engines: Iterable[str]) -> str:
    """The table as docs/coverage.md has it: `=` exact, `R<n>` refused for reason n."""
    reasons: dict[str, int] = {}
    head = ["construct", *(o.label for o in OPERANDS)]
    lines = [
        "# Coverage: Go builtins, Ollama functions, constructs, scopes and pipelines × operand "
        "types",
        "",
        f"Generated by `{command}` from the translator itself (`gotmpl2jinja.batch.coverage`);",
        "`tests/test_coverage.py` regenerates it and fails when it differs, so it cannot go",
        "stale.",
        "",
        "Each cell is a one-line template: the construct applied to an operand of one Go type",
        "of Ollama's data model, reached as a template reaches it (`.Content` inside `range",
        ".Messages`, `$v` ranging over a tool call's arguments, …), on Ollama's messages path",
        f"(a cell that does not read `.Messages` ends with `{MESSAGES_PATH}`). A translated",
        "cell is verified against Go (the Go reference renderer) on every one-message",
        f"conversation shape and random conversations, on: {', '.join(engines)}.",
        "",
        "`=` translated and verified (this includes Go failing — an execution error — exactly",
        "where the Jinja raises); `R<n>` refused at translation, for reason n below (with the",
        "line and column); **diverges** or **malformed refusal** would be a bug; **not Go** is",
        "a cell Go's parser rejects.",
        "",
        "The tables: each builtin and construct applied to X; X across variable scopes (a",
        "variable holding it read and assigned in nested ranges and withs, X under a nested",
        "dot, `$` inside a block); X piped into each builtin (Go passes it as the last",
        "argument); a field access on X that Go can fail on, only where it is reached.",
        "",
        "Operands: " + "; ".join(f"{o.label}: `{o.expr}` ({o.go_type})" for o in OPERANDS) + ".",
    ]
    for title, first, group in GROUPS:
        if (group[0].label, OPERANDS[0].label) not in cells:
            continue  # (a table left out of this run)
        lines += ["", f"## {title}", "", "| " + " | ".join([first, *head[1:]]) + " |",
                  "|" + "---|" * len(head)]
        for construct in group:
            row = [construct.label.replace("|", "\\|")] + [
                _mark(cells[(construct.label, o.label)], reasons) for o in OPERANDS]
            lines.append("| " + " | ".join(row) + " |")
    lines += ["", "## Functions without operands", "", "| function | result |", "|---|---|"]
    for construct in NULLARY:
        lines.append(f"| {construct.label} | {_mark(cells[(construct.label, '—')], reasons)} |")
    lines += ["", f"**{summary(cells)}**", "", "## Reasons for refusal", ""]
    if not reasons:
        lines.append("None: every cell translates and is verified.")
        return "\n".join(lines) + "\n"
    lines += ["(`T` stands for the operand's Go type.)", "",
              "| | reason | cells |", "|---|---|---|"]
    counts: dict[str, int] = {}
    for cell in cells.values():
        if cell.status == "refused":
            key = reason_class(cell.detail)
            counts[key] = counts.get(key, 0) + 1
    for reason, number in reasons.items():
        escaped = reason.replace("|", "\\|")
        lines.append(f"| R{number} | {escaped} | {counts[reason]} |")
    return "\n".join(lines) + "\n"


def summary(cells: dict[tuple[str, str], Cell]) -> str:
    """`N cells: E exact, R refused` (and any other kind, which would be a bug)."""
    exact = sum(cell.status == "exact" for cell in cells.values())
    refused = sum(cell.status == "refused" for cell in cells.values())
    other = len(cells) - exact - refused
    return (f"{len(cells)} cells: {exact} exact, {refused} refused"
            + (f", {other} diverging or not Go (see the table)" if other else "") + ".")
