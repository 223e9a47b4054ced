"""Go's `not`, `eq`, `ne`, `lt`, `le`, `gt`, `ge` by Go type,
including the comparisons Go refuses at run time.

May depend on: `analysis`, `emit.values`, `syntax`.
"""

from __future__ import annotations

from collections.abc import Callable

from gotmpl2jinja.analysis import (
    STRUCTS,
    GoType,
)
from gotmpl2jinja.emit.values import (
    AND,
    ARITH,
    ATOM,
    BASIC_KINDS,
    COMPARE,
    COMPARED_BY_NIL,
    COND,
    INCOMPARABLE_STRUCTS,
    INTEGERS,
    JSON_COMPARED,
    NIL_TESTS,
    NIL_TYPES,
    NON_BASIC,
    NOT,
    OR,
    Expr,
    const_expr,
)
from gotmpl2jinja.syntax import nodes


class Comparisons:
    """Emitter methods for `not` and the comparison functions (a mixin of `Emitter`)."""

    def fn_not(self, args: list[Expr], node: nodes.Node) -> Expr:
        if len(args) != 1:
            return self.raising(f"wrong number of args for not: want 1 got {len(args)}")
        return self.negate(self.truth(args[0]))

    def compare(self, op: str, a: Expr, b: Expr, node: nodes.Node) -> Expr:
        ordered = op in ("<", "<=", ">", ">=")
        types = {a.type, b.type}
        if types & NIL_TYPES:
            return self.compare_nil(op, a, b, node)
        if ordered and (types & NON_BASIC or types == {GoType.BOOL}):
            # lt (and le, gt, ge, which call it) takes only numbers and strings: Go fails on
            # a bool or on any value of another kind, before looking at the other operand
            return self.raising("invalid type for comparison")
        if not ordered and a.type == b.type and a.type in COMPARED_BY_NIL:
            return self.compare_by_nil(op, a, b)
        if not ordered and GoType.ANY in types and types <= JSON_COMPARED:
            return self.compare_json(op, a, b)
        if ordered and GoType.ANY in types and types <= JSON_COMPARED | {GoType.STRING}:
            return self.order_json(op, a, b)
        if a.type != b.type and types != INTEGERS:  # (an int and a uint8 compare by value)
            if types == {GoType.ANY, GoType.STRING} and not ordered:
                # a JSON null is Go's nil: equal to no string, and no error either
                any_side = a if a.type == GoType.ANY else b
                return Expr(f"{a.wrap(ARITH)} {op} {b.wrap(ARITH)} if {any_side.wrap(COMPARE)} "
                            f"is string else {'false' if op == '==' else 'true'} if "
                            f"{any_side.wrap(COMPARE)} is none else raise_exception("
                            "'incompatible types for comparison')", GoType.BOOL, COND)
            if not types & BASIC_KINDS or GoType.ANY in types:
                # Go compares two non-basic values by nil-ness, or fails on ones it cannot
                # compare (`eq .Tools .Messages`), and a decoded-JSON value by what it holds
                # (`eq .Items $.Messages` is true when both are nil): no Jinja value says which
                raise self.error(f"comparing values of Go types {a.type.value} and "
                                 f"{b.type.value}: not supported", node)
            return self.raising("incompatible types for comparison")
        if a.bytes_of is not None or b.bytes_of is not None:
            return self.compare_byte_length(op, a, b, node)
        if (a.cut is not None or b.cut is not None) and op in ("==", "!="):
            return self.compare_cut(op, a, b, node)
        if a.type == GoType.MESSAGE:
            return self.compare_messages(op, a, b, node)
        if a.type not in (GoType.STRING, *INTEGERS, GoType.FLOAT, GoType.BOOL):
            raise self.error(f"comparing values of Go type {a.type.value}: not supported", node)
        if a.is_const and b.is_const:
            result = {"==": a.const == b.const, "!=": a.const != b.const}.get(op)
            if result is None:
                result = eval(f"{a.const!r} {op} {b.const!r}")  # noqa: S307 - two literals
            return const_expr(bool(result))
        if a.revindex and op in ("==", ">") and b.const == 1:
            loop = next(loop for loop in self.loops if loop.ident == a.loop)
            if op == "==" and self.chat is not None and loop.node is self.chat.node:
                # the chat loop's last message is last only for a generation prompt: without
                # one it is rendered as one another message follows (emit.generation)
                last = "loop.last" if loop.size is None else f"{loop.index} + 1 == {loop.size}"
                return Expr(f"{last} and add_generation_prompt", GoType.BOOL, AND,
                            stable=True, loop=a.loop)
            if op == ">" and self.chat is not None and loop.node is self.chat.node \
                    and id(node) in self.chat.not_last_tests:
                last = "loop.last" if loop.size is None else f"{loop.index} + 1 == {loop.size}"
                return Expr(f"not ({last} and add_generation_prompt)", GoType.BOOL, NOT,
                            stable=True, loop=a.loop)
            if loop.size is None:
                return Expr("loop.last" if op == "==" else "not loop.last", GoType.BOOL,
                            ATOM if op == "==" else NOT, stable=True, loop=a.loop)
            return Expr(f"{loop.index} + 1 {'==' if op == '==' else '<'} {loop.size}",
                        GoType.BOOL, COMPARE, stable=True, loop=a.loop,
                        negated=f"{loop.index} + 1 {'!=' if op == '==' else '>='} {loop.size}")
        if ordered and a.type == GoType.STRING:
            return self.order_strings(op, a, b)
        inverse = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}[op]
        return Expr(f"{a.wrap(ARITH)} {op} {b.wrap(ARITH)}", GoType.BOOL, COMPARE,
                    stable=a.stable and b.stable, loop=a.loop or b.loop,
                    negated=f"{a.wrap(ARITH)} {inverse} {b.wrap(ARITH)}")

    def compare_messages(self, op: str, a: Expr, b: Expr, node: nodes.Node) -> Expr:
        """eq/ne of two messages: Go compares their pointers, so a message equals itself
        only (not another with equal contents): the same value here, or two whose places in
        the collated messages are both known at this point (a range's element, `index` of
        `.Messages`). Each is evaluated first (`index` may fail)."""
        usable = [p for p in (a.position, b.position) if p is not None
                  and self.readable_here(p.loop)]
        if a.code == b.code and a.stable:
            same = const_expr(op == "==")
        elif len(usable) == 2:
            pa, pb = usable
            same = Expr(f"{pa.wrap(ARITH)} {op} {pb.wrap(ARITH)}", GoType.BOOL, COMPARE,
                        stable=pa.stable and pb.stable, loop=pa.loop or pb.loop)
        else:
            raise self.error("comparing two messages: Go compares their pointers (the same "
                             "message of the list, not equal contents), and the translation "
                             "knows the place in the list of only a range's element or an "
                             "`index` of .Messages, read in that loop", node)
        return self.evaluated_first([a] if a == b else [a, b], same)

    def order_strings(self, op: str, a: Expr, b: Expr) -> Expr:
        """lt/le/gt/ge of two strings, bytewise as Go orders them (runtime go_less: string `<`
        fails on two engine families)."""
        self.macros.add("go_less")
        return self.ordered_by(op, a, b, lambda x, y: f"go_less({x.code}, {y.code})")

    def order_json(self, op: str, a: Expr, b: Expr) -> Expr:
        """lt/le/gt/ge where a side is a decoded-JSON value: Go orders two strings or two
        float64s by what the values hold, and fails on anything else (runtime go_lt_json)."""
        kinds = {GoType.ANY: "", GoType.STRING: "s", GoType.INT: "i", GoType.FLOAT: "f",
                 GoType.BOOL: "b"}
        self.macros.add("go_lt_json")
        return self.ordered_by(op, a, b, lambda x, y: (
            f"go_lt_json({x.code}, {y.code}, '{kinds[x.type]}', '{kinds[y.type]}')"))

    @staticmethod
    def ordered_by(op: str, a: Expr, b: Expr, less: Callable[[Expr, Expr], str]) -> Expr:
        """lt/le/gt/ge from `less(x, y)`, Jinja for a runtime macro's `T` (x before y) or `F`:
        le is not lt the other way round, gt is lt the other way round, ge is not lt."""
        first, second = (b, a) if op in (">", "<=") else (a, b)
        holds, fails = ("T", "F") if op in ("<", ">") else ("F", "T")
        call = less(first, second)
        return Expr(f"{call} == '{holds}'", GoType.BOOL, COMPARE,
                    stable=a.stable and b.stable, loop=a.loop or b.loop,
                    negated=f"{call} == '{fails}'")

    def compare_json(self, op: str, a: Expr, b: Expr) -> Expr:
        """eq/ne of a decoded-JSON value with another or with an int, float or bool: Go
        compares by the kind the JSON value holds (runtime go_eq_json), and fails on two kinds,
        on maps and slices, and on a float64 against an int."""
        json_side, other = (a, b) if a.type == GoType.ANY else (b, a)
        kind = {GoType.ANY: "", GoType.INT: "i", GoType.FLOAT: "f", GoType.BOOL: "b"}[other.type]
        self.macros.add("go_eq_json")
        call = f"go_eq_json({json_side.code}, {other.code}, '{kind}')"
        yes, no = ("T", "F") if op == "==" else ("F", "T")
        return Expr(f"{call} == '{yes}'", GoType.BOOL, COMPARE,
                    stable=a.stable and b.stable, loop=a.loop or b.loop,
                    negated=f"{call} == '{no}'")

    @staticmethod
    def nil_test(e: Expr) -> str:
        """The Jinja test for Go's nil of `e`, a slice or map of NIL_TESTS."""
        return NIL_TESTS[e.type].format(c=e.wrap(COMPARE), a=e.wrap(ATOM))

    def compare_by_nil(self, op: str, a: Expr, b: Expr) -> Expr:
        """eq/ne of two values of one Go type that is not comparable: a struct fails; slices
        and maps are compared by nil-ness when either is nil, and fail when neither is."""
        if a.type in INCOMPARABLE_STRUCTS:
            return self.raising("non-comparable type")
        nil_a, nil_b = self.nil_test(a), self.nil_test(b)
        fail = "raise_exception('non-comparable type')"
        if a.code == b.code:  # (one value: nil equals itself)
            return Expr(f"{'true' if op == '==' else 'false'} if {nil_a} else {fail}",
                        GoType.BOOL, COND, stable=a.stable, loop=a.loop)
        both = f"({nil_a}) and ({nil_b})"  # (one of them is nil: equal when both are)
        if op == "!=":
            both = f"not ({both})"
        return Expr(f"{both} if ({nil_a}) or ({nil_b}) else {fail}", GoType.BOOL, COND,
                    stable=a.stable and b.stable, loop=a.loop or b.loop)

    def compare_nil(self, op: str, a: Expr, b: Expr, node: nodes.Node) -> Expr:
        """Go's eq/ne with a nil operand (a missing key, no data, a JSON null): nil equals nil
        and differs from any string, number or bool without an error; ordering nil fails."""
        if op not in ("==", "!="):
            return self.raising("invalid type for comparison")
        other = b if a.type in NIL_TYPES else a
        if other.type in NIL_TYPES:
            return const_expr(op == "==")
        if other.type == GoType.ANY:
            return Expr(f"{other.wrap(COMPARE)} is {'' if op == '==' else 'not '}none",
                        GoType.BOOL, COMPARE, stable=other.stable, loop=other.loop)
        if other.type in NIL_TESTS:  # a slice or map equals nil exactly when it is nil
            test = self.nil_test(other)
            return Expr(test if op == "==" else f"not ({test})", GoType.BOOL,
                        OR if op == "==" else NOT, stable=other.stable, loop=other.loop)
        if other.type in STRUCTS and "raise_exception(" not in other.code:
            return const_expr(op == "!=")  # (a struct, or a pointer to one, is never nil)
        if other.type not in (GoType.STRING, *INTEGERS, GoType.FLOAT, GoType.BOOL):
            raise self.error(f"comparing nil with Go type {other.type.value}: not supported",
                             node)
        effect = None if other.is_const else self.effect(other)
        if effect is None:
            return const_expr(op == "!=")
        # never none, but evaluated: Go fails where evaluating it fails
        return Expr(f"({effect}) is {'' if op == '==' else 'not '}none", GoType.BOOL,
                    COMPARE, stable=other.stable, loop=other.loop)

    def fn_eq(self, args: list[Expr], node: nodes.Node) -> Expr:
        if len(args) < 2:
            return self.raising("missing argument for comparison")
        parts: list[Expr] = []
        for b in args[1:]:
            p = self.compare("==", args[0], b, node)
            if p.type == GoType.RAISE:
                # Go stops at the first equal operand, and fails at the first it cannot
                # compare only if none before it was equal
                if not parts:
                    return p
                before = self.any_of(parts)
                if before.is_const:
                    return const_expr(True) if before.const else p
                return Expr(f"true if {before.wrap(OR)} else {p.code}", GoType.BOOL, COND,
                            stable=before.stable)
            parts.append(p)
        return self.any_of(parts)

    @staticmethod
    def any_of(parts: list[Expr]) -> Expr:
        """Jinja's `or` of boolean Exprs, constants folded."""
        if len(parts) == 1:
            return parts[0]
        if any(p.is_const and p.const for p in parts):
            return const_expr(True)
        parts = [p for p in parts if not p.is_const]
        if not parts:
            return const_expr(False)
        return Expr(" or ".join(p.wrap(AND) for p in parts), GoType.BOOL, OR,
                    stable=all(p.stable for p in parts))

    def _binary(self, op: str, args: list[Expr], node: nodes.Node) -> Expr:
        if len(args) != 2:
            return self.raising(f"wrong number of args: want 2 got {len(args)}")
        return self.compare(op, args[0], args[1], node)

    def fn_ne(self, args: list[Expr], node: nodes.Node) -> Expr:
        return self._binary("!=", args, node)

    def fn_lt(self, args: list[Expr], node: nodes.Node) -> Expr:
        return self._binary("<", args, node)

    def fn_le(self, args: list[Expr], node: nodes.Node) -> Expr:
        return self._binary("<=", args, node)

    def fn_gt(self, args: list[Expr], node: nodes.Node) -> Expr:
        return self._binary(">", args, node)

    def fn_ge(self, args: list[Expr], node: nodes.Node) -> Expr:
        return self._binary(">=", args, node)
