"""Go's printing functions other than printf (`print`, `println`,
`html`, `js`, `urlquery`, `call`) and Ollama's (`json`, `currentDate`,
`yesterdayDate`, `toTypeScriptType`).

May depend on: `analysis`, `emit.collate`, `emit.values`, `syntax`.
"""

from __future__ import annotations

from collections.abc import Callable

from gotmpl2jinja.analysis import (
    GoType,
)
from gotmpl2jinja.emit.collate import OPTIONAL_MESSAGE_KEYS
from gotmpl2jinja.emit.values import (
    COMPARE,
    COND,
    GO_TYPE_NAMES,
    INTEGERS,
    JSON_MACROS,
    NIL_TYPES,
    Expr,
    _js_ascii,
    _query_escape,
    const_expr,
)
from gotmpl2jinja.syntax import nodes


class Printing:
    """Emitter methods for the printing and Ollama functions (a mixin of `Emitter`)."""

    def fn_print(self, args: list[Expr], node: nodes.Node) -> Expr:
        parts: list[Expr] = []
        for i, a in enumerate(args):
            if a.type == GoType.MIXED and GoType.INT not in a.alts:
                raise self.error("print of a variable holding a string or a struct: not "
                                 "supported", node)
            if i > 0 and a.type != GoType.STRING and args[i - 1].type != GoType.STRING:
                if {GoType.ANY, GoType.MIXED} & {a.type, args[i - 1].type}:
                    raise self.error("print spacing of a value whose Go type is known only at "
                                     "run time: not supported", node)
                parts.append(const_expr(" "))
            parts.append(self.text(a, node, sprint=True))
        return self.concat(parts)

    def fn_println(self, args: list[Expr], node: nodes.Node) -> Expr:
        parts: list[Expr] = []
        for i, a in enumerate(args):
            if i > 0:
                parts.append(const_expr(" "))
            parts.append(self.text(a, node, sprint=True))
        parts.append(const_expr("\n"))
        return self.concat(parts)

    def evaluated_text(self, args: list[Expr], node: nodes.Node, name: str) -> Expr:
        """evalArgs' text, which html, js and urlquery escape: one string as it is, anything
        else through fmt.Sprint (a nil becomes `<no value>` first, and a pointer the struct it
        points to, as printableValue makes them)."""
        if len(args) == 1 and args[0].type == GoType.STRING:
            return args[0]
        if len(args) == 1 and args[0].type not in GO_TYPE_NAMES \
                and not (args[0].type in NIL_TYPES and args[0].is_const):
            a = args[0]
            if a.type == GoType.ANY:  # a nil interface is <no value>, as printableValue says
                self.macros.add("print_value")
                return Expr(f"'<no value>' if {a.wrap(COMPARE)} is none else "
                            f"print_value({a.code})", GoType.STRING, COND, stable=a.stable)
            # printableValue takes the struct a pointer points to: template printing
            return self.text(a, node, sprint=a.type != GoType.MESSAGE)
        return self.sprint_of_scalars(args, node, name)

    def fn_html(self, args: list[Expr], node: nodes.Node) -> Expr:
        """Go's html: evalArgs' text, HTML-escaped."""
        text = self.evaluated_text(args, node, "html")
        if text.is_const:
            escaped = str(text.const)
            for raw, entity in (("&", "&amp;"), ("'", "&#39;"), ("<", "&lt;"), (">", "&gt;"),
                                ('"', "&#34;"), ("\x00", "\ufffd")):
                escaped = escaped.replace(raw, entity)
            return const_expr(escaped)
        self.macros.add("go_html")
        return Expr(f"go_html({text.code})", GoType.STRING, stable=text.stable, loop=text.loop)

    def sprint_of_scalars(self, args: list[Expr], node: nodes.Node, name: str) -> Expr:
        """evalArgs' text of strings, numbers, booleans and constant nils (`<no value>`, as
        printableValue makes a nil): fmt.Sprint of them; any other operand is refused."""
        parts: list[Expr] = []
        for a in args:
            if a.type in NIL_TYPES and a.is_const:
                parts.append(const_expr("<no value>"))
            elif a.type in GO_TYPE_NAMES:
                parts.append(a)
            else:
                raise self.error(f"{name} of a {a.type.value}: not supported", node)
        return self.fn_print(parts, node)

    def fn_js(self, args: list[Expr], node: nodes.Node) -> Expr:
        """Go's js (JSEscapeString of evalArgs' text): computed here for constants, a number's
        or boolean's text as it is, and any other text rune by rune at run time
        (runtime.go_escape_runes, with Go's table of printable characters)."""
        return self.escaped(args, node, "js", _js_ascii, lambda e, t: e,
                            ("go_escape_runes", ", 'js'"))

    def fn_urlquery(self, args: list[Expr], node: nodes.Node) -> Expr:
        """Go's urlquery (url.QueryEscape of evalArgs' text): computed here for constants, a
        number's `+` escaped, and any other text by its UTF-8 bytes at run time
        (runtime.go_query_escape)."""

        def at_run_time(e: Expr, t: GoType) -> Expr:
            if t != GoType.FLOAT:  # digits, `-`, true/false: nothing to escape
                return e
            self.macros.add("go_query_number")  # (an exponent's `+`)
            return Expr(f"go_query_number({e.code})", GoType.STRING, stable=e.stable,
                        loop=e.loop)

        return self.escaped(args, node, "urlquery", _query_escape, at_run_time,
                            ("go_query_escape", ""))

    def escaped(self, args: list[Expr], node: nodes.Node, name: str,
                constant: Callable[[str], str | None],
                at_run_time: Callable[[Expr, GoType], Expr],
                macro: tuple[str, str]) -> Expr:
        """evalArgs' text of `args` escaped: where it is one number or boolean, its text by
        `at_run_time`; where it is constant, here by `constant` (None: it cannot); else at run
        time by the runtime macro `macro` (its name, and the arguments after the text)."""
        if len(args) == 1 and args[0].type in (*INTEGERS, GoType.FLOAT, GoType.BOOL) \
                and not args[0].is_const:
            return at_run_time(self.text(args[0], node, sprint=True), args[0].type)
        if all(a.is_const and (a.type in GO_TYPE_NAMES or a.type in NIL_TYPES) for a in args):
            text = self.sprint_of_scalars(args, node, name)
            assert text.is_const
            result = constant(str(text.const))
            if result is not None:
                return const_expr(result)
        text = self.evaluated_text(args, node, name)
        self.macros.add(macro[0])
        return Expr(f"{macro[0]}({text.code}{macro[1]})", GoType.STRING, stable=text.stable,
                    loop=text.loop)

    def fn_call(self, args: list[Expr], node: nodes.Node) -> Expr:
        """No value of Ollama's data model is a function: Go's `call` always fails."""
        if not args:
            return self.raising("wrong number of args for call: want at least 1 got 0")
        return self.raising("error calling call: not a function")

    def fn_json(self, args: list[Expr], node: nodes.Node) -> Expr:
        if len(args) != 1:
            return self.raising(f"wrong number of args for json: want 1 got {len(args)}")
        a = args[0]
        if a.is_const:
            if a.type == GoType.NIL:
                return const_expr("null")
            if a.type == GoType.BOOL:
                return const_expr("true" if a.const else "false")
            if a.type in INTEGERS:
                return const_expr(str(a.const))
        if a.type == GoType.BOOL or a.type in INTEGERS:
            return self.text(a, node)
        if a.type in NIL_TYPES and "raise_exception(" not in a.code:
            return const_expr("null")  # (nil, whatever its code)
        if a.type == GoType.ARGS:
            self.macros.add("json_arguments")
            return Expr(f"json_arguments({a.code})", GoType.STRING)
        if a.type in (GoType.MESSAGE, GoType.MESSAGES):
            # every field of the struct is in the JSON: the collated messages must carry them
            self.message_fields.update(OPTIONAL_MESSAGE_KEYS)
        macro = JSON_MACROS.get(a.type)
        if macro is None:
            raise self.error(f"json of Go type {a.type.value}: not supported", node)
        self.macros.add(macro)
        return Expr(f"{macro}({a.code})", GoType.STRING)

    def fn_currentDate(self, args: list[Expr], node: nodes.Node) -> Expr:  # noqa: N802
        if any(a.type != GoType.STRING for a in args):
            return self.raising("currentDate takes string arguments")
        return self.evaluated_first(args, Expr("strftime_now('%Y-%m-%d')", GoType.STRING))

    def fn_yesterdayDate(self, args: list[Expr], node: nodes.Node) -> Expr:  # noqa: N802
        if any(a.type != GoType.STRING for a in args):
            return self.raising("yesterdayDate takes string arguments")
        self.macros.add("yesterday_date")
        return self.evaluated_first(args, Expr("yesterday_date()", GoType.STRING))

    def fn_toTypeScriptType(self, args: list[Expr], node: nodes.Node) -> Expr:  # noqa: N802
        if len(args) != 1:
            return self.raising("wrong number of args for toTypeScriptType: want 1 got "
                                f"{len(args)}")
        if args[0].type != GoType.PROPERTY:
            return self.evaluated_first(args, const_expr("any"))
        self.macros.add("typescript_type")
        return Expr(f"typescript_type({args[0].code})", GoType.STRING)
