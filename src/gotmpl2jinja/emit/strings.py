"""Go's byte semantics of strings on every engine: len, index, slice
and comparisons of lengths, exact where the bytes are known.

May depend on: `analysis`, `emit.values`, `syntax`.
"""

from __future__ import annotations

from dataclasses import replace

from gotmpl2jinja.analysis import (
    MAP_VALUES,
    SLICE_ELEMENTS,
    STRUCTS,
    GoType,
)
from gotmpl2jinja.emit.values import (
    ARITH,
    ATOM,
    COMPARE,
    CONCAT,
    COND,
    INTEGERS,
    NIL_TYPES,
    Expr,
    const_expr,
    quote,
)
from gotmpl2jinja.syntax import nodes

#: Operand types `index` can never use as a position (Go's indexArg takes integers only).
_NEVER_AN_INDEX = (GoType.FLOAT, GoType.BOOL, GoType.NIL)


class Strings:
    """Emitter methods for len, index, slice and byte lengths (a mixin of `Emitter`)."""

    def compare_byte_length(self, op: str, a: Expr, b: Expr, node: nodes.Node) -> Expr:
        """`len X` (bytes) against an integer constant, exact only near X's known prefix."""
        if a.bytes_of is None:
            a, b = b, a
            op = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
        x = a.bytes_of
        assert x is not None
        prefix = self.known_prefix(x)
        n = len(prefix)
        counted = Expr(f"{a.wrap(COMPARE)} {op} {b.wrap(COMPARE)}", GoType.BOOL, COMPARE,
                       stable=a.stable and b.stable, loop=a.loop or b.loop)
        if b.bytes_of is not None or not b.is_const or not isinstance(b.const, int) \
                or isinstance(b.const, bool):
            return counted  # the byte count itself (go_len), against whatever b is
        m = b.const
        if op in ("==", "!="):
            if m < n:
                return const_expr(op == "!=")
            if m > n:
                return counted
            equal = Expr(f"{x.wrap(ARITH)} == {quote(prefix)}", GoType.BOOL, COMPARE,
                         stable=x.stable, loop=x.loop,
                         negated=f"{x.wrap(ARITH)} != {quote(prefix)}")
            return equal if op == "==" else self.negate(equal)
        at_least, negated = {">=": (m, False), ">": (m + 1, False), "<": (m, True),
                             "<=": (m + 1, True)}[op]
        if at_least <= n:
            result = const_expr(True)
        elif at_least == n + 1:
            result = Expr(f"{x.wrap(ATOM)}|length > {n}", GoType.BOOL, COMPARE,
                          stable=x.stable, loop=x.loop, negated=f"{x.wrap(ATOM)}|length <= {n}")
        else:
            return counted
        return self.negate(result) if negated else result

    @staticmethod
    def slice_bounds(bounds: list[Expr]) -> list[Expr]:
        """`slice`'s offsets, a uint8 among them as an int (Go's indexArg takes any integer;
        every other operand fails there)."""
        return [replace(b, type=GoType.INT) if b.type == GoType.UINT8 else b for b in bounds]

    def slice_string(self, s: Expr, bounds: list[Expr], node: nodes.Node) -> Expr:
        """`slice` of a string: byte offsets, exact inside a known ASCII prefix."""
        if not bounds:
            return s
        bounds = self.slice_bounds(bounds)
        if len(bounds) > 3:
            return self.raising(f"too many slice indexes: {len(bounds)}")
        if len(bounds) == 3:
            return self.raising("cannot 3-index slice a string")
        if any(b.type != GoType.INT for b in bounds):
            return self.raising("cannot index slice/array with a non-integer")
        if not all(b.is_const for b in bounds):
            return self.cut_string(s, bounds)
        offsets = [int(b.const) for b in bounds]  # type: ignore[call-overload]
        if s.is_const:
            data = str(s.const).encode("utf-8")
            start, end = offsets[0], offsets[1] if len(offsets) == 2 else len(data)
            if not 0 <= start <= end <= len(data):
                return self.raising("slice index out of range")
            try:
                return const_expr(data[start:end].decode("utf-8"))
            except UnicodeDecodeError:
                raise self.error("slice cuts a UTF-8 character of the string in two: Go "
                                 "prints bytes that are not UTF-8", node) from None
        prefix = self.known_prefix(s)
        if len(offsets) == 2 and 0 <= offsets[0] <= offsets[1] <= len(prefix):
            return const_expr(prefix[offsets[0]:offsets[1]])
        if len(offsets) == 1 and 0 <= offsets[0] <= len(prefix):
            if offsets[0] == 0:
                return s
            return Expr(f"{s.wrap(ATOM)}[{offsets[0]}:]", GoType.STRING, ATOM, stable=s.stable,
                        loop=s.loop)
        return self.cut_string(s, bounds)

    def cut_string(self, s: Expr, bounds: list[Expr]) -> Expr:
        """`slice` of a string at byte offsets the translator cannot place: the go_slice
        macro finds them at run time (and fails where Go would print a cut character)."""
        self.macros.add("go_slice")
        base, start = s.code, bounds[0].code
        end = bounds[1].code if len(bounds) == 2 else "none"
        if s.cut is not None:
            base, start, end = self.recut(s.cut, bounds)
        return Expr(f"go_slice({base}, {start}, {end})", GoType.STRING,
                    stable=s.stable and all(b.stable for b in bounds),
                    loop=s.loop or next((b.loop for b in bounds if b.loop), None),
                    cut=(base, start, end))

    def recut(self, cut: tuple[str, str, str], bounds: list[Expr]) -> tuple[str, str, str]:
        """A slice of a go_slice, as one slice of its string: Go prints only the last cut (the
        one before may split a character), at the sum of the offsets. Go checks the first
        slice's range, then the second's against the first's length; where one fails, the
        start is -1, so every go_slice macro fails there as Go does."""
        base, i, j = cut
        k = bounds[0].code
        checks = [f"({i}) >= 0", f"({k}) >= 0"]
        if len(bounds) == 2:
            end = f"({i}) + ({bounds[1].code})"
            if j != "none":  # (j none: go_slice checks the end against the string's length)
                self.macros.add("go_len")
                checks += [f"{end} <= ({j})", f"({j}) <= (go_len({base})|int)"]
        else:
            end = j  # (go_slice checks i + k <= j <= the length)
        # (no `-1` literal: llama.cpp's parser has no unary minus there)
        return base, f"(({i}) + ({k}) if {' and '.join(checks)} else 0 - 1)", end

    def compare_cut(self, op: str, a: Expr, b: Expr, node: nodes.Node) -> Expr:
        """`eq`/`ne` of a go_slice: a cut inside a character equals no string (its bytes are
        not UTF-8), so the comparison needs no failure there, only Go's out of range."""
        if a.cut is None:
            a, b = b, a
        if b.cut is not None or b.type != GoType.STRING:
            raise self.error("comparing a slice of a string with another slice: not "
                             "supported", node)
        assert a.cut is not None
        self.macros.add("go_slice_equals")
        s, i, j = a.cut
        call = f"go_slice_equals({s}, {i}, {j}, {b.code})"
        return Expr(f"{call} {'==' if op == '==' else '!='} 'T'", GoType.BOOL, COMPARE,
                    stable=a.stable and b.stable, loop=a.loop or b.loop,
                    negated=f"{call} {'!=' if op == '==' else '=='} 'T'")

    def length(self, coll: Expr) -> Expr:
        if coll.slice_of is not None:
            base, start = coll.slice_of
            if self.is_loop_index_of(base, start):
                loop = self.loops[-1]
                code = "loop.revindex" if loop.size is None else f"{loop.size} - {loop.index}"
                return Expr(code, GoType.INT, ARITH, stable=True, loop=loop.ident,
                            revindex=True)
        return Expr(f"{self.concrete(coll).wrap(ATOM)}|length", GoType.INT, ATOM,
                    stable=coll.stable, loop=coll.loop, non_negative=True)

    def is_loop_index_of(self, base: Expr, start: Expr) -> bool:
        return bool(self.loops) and start.code == self.loops[-1].index \
            and start.loop == self.loops[-1].ident \
            and base.code == self.loops[-1].collection.code

    def fn_len(self, args: list[Expr], node: nodes.Node) -> Expr:
        if len(args) != 1:
            return self.raising(f"wrong number of args for len: want 1 got {len(args)}")
        a = args[0]
        if a.type == GoType.STRING:
            if a.is_const:
                return const_expr(len(str(a.const).encode("utf-8")))
            if a.known_bytes is not None:
                return a.known_bytes
            if a.cut is not None:  # (its bytes, not a string: a cut character counts too)
                self.macros.add("go_slice_len")
                return Expr(f"go_slice_len({', '.join(a.cut)})|int", GoType.INT, ATOM,
                            stable=a.stable, loop=a.loop, non_negative=True)
            # Go counts UTF-8 bytes; the engines count code points, UTF-16 units or bytes, so
            # the runtime counts them itself (comparisons near a known prefix stay cheaper)
            self.macros.add("go_len")
            return Expr(f"go_len({a.code})|int", GoType.INT, ATOM, stable=a.stable, loop=a.loop,
                        non_negative=True, bytes_of=a)
        if a.type in SLICE_ELEMENTS or a.type in MAP_VALUES:
            return self.length(a)
        if a.type == GoType.ANY:
            return self.json_length(a, node)
        return self.raising(f"len of type {a.type.value}")

    def json_length(self, a: Expr, node: nodes.Node) -> Expr:
        """`len` of a decoded-JSON value, known only at run time: a string's UTF-8 bytes, a
        list's or an object's size; Go fails on a number, a bool and nil."""
        c = a.wrap(COMPARE)
        text = self.fn_len([replace(a, type=GoType.STRING, maybe_undefined=False)], node)
        size = self.length(a)
        fails = self.raising(f"len of type {a.type.value}")
        return self.merge(((f"{c} is string", text),
                           (f"{c} is none or {c} is boolean or {c} is number", fails),
                           (None, size)), None, node)

    def fn_index(self, args: list[Expr], node: nodes.Node) -> Expr:
        if not args:
            raise self.error("index needs an argument", node)
        item = args[0]
        if item.type in NIL_TYPES:
            return self.raising("index of untyped nil")
        for key in args[1:]:
            item = self.index_one(item, key, node)
        return item

    def index_one(self, coll: Expr, key: Expr, node: nodes.Node) -> Expr:
        if coll.type == GoType.RAISE:  # (Go fails evaluating the operand first)
            return coll
        if key.type == GoType.UINT8 and (coll.type in SLICE_ELEMENTS
                                         or coll.type in (GoType.STRING, GoType.ANY)):
            key = replace(key, type=GoType.INT)  # (Go's indexArg takes any integer)
        if coll.type in SLICE_ELEMENTS:
            if key.type != GoType.INT:
                return self.raising("cannot index slice with a non-integer")
            elem_type = SLICE_ELEMENTS[coll.type][0]
            base, offset = coll, key
            if coll.slice_of is not None:
                base, start = coll.slice_of
                if key.is_const and key.const == 0:
                    offset = start
                else:
                    offset = Expr(f"{start.wrap(ARITH)} + {key.wrap(CONCAT)}", GoType.INT, ARITH,
                                  stable=start.stable and key.stable,
                                  loop=start.loop or key.loop)
            code = f"{self.concrete(base).wrap(ATOM)}[{offset.code}]"
            length = self.length(coll)
            safe = key.is_const and isinstance(key.const, int) and key.const >= 0 and any(
                fact_code == length.code and bound >= key.const for fact_code, bound in self.facts)
            stable = base.stable and offset.stable
            position = offset if base.type == GoType.MESSAGES and base.code == "messages" \
                else None  # (its place in the collated messages: eq compares pointers)
            if safe:
                return Expr(code, elem_type, stable=stable, loop=offset.loop or base.loop,
                            position=position)
            if key.is_const and isinstance(key.const, int) and key.const >= 0:
                check = f"{key.code} < {length.wrap(ARITH)}"
            else:
                check = f"{key.wrap(ARITH)} >= 0 and {key.wrap(ARITH)} < {length.wrap(ARITH)}"
            return Expr(f"{code} if {check} else raise_exception('index out of range')",
                        elem_type, COND, stable=stable, loop=offset.loop or base.loop,
                        position=position)
        if coll.type == GoType.ARGS:
            if key.type != GoType.STRING:
                return self.raising("map key must be a string")
            c = self.concrete(coll).wrap(ATOM)
            return Expr(f"{c}[{key.code}] if {key.wrap(COMPARE)} in {c} else none", GoType.ANY,
                        COND, stable=coll.stable)
        if coll.type == GoType.PROPERTIES:  # (missingkey=zero: an empty api.ToolProperty)
            if key.type != GoType.STRING:
                return self.raising("map key must be a string")
            c = self.concrete(coll).wrap(ATOM)
            return Expr(f"{c}[{key.code}] if {key.wrap(COMPARE)} in {c} else {{}}",
                        GoType.PROPERTY, COND, stable=coll.stable)
        if coll.type == GoType.NIL:
            return self.raising("index of untyped nil")
        if coll.type in (*INTEGERS, GoType.FLOAT, GoType.BOOL) or coll.type in STRUCTS:
            # not an array, slice, string or map (a struct pointer is dereferenced first)
            return self.raising(f"can't index item of type {coll.type.value}")
        if coll.type == GoType.PROPERTIES and key.type != GoType.STRING:
            return self.raising(f"value has type {key.type.value}; should be string")
        if coll.type == GoType.ANY and key.type == GoType.STRING:
            return self.json_key(coll, key, "cannot index with a string")
        if coll.type == GoType.STRING and key.type == GoType.INT:
            return self.string_byte(coll, key)
        if coll.type == GoType.ANY and key.type == GoType.INT:
            return self.json_position(coll, key, node)
        # Go's indexArg takes only integers: a string by a string, a float64, a bool, nil or a
        # decoded-JSON value (a float64 when a number) always fails; so does a decoded-JSON
        # value (map, slice, string or scalar) by a float64, a bool or nil
        if coll.type == GoType.STRING and key.type not in INTEGERS:
            # (a decoded-JSON value is never an integer: a number in it is a float64)
            return self.raising(f"cannot index slice/array with type {key.type.value}")
        if coll.type == GoType.ANY and key.type in _NEVER_AN_INDEX:
            return self.raising(f"cannot index with a {key.type.value}")
        raise self.error(f"index of Go type {coll.type.value}: not supported", node)

    def json_position(self, coll: Expr, key: Expr, node: nodes.Node) -> Expr:
        """`index v i` of a decoded-JSON value by a number: a list's element, a string's byte
        (a uint8), known only at run time: a CHOICE of the two (printing, truth and functions
        lift over it). Go fails on a map, a number, a bool and nil."""
        c, a = coll.wrap(COMPARE), coll.wrap(ATOM)
        if key.is_const and isinstance(key.const, int) and key.const >= 0:
            check = f"{key.code} < {a}|length"
        else:
            check = f"{key.wrap(ARITH)} >= 0 and {key.wrap(ARITH)} < {a}|length"
        element = Expr(f"{a}[{key.code}] if {check} else raise_exception('index out of range')",
                       GoType.ANY, COND, stable=coll.stable and key.stable,
                       loop=coll.loop or key.loop)
        byte = self.string_byte(replace(coll, type=GoType.STRING, maybe_undefined=False), key)
        fails = self.raising("can't index item of this type")
        return self.merge(((f"{c} is string", byte),
                           (f"{c} is none or {c} is mapping or {c} is boolean or {c} is number",
                            fails),
                           (None, element)), None, node)

    def string_byte(self, s: Expr, i: Expr) -> Expr:
        """`index s i` of a string: the uint8 value of its UTF-8 byte at offset i (runtime
        go_byte: the engines count code points, UTF-16 units or bytes); Go's failure out of
        range."""
        if s.is_const and i.is_const:
            data = str(s.const).encode("utf-8")
            n = int(i.const)  # type: ignore[call-overload]
            if not 0 <= n < len(data):
                return self.raising(f"index out of range: {n}")
            return Expr(str(data[n]), GoType.UINT8, ATOM, const=data[n], is_const=True,
                        non_negative=True)
        self.macros.add("go_byte")
        return Expr(f"go_byte({s.code}, {i.code})|int", GoType.UINT8, ATOM,
                    stable=s.stable and i.stable, loop=s.loop or i.loop, non_negative=True)

    @staticmethod
    def json_key(coll: Expr, key: Expr, reason: str) -> Expr:
        """The value of the string `key` in the decoded-JSON value `coll`: a map's value, nil
        when missing (Ollama parses with missingkey=zero); Go fails with `reason` on a list,
        a string, a scalar or nil."""
        c = coll.wrap(COMPARE)
        return Expr(f"({coll.wrap(ATOM)}[{key.code}] if {key.wrap(COMPARE)} in {c} else none) "
                    f"if {c} is mapping else raise_exception({quote(reason)})", GoType.ANY, COND,
                    stable=coll.stable and key.stable, loop=coll.loop)

    def fn_slice(self, args: list[Expr], node: nodes.Node) -> Expr:
        if not args:
            raise self.error("slice needs an argument", node)
        coll, bounds = args[0], args[1:]
        if coll.type == GoType.STRING:
            return self.slice_string(coll, bounds, node)
        if coll.type not in SLICE_ELEMENTS:
            return self.raising(f"can't slice item of type {coll.type.value}")
        if not bounds:
            return coll
        bounds = self.slice_bounds(bounds)
        if len(bounds) > 3:
            return self.raising(f"too many slice indexes: {len(bounds)}")
        if any(b.type != GoType.INT for b in bounds):
            return self.raising("cannot index slice/array with a non-integer")
        if len(bounds) > 2:  # (Go checks the third against the slice's capacity, not its length)
            raise self.error("slice with three indexes: not supported", node)
        c = self.concrete(coll).wrap(ATOM)
        start = bounds[0]
        if len(bounds) == 1:
            code = f"{c}[{start.code}:]"
            if self.is_loop_index_of(coll, start):
                return Expr(code, coll.type, stable=True, loop=start.loop,
                            slice_of=(coll, start))
            check = f"{start.wrap(ARITH)} >= 0 and {start.wrap(ARITH)} <= {c}|length"
            return self.nil_sliced(coll, bounds, Expr(
                f"{code} if {check} else raise_exception('slice index out of range')",
                coll.type, COND, stable=coll.stable and start.stable, slice_of=(coll, start)))
        end = bounds[1]
        check = (f"{start.wrap(ARITH)} >= 0 and {start.wrap(ARITH)} <= {end.wrap(ARITH)} and "
                 f"{end.wrap(ARITH)} <= {c}|length")
        return self.nil_sliced(coll, bounds, Expr(
            f"{c}[{start.code}:{end.code}] if {check} else "
            "raise_exception('slice index out of range')", coll.type, COND,
            stable=coll.stable and start.stable and end.stable))

    def nil_sliced(self, coll: Expr, bounds: list[Expr], sliced: Expr) -> Expr:
        """Go slices a nil slice [0:0] to nil again (`json` prints null, not []); any other
        bounds fail as for an empty one."""
        if not coll.maybe_undefined or coll.code in self.truthy:
            return sliced
        zero = " and ".join(f"{b.wrap(COMPARE)} == 0" for b in bounds if not (
            b.is_const and b.const == 0))
        nil = f"({coll.code} is not defined or {coll.code} is none)"
        if any(b.is_const and b.const != 0 for b in bounds):
            return sliced
        return Expr(f"none if {nil}{' and ' + zero if zero else ''} else {sliced.wrap(COND)}",
                    coll.type, COND, stable=sliced.stable, maybe_undefined=True)

    def concat(self, parts: list[Expr]) -> Expr:
        merged: list[Expr] = []
        for p in parts:
            if p.is_const and p.const == "":
                continue
            if merged and p.is_const and merged[-1].is_const:
                merged[-1] = const_expr(str(merged[-1].const) + str(p.const))
            else:
                merged.append(p)
        if not merged:
            return const_expr("")
        if len(merged) == 1:
            return merged[0]
        return Expr(" ~ ".join(p.wrap(ATOM) for p in merged), GoType.STRING, CONCAT,
                    stable=all(p.stable for p in merged))
