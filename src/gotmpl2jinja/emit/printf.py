"""Go's `printf`: every verb, flag, width and precision the data model
can meet, as Go's fmt prints it.

May depend on: `analysis`, `emit.gofmt`, `emit.runtime`, `emit.values`, `syntax`.
"""

from __future__ import annotations

from dataclasses import replace

from gotmpl2jinja.analysis import (
    GoType,
)
from gotmpl2jinja.emit import runtime
from gotmpl2jinja.emit.collate import OPTIONAL_MESSAGE_KEYS
from gotmpl2jinja.emit.gofmt import VALID_VERBS, Verb, parse_printf
from gotmpl2jinja.emit.values import (
    ARITH,
    COMPARE,
    CONCAT,
    COND,
    GO_TYPE_NAMES,
    STRINGERS,
    Expr,
    _go_hex_float,
    _or_minus_one,
    const_expr,
)
from gotmpl2jinja.syntax import nodes

#: The tool shapes printf's %d prints field by field (fmt's printValue), and their macros.
_TOOL_SHAPES = {
    GoType.TOOLS: "go_fmt_tools", GoType.TOOL: "go_fmt_tool",
    GoType.TOOL_FUNCTION: "go_fmt_function", GoType.PARAMETERS: "go_fmt_parameters",
    GoType.PROPERTIES: "go_fmt_properties", GoType.PROPERTY: "go_fmt_property",
}


#: the values whose printing takes every flag (fmt hands them to each field and value inside)
_FLAGGED = (GoType.ANY, GoType.ARGS, GoType.TOOL_CALL, GoType.TOOL_CALLS, GoType.MESSAGE,
            *_TOOL_SHAPES)
#: templateMessage's fields in order, as %+v names them
_MESSAGE_FIELDS = ("Role", "Content", "Thinking", "Images", "ToolCalls", "ToolName",
                   "ToolCallID")
#: Why a flag other than `-` is refused for another composite value: fmt prints every field
#: with the flags.
_FLAGGED_COMPOSITE = ("with a flag other than `-`, which fmt applies to each field (not "
                      "translated)")


#: What %T prints for the template's own types (reflect's names: Ollama's package `template`
#: for messages, calls and tools, `api` for its API types; the reference's types carry them).
_TYPE_NAMES = {
    GoType.TOOLS: "template.templateTools", GoType.TOOL: "template.templateTool",
    GoType.TOOL_FUNCTION: "template.templateToolFunction",
    GoType.PARAMETERS: "template.templateToolFunctionParameters",
    GoType.PROPERTIES: "template.templateProperties",
    GoType.ROOT: "map[string]interface {}", GoType.MESSAGES: "[]*template.templateMessage",
    GoType.MESSAGE: "*template.templateMessage",
    GoType.TOOL_CALLS: "[]template.templateToolCall",
    GoType.TOOL_CALL: "template.templateToolCall",
    GoType.CALL_FUNCTION: "template.templateToolCallFunction",
    GoType.ARGS: "template.templateArgs", GoType.IMAGES: "[]api.ImageData",
    GoType.PROPERTY: "api.ToolProperty", GoType.PROPERTY_TYPE: "api.PropertyType",
    GoType.STRINGS: "[]string", GoType.ANYS: "[]interface {}",
    GoType.PROPERTY_LIST: "[]api.ToolProperty",
}


#: The flags printf translates for a float64 (`#` keeps zeros fmtFloat counts: not translated).
_FLOAT_FLAGS = {"-", "+", " ", "0"}


def _jinja_bool(value: bool) -> str:
    """`true` or `false`, as a macro argument."""
    return "true" if value else "false"


def _fmt_args(verb: Verb) -> str:
    """The runtime's fmt arguments for `verb`: the verb, width, `-` and precision (-1 when a
    width or precision is absent), as the go_fmt_* macros take them."""
    return (f"{runtime.literal(verb.verb)}, {_or_minus_one(verb.width)}, "
            f"{_jinja_bool(verb.has('-'))}, {_or_minus_one(verb.precision)}")


def _sharp_float(text: Expr, verb: Verb, macros: set[str]) -> Expr:
    """A float's strconv text as fmtFloat's `#` leaves it (go_sharp_float): always a point,
    and %g %G %x (not %X: fmtFloat's own rule) zeros to their precision (6 without one)."""
    if not verb.has("#"):
        return text
    macros.add("go_sharp_float")
    prec = -1 if verb.precision is None else verb.precision
    return Expr(f"go_sharp_float({text.code}, {runtime.literal(verb.verb.replace('v', 'g'))}, "
                f"{prec})", GoType.STRING, stable=text.stable, loop=text.loop)


class Printf:
    """Emitter methods for `printf` (a mixin of `Emitter`)."""

    def fn_printf(self, args: list[Expr], node: nodes.Node) -> Expr:
        if not args or not args[0].is_const or args[0].type != GoType.STRING:
            raise self.error("printf needs a constant format string", node)
        fmt = str(args[0].const)
        operands = list(args[1:])
        parts: list[Expr] = []
        padding: Expr | None = None
        width: Expr | None = None
        at, reordered = 0, False  # Go's argNum, and whether an index was written
        for item in parse_printf(fmt):
            if isinstance(item, str):
                parts.append(const_expr(item))
                continue
            good = True
            if item.indexed:  # `[n]` moves the next operand; Go then skips %!(EXTRA …)
                reordered = True
                if item.star:
                    raise self.error(f"printf {fmt!r}: an argument index with `*` "
                                     f"({item.source!r}): not supported", node)
                good = not item.bad_index and item.arg is not None \
                    and 1 <= item.arg <= len(operands)
                if good:
                    at = item.arg - 1  # type: ignore[operator]
            if item.verb == "":
                parts.append(const_expr("%!(NOVERB)"))
            elif item.verb == "%":  # (after an index: it still moved the operand)
                parts.append(const_expr("%"))
            elif item.indexed and not good:
                parts.append(const_expr(f"%!{item.verb}(BADINDEX)"))
            elif item.star:
                if padding is not None or item.source != "%*s" or len(operands) - at < 2:
                    raise self.error(f"printf {fmt!r}: only one `%*s` is supported", node)
                width = operands[at]
                padding = self.star_padding(width, operands[at + 1], fmt, node)
                parts.append(padding)
                at += 2
            elif at >= len(operands):
                parts.append(const_expr(f"%!{item.verb}(MISSING)"))
            else:
                parts.append(self.printf_verb(item, operands[at], fmt, node))
                at += 1
        if at < len(operands) and not reordered:
            parts.append(self.printf_extra(operands[at:], fmt, node))
        result = self.concat(parts)
        # an operand printed as a constant (%T, a bad verb's type) is still evaluated first
        result = self.evaluated_first([a for a in args[1:] if a.code not in result.code], result)
        if padding is None or width is None:
            return result
        if any(not p.is_const for p in parts if p is not padding):
            return result  # its length is not known either
        fixed = sum(len(str(p.const).encode("utf-8")) for p in parts if p is not padding)
        bad = len("%!(BADWIDTH)")  # Go's fmt for a width beyond ±1e6
        if width.is_const:
            count = int(width.const)  # type: ignore[call-overload]
            return replace(result, known_bytes=const_expr(
                fixed + (count if count <= 1_000_000 else bad)))
        w = width.wrap(ARITH)
        plus = f" + {fixed}" if fixed else ""
        return replace(result, known_bytes=Expr(
            f"{w}{plus} if {w} <= 1000000 else {fixed + bad}", GoType.INT, COND,
            stable=width.stable, loop=width.loop, non_negative=True))

    def printf_verb(self, verb: Verb, arg: Expr, fmt: str, node: nodes.Node) -> Expr:
        """One directive of printf on its operand, as Go's (*pp).printArg prints it."""
        type_name = GO_TYPE_NAMES.get(arg.type)
        if arg.type in (GoType.NIL, GoType.NO_DATA) and arg.is_const:
            if verb.verb in "vT":  # padded like a string; any other verb: %!d(<nil>)
                return self.padded(const_expr("<nil>"), verb, zero=True)
            return const_expr(f"%!{verb.verb}(<nil>)")
        if type_name is None:
            if verb.verb == "v" and verb.plain:  # fmt's %v is what Sprint prints
                return self.text(arg, node, sprint=True)
            if verb.verb == "T" and arg.type in _TYPE_NAMES:
                return self.padded(const_expr(_TYPE_NAMES[arg.type]), verb, zero=True)
            if verb.verb == "T" and arg.type == GoType.ANY:  # the kind decoded JSON holds
                v = arg.wrap(COMPARE)
                return self.padded(Expr(
                    f"'<nil>' if {v} is not defined or {v} is none else 'bool' if {v} is "
                    f"boolean else 'string' if {v} is string else 'float64' if {v} is number "
                    f"else 'map[string]interface {{}}' if {v} is mapping else '[]interface {{}}'",
                    GoType.STRING, COND, stable=arg.stable, loop=arg.loop), verb, zero=True)
            if arg.type in STRINGERS and (verb.verb == "v" and not verb.has("#")
                                          or verb.verb in "sxXq"):
                # String() (fmt calls it for %v %s %x %X %q), then the verb as for a string
                # (`+` means nothing there but for %q)
                flags = verb.flags if verb.verb == "q" else verb.flags.replace("+", "")
                return self.printf_value(replace(verb, flags=flags),
                                         self.text(arg, node, sprint=True), "string", fmt,
                                         node, sharp_v=False)
            if arg.type == GoType.MESSAGES and verb.verb in "vbodxX" and not verb.has("#"):
                # fmtPointer prints each element's address for these verbs, whatever the
                # flags, width or precision (`0xc…`, or a number): `[]` when empty, else the
                # contract's failure. (Other verbs print `%!s(*template.templateMessage=&{…})`.)
                return self.text(arg, node)
            if arg.type == GoType.MESSAGES and verb.verb not in "pT":
                # badVerb of each element: `%!s(*template.templateMessage=&{…})`, each field
                # by %v with the directive's flags
                self.macros.add("go_fmt_bad_messages")
                self.message_fields.update(OPTIONAL_MESSAGE_KEYS)
                others = verb.flags.replace("-", "")
                params = _fmt_args(verb) + (f", {runtime.literal(others)}" if others else "")
                return Expr(f"go_fmt_bad_messages({self.concrete(arg).code}, {params})",
                            GoType.STRING, stable=arg.stable)
            if verb.verb in "sdvfFeEgGotcUOxXqb" and (set(verb.flags) <= {"-"} or arg.type in (
                    _FLAGGED) and not (verb.verb == "v" and verb.has("#"))):
                composite = self.printf_composite(verb, arg, node)
                if composite is not None:
                    return composite
            if verb.verb == "v" and verb.has("#"):
                why = "Go syntax of the template's own types (not translated)"
            elif not set(verb.flags) <= {"-"}:
                why = _FLAGGED_COMPOSITE
            else:
                why = "not supported"
            raise self.error(f"printf verb %{verb.verb} with a {arg.type.value} operand: "
                             f"{why}", node)
        if verb.verb == "T":
            return self.padded(const_expr(type_name), verb, zero=True)
        if verb.verb not in VALID_VERBS[type_name]:
            # badVerb: %!d(string=…), the value printed by %v with the directive's flags
            inner = self.printf_value(replace(verb, verb="v"), arg, type_name, fmt, node,
                                      sharp_v=False)
            return self.concat([const_expr(f"%!{verb.verb}({type_name}="), inner,
                                const_expr(")")])
        if verb.verb == "v":  # `#` and `+` become Go-syntax and field-name printing
            sharp_v = verb.has("#")
            verb = replace(verb, flags=verb.flags.replace("#", "").replace("+", ""))
            return self.printf_value(verb, arg, type_name, fmt, node, sharp_v=sharp_v)
        return self.printf_value(verb, arg, type_name, fmt, node, sharp_v=False)

    def printf_composite(self, verb: Verb, arg: Expr, node: nodes.Node) -> Expr | None:
        """%s, %d, %v, %f, %e or %g (with any width, precision and flags but `%#v`) of a
        decoded-JSON value, a message, its tool calls or one call, as fmt's printValue prints
        them (runtime.go_fmt_*); %d of the tool shapes; None for the others (a pointer inside
        prints its address, or a type name of Go's package)."""
        t, c = arg.type, arg.code
        # fmt hands the flags to each value inside; %+v's `+` is plusV, which only names a
        # struct's fields (decoded JSON has none)
        others = verb.flags.replace("-", "")
        names = verb.verb == "v" and "+" in others
        others = others.replace("+", "") if verb.verb == "v" else others
        params = _fmt_args(verb)
        flagged = params + (f", {runtime.literal(others)}" if others else "")
        if t in (GoType.ANY, GoType.ARGS):
            params = flagged
        # the structs' macros take `bare`, then the flags and whether to name the fields
        struct_params = params if not (others or names) else (
            f"{params}, false, {runtime.literal(others)}, {_jinja_bool(names)}")
        if t == GoType.ANY:  # at the top, nil is printArg's: padded <nil> for %v, else %!s(<nil>)
            self.macros.add("go_fmt_json")
            nil = (self.padded(const_expr("<nil>"), verb, zero=True) if verb.verb == "v"
                   else const_expr(f"%!{verb.verb}(<nil>)"))
            return Expr(f"{nil.code} if {arg.wrap(COMPARE)} is none else "
                        f"go_fmt_json({c}, {params})", GoType.STRING, COND, stable=arg.stable,
                        loop=arg.loop)
        if t == GoType.ARGS and verb.verb not in "sv":  # (String() is only for %s and %v)
            self.macros.add("go_fmt_json")
            return Expr(f"'map[]' if {arg.wrap(COMPARE)} is not defined or "
                        f"{arg.wrap(COMPARE)} is none else go_fmt_json({c}, {params})",
                        GoType.STRING, COND, stable=arg.stable, loop=arg.loop)
        if t in (GoType.TOOL_CALL, GoType.TOOL_CALLS, GoType.MESSAGE) \
                and verb.verb not in "sdvfFeEgGtxXqcUoOb":
            return None
        if t in (GoType.TOOL_CALL, GoType.TOOL_CALLS):
            macro = "go_fmt_tool_call" if t == GoType.TOOL_CALL else "go_fmt_tool_calls"
            self.macros.add(macro)
            return Expr(f"{macro}({c}, {struct_params})", GoType.STRING, stable=arg.stable,
                        loop=arg.loop)
        if t == GoType.MESSAGE:  # the pointer at the top: & and the struct, field by field
            self.macros.update(("go_fmt_string", "go_fmt_tool_calls"))
            role, content, thinking, calls, name, call_id = self.message_struct(arg)
            fields = [*(f"go_fmt_string({f}, {flagged})" for f in (role, content, thinking)),
                      "'[]'", f"go_fmt_tool_calls({calls}, {struct_params})",
                      *(f"go_fmt_string({f}, {flagged})" for f in (name, call_id))]
            if names:
                fields = [f"'{field}:' ~ {code}"
                          for field, code in zip(_MESSAGE_FIELDS, fields, strict=True)]
            return Expr("'&{' ~ " + " ~ ' ' ~ ".join(fields) + " ~ '}'", GoType.STRING, CONCAT,
                        stable=arg.stable)
        if t in _TOOL_SHAPES and (verb.verb in "dobfFeEgGcUOt"
                                  or t == GoType.PROPERTY and verb.verb in "svqxX"):
            # String() is only for %s %v %x %X %q, and an api.ToolProperty has none; a nil
            # nested-properties pointer prints as fmtPointer prints it (go_fmt_property)
            macro = _TOOL_SHAPES[t]
            self.macros.add(macro)
            shape_params = params + (f", {runtime.literal(others)}" if others or names else "")
            shape_params += ", true" if names else ""  # (only a property takes %v)
            return Expr(f"{macro}({c}, {shape_params})", GoType.STRING, stable=arg.stable,
                        loop=arg.loop)
        return None

    def printf_value(self, verb: Verb, arg: Expr, type_name: str, fmt: str, node: nodes.Node,
                     *, sharp_v: bool) -> Expr:
        """A verb that is valid for the operand's type (fmtBoolean, fmtInteger, fmtString)."""
        unsupported = self.error(f"printf {fmt!r}: {verb.source!r} of a {type_name}: not "
                                 "supported", node)
        if type_name == "bool":
            return self.padded(self.text(arg, node, sprint=True), verb, zero=True)
        if type_name in ("int", "uint8") and verb.verb in "dvboOxX":
            if verb.plain and verb.verb in "dv":
                return self.text(arg, node, sprint=True)
            if arg.is_const and abs(int(arg.const)) >= 2**53:  # type: ignore[call-overload]
                raise unsupported
            self.macros.add("go_int")
            code = (f"go_int({arg.code}, {runtime.literal(verb.verb.replace('v', 'd'))}, "
                    f"{runtime.literal(verb.flags)}, {_or_minus_one(verb.width)}, "
                    f"{_or_minus_one(verb.precision)})")
            return Expr(code, GoType.STRING, stable=arg.stable, loop=arg.loop)
        if type_name in ("int", "uint8") and verb.verb in "cqU":
            return self.printf_rune(verb, arg)
        quote = verb.verb == "q" or verb.verb == "v" and sharp_v  # %#v of a string is %q
        if type_name == "string" and (verb.verb in "vs" and not sharp_v or quote):
            # fmtS / fmtQ: the first runes, for %q strconv.Quote of them (Go's table of
            # printable characters in the runtime; `+` QuoteToASCII, `#` backquoted when
            # strconv.CanBackquote), then the padding by runes (zeros for `0`)
            if verb.precision is not None:
                if arg.is_const:
                    arg = const_expr(str(arg.const)[:verb.precision])
                else:
                    self.macros.add("go_truncate")
                    arg = Expr(f"go_truncate({arg.code}, {verb.precision})", GoType.STRING,
                               stable=arg.stable, loop=arg.loop)
            mode = runtime.literal("q+" if verb.has("+") else "q")
            if quote and verb.has("#"):
                self.macros.add("go_quote")
                arg = Expr(f"go_quote({arg.code}, {mode})", GoType.STRING,
                           stable=arg.stable, loop=arg.loop)
            elif quote:
                self.macros.add("go_escape_runes")
                arg = Expr(f"'\"' ~ go_escape_runes({arg.code}, {mode}) ~ '\"'", GoType.STRING,
                           CONCAT, stable=arg.stable, loop=arg.loop)
            if verb.width is None:
                return arg
            if arg.is_const:  # (a constant's runes are its characters)
                return self.padded(arg, verb, zero=True)
            return self.padded_runes(arg, verb, zero=True)
        if type_name == "string" and verb.verb in "xX":
            # fmtSbx: the first `precision` UTF-8 bytes in hex (`#` 0x before them, a space
            # between them; both: 0x before each), padded to the width (zeros for `0`)
            if not set(verb.flags) <= {"-", "+"}:
                self.macros.add("go_hex_string")
                flags = (verb.has("#"), verb.has(" "), verb.has("0") and not verb.has("-"))
                return Expr(f"go_hex_string({arg.code}, {_fmt_args(verb)}, "
                            f"{', '.join(map(_jinja_bool, flags))})", GoType.STRING,
                            stable=arg.stable, loop=arg.loop)
            if arg.is_const:
                data = str(arg.const).encode("utf-8")[:verb.precision]
                return self.padded(const_expr(data.hex().upper() if verb.verb == "X"
                                              else data.hex()), verb, zero=False)
            self.macros.add("go_hex_string")
            return Expr(f"go_hex_string({arg.code}, {_fmt_args(verb)})", GoType.STRING,
                        stable=arg.stable, loop=arg.loop)
        if type_name == "float64" and verb.verb == "v" and verb.plain:
            return self.text(arg, node, sprint=True)
        if type_name == "float64" and verb.verb == "v" and set(verb.flags) <= _FLOAT_FLAGS \
                and verb.precision is None:  # %v's digits, signed and padded
            return self.signed(self.text(arg, node, sprint=True), verb)
        if type_name == "float64" and arg.is_const and verb.verb in "xX" \
                and verb.precision is None and not verb.has("#"):
            return const_expr(_go_hex_float(float(arg.const), verb))  # type: ignore[arg-type]
        if type_name == "float64" and verb.verb in "xX" \
                and set(verb.flags) <= _FLOAT_FLAGS | {"#"}:
            # strconv's hex float, rounded to a precision, then fmtFloat's `#`, sign and padding
            self.macros.add("go_hex_float")
            text = Expr(f"go_hex_float({arg.code}, {runtime.literal(verb.verb)}, "
                        f"{_or_minus_one(verb.precision)})", GoType.STRING, stable=arg.stable,
                        loop=arg.loop)
            return self.signed(_sharp_float(text, verb, self.macros), verb)
        if type_name == "float64" and arg.is_const and verb.verb in "fFeE" \
                and not verb.has("#"):
            # a constant, formatted here: C's %f/%e, like Go's, round the exact binary value
            # half to even, and take the same flags, width and precision (6 by default)
            spec = "%" + verb.flags + ("" if verb.width is None else str(verb.width)) \
                + ("" if verb.precision is None else f".{verb.precision}") + verb.verb.lower()
            text = spec % float(arg.const)  # type: ignore[arg-type]
            return const_expr(text.upper() if verb.verb == "E" else text)
        if type_name == "float64" and verb.verb == "b" and set(verb.flags) <= _FLOAT_FLAGS | {"#"}:
            # strconv's 'b': the exact mantissa and binary exponent (a precision and `#` do
            # nothing to it)
            self.macros.add("go_bin_float")
            text = Expr(f"go_bin_float({arg.code})", GoType.STRING, stable=arg.stable,
                        loop=arg.loop)
            return self.signed(text, replace(verb, flags=verb.flags.replace("#", "")))
        if type_name == "float64" and verb.verb in "fFeEgGv" \
                and set(verb.flags) <= _FLOAT_FLAGS | {"#"}:
            # known only at run time: strconv's exact rounding in the runtime (%v is %g; its
            # `#` was taken off above: %#v of a float64 is %v)
            self.macros.update(("go_fmt_float", "go_pad"))
            prec = (verb.precision if verb.precision is not None
                    else 6 if verb.verb in "fFeE" else -1)
            text = Expr(f"go_fmt_float({arg.code}, {runtime.literal(verb.verb.replace('v', 'g'))}"
                        f", {prec})", GoType.STRING, stable=arg.stable, loop=arg.loop)
            return self.signed(_sharp_float(text, verb, self.macros), verb)
        raise unsupported

    def signed(self, text: Expr, verb: Verb) -> Expr:
        """A float's text (ASCII) as fmtFloat finishes it: `+` writes a plus sign, a space
        (` `) a space in its place, `0` pads with zeros after the sign; padded to the width."""
        if not set(verb.flags) & {"+", " ", "0"}:
            return self.padded(text, verb, zero=False)
        self.macros.add("go_pad_number")
        plus, space, minus = map(_jinja_bool, (verb.has("+"), verb.has(" "), verb.has("-")))
        zero = _jinja_bool(verb.has("0") and not verb.has("-"))
        return Expr(f"go_pad_number({text.code}, {plus}, {space}, {_or_minus_one(verb.width)}, "
                    f"{minus}, {zero})", GoType.STRING, stable=text.stable, loop=text.loop)

    def printf_rune(self, verb: Verb, arg: Expr) -> Expr:
        """%c, %q and %U of an integer (fmtC, fmtQc, fmtUnicode): its rune written, quoted or
        numbered (runtime.go_char, go_unicode; U+FFFD past the runes), padded by runes: %c and
        %q with zeros for `0`, %U never; `+` quotes in ASCII, `#` adds the rune to %U, a
        precision gives %U its digits and nothing else."""
        if verb.verb == "U":
            self.macros.add("go_unicode")
            sharp = verb.has("#")
            text = Expr(f"go_unicode({arg.code}, {_or_minus_one(verb.precision)}, "
                        f"{_jinja_bool(sharp)})", GoType.STRING, stable=arg.stable,
                        loop=arg.loop)
            if verb.width is None:
                return text
            # ASCII but for %#U's rune
            return self.padded_runes(text, verb, zero=False) if sharp \
                else self.padded(text, verb, zero=False)
        self.macros.add("go_char")
        mode = "c" if verb.verb == "c" else "q+" if verb.has("+") else "q"
        text = Expr(f"go_char({arg.code}, {runtime.literal(mode)})", GoType.STRING,
                    stable=arg.stable, loop=arg.loop)
        if verb.width is None:
            return text
        if verb.verb == "c":  # one rune: the fill is known
            zero = verb.has("0") and not verb.has("-")
            fill = const_expr(("0" if zero else " ") * max(0, verb.width - 1))
            return self.concat([text, fill] if verb.has("-") else [fill, text])
        return self.padded_runes(text, verb, zero=True)

    def padded_runes(self, text: Expr, verb: Verb, *, zero: bool) -> Expr:
        """`text` known only at run time, any characters, padded to the directive's width by
        runes as fmt.padString does (go_pad_string); `zero`: the `0` flag pads with zeros."""
        self.macros.add("go_pad_string")
        return Expr(f"go_pad_string({text.code}, {verb.width}, {_jinja_bool(verb.has('-'))}, "
                    f"{_jinja_bool(zero and verb.has('0'))})", GoType.STRING,
                    stable=text.stable, loop=text.loop)

    def padded(self, text: Expr, verb: Verb, *, zero: bool) -> Expr:
        """`text` (ASCII, or a constant) padded to the directive's width as fmt.pad does
        (by runes); `zero`: the `0`
        flag pads with zeros (strings and booleans; numbers pad their digits themselves)."""
        if verb.width is None:
            return text
        minus, zeros = verb.has("-"), zero and verb.has("0")
        if text.is_const:
            s = str(text.const)
            fill = ("0" if zeros and not minus else " ") * max(0, verb.width - len(s))
            return const_expr(s + fill if minus else fill + s)
        self.macros.add("go_pad")
        return Expr(f"go_pad({text.code}, {verb.width}, {_jinja_bool(minus)}, "
                    f"{_jinja_bool(zeros)})", GoType.STRING, stable=text.stable,
                    loop=text.loop)

    def printf_extra(self, operands: list[Expr], fmt: str, node: nodes.Node) -> Expr:
        """Operands printf did not use: Go appends %!(EXTRA int=1, string=a)."""
        parts: list[Expr] = [const_expr("%!(EXTRA ")]
        for i, arg in enumerate(operands):
            if i:
                parts.append(const_expr(", "))
            if arg.type in (GoType.NIL, GoType.NO_DATA) and arg.is_const:
                parts.append(const_expr("<nil>"))
                continue
            type_name = GO_TYPE_NAMES.get(arg.type)
            if type_name is None:
                raise self.error(f"printf {fmt!r}: an extra {arg.type.value} operand: not "
                                 "supported", node)
            parts += [const_expr(f"{type_name}="), self.text(arg, node, sprint=True)]
        parts.append(const_expr(")"))
        return self.concat(parts)

    def star_padding(self, width: Expr, text: Expr, fmt: str, node: nodes.Node) -> Expr:
        """`%*s` of "" with an int width: spaces to a width known only at run time. Jinja
        cannot write them portably, but their number is exact (Go pads to the width; a width
        beyond ±1e6 prints %!(BADWIDTH) instead, a negative one pads to its absolute value,
        hence the non-negative requirement). Only the `len` of the result is translated:
        granite's counter idiom `len (printf "a%*s" $n "")`, which is $n + 1."""
        if width.type != GoType.INT or not width.non_negative:
            raise self.error(f"printf {fmt!r}: `%*s` needs a width that is provably a "
                             "non-negative int (a length, a range index, or a variable only "
                             "ever set to those)", node)
        if not (text.is_const and text.const == ""):
            raise self.error(f"printf {fmt!r}: `%*s` of anything but \"\": not supported",
                             node)
        error = self.error(f"printf {fmt!r}: `%*s` pads to a width known only at run time, "
                           "which portable Jinja cannot write (only the length of the result "
                           "is translated)", node)
        return Expr(self.refused(error), GoType.STRING, stable=width.stable, loop=width.loop)
