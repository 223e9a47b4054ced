"""What a condition proves: `and`/`or` as values and tests, and the
string prefixes a branch knows (so byte rules can be exact).

May depend on: `analysis`, `emit.values`, `errors`, `syntax`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from gotmpl2jinja.analysis import (
    MAP_VALUES,
    SLICE_ELEMENTS,
    GoType,
)
from gotmpl2jinja.emit.values import (
    AND,
    ATOM,
    COND,
    NIL_TYPES,
    OR,
    Choice,
    Computed,
    Expr,
    _command_args,
    _is_ident,
    const_expr,
    quote,
)
from gotmpl2jinja.errors import TranslationError
from gotmpl2jinja.syntax import nodes


class Knowledge:
    """Emitter methods for `and`/`or` and known prefixes (a mixin of `Emitter`)."""

    def merge(self, branches: tuple[tuple[str | None, Expr], ...], truth: Expr | None,
              node: nodes.Node) -> Expr:
        """One Expr for "the first branch whose test holds, else the last": a conditional when
        the branches share a Go type (an execution error fits any), else a CHOICE."""
        kinds = {v.type for _, v in branches if v.type != GoType.RAISE}
        if len(branches) == 1:
            return branches[0][1]
        raises = any(v.type == GoType.RAISE for _, v in branches)
        if len(kinds) <= 1 and not (raises and kinds & NIL_TYPES):
            # (a nil is handled as the constant it is: next to an execution error it stays a
            # branch of its own, or the error would be lost)
            result = branches[-1][1]
            for test, v in reversed(branches[:-1]):
                result = Expr(f"{v.wrap(OR)} if {test} else {result.wrap(COND)}",
                              next(iter(kinds)) if kinds else GoType.RAISE, COND,
                              stable=all(x.stable for _, x in branches),
                              maybe_undefined=any(x.maybe_undefined for _, x in branches))
            return result
        if truth is None:
            truth = self.truth(branches[-1][1])
            for test, v in reversed(branches[:-1]):
                t = self.truth(v)
                truth = Expr(f"{t.wrap(OR)} if {test} else {truth.wrap(COND)}", GoType.TRUTH,
                             COND, stable=t.stable and truth.stable)
            truth = replace(truth, code=f"({truth.code})", prec=ATOM) \
                if truth.prec <= COND else truth
        names = ", ".join(sorted(k.value for k in kinds))
        error = self.error(f"an and/or of operands of several Go types ({names}) used this "
                           "way: not supported", node)
        return Expr(self.refused(error), GoType.CHOICE, stable=truth.stable,
                    choice=Choice(branches, truth))

    def logic(self, name: str, arg_nodes: list[nodes.Node], node: nodes.Node, *,
              as_condition: bool) -> Expr:
        """Go's short-circuit and/or. As a condition: Jinja's and/or on truths. As a value:
        the deciding operand (only when all operands share one Go type)."""
        if len(arg_nodes) < 1:
            return self.raising(f"wrong number of args for {name}: want at least 1 got 0")
        jinja_op, prec = (" and ", AND) if name == "and" else (" or ", OR)
        truths: list[Expr] = []
        values: list[Expr] = []
        saved_facts = list(self.facts)
        with self.knowing({}):
            return self._logic(name, arg_nodes, node, as_condition, jinja_op, prec, truths,
                               values, saved_facts)

    def _logic(self, name: str, arg_nodes: list[nodes.Node], node: nodes.Node,
               as_condition: bool, jinja_op: str, prec: int, truths: list[Expr],
               values: list[Expr], saved_facts: list[tuple[str, int]]) -> Expr:
        operands: list[nodes.Node | tuple[Expr, str, bool]] = []
        i = 0
        while i < len(arg_nodes):
            prefix = self.prefix_test(arg_nodes[i], arg_nodes[i + 1]) \
                if i + 1 < len(arg_nodes) else None
            if prefix is not None:
                operands.append(prefix)
                i += 2
            else:
                operands.append(arg_nodes[i])
                i += 1
        for arg in operands:
            if isinstance(arg, tuple):
                c = self.starts_with(*arg)
                v: Expr | None = c
                if arg[2] == (name == "or"):
                    # later operands are evaluated only where the string has the prefix
                    self.learn_prefix(arg[0], arg[1])
            else:
                v = self.value(arg) if not as_condition else None
                c = self.cond_arg(arg) if as_condition else self.truth(v)  # type: ignore[arg-type]
            if c.is_const and not truths:
                # a constant operand decides or passes straight on
                if (name == "and") != bool(c.const):
                    self.facts = saved_facts
                    return c if as_condition or v is None else v
                continue
            if c.is_const and (name == "and") == bool(c.const) \
                    and (as_condition or arg is not operands[-1]):
                continue  # (the last operand is Go's value when every other one passes on)
            truths.append(c)
            if v is not None:
                values.append(v)
            if name == "and" and not isinstance(arg, tuple):
                self.learn(arg)
        self.facts = saved_facts
        if not truths:
            if as_condition or isinstance(operands[-1], tuple):
                return const_expr(name == "and")
            return self.value(operands[-1])
        code = jinja_op.join(c.wrap(prec + 1) for c in truths)
        cond = Expr(code, GoType.TRUTH, prec if len(truths) > 1 else truths[0].prec,
                    stable=all(c.stable for c in truths))
        if as_condition:
            return cond if len(truths) > 1 else truths[0]
        if len(values) == 1:
            return values[0]
        types = {v.type for v in values}
        if types == {GoType.BOOL}:
            return Expr(code, GoType.BOOL, prec, stable=cond.stable)
        # value: the first operand that decides, else the last (a CHOICE when their Go types
        # differ: each keeps its own printing, truth and functions)
        branches = tuple(
            (c.wrap(OR) if name == "or" else self.negate(c).wrap(OR), v)
            for v, c in zip(values[:-1], truths[:-1], strict=True)) + ((None, values[-1]),)
        return self.merge(branches, cond if len(truths) > 1 else truths[0], node)

    def piped_logic(self, name: str, arg_nodes: list[nodes.Node], piped: Expr,
                    node: nodes.Node) -> Expr:
        """`X | and …`/`X | or …`: Go evaluates X first and passes it as the last operand,
        Go's value where no other operand decides (whatever its truth), evaluated anyway."""
        if piped.type == GoType.RAISE:
            return piped
        result = self.logic(name, [*arg_nodes, Computed(expr=piped, pos=node.pos)], node,
                            as_condition=False)
        if self.effect(piped) is None:
            return result
        if result.choice is not None:
            return replace(result, choice=Choice(
                tuple((test, self.evaluated_first([piped], v))
                      for test, v in result.choice.branches),
                self.evaluated_first([piped], result.choice.truth)))
        return self.evaluated_first([piped], result)

    def readable_here(self, loop_id: int | None) -> bool:
        """Whether an expression tied to the loop `loop_id` (its index, a message's position)
        reads the same here: in that loop, or in a loop nested in it when it counts with a
        variable of its own (Jinja's `loop` object would be the nested loop's)."""
        if loop_id is None:
            return True
        for depth, loop in enumerate(reversed(self.loops)):
            if loop.ident == loop_id:
                return depth == 0 or loop.size is not None
        return False

    def learn(self, arg: nodes.Node) -> None:
        """Record `gt (len X) n` / `ge (len X) n` so a later `index X k` needs no bounds check."""
        if not isinstance(arg, nodes.PipeNode) or len(arg.cmds) != 1:
            return
        args = arg.cmds[0].args
        if len(args) != 3 or not isinstance(args[0], nodes.IdentifierNode):
            return
        op = args[0].ident
        if op not in ("gt", "ge") or not isinstance(args[2], nodes.NumberNode):
            return
        left = args[1]
        if not (isinstance(left, nodes.PipeNode) and len(left.cmds) == 1):
            return
        inner = left.cmds[0].args
        if len(inner) != 2 or not isinstance(inner[0], nodes.IdentifierNode) \
                or inner[0].ident != "len":
            return
        try:
            coll = self.value(inner[1])
        except TranslationError:
            return
        if coll.type not in SLICE_ELEMENTS and coll.type not in MAP_VALUES:
            return
        bound = args[2].int64 if op == "gt" else args[2].int64 - 1
        self.facts.append((self.length(coll).code, bound))

    # --- byte-exact strings ------------------------------------------------------------------
    #
    # Go's `len` and `slice` on a string count UTF-8 bytes; Jinja counts characters (minja and
    # llama.cpp count bytes), so neither is portable in general. They are exact where a string
    # is known to start with an ASCII prefix P (n bytes = n characters on every engine):
    #   `and (ge (len X) n) (eq (slice X 0 n) "P")` is X.startswith(P) (Go's `and` stops before
    #   the slice when X is shorter), and `or (lt (len X) n) (ne (slice X 0 n) "P")` its negation;
    #   where that test held, `slice X k` (k <= n) is X[k:], `slice X i j` (j <= n) is P[i:j],
    #   `len X >= k` is true for k <= n and X|length > n for k = n + 1 (one more byte iff one
    #   more character), `len X == n` is X == P. Every string starts with the empty prefix, so
    #   comparing `len X` with 0 is always exact. Anything else is refused.

    def prefix_test(self, first: nodes.Node, second: nodes.Node) -> tuple[Expr, str, bool] | None:
        """(X, P, negated) when `first second` are the two operands of a prefix test."""
        a, b = _command_args(first), _command_args(second)
        if a is None or b is None or len(a) != 3 or len(b) != 3 \
                or not isinstance(a[0], nodes.IdentifierNode) \
                or not isinstance(b[0], nodes.IdentifierNode) or b[0].ident not in ("eq", "ne"):
            return None
        length, count = _command_args(a[1]), a[2]
        if length is None or len(length) != 2 or not _is_ident(length[0], "len") \
                or not isinstance(count, nodes.NumberNode) or not count.is_int:
            return None
        sliced, literal = b[1], b[2]
        if isinstance(sliced, nodes.StringNode):
            sliced, literal = literal, sliced
        parts = _command_args(sliced)
        if not isinstance(literal, nodes.StringNode) or parts is None or len(parts) != 4 \
                or not _is_ident(parts[0], "slice"):
            return None
        start, end, prefix = parts[2], parts[3], literal.text
        if not (isinstance(start, nodes.NumberNode) and start.is_int and start.int64 == 0
                and isinstance(end, nodes.NumberNode) and end.is_int
                and end.int64 == len(prefix) and prefix and prefix.isascii()):
            return None
        bound = {"ge": count.int64, "gt": count.int64 + 1, "lt": count.int64,
                 "le": count.int64 + 1}.get(a[0].ident)
        negated = a[0].ident in ("lt", "le")
        if bound != len(prefix) or negated != (b[0].ident == "ne"):
            return None
        try:
            x, y = self.value(length[1]), self.value(parts[1])
        except TranslationError:
            return None
        if x.type != GoType.STRING or y.type != GoType.STRING or x.code != y.code:
            return None
        return x, prefix, negated

    def starts_with(self, x: Expr, prefix: str, negated: bool) -> Expr:
        code = f"{x.wrap(ATOM)}.startswith({quote(prefix)})"
        test = Expr(code, GoType.BOOL, ATOM, stable=x.stable, loop=x.loop,
                    negated=f"not {code}")
        return self.negate(test) if negated else test

    def learn_prefix(self, x: Expr, prefix: str) -> None:
        """From here on (in the current `knowing` scope) X starts with `prefix`."""
        if len(prefix) > len(self.prefixes.get(x.code, "")):
            self.prefixes[x.code] = prefix

    def known_prefix(self, x: Expr) -> str:
        return self.prefixes.get(x.code, "")

    @contextmanager
    def knowing(self, facts: dict[str, str]) -> Iterator[None]:
        """Prefix facts added for a branch, and everything learnt inside it dropped after."""
        saved = dict(self.prefixes)
        for code, prefix in facts.items():
            if len(prefix) > len(self.prefixes.get(code, "")):
                self.prefixes[code] = prefix
        try:
            yield
        finally:
            self.prefixes = saved

    def prefix_guards(self, pipe: nodes.PipeNode, *, holds: bool) -> dict[str, str]:
        """Prefix facts where the `if` condition `pipe` is true (`holds`) or false: a prefix
        test among the operands of an `and` that is true, or of an `or` that is false."""
        if pipe.decl or len(pipe.cmds) != 1:
            return {}
        return self._guards(pipe.cmds[0].args, holds)

    def _guards(self, args: list[nodes.Node], holds: bool) -> dict[str, str]:
        while len(args) == 1 and _command_args(args[0]) is not None:
            args = _command_args(args[0]) or []
        if not args or not isinstance(args[0], nodes.IdentifierNode):
            return {}
        op, operands = args[0].ident, args[1:]
        if op != ("and" if holds else "or"):
            return {}
        facts: dict[str, str] = {}
        i = 0
        while i < len(operands):
            test = self.prefix_test(operands[i], operands[i + 1]) \
                if i + 1 < len(operands) else None
            if test is not None:
                if test[2] != holds:
                    facts[test[0].code] = test[1]
                i += 2
                continue
            inner = _command_args(operands[i])
            if inner is not None:
                facts.update(self._guards(inner, holds))
            i += 1
        return facts
