"""Go's `fmt` format strings as `printf` reads them: text, and one `Verb` per directive.

The parse follows the order of Go's `(*pp).doPrintf`: flags (`#0+- `), an argument index
(`[n]`), a width (digits or `*`), a precision (`.` then digits or `*`; a lone `.` is
precision 0), then the verb, one rune. What a verb prints is the emitter's business
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
    indexed: bool = False  # an explicit argument index (`[n]`)

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


def _index(text: str, i: int) -> tuple[bool, int]:
    """An argument index `[…]` at `i`: whether there is one, and the index after it."""
    if i < len(text) and text[i] == "[":
        close = text.find("]", i)
        if close != -1:
            return True, close + 1
        return True, len(text)
    return False, i


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
        indexed, i = _index(fmt, i)
        star = False
        width: int | None = None
        if i < end and fmt[i] == "*":
            star, i = True, i + 1
        else:
            width, i = _number(fmt, i)
        precision: int | None = None
        if i + 1 < end and fmt[i] == ".":
            i += 1
            more, i = _index(fmt, i)
            indexed = indexed or more
            if i < end and fmt[i] == "*":
                star, i = True, i + 1
            else:
                precision, i = _number(fmt, i)
                precision = precision or 0
        more, i = _index(fmt, i)
        indexed = indexed or more
        if i >= end:
            items.append("".join(text))
            text = []
            items.append(Verb(fmt[start:], "", ordered, width, precision, star, indexed))
            break
        verb = fmt[i]
        i += 1
        if verb == "%":
            text.append("%")
            continue
        items.append("".join(text))
        text = []
        items.append(Verb(fmt[start:i], verb, ordered, width, precision, star, indexed))
    items.append("".join(text))
    return [item for item in items if item != ""]
