"""Hypothesis strategies that write well-formed Go templates over Ollama's data model.

Why a generator: the corpus and the hand-written cases cover the templates people wrote; the
translator's promise is about every template. These strategies reach the combinations nobody
wrote: every construct of the grammar (text, comments, actions, pipelines, if/else if/else,
range with and without variables (declared, or assigned with `=`) and else (which sees them),
with/else, break/continue, define/template/block, variables declared, reassigned and
shadowed), every field of every struct at every level
(taken from `analysis.FIELDS`, so a new field is generated the day it is modelled), every
builtin and Ollama function with operands of every type the data model gives, trim markers,
and text full of Go and Jinja metacharacters.

"Well-formed" means Go's parser accepts it (only defined functions, variables declared before
use, break/continue only inside range); it does not mean Go renders it without an error, and
many generated templates do fail in Go on some conversations: the Jinja must raise there too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

from hypothesis import strategies as st

from gotmpl2jinja.analysis import (
    FIELDS,
    MAP_VALUES,
    SLICE_ELEMENTS,
    UNMODELLED_FIELDS,
    GoType,
)

#: Fields of the root map: the messages path's, the fill-in-the-middle/legacy ones, and keys
#: that exist nowhere (a missing key is a value too: `<no value>`, nil).
ROOT: dict[str, GoType | None] = {
    "Messages": GoType.MESSAGES, "System": GoType.STRING, "Tools": GoType.TOOLS,
    "Think": GoType.BOOL, "ThinkLevel": GoType.STRING, "IsThinkSet": GoType.BOOL,
    "Prompt": GoType.STRING, "Suffix": GoType.STRING, "Response": GoType.STRING,
    "Foo": None, "Content": None,
}

#: Text between actions: Jinja's and Go's metacharacters, quotes, escapes, line breaks, chat
#: tokens, non-ASCII. Never `{{` (it would open a Go action) and never a trailing `{`.
TEXT_FRAGMENTS = (
    "a", "Hi", " ", "  ", "\n", "\n\n", "\t", "\r\n", "{%", "%}", "{#", "#}", "}}", "}", "{ ",
    "-%}", "{%-", "'", '"', "\\", "\\n", "<|im_start|>", "<|im_end|>\n", "é", "→", "\u2028",
    "${x}", "{'", "raise_exception", "none", "{% endfor %}", "\x00",
)
#: Content of Go string literals (quoted with json.dumps, which Go reads back the same).
STRING_VALUES = ("", "user", "assistant", "system", "tool", "X", "U", "raw", "medium", "a b",
                 "{{", "}}", "{%", "#}", "'", '"', "\\", "\n", "é", "<|im_end|>")
PRINTF_FORMATS = ("%s", "%v", "%d", "%q", "%t", "%s|%v", "x%%y", "%5s", "%-3v", "%x", "%T",
                  "<%s>", "%!", "%s %s", "%5d", "%-05d|", "%+x", "%#o", "%08.3X", "%.0d",
                  "%5t", "%05t", "%O", "%#b", "% d %d", "%.d", "%5.", "%5T", "%#v", "%+v",
                  "%.2s", "%-5.1v|", "%06s", "%c", "%U", "%#q", "%+q", "% x", "%-4c|",
                  "%#U", "%05q", "%# X", "%[2]v|%[1]s", "%[0]d", "%#g", "%#.1x",
                  "%+#8.3e|", "%0+6.1f|")
#: Functions and their arities (Ollama's FuncMap plus Go's builtins).
FUNCTIONS: dict[str, tuple[int, int]] = {
    "and": (1, 3), "or": (1, 3), "not": (1, 1), "eq": (2, 3), "ne": (2, 2), "lt": (2, 2),
    "le": (2, 2), "gt": (2, 2), "ge": (2, 2), "len": (1, 1), "index": (1, 3),
    "slice": (1, 3), "print": (0, 3), "println": (0, 2), "printf": (1, 3), "json": (1, 1),
    "currentDate": (0, 0), "yesterdayDate": (0, 0), "toTypeScriptType": (1, 1),
    "html": (1, 1), "js": (1, 1), "urlquery": (1, 1), "call": (1, 2),
}
#: What a call gives, where it is known (None: depends on the operands).
RESULTS: dict[str, GoType | None] = {
    "not": GoType.BOOL, "eq": GoType.BOOL, "ne": GoType.BOOL, "lt": GoType.BOOL,
    "le": GoType.BOOL, "gt": GoType.BOOL, "ge": GoType.BOOL, "len": GoType.INT,
    "print": GoType.STRING, "println": GoType.STRING, "printf": GoType.STRING,
    "json": GoType.STRING, "currentDate": GoType.STRING, "yesterdayDate": GoType.STRING,
    "toTypeScriptType": GoType.STRING, "html": GoType.STRING, "js": GoType.STRING,
    "urlquery": GoType.STRING,
}
MAX_DEPTH = 3


@dataclass(frozen=True)
class Scope:
    """What the template sees here: `.`'s type (None: unknown), the variables in scope with
    their types, whether a range encloses it (break/continue), and the nesting depth."""

    dot: GoType | None = GoType.ROOT
    variables: tuple[tuple[str, GoType | None], ...] = (("$", GoType.ROOT),)
    in_range: bool = False
    depth: int = 0
    names: tuple[str, ...] = ("x", "y", "i", "v", "m")

    def with_var(self, name: str, t: GoType | None) -> Scope:
        return replace(self, variables=(*self.variables, (name, t)))

    def deeper(self, **changes: object) -> Scope:
        return replace(self, depth=self.depth + 1, **changes)  # type: ignore[arg-type]


@dataclass
class Term:
    """A generated operand: its Go source and the Go type it has (None when unknown)."""

    code: str
    type: GoType | None
    simple: bool = True  # a single token (no parentheses needed as an argument)

    def arg(self) -> str:
        return self.code if self.simple else f"({self.code})"


@dataclass
class Defines:
    """Definitions the template calls (`{{ template "t0" … }}`), appended at its end."""

    bodies: list[str] = field(default_factory=list)
    count: int = 0  # names given so far (blocks define theirs in place)


def _fields_of(t: GoType | None) -> list[tuple[str, GoType | None]]:
    if t == GoType.ROOT:
        return list(ROOT.items())
    if t in FIELDS:
        unmodelled = [(name, None) for name in sorted(UNMODELLED_FIELDS.get(t, ()))]
        return [(name, info.type) for name, info in FIELDS[t].items()] + unmodelled \
            + [("Foo", None)]
    return [("Foo", None)]


@st.composite
def field_chain(draw: st.DrawFn, scope: Scope) -> Term:
    """`.A.B`, `$.A`, `$x.A.B` or `.`/`$x` alone: every field at every level."""
    starts: list[tuple[str, GoType | None]] = [(".", scope.dot)]
    starts += [(name, t) for name, t in scope.variables]
    start, t = draw(st.sampled_from(starts))
    code = "" if start == "." else start
    steps = draw(st.integers(0, 3))
    for _ in range(steps):
        name, t = draw(st.sampled_from(_fields_of(t)))
        code += "." + name
    if not code:
        code = "."
    if code == "$" or (code == "." and scope.dot == GoType.ROOT):
        # the whole root map prints as a Go map; keep it for a field most of the time
        name, t = draw(st.sampled_from(list(ROOT.items())))
        code = ("$." if code == "$" else ".") + name
    return Term(code, t)


@st.composite
def literal(draw: st.DrawFn, nil: bool = False) -> Term:
    kind = draw(st.sampled_from(["string", "raw", "int", "bool", "float"]
                                + (["nil"] if nil else [])))
    if kind == "string":
        return Term(json.dumps(draw(st.sampled_from(STRING_VALUES)), ensure_ascii=False),
                    GoType.STRING)
    if kind == "raw":
        return Term("`" + draw(st.sampled_from(["", "a\nb", "{{x}}", "\\n", "%}"])) + "`",
                    GoType.STRING)
    if kind == "int":
        value = draw(st.sampled_from([0, 1, 2, 3, -1, 7]))
        return Term(str(value), GoType.INT, simple=value >= 0)
    if kind == "bool":
        return Term(draw(st.sampled_from(["true", "false"])), GoType.BOOL)
    if kind == "float":
        return Term(draw(st.sampled_from(["1.5", "0.0", "1e6", "2.0"])), GoType.FLOAT)
    return Term("nil", GoType.NIL)


def _call_result(name: str, args: list[Term]) -> GoType | None:
    if name in RESULTS:
        return RESULTS[name]
    if name in ("and", "or"):
        kinds = {a.type for a in args}
        return kinds.pop() if len(kinds) == 1 else None
    if name == "index" and args:
        t = args[0].type
        for _ in args[1:]:
            if t in SLICE_ELEMENTS:
                t = SLICE_ELEMENTS[t][0]
            elif t in MAP_VALUES:
                t = MAP_VALUES[t][0]
            else:
                return None
        return t
    if name == "slice" and args:
        return args[0].type
    return None


@st.composite
def call(draw: st.DrawFn, scope: Scope, level: int) -> Term:
    """A function call with operands of any type (collections first for index/slice/len)."""
    name = draw(st.sampled_from(sorted(FUNCTIONS)))
    low, high = FUNCTIONS[name]
    count = draw(st.integers(low, high))
    args = [draw(term(scope, level + 1, nil=True)) for _ in range(count)]
    if name in ("index", "slice") and args:
        args[1:] = [draw(st.one_of(literal(), term(scope, level + 1)))
                    if i else Term(str(draw(st.sampled_from([0, 1, 2]))), GoType.INT)
                    for i, _ in enumerate(args[1:])]
    if name == "printf":
        fmt = Term(json.dumps(draw(st.sampled_from(PRINTF_FORMATS))), GoType.STRING)
        args = [fmt, *args[1:]]
    code = " ".join([name, *(a.arg() for a in args)])
    return Term(code, _call_result(name, args), simple=False)


@st.composite
def term(draw: st.DrawFn, scope: Scope, level: int = 0, nil: bool = False) -> Term:
    """An operand: a field chain, a literal, a call, or a pipeline (deeper levels are simpler)."""
    options = [field_chain(scope), field_chain(scope), literal(nil=nil)]
    if level < 2:
        options += [call(scope, level), pipeline(scope, level)]
    return draw(st.one_of(*options))


@st.composite
def pipeline(draw: st.DrawFn, scope: Scope, level: int = 0) -> Term:
    """`X | f a`: the value piped in as the last argument (of any builtin, `and`/`or` too)."""
    first = draw(st.one_of(field_chain(scope), call(scope, level + 1)))
    name = draw(st.sampled_from(["len", "print", "printf", "json", "not", "html", "index",
                                 "eq", "slice", "urlquery", "and", "or", "js", "println",
                                 "lt", "ne", "toTypeScriptType", "call"]))
    extra = ""
    if name == "printf":
        extra = " " + json.dumps(draw(st.sampled_from(PRINTF_FORMATS)))
    elif name in ("eq", "index", "lt", "ne"):
        extra = " " + draw(term(scope, 2)).arg()
    elif name in ("and", "or"):
        extra = "".join(" " + draw(term(scope, 2, nil=True)).arg()
                        for _ in range(draw(st.integers(0, 2))))
    result = RESULTS.get(name)
    return Term(f"{first.code} | {name}{extra}", result, simple=False)


def _open(draw: st.DrawFn) -> str:
    return "{{- " if draw(st.integers(0, 4)) == 0 else "{{ "


def _close(draw: st.DrawFn) -> str:
    return " -}}" if draw(st.integers(0, 4)) == 0 else " }}"


def _action(draw: st.DrawFn, body: str) -> str:
    return _open(draw) + body + _close(draw)


@st.composite
def text(draw: st.DrawFn) -> str:
    out = "".join(draw(st.lists(st.sampled_from(TEXT_FRAGMENTS), min_size=1, max_size=4)))
    return out + " " if out.endswith("{") else out


@st.composite
def statements(draw: st.DrawFn, scope: Scope, defines: Defines) -> str:
    """A list of statements; variables declared here stay in scope for the following ones."""
    out: list[str] = []
    for _ in range(draw(st.integers(0, 4 if scope.depth < 2 else 2))):
        kinds = ["text", "text", "print", "print", "declare", "comment"]
        if any(name not in ("$",) for name, _ in scope.variables):
            kinds.append("assign")
        if scope.depth < MAX_DEPTH:
            kinds += ["if", "range", "range", "with", "template"]
        if scope.in_range:
            kinds += ["break", "continue"]
        kind = draw(st.sampled_from(kinds))
        if kind == "text":
            out.append(draw(text()))
        elif kind == "comment":
            body = "/* " + draw(st.sampled_from(["c", "#}", "{%", "\n"])) + " */"
            out.append("{{- " + body + " -}}" if draw(st.booleans()) else "{{" + body + "}}")
        elif kind == "print":
            out.append(_action(draw, draw(term(scope)).code))
        elif kind == "declare":
            name = "$" + draw(st.sampled_from(scope.names))
            value = draw(term(scope))
            out.append(_action(draw, f"{name} := {value.code}"))
            scope = scope.with_var(name, value.type)  # a new one, or shadowing the old
        elif kind == "assign":
            names = [n for n, _ in scope.variables if n != "$"]
            name = draw(st.sampled_from(names))
            value = draw(term(scope))
            out.append(_action(draw, f"{name} = {value.code}"))
        elif kind in ("break", "continue"):
            out.append(_action(draw, kind))
            break  # what follows in this list is unreachable anyway
        elif kind == "if":
            out.append(draw(if_statement(scope, defines)))
        elif kind == "with":
            out.append(draw(with_statement(scope, defines)))
        elif kind == "range":
            out.append(draw(range_statement(scope, defines)))
        elif kind == "template":
            out.append(draw(template_call(scope, defines)))
    return "".join(out)


@st.composite
def branch_head(draw: st.DrawFn, scope: Scope) -> tuple[str, Term, Scope]:
    """The pipeline of an `if`/`with`, sometimes declaring a variable (`$x := …`), which Go
    keeps in scope up to the `end`, else branches included; and the scope after it."""
    value = draw(term(scope))
    if draw(st.integers(0, 3)) == 0:
        name = "$" + draw(st.sampled_from(scope.names))
        return f"{name} := {value.code}", value, scope.with_var(name, value.type)
    return value.code, value, scope


@st.composite
def with_statement(draw: st.DrawFn, scope: Scope, defines: Defines) -> str:
    """`with X`, `with $x := X`, with `else with` links and an optional `else`."""
    head, value, scope = draw(branch_head(scope))
    out = _action(draw, "with " + head) + draw(statements(scope.deeper(dot=value.type), defines))
    for _ in range(draw(st.integers(0, 3)) // 2):
        head, value, scope = draw(branch_head(scope))
        out += _action(draw, "else with " + head)
        out += draw(statements(scope.deeper(dot=value.type), defines))
    if draw(st.booleans()):
        out += _action(draw, "else") + draw(statements(scope.deeper(), defines))
    return out + _action(draw, "end")


@st.composite
def if_statement(draw: st.DrawFn, scope: Scope, defines: Defines) -> str:
    head, _, scope = draw(branch_head(scope))
    out = _action(draw, "if " + head)
    out += draw(statements(scope.deeper(), defines))
    for _ in range(draw(st.integers(0, 2))):
        head, _, scope = draw(branch_head(scope))
        out += _action(draw, "else if " + head)
        out += draw(statements(scope.deeper(), defines))
    if draw(st.booleans()):
        out += _action(draw, "else") + draw(statements(scope.deeper(), defines))
    return out + _action(draw, "end")


@st.composite
def range_statement(draw: st.DrawFn, scope: Scope, defines: Defines) -> str:
    collections = [(c, t) for c, t in _collections(scope)]
    choice = draw(st.sampled_from(collections)) if collections else None
    if choice is None or draw(st.integers(0, 5)) == 0:
        over = draw(st.one_of(term(scope), literal()))
        code, over_type, elem, key = over.code, over.type, None, None
    else:
        code, t = choice
        over_type = t
        if t in SLICE_ELEMENTS:
            elem, key = SLICE_ELEMENTS[t][0], GoType.INT
        else:
            elem, key = MAP_VALUES[t][0], GoType.STRING
    decl = draw(st.sampled_from(["", "one", "two"]))
    inner = scope.deeper(dot=elem, in_range=True)
    otherwise = scope.deeper()  # the else sees the range's variables: Go binds them to `over`
    declared = {name for name, _ in scope.variables}
    head = "range "
    if decl == "one":
        name = "$" + draw(st.sampled_from(scope.names))
        # now and then `=` on a variable declared before (the translator refuses it)
        op = "=" if name in declared and draw(st.integers(0, 7)) == 0 else ":="
        head += f"{name} {op} "
        inner = inner.with_var(name, elem)
        otherwise = otherwise.with_var(name, over_type)
    elif decl == "two":
        a, b = draw(st.lists(st.sampled_from(scope.names), min_size=2, max_size=2, unique=True))
        op = "=" if {"$" + a, "$" + b} <= declared and draw(st.integers(0, 7)) == 0 else ":="
        head += f"${a}, ${b} {op} "
        inner = inner.with_var("$" + a, key).with_var("$" + b, elem)
        otherwise = otherwise.with_var("$" + a, over_type).with_var("$" + b, over_type)
    out = _action(draw, head + code) + draw(statements(inner, defines))
    if draw(st.integers(0, 3)) == 0:
        out += _action(draw, "else") + draw(statements(otherwise, defines))
    return out + _action(draw, "end")


def _collections(scope: Scope) -> list[tuple[str, GoType]]:
    """Field chains (one or two steps) from `.` and the variables that are slices or maps."""
    found: list[tuple[str, GoType]] = []
    starts: list[tuple[str, GoType | None]] = [("", scope.dot), *scope.variables]
    for start, t in starts:
        if t in SLICE_ELEMENTS or t in MAP_VALUES:
            found.append((start or ".", t))  # type: ignore[arg-type]
        for name, ft in _fields_of(t):
            if ft in SLICE_ELEMENTS or ft in MAP_VALUES:
                found.append((f"{start}.{name}", ft))  # type: ignore[arg-type]
            for name2, ft2 in _fields_of(ft):
                if ft2 in SLICE_ELEMENTS or ft2 in MAP_VALUES:
                    found.append((f"{start}.{name}.{name2}", ft2))  # type: ignore[arg-type]
    return found


@st.composite
def template_call(draw: st.DrawFn, scope: Scope, defines: Defines) -> str:
    """`{{ template "tN" X }}` (or `{{ block … }}`) with its definition generated for X."""
    arg = draw(st.one_of(field_chain(scope), literal(nil=True)))
    body_scope = Scope(dot=arg.type, depth=scope.depth + 1)
    body = draw(statements(body_scope, defines))
    name = f"t{defines.count}"
    defines.count += 1
    if draw(st.integers(0, 3)) == 0:
        return _action(draw, f'block "{name}" {arg.arg()}') + body + _action(draw, "end")
    defines.bodies.append(_action(draw, f'define "{name}"') + body + _action(draw, "end"))
    return _action(draw, f'template "{name}" {arg.arg()}')


@st.composite
def go_templates(draw: st.DrawFn) -> str:
    """A whole well-formed Go template (messages or legacy path, as the fields it names say)."""
    defines = Defines()
    body = draw(statements(Scope(), defines))
    return body + "".join(defines.bodies)
