"""Go's `fmt` format strings as `printf` reads them: text, and one `Verb` per directive.

The parse follows the order of Go's `(*pp).doPrintf`: flags (`#0+- `), an argument index
(`[n]`), a width (digits or `*`), a precision (`.`, an index, then digits or `*`; a lone `.` is
precision 0), an index, then the verb, one rune (`%` is text, but after an index a directive:
the index still moves Go's next argument). What a verb prints is the emitter's business
(`emit`, with the `go_int`/`go_pad` runtime macros); this module only says what was written.
Depends on nothing of the project.

May depend on: nothing of the project.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The verbs Go accepts per operand type; any other verb prints `%!v(type=value)` (badVerb).
VALID_VERBS: dict[str, str] = {
    "bool": "tv",
    "int": "bcdoOqxXUv",
    "uint8": "bcdoOqxXUv",
    "float64": "beEfFgGxXv",
    "string": "vsxXq",
}


@dataclass(frozen=True)
class Verb:
    """One `%…` directive: its flags, width and precision (None when absent) and the verb."""

    source: str  # the directive as written, for messages
    verb: str  # "" when the format ends first (Go prints %!(NOVERB))
    flags: str = ""  # the flag characters in `#0+- `, each once, in that order
    width: int | None = None
    precision: int | None = None
    star: bool = False  # a width or precision taken from the operands (`*`)
    indexed: bool = False  # an explicit argument index (`[…]`): Go then skips %!(EXTRA …)
    arg: int | None = None  # the index written, from 1 (None: none, or not a number)
    bad_index: bool = False  # Go prints %!v(BADINDEX): `[x]`, no `]`, `%[1]2d`, `%[1].2d`

    def has(self, flag: str) -> bool:
        return flag in self.flags

    @property
    def plain(self) -> bool:
        """No flag, width or precision: the verb alone."""
        return not self.flags and self.width is None and self.precision is None \
            and not self.star and not self.indexed


def _number(text: str, i: int) -> tuple[int | None, int]:
    """Go's parsenum: the decimal digits at `i` (None if there are none) and the next index.
    Go gives up once the number passes 1e6 (tooLarge) and skips the rest of the format."""
    value: int | None = None
    while i < len(text) and "0" <= text[i] <= "9":
        if value is not None and value > 1_000_000:
            return None, len(text)
        value = (value or 0) * 10 + ord(text[i]) - ord("0")
        i += 1
    return value, i


def _arg_number(text: str, i: int) -> tuple[int | None, int]:
    """Go's parseArgNumber at `text[i] == '['`: the index written (None when it is not a
    number) and where the directive goes on (past the `]`, or just past the `[` without one)."""
    close = text.find("]", i + 1)
    if len(text) - i < 3 or close == -1:
        return None, i + 1
    value, j = _number(text[:close], i + 1)
    return (value if j == close else None), close + 1


def parse_printf(fmt: str) -> list[str | Verb]:
    """The format as literal text pieces and directives, in order (`%%` is text)."""
    items: list[str | Verb] = []
    text: list[str] = []
    i, end = 0, len(fmt)
    while i < end:
        if fmt[i] != "%":
            text.append(fmt[i])
            i += 1
            continue
        start = i
        i += 1
        flags: list[str] = []
        while i < end and fmt[i] in "#0+- ":
            if fmt[i] not in flags:
                flags.append(fmt[i])
            i += 1
        ordered = "".join(f for f in "#0+- " if f in flags)
        # Go's argNumber at three places: before the width, after the `.`, before the verb
        indexed = after_index = bad = False
        arg: int | None = None
        if i < end and fmt[i] == "[":  # (an index that is no number does not count as one)
            indexed = True
            arg, i = _arg_number(fmt, i)
            after_index, bad = arg is not None, arg is None
        star = False
        width: int | None = None
        if i < end and fmt[i] == "*":
            star, i = True, i + 1
        else:
            width, i = _number(fmt, i)
            bad = bad or (after_index and width is not None)  # "%[3]2d"
        precision: int | None = None
        if i + 1 < end and fmt[i] == ".":
            i += 1
            bad = bad or after_index  # "%[3].2d"
            after_index = False
            if fmt[i] == "[":
                indexed = True
                arg, i = _arg_number(fmt, i)
                after_index, bad = arg is not None, bad or arg is None
            if i < end and fmt[i] == "*":
                star, i = True, i + 1
            else:
                precision, i = _number(fmt, i)
                precision = precision or 0
        if not after_index and i < end and fmt[i] == "[":
            indexed = True
            arg, i = _arg_number(fmt, i)
            bad = bad or arg is None
        index = {"indexed": indexed, "arg": arg, "bad_index": bad}
        if i >= end:
            items.append("".join(text))
            text = []
            items.append(Verb(fmt[start:], "", ordered, width, precision, star, **index))
            break
        verb = fmt[i]
        i += 1
        if verb == "%" and not indexed:
            text.append("%")
            continue
        items.append("".join(text))
        text = []
        items.append(Verb(fmt[start:i], verb, ordered, width, precision, star, **index))
    items.append("".join(text))
    return [item for item in items if item != ""]
