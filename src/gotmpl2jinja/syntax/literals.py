"""Go's literals as `strconv` reads them: quoted strings, characters and numbers.

String literals decode like `strconv.Unquote`; a `\\xNN` escape that is not valid UTF-8 is kept
as a lone surrogate (`surrogateescape`), so `text.encode("utf-8", "surrogateescape")` gives
Go's bytes.

May depend on: syntax.nodes.
"""

from __future__ import annotations

import math
import re

from gotmpl2jinja.syntax import nodes as n

_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
                   "v": "\v", "\\": "\\"}


def _unquote_char(s: str, i: int, quote: str) -> tuple[str, int]:
    """One (possibly escaped) character of a Go literal at s[i:]; like strconv.UnquoteChar."""
    c = s[i]
    if c == quote and quote in "'\"":
        raise ValueError("unescaped quote")
    if c != "\\":
        return c, i + 1
    if i + 1 >= len(s):
        raise ValueError("trailing backslash")
    e = s[i + 1]
    i += 2
    if e in _SIMPLE_ESCAPES:
        return _SIMPLE_ESCAPES[e], i
    if e in "xuU":
        width = {"x": 2, "u": 4, "U": 8}[e]
        digits = s[i:i + width]
        if len(digits) != width or not all(ch in "0123456789abcdefABCDEF" for ch in digits):
            raise ValueError(f"bad \\{e} escape")
        value = int(digits, 16)
        if e == "x":
            # A single byte: a valid character when ASCII, else kept as a raw byte.
            return (chr(value) if value < 0x80 or quote == "'" else chr(0xDC00 + value)), i + width
        if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
            raise ValueError(f"escape \\{e}{digits} is not a valid character")
        return chr(value), i + width
    if e in "01234567":
        digits = s[i - 1:i + 2]
        if len(digits) != 3 or not all(ch in "01234567" for ch in digits):
            raise ValueError("bad octal escape")
        value = int(digits, 8)
        if value > 255:
            raise ValueError("octal escape above \\377")
        return (chr(value) if value < 0x80 or quote == "'" else chr(0xDC00 + value)), i + 2
    if e == quote and quote in "'\"":
        return e, i
    raise ValueError(f"unknown escape sequence \\{e}")


def unquote_string(quoted: str) -> str:
    """strconv.Unquote for "…" and `…` literals (a raw string loses its carriage returns)."""
    if quoted[0] == "`":
        return quoted[1:-1].replace("\r", "")
    body = quoted[1:-1]
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while i < len(body):
        ch, i = _unquote_char(body, i, '"')
        out.append(ch)
    return "".join(out)


def _underscore_ok(s: str) -> bool:
    """Go's rule: an underscore only between digits, or between a base prefix and a digit."""
    if s[:1] in ("+", "-"):
        s = s[1:]
    saw = "^"
    i = 0
    hexa = False
    if len(s) >= 2 and s[0] == "0" and s[1] in "bBoOxX":
        i, saw, hexa = 2, "0", s[1] in "xX"
    for ch in s[i:]:
        if ch.isdigit() and ch.isascii() or hexa and ch in "abcdefABCDEF":
            saw = "0"
        elif ch == "_":
            if saw != "0":
                return False
            saw = "_"
        else:
            if saw == "_":
                return False
            saw = "!"
    return saw != "_"


def _parse_uint(s: str) -> int | None:
    """strconv.ParseUint(s, 0, 64), None on any error."""
    if not s or s[0] in "+-":
        return None
    base, body = 10, s
    if s[0] == "0" and len(s) > 1:
        if s[1] in "xX":
            base, body = 16, s[2:]
        elif s[1] in "bB":
            base, body = 2, s[2:]
        elif s[1] in "oO":
            base, body = 8, s[2:]
        else:
            base, body = 8, s[1:]
    if not body:
        return None
    if "_" in s and not _underscore_ok(s):
        return None
    digits = body.replace("_", "")
    if not digits and base == 8 and s[0] == "0":
        return 0
    try:
        value = int(digits, base)
    except ValueError:
        return None
    if digits and digits[0] in "+-" or not all(c.isascii() for c in digits):
        return None
    return value if value < 1 << 64 else None


def _parse_int(s: str) -> int | None:
    """strconv.ParseInt(s, 0, 64)."""
    sign = 1
    body = s
    if s[:1] in ("+", "-"):
        sign = -1 if s[0] == "-" else 1
        body = s[1:]
    u = _parse_uint(body)
    if u is None:
        return None
    value = sign * u
    return value if -(1 << 63) <= value < (1 << 63) else None


_DEC_FLOAT = re.compile(r"[+-]?(?:[0-9_]+\.?[0-9_]*|\.[0-9_]+)(?:[eE][+-]?[0-9][0-9_]*)?")
_HEX_FLOAT = re.compile(
    r"([+-]?)0[xX]([0-9a-fA-F_]*\.?[0-9a-fA-F_]*)[pP]([+-]?[0-9][0-9_]*)")


def _parse_float(s: str) -> float | None:
    """strconv.ParseFloat(s, 64); None on a syntax error or overflow (Go's ErrRange)."""
    if _DEC_FLOAT.fullmatch(s):
        mant = re.split("[eE]", s)[0]
        if not any(c.isdigit() for c in mant):
            return None
        if "_" in s and not _underscore_ok(s):
            return None
        value = float(s.replace("_", ""))
    else:
        m = _HEX_FLOAT.fullmatch(s)
        if not m or not any(c not in "._" for c in m.group(2)):
            return None
        if "_" in s and not _underscore_ok(s):
            return None
        sign, mant, exp = m.group(1), m.group(2).replace("_", ""), m.group(3).replace("_", "")
        try:
            value = float.fromhex(f"{sign}0x{mant or '0'}p{exp}")
        except OverflowError:
            return None
    if math.isinf(value):
        return None
    return value


def _scan_number_end(s: str, i: int) -> int:
    """Where Go's scanNumber stops (used to split a complex literal `1+2i`)."""
    if i < len(s) and s[i] in "+-":
        i += 1
    digits = "0123456789_"
    if i < len(s) and s[i] == "0":
        i += 1
        if i < len(s) and s[i] in "xX":
            digits, i = "0123456789abcdefABCDEF_", i + 1
        elif i < len(s) and s[i] in "oO":
            digits, i = "01234567_", i + 1
        elif i < len(s) and s[i] in "bB":
            digits, i = "01_", i + 1
    while i < len(s) and s[i] in digits:
        i += 1
    if i < len(s) and s[i] == ".":
        i += 1
        while i < len(s) and s[i] in digits:
            i += 1
    if len(digits) == 11 and i < len(s) and s[i] in "eE":
        i += 1
        if i < len(s) and s[i] in "+-":
            i += 1
        while i < len(s) and s[i] in "0123456789_":
            i += 1
    if len(digits) == 23 and i < len(s) and s[i] in "pP":
        i += 1
        if i < len(s) and s[i] in "+-":
            i += 1
        while i < len(s) and s[i] in "0123456789_":
            i += 1
    if i < len(s) and s[i] == "i":
        i += 1
    return i


def _as_int64(f: float) -> int | None:
    """float64(int64(f)) == f, as Go's newNumber tests it."""
    if f != f or math.isinf(f) or not -(2.0 ** 63) <= f < 2.0 ** 63:
        return None
    return int(f) if float(int(f)) == f else None


def _as_uint64(f: float) -> int | None:
    if f != f or math.isinf(f) or not 0 <= f < 2.0 ** 64:
        return None
    return int(f) if float(int(f)) == f else None


def new_number(text: str, pos: n.Pos) -> n.NumberNode:
    """Go's parse.newNumber: which Go types the constant fits, or a ValueError."""
    node = n.NumberNode(text=text, pos=pos)
    if text[0] == "'":
        body = text[1:]
        ch, i = _unquote_char(body, 0, "'")
        if body[i:] != "'":
            raise ValueError(f"malformed character constant: {text}")
        code = ord(ch) if not 0xDC80 <= ord(ch) <= 0xDCFF else ord(ch) - 0xDC00
        node.is_int = node.is_uint = node.is_float = True
        node.int64 = node.uint64 = code
        node.float64 = float(code)
        return node
    first_end = _scan_number_end(text, 0)
    if first_end < len(text):  # a complex constant like 1+2i
        real = _parse_float(text[:first_end])
        imag = _parse_float(text[first_end:-1]) if text.endswith("i") else None
        if real is None or imag is None or text[first_end - 1] == "i":
            raise ValueError(f"illegal number syntax: {text!r}")
        node.is_complex = True
        _simplify_complex(node, real, imag)
        return node
    if text.endswith("i"):
        imag = _parse_float(text[:-1])
        if imag is not None:
            node.is_complex = True
            _simplify_complex(node, 0.0, imag)
            return node
    u = _parse_uint(text)
    if u is not None:
        node.is_uint, node.uint64 = True, u
    signed = _parse_int(text)
    if signed is not None:
        node.is_int, node.int64 = True, signed
        if signed == 0:
            node.is_uint, node.uint64 = True, u or 0
    if node.is_int:
        node.is_float, node.float64 = True, float(node.int64)
    elif node.is_uint:
        node.is_float, node.float64 = True, float(node.uint64)
    else:
        f = _parse_float(text)
        if f is not None:
            if not any(c in text for c in ".eEpP"):
                raise ValueError(f"integer overflow: {text!r}")
            node.is_float, node.float64 = True, f
            as_int = _as_int64(f)
            if as_int is not None:
                node.is_int, node.int64 = True, as_int
            as_uint = _as_uint64(f)
            if as_uint is not None:
                node.is_uint, node.uint64 = True, as_uint
    if not (node.is_int or node.is_uint or node.is_float):
        raise ValueError(f"illegal number syntax: {text!r}")
    return node


def _simplify_complex(node: n.NumberNode, real: float, imag: float) -> None:
    node.is_float = imag == 0
    if node.is_float:
        node.float64 = real
        as_int = _as_int64(real)
        node.is_int = as_int is not None
        node.int64 = as_int or 0
        as_uint = _as_uint64(real)
        node.is_uint = as_uint is not None
        node.uint64 = as_uint or 0
