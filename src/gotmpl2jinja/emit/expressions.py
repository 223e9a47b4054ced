"""Pipelines, commands, fields and text as typed Jinja
expressions, and Go's truth of each type.

May depend on: `analysis`, `emit.builtins` (and through it the other parts), `emit.collate`,
`emit.paths`, `emit.runtime`, `emit.values`, `syntax`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from gotmpl2jinja.analysis import (
    FIELDS,
    MAP_VALUES,
    ROOT_FIELDS,
    STRUCTS,
    UNMODELLED_FIELDS,
    GoType,
)
from gotmpl2jinja.emit import runtime
from gotmpl2jinja.emit.builtins import BUILTINS
from gotmpl2jinja.emit.collate import MESSAGE_DEFAULTS, OPTIONAL_MESSAGE_KEYS
from gotmpl2jinja.emit.gofmt import Verb, parse_printf
from gotmpl2jinja.emit.paths import FIM_FIELDS
from gotmpl2jinja.emit.runtime import item_or
from gotmpl2jinja.emit.values import (
    AND,
    ATOM,
    COMPARE,
    CONCAT,
    COND,
    INTEGERS,
    JSON_MACROS,
    NIL_TYPES,
    NOT,
    OR,
    Choice,
    Computed,
    Expr,
    _is_float_syntax,
    const_expr,
    go_float,
    quote,
)
from gotmpl2jinja.syntax import nodes

#: The functions whose result carries their string operands' text whole (so an address Go
#: prints in an operand is still in what they print): any other function consumes it, and so do
#: a printf precision and `slice` (but from a start of at most 3 to the end), which may keep
#: only an address's stable part (`[0x`).
_KEEP_TEXT = frozenset(("print", "println", "printf", "html", "js", "urlquery", "json"))


#: Runtime macros that print a value of these types as text/template does (struct syntax).
_STRUCT_PRINTS = {GoType.TOOL_CALL: "print_tool_call", GoType.TOOL_CALLS: "print_tool_calls",
                  GoType.CALL_FUNCTION: "print_tool_call_function"}
#: The same for the types that may hold an address (a nested property map's pointer).
_PROPERTY_PRINTS = {GoType.PROPERTY: "print_property",
                    GoType.PROPERTY_LIST: "print_property_list"}


def _keeps_digits(args: list[Expr]) -> bool:
    """Whether `slice` keeps every address's changing digits: no end, and a constant start of
    at most 3 (an address is `0x` and six or more hex digits, so at most `[0x` goes)."""
    return len(args) == 2 and args[1].is_const and isinstance(args[1].const, int) \
        and not isinstance(args[1].const, bool) and 0 <= args[1].const <= 3


def _cuts(args: list[Expr]) -> bool:
    """Whether printf's format (a constant, else unknown) may cut an operand: a precision, `*`."""
    fmt = args[0] if args else None
    if fmt is None or not fmt.is_const or not isinstance(fmt.const, str):
        return True
    return any(isinstance(item, Verb) and (item.precision is not None or item.star)
               for item in parse_printf(fmt.const))


class Expressions:
    """Emitter methods for pipelines, commands, fields and text (a mixin of `Emitter`)."""

    # --- pipelines --------------------------------------------------------------------------

    def pipeline(self, pipe: nodes.PipeNode) -> Expr:
        result: Expr | None = None
        for cmd in pipe.cmds:
            result = self.command(cmd, result)
        if result is None:
            raise self.error("empty pipeline", pipe)
        if result.type == GoType.NIL:
            # Go unwraps a pipeline's nil interface into the invalid value: a field of it (in a
            # variable, or `(.Foo).Bar`) is no value again, not a nil-pointer error
            return replace(result, type=GoType.NO_DATA)
        if result.type == GoType.ANY:  # the same at run time, for a nil decoded-JSON value
            return replace(result, unwrapped=True)
        return result

    def command(self, cmd: nodes.CommandNode, piped: Expr | None) -> Expr:
        head = cmd.args[0]
        if isinstance(head, nodes.IdentifierNode):
            return self.call(head.ident, cmd.args[1:], piped, cmd)
        if isinstance(head, nodes.NilNode):
            return self.raising("nil is not a command")  # Go parses it, and fails running it
        if len(cmd.args) > 1 or piped is not None:
            raise self.error("method calls with arguments are not supported", cmd)
        return self.value(head)

    def condition(self, pipe: nodes.PipeNode, node: nodes.Node) -> Expr:
        """The pipeline as an `if` condition (and/or/not kept as Jinja's own operators)."""
        if len(pipe.cmds) == 1 and not pipe.decl:
            return self.cond_command(pipe.cmds[0])
        return self.truth(self.pipeline(pipe))

    def cond_command(self, cmd: nodes.CommandNode) -> Expr:
        head = cmd.args[0]
        if isinstance(head, nodes.IdentifierNode) and head.ident in ("and", "or") \
                and len(cmd.args) >= 3:
            return self.logic(head.ident, cmd.args[1:], cmd, as_condition=True)
        if isinstance(head, nodes.IdentifierNode) and head.ident == "not" \
                and len(cmd.args) == 2:
            inner = self.cond_arg(cmd.args[1])
            return self.negate(inner)
        if len(cmd.args) == 1 and isinstance(head, nodes.PipeNode) and len(head.cmds) == 1 \
                and not head.decl:
            return self.cond_command(head.cmds[0])
        return self.truth(self.command(cmd, None))

    def cond_arg(self, arg: nodes.Node) -> Expr:
        if isinstance(arg, nodes.PipeNode) and len(arg.cmds) == 1 and not arg.decl:
            return self.cond_command(arg.cmds[0])
        return self.truth(self.value(arg))

    @staticmethod
    def negate(inner: Expr) -> Expr:
        if inner.is_const:
            return const_expr(not inner.const)
        if inner.negated is not None:
            return Expr(inner.negated, GoType.BOOL, COMPARE, stable=inner.stable,
                        loop=inner.loop, negated=inner.code)
        if inner.code.startswith("not ") and inner.prec == NOT:
            return Expr(inner.code[4:], GoType.BOOL, COMPARE, stable=inner.stable,
                        loop=inner.loop)
        return Expr(f"not {inner.wrap(NOT)}", GoType.BOOL, NOT, stable=inner.stable,
                    loop=inner.loop)

    # --- operands ---------------------------------------------------------------------------

    def value(self, node: nodes.Node) -> Expr:
        if isinstance(node, nodes.DotNode):
            if self.dot.type == GoType.ROOT:
                raise self.error("printing or passing the whole root map is not supported",
                                 node)
            return self.dot
        if isinstance(node, nodes.FieldNode):
            return self.fields(self.dot, node.ident, node)
        if isinstance(node, nodes.VariableNode):
            var = self.analysis.variable(node)
            if var.role == "root":
                base = Expr("", GoType.ROOT, stable=True)
            elif var.role == "template_arg":
                base = self.values[id(var)]
            else:
                bound = self.values.get(id(var))
                if bound is None:
                    raise self.error(f"{var.go_name} is used where it has no value", node)
                if not self.readable_here(bound.loop):
                    raise self.error(f"{var.go_name} read inside a nested loop", node)
                base = bound
                if base.type == GoType.INT and var.non_negative:
                    base = replace(base, non_negative=True)
            if len(node.ident) == 1 and base.type == GoType.ROOT:
                raise self.error("using `$` itself is not supported", node)
            return self.fields(base, node.ident[1:], node)
        if isinstance(node, nodes.ChainNode):
            return self.fields(self.value(node.node), node.field, node)
        if isinstance(node, nodes.StringNode):
            return const_expr(node.text)
        if isinstance(node, nodes.BoolNode):
            return const_expr(node.value)
        if isinstance(node, nodes.NumberNode):
            if node.is_float and _is_float_syntax(node.text):
                # Go's idealConstant: written with `.eEpP`, a constant is a float64 value
                # (`{{ 1e6 }}` prints 1e+06, `range 1e6` fails), even when it is integral
                return const_expr(node.float64)
            if node.is_int:
                return const_expr(node.int64)
            if node.is_float:
                return const_expr(node.float64)
            raise self.error(f"number {node.text}: not supported", node)
        if isinstance(node, nodes.NilNode):
            return Expr("none", GoType.NIL, const=None, is_const=True, stable=True)
        if isinstance(node, nodes.PipeNode):
            if node.decl:
                raise self.error("declaration inside parentheses: not supported", node)
            return self.pipeline(node)
        if isinstance(node, nodes.IdentifierNode):
            return self.call(node.ident, [], None, node)
        if isinstance(node, Computed) and node.expr is not None:
            return node.expr
        raise self.error(f"{type(node).__name__}: not supported here", node)

    def fields(self, base: Expr, names: list[str], node: nodes.Node) -> Expr:
        if base.type == GoType.ANY and base.unwrapped and base.choice is None:
            # a pipeline's nil (a variable, `with`'s or a template's dot, `(…)`): every field
            # of it is nil, where a field of a nil interface inside a chain fails
            chain = self.fields(replace(base, unwrapped=False), names, node)
            if chain.type != GoType.ANY:
                return chain
            return Expr(f"none if {base.wrap(COMPARE)} is none else {chain.wrap(OR)}",
                        GoType.ANY, COND, stable=chain.stable, loop=chain.loop)
        expr = base
        for name in names:
            expr = self.field(expr, name, node)
        return expr

    def field(self, base: Expr, name: str, node: nodes.Node) -> Expr:
        t = base.type
        if base.choice is not None:
            return self.lift(base.choice, lambda v: self.field(v, name, node), node)
        if t == GoType.RAISE:
            return base
        if t == GoType.ROOT:
            self.root_used.add(name)
            if name == "Response":
                return const_expr("")
            if self.mode == "fim":
                if name in FIM_FIELDS:
                    return Expr(FIM_FIELDS[name], GoType.STRING, stable=True)
                if name not in ("Think", "ThinkLevel", "IsThinkSet"):
                    return Expr("none", GoType.NIL, const=None, is_const=True, stable=True)
            if name in ROOT_FIELDS:
                code, ftype = ROOT_FIELDS[name]
                return Expr(code, ftype, stable=True, maybe_undefined=(ftype == GoType.TOOLS))
            return Expr("none", GoType.NIL, const=None, is_const=True, stable=True)
        if t == GoType.NIL:
            return self.raising(f"nil pointer evaluating interface {{}}.{name}")
        if t == GoType.NO_DATA:
            return base  # Go: a field of no data is no data again (`<no value>`)
        if t == GoType.MIXED:
            (struct,) = [a for a in base.alts if a != GoType.STRING]
            if struct not in STRUCTS:
                return self.raising(f"can't evaluate field {name} in type {struct.value}")
            on_struct = self.field(replace(base, type=struct, alts=()), name, node)
            fail = quote(f"template: can't evaluate field {name} in type string")
            return Expr(f"{on_struct.wrap(OR)} if {base.code} is mapping else "
                        f"raise_exception({fail})", on_struct.type, COND, stable=base.stable,
                        maybe_undefined=on_struct.maybe_undefined)
        if t in FIELDS and name in FIELDS[t]:
            info = FIELDS[t][name]
            if t == GoType.MESSAGE:
                self.message_fields.add(info.key)
            if info.type == GoType.PROPERTY_TYPE:
                # api.PropertyType is a []string the request gives as a string or a list
                raw = item_or(base.wrap(ATOM), info.key, "none")
                return Expr(f"[{raw}] if {raw} is string else ({raw} or [])", info.type, COND,
                            stable=base.stable, loop=base.loop, owner=base.code)
            if info.default is not None:
                code = item_or(base.wrap(ATOM), info.key, info.default)
            elif info.maybe_missing:
                code = item_or(base.wrap(ATOM), info.key, "none")
            else:
                code = f"{base.wrap(ATOM)}[{quote(info.key)}]"
            return Expr(code, info.type, stable=base.stable, loop=base.loop,
                        maybe_undefined=info.maybe_missing, owner=base.code)
        if name in UNMODELLED_FIELDS.get(t, set()):
            raise self.error(f".{name} of {t.value}: not supported", node)
        if t in (GoType.ARGS, GoType.PROPERTIES) and name != "String":
            # (a method comes before a key) the key's value; missingkey=zero makes a missing
            # one the zero value (nil; an empty api.ToolProperty)
            return self.index_one(base, const_expr(name), node)
        if t == GoType.ANY:  # (Go fails on a field of a nil: a JSON null or a missing key)
            return self.json_key(base, const_expr(name),
                                 f"can't evaluate field {name} in a non-map value")
        if name == "String" and t in (GoType.ARGS, GoType.TOOLS, GoType.PROPERTIES,
                                      GoType.PROPERTY_TYPE, GoType.TOOL):
            return self.text(base, node)
        if name == "ToTypeScriptType" and t == GoType.PROPERTY:
            self.macros.add("typescript_type")
            return Expr(f"typescript_type({base.code})", GoType.STRING, stable=base.stable)
        return self.raising(f"can't evaluate field {name} in type {t.value}")

    def concrete(self, e: Expr) -> Expr:
        """A possibly-absent map/slice as a value that is always there (nil ranges as empty;
        an empty one is falsy too, so `or` swaps it for an equal empty value)."""
        if not e.maybe_undefined:
            return e
        if e.code in self.truthy:
            return replace(e, maybe_undefined=False)
        empty = "{}" if e.type in MAP_VALUES else "[]"
        return Expr(f"{e.wrap(AND)} or {empty}", e.type, OR, stable=e.stable, loop=e.loop)

    # --- Go printing and truth --------------------------------------------------------------

    def text(self, e: Expr, node: nodes.Node | None, *, sprint: bool = False) -> Expr:
        """The string Go's printing of `e` gives (template print, or fmt.Sprint for `print`)."""
        t = e.type
        if e.choice is not None:
            return self.merge(tuple((test, self.text(v, node, sprint=sprint))
                                    for test, v in e.choice.branches), e.choice.truth, node)
        if t == GoType.RAISE:
            return e
        if t == GoType.STRING:
            return e
        if t == GoType.MIXED and (not sprint or GoType.INT in e.alts):
            # (Sprint prints a struct pointer as &{…}, but an int as template printing does)
            (struct,) = [a for a in e.alts if a != GoType.STRING]
            other = self.text(replace(e, type=struct, alts=()), node)
            return Expr(f"{e.code} if {e.code} is string else {other.wrap(COND)}",
                        GoType.STRING, COND, stable=e.stable)
        if t == GoType.MESSAGE and sprint:
            # fmt.Sprint prints the pointer itself: & and the struct syntax
            return self.concat([const_expr("&"), self.text(e, node)])
        if t == GoType.MESSAGE:
            # text/template prints the *templateMessage it points to, in Go struct syntax
            self.macros.add("print_tool_calls")
            role, content, thinking, calls, name, call_id = self.message_struct(e)
            return Expr(f"'{{' ~ {role} ~ ' ' ~ {content} ~ ' ' ~ {thinking} ~ ' [] ' ~ "
                        f"print_tool_calls({calls}) ~ ' ' ~ {name} ~ ' ' ~ "
                        f"{call_id} ~ '}}'", GoType.STRING, CONCAT, stable=e.stable)
        if t in _STRUCT_PRINTS:
            self.macros.add(_STRUCT_PRINTS[t])
            return Expr(f"{_STRUCT_PRINTS[t]}({e.code})", GoType.STRING)
        if e.is_const:
            if t == GoType.BOOL:
                return const_expr("true" if e.const else "false")
            if t in INTEGERS:
                return const_expr(str(e.const))
            if t == GoType.FLOAT:
                assert isinstance(e.const, float)
                return const_expr(go_float(e.const))
            if t == GoType.NIL:
                return const_expr("<nil>" if sprint else "<no value>")
            if t == GoType.NO_DATA:  # (fmt prints the nil a function receives for it)
                return const_expr("<nil>" if sprint else "<no value>")
        if t == GoType.BOOL:
            return Expr(f"'true' if {e.wrap(OR)} else 'false'", GoType.STRING, COND,
                        stable=e.stable, loop=e.loop)
        if t in INTEGERS:
            return Expr(f"{e.wrap(ATOM)}|string", GoType.STRING, ATOM, stable=e.stable,
                        loop=e.loop)
        if t == GoType.TOOLS:
            self.macros.add("json_tools")
            return Expr(f"json_tools({e.code})", GoType.STRING)
        if t == GoType.PROPERTIES:
            self.macros.add("print_properties")
            return Expr(f"print_properties({e.code})", GoType.STRING)
        if t == GoType.IMAGES:  # always nil (images are outside the contract)
            return const_expr("[]")
        if t in (GoType.ARGS, GoType.ANYS, GoType.STRINGS):
            if t != GoType.ARGS:
                e = self.concrete(e)  # (a nil slice prints as an empty one)
            if t == GoType.ARGS:
                self.macros.add("print_arguments")
                return Expr(f"print_arguments({e.code})", GoType.STRING)
            if t == GoType.STRINGS:
                return Expr(f"'[' ~ {e.wrap(ATOM)}|join(' ') ~ ']'", GoType.STRING, CONCAT)
            self.macros.add("print_value")
            return Expr(f"print_value({e.code})", GoType.STRING)
        if t in (GoType.TOOL, GoType.TOOL_FUNCTION, GoType.PARAMETERS):
            macro = JSON_MACROS[t]
            self.macros.add(macro)
            return Expr(f"{macro}({e.code})", GoType.STRING)
        if t == GoType.ANY:
            self.macros.add("print_value")
            if sprint:  # fmt.Sprint of a nil interface is <nil>, not template's <no value>
                a = e.wrap(COMPARE)
                return Expr(f"'<nil>' if {a} is none else print_value({e.code})", GoType.STRING,
                            COND, stable=e.stable, loop=e.loop)
            return Expr(f"print_value({e.code})", GoType.STRING)
        if t == GoType.FLOAT:
            self.macros.add("print_number")
            return Expr(f"print_number({e.code})", GoType.STRING)
        if t == GoType.PROPERTY_TYPE and e.owner is not None:
            self.macros.add("print_property_type")
            return Expr(f"print_property_type({e.owner})", GoType.STRING)
        if t in NIL_TYPES and "raise_exception(" not in e.code:  # nil, whatever its code
            return const_expr("<nil>" if sprint else "<no value>")
        if t == GoType.MESSAGES:
            # fmt prints each *templateMessage of the slice as its memory address: only an
            # empty (or nil) one prints the same bytes twice; elsewhere the contract's failure
            c = self.concrete(e).wrap(ATOM)
            return self.printed_only(
                f"'[]' if {c}|length == 0 else {self.raising(runtime.ADDRESS).code}", node)
        if t in _PROPERTY_PRINTS:  # (Go struct syntax; a nested map's pointer: the failure)
            self.macros.add(_PROPERTY_PRINTS[t])
            return self.printed_only(f"{_PROPERTY_PRINTS[t]}({e.code})", node)
        raise self.error(f"printing a value of Go type {t.value} is not supported", node)

    def message_struct(self, e: Expr) -> tuple[str, str, str, str, str, str]:
        """The codes of the fields of the *templateMessage `e` that Go prints, in its order
        (Role Content Thinking, Images — nil here —, ToolCalls ToolName ToolCallID): all of
        them are read, so the collated messages carry every optional key."""
        self.message_fields.update(OPTIONAL_MESSAGE_KEYS)
        m = e.wrap(ATOM)
        thinking, calls, name, call_id = (item_or(m, key, MESSAGE_DEFAULTS[key])
                                          for key in OPTIONAL_MESSAGE_KEYS)
        return f"{m}['role']", f"{m}['content']", thinking, calls, name, call_id

    def truth(self, e: Expr) -> Expr:
        """An expression whose Jinja truth is Go's truth of `e`."""
        self.consumed(e)
        t = e.type
        if e.is_const:
            return const_expr(bool(e.const))
        if e.bytes_of is not None:
            return self.truth(e.bytes_of)  # no bytes exactly when no characters
        if e.cut is not None:  # non-empty bytes, a cut character's included
            self.macros.add("go_slice_equals")
            return Expr(f"go_slice_equals({', '.join(e.cut)}, '') == 'F'", GoType.BOOL, COMPARE,
                        stable=e.stable, loop=e.loop,
                        negated=f"go_slice_equals({', '.join(e.cut)}, '') == 'T'")
        if e.choice is not None:
            return e.choice.truth
        if t in STRUCTS and "raise_exception(" in e.code:
            # always true in Go, but evaluating it may fail (`index .Messages 1`): evaluate it
            return Expr(f"{e.wrap(COMPARE)} is not none", GoType.BOOL, COMPARE,
                        stable=e.stable, loop=e.loop)
        if t in STRUCTS or t == GoType.ROOT:
            return const_expr(True)
        # minja takes an empty mapping as true: a map's truth is spelled as its length
        if t in MAP_VALUES:
            a = e.wrap(ATOM)
            return replace(e, code=f"({a} and {a}|length > 0)", type=GoType.BOOL, prec=ATOM,
                           negated=None)
        if t == GoType.ANY:
            a = e.wrap(ATOM)
            return replace(e, code=f"({a}|length > 0 if {a} is mapping else {a})",
                           type=GoType.BOOL, prec=ATOM, negated=None)
        if e.prec <= COND:  # `{% if a if b else c %}` does not parse
            return replace(e, code=f"({e.code})", prec=ATOM, negated=None)
        return e

    # --- functions --------------------------------------------------------------------------

    def call(self, name: str, arg_nodes: list[nodes.Node], piped: Expr | None,
             node: nodes.Node) -> Expr:
        if name in ("and", "or"):
            if piped is None:
                return self.logic(name, list(arg_nodes), node, as_condition=False)
            return self.piped_logic(name, arg_nodes, piped, node)
        args = [self.value(a) for a in arg_nodes]
        if piped is not None:
            args.append(piped)
        for a in args:
            if a.type == GoType.RAISE:
                return a
        return self.apply(name, args, node)

    def apply(self, name: str, args: list[Expr], node: nodes.Node) -> Expr:
        """Go's function `name` on translated arguments (lifted over an and/or CHOICE)."""
        for i, a in enumerate(args):
            if a.choice is not None:
                return self.lift(a.choice, lambda v, i=i: self.apply(
                    name, [*args[:i], v, *args[i + 1:]], node), node)
        for a in args:
            if a.type == GoType.RAISE:
                return a
        if name not in ("not", "print") and any(a.type == GoType.MIXED for a in args):
            raise self.error(f"{name} of a variable holding values of several Go types: "
                             "not supported", node)
        handler = BUILTINS.get(name)
        if handler is None:
            raise self.error(f"function {name!r}: not supported", node)
        if name not in _KEEP_TEXT and name != "slice" \
                or name == "slice" and not _keeps_digits(args) \
                or name == "printf" and _cuts(args):
            for a in args:  # (a cut may keep only the stable part of an address: `[0x`)
                self.consumed(a)
        result: Expr = handler(self, args, node)
        return result

    def lift(self, choice: Choice, step: Callable[[Expr], Expr], node: nodes.Node) -> Expr:
        """`step` applied to each branch of an and/or CHOICE, merged again; Go's truth of the
        result is that of the branch taken, so it is recomputed from the branches."""
        branches = tuple((test, step(v)) for test, v in choice.branches)
        return self.merge(branches, None, node)
