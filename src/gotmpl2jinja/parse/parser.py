"""Parse a Go `text/template` (Go 1.27, default delimiters) into the typed AST of `nodes`.

The grammar (grammar/gotemplate.lark) defines the tokens and the LALR tables: a two-mode
lexer over its terminals tokenises the source and an LALR loop over Lark's tables parses it.
The grammar is flat (a stream of text, comments and actions); this module pairs `{{ end }}`
and `{{ else }}` with their openers, applies trim markers, resolves variable scopes and
function names, and decodes literals. Go's own parser does those checks outside its grammar
too, so doing them here lets every rejection carry Go's verdict, Go's line and a message a
person can act on.

Go reports only a line for parse errors; the column we add is the place we blame.
String literals decode like `strconv.Unquote`; a `\\xNN` escape that is not valid UTF-8 is kept
as a lone surrogate (`surrogateescape`), so `text.encode("utf-8", "surrogateescape")` gives
Go's bytes.
"""

from __future__ import annotations

import bisect
import builtins
import itertools
import math
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

from lark import Lark, Token, Tree
from lark.common import LexerConf
from lark.exceptions import LarkError
from lark.lark import PostLex
from lark.lexer import Lexer, LexerState, TerminalDef
from lark.parsers.lalr_analysis import Shift
from lark.utils import TextSlice

from gotmpl2jinja.errors import TemplateSyntaxError
from gotmpl2jinja.parse import nodes as n

GO_BUILTINS = frozenset(
    "and or not eq ne lt le gt ge len index slice print printf println html js urlquery call"
    .split()
)
OLLAMA_FUNCS = frozenset({"json", "currentDate", "yesterdayDate", "toTypeScriptType"})
KNOWN_FUNCS = GO_BUILTINS | OLLAMA_FUNCS

_KEYWORDS = {
    "if": "IF", "else": "ELSE", "end": "END", "range": "RANGE", "with": "WITH",
    "define": "DEFINE", "template": "TEMPLATE", "block": "BLOCK", "break": "BREAK",
    "continue": "CONTINUE", "nil": "NIL", "true": "BOOL", "false": "BOOL",
}
_GO_SPACE = " \t\r\n"
# Tokens that end an operand, and those that start one: two of them touching is an error.
_OPERAND_END = frozenset(
    "IDENT FIELD CHAINFIELD VARIABLE DOT NUMBER STRING RAWSTRING CHAR RPAR BOOL NIL".split()
)
_OPERAND_START = frozenset("IDENT VARIABLE DOT NUMBER STRING RAWSTRING CHAR LPAR BOOL NIL".split())
_WORDISH = frozenset(
    "IDENT FIELD VARIABLE DOT BOOL NIL IF ELSE END RANGE WITH DEFINE TEMPLATE BLOCK BREAK "
    "CONTINUE".split()
)
_ALNUM = re.compile(r"\w")
_TERM_TOKENS = frozenset(
    "IDENT VARIABLE NUMBER CHAR STRING RAWSTRING NIL BOOL DOT FIELD".split())
_CONSTANT_NODES = (n.BoolNode, n.StringNode, n.NumberNode, n.NilNode, n.DotNode)
# Tokens after which a pipeline starts (where `$x :=` declares a variable).
_PIPELINE_OPENERS = frozenset({"LDELIM", "LDELIM_TRIM", "IF", "WITH", "RANGE", "LPAR"})
_TERMINATOR_CHARS = frozenset(_GO_SPACE + ".,|:)(")


def _grammar_text() -> str:
    """The grammar ships in `gotmpl2jinja/grammar/` in a wheel and in `grammar/` in the repo."""
    try:
        packaged = resources.files("gotmpl2jinja").joinpath("grammar/gotemplate.lark")
        if packaged.is_file():
            return packaged.read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError):
        pass
    repo = Path(__file__).resolve().parents[3] / "grammar" / "gotemplate.lark"
    return repo.read_text(encoding="utf-8")


class _LexError(Exception):
    """A lexical verdict of Go's lexer, raised from inside the token stream."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


class _NoToken(Exception):
    """No terminal of the current mode matches at `offset` (Lark's UnexpectedCharacters)."""

    def __init__(self, offset: int) -> None:
        super().__init__(offset)
        self.offset = offset


# Token(type, value, start_pos, line, column, end_line, end_column, end_pos) without the
# keyword-argument checks of Token.__new__ (they cost more than the rest of the lexer's work
# on a token); falls back to the public constructor if Lark renames its helper.
_new_token: Callable[..., Token] = getattr(Token, "_future_new", Token)

# Terminals of text mode (outside actions); every other terminal belongs to action mode.
_TEXT_MODE = ("COMMENT", "LDELIM_TRIM", "LDELIM", "TEXT")
_OPENERS = frozenset({"LDELIM", "LDELIM_TRIM"})
_NAMED = frozenset({"WORD", "FIELD", "VARIABLE"})
_CLOSERS = frozenset({"RDELIM", "RDELIM_TRIM"})


def _scanner(terminals: list[TerminalDef]) -> re.Pattern[str]:
    """One alternation over the grammar's own terminal regexes, in Lark's order (priority,
    then widest), so the first alternative that matches is the terminal Lark would pick."""
    ordered = sorted(terminals, key=lambda t: (-t.priority, -t.pattern.max_width,
                                               -len(t.pattern.value), t.name))
    return re.compile("|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in ordered))


class _GoLexer(Lexer):
    """Go's lexer as two modes (text, action) over the grammar's terminals, with the rules Go
    checks by looking around a token: keywords, `.A.B` chains, and what may follow a word or
    a number. Why not Lark's contextual lexer: one compiled regex per mode and no per-token
    generator layers make lexing several times cheaper; the tokens are still the grammar's
    terminals, picked in the order Lark's own lexer picks them."""

    __future_interface__ = 2

    def __init__(self, conf: LexerConf) -> None:
        terminals = list(conf.terminals)
        self.text_scan = _scanner([t for t in terminals if t.name in _TEXT_MODE])
        self.action_scan = _scanner([t for t in terminals if t.name not in _TEXT_MODE])
        self.ignore = frozenset(conf.ignore)

    def lex(self, lexer_state: LexerState, parser_state: object) -> Iterator[Token]:
        text = lexer_state.text
        return iter(self.start(text.text if isinstance(text, TextSlice) else text))

    def start(self, src: str) -> _Scan:
        """A lexing run over `src` (its own state: parses in several threads do not mix)."""
        return _Scan(self, src)


class _Scan:
    """One lexing run. It remembers the action being lexed so an error can be checked
    against what Go would have rejected earlier in that action."""

    def __init__(self, lexer: _GoLexer, src: str) -> None:
        self.lexer = lexer
        self.src = src
        self.action_start = -1              # offset of the last `{{`
        self.action_end = -1                # end of its `}}`, -1 while it is open
        self.action_tokens: list[Token] = []

    def __iter__(self) -> Iterator[Token]:
        src = self.src
        size = len(src)
        text_match, action_match = self.lexer.text_scan.match, self.lexer.action_scan.match
        ignore = self.lexer.ignore
        pos = 0
        in_action = False
        prev: Token | None = None
        action_tokens = self.action_tokens
        while pos < size:
            m = action_match(src, pos) if in_action else text_match(src, pos)
            if m is None:
                raise _NoToken(pos)
            kind = m.lastgroup
            assert kind is not None
            end = m.end()
            if not in_action:
                tok = _new_token(kind, m.group(), pos, None, None, None, None, end)
                if kind in _OPENERS:
                    in_action = True
                    prev = None
                    self.action_start, self.action_end = pos, -1
                    self.action_tokens = action_tokens = []
                pos = end
                yield tok
                continue
            if kind in ignore:
                pos = end
                continue
            if kind in _NAMED and not m.group().isascii():
                bad = _not_go_alphanumeric(m.group())
                if bad >= 0:
                    raise _LexError(f"bad character {_go_rune(src[pos + bad])}", pos + bad)
            if kind == "WORD":
                kind = _KEYWORDS.get(m.group(), "IDENT")
            if prev is not None and prev.end_pos == pos and prev.type in _OPERAND_END:
                if kind == "FIELD":
                    kind = "CHAINFIELD"
                elif kind in _OPERAND_START:
                    raise _LexError(f"unexpected {m.group()!r} in operand (missing space?)",
                                    pos)
            tok = _new_token(kind, m.group(), pos, None, None, None, None, end)
            if kind in _WORDISH or kind == "CHAINFIELD":
                if not _at_terminator(src, end):
                    raise _LexError(f"bad character {_go_rune(src[end])} after {str(tok)!r}",
                                    end)
            elif kind == "NUMBER" and end < size and _ALNUM.match(src, end):
                raise _LexError(f"bad number syntax: {src[pos:end + 1]!r}", pos)
            elif kind in _CLOSERS:
                in_action = False
                self.action_end = end
            action_tokens.append(tok)  # only once Go's lexer would have emitted it
            prev = tok
            pos = end
            yield tok


def _not_go_alphanumeric(name: str) -> int:
    """Where `name` (a word, `.field` or `$variable`) has a character Go's lexer does not take
    into a name, or -1. Go takes `_`, letters and decimal digits; the grammar's `\\w` also
    takes other numerals (`²`, `Ⅻ`), where Go stops with "bad character"."""
    for index, ch in enumerate(name):
        if index == 0 and ch in ".$":
            continue
        if not (ch == "_" or ch.isalpha() or unicodedata.category(ch) == "Nd"):
            return index
    return -1


def _at_terminator(src: str, pos: int) -> bool:
    """Go's atTerminator: what may follow a word, field or variable without a space."""
    if pos >= len(src):
        return True
    return src[pos] in _TERMINATOR_CHARS or src.startswith("}}", pos)


def _go_rune(ch: str) -> str:
    return f"U+{ord(ch):04X} {ch!r}"


def _describe(tok: Token) -> str:
    if tok.type in ("RDELIM", "RDELIM_TRIM"):
        return "'}}'"
    if tok.type == "$END":
        return "end of input"
    return repr(str(tok))


class _KeepWords(PostLex):
    """Keeps the WORD terminal in the lexer's terminals (no rule uses it: the lexer turns
    each WORD into a keyword or IDENT); passes the token stream through untouched."""

    always_accept = ("WORD",)

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        return stream


@lru_cache(maxsize=1)
def _lark() -> tuple[Lark, _GoLexer]:
    """The LALR parser over the grammar (built once per process) and its lexer."""
    lark = Lark(
        _grammar_text(), parser="lalr", lexer=_GoLexer, postlex=_KeepWords(),
        maybe_placeholders=False, propagate_positions=False,
    )
    lexer = lark.parser.lexer.lexer  # inside Lark's PostLexConnector
    assert isinstance(lexer, _GoLexer)
    return lark, lexer


class _Unexpected(Exception):
    """The grammar has no move for `token` (Lark's UnexpectedToken, without its extras)."""

    def __init__(self, token: Token) -> None:
        super().__init__(token)
        self.token = token


# A parser move: (state to shift to, None) or (-1, (rule size, goto name, tree callback)).
_Reduce = tuple[int, str, Callable[[list[object]], object]]
_Move = tuple[int, _Reduce | None]


class _Driver:
    """The LALR loop over Lark's own parse table and tree-building callbacks.

    Why not `Lark.parse`: its generic loop looks each reduction's rule up by hash and
    compares rule names with `Token.__eq__`; resolving every reduction to (size, goto name,
    callback) once saves that work on every token, with the same tables and the same trees.
    """

    def __init__(self, lark: Lark) -> None:
        parser = lark.parser.parser.parser  # lark.parsers.lalr_parser._Parser
        table = parser.parse_table
        callbacks = parser.callbacks
        self.start = table.start_states["start"]
        self.end = table.end_states["start"]
        self.states: dict[int, dict[str, _Move]] = {
            state: {
                term: (arg, None) if action is Shift else
                      (-1, (len(arg.expansion), str(arg.origin.name), callbacks[arg]))
                for term, (action, arg) in actions.items()
            }
            for state, actions in table.states.items()
        }

    def parse(self, tokens: Iterator[Token], end_pos: int) -> Tree:
        states = self.states
        state_stack = [self.start]
        value_stack: list[object] = []
        for token in tokens:
            kind = token.type
            while True:
                move = states[state_stack[-1]].get(kind)
                if move is None:
                    raise _Unexpected(token)
                target, reduce = move
                if reduce is None:
                    state_stack.append(target)
                    value_stack.append(token)
                    break
                # _reduce, inlined: this loop runs twice per token
                size, origin, callback = reduce
                if size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    children = []
                value_stack.append(callback(children))
                state_stack.append(states[state_stack[-1]][origin][0])
        end = Token("$END", "", end_pos, end_pos=end_pos)
        while True:
            move = states[state_stack[-1]].get("$END")
            if move is None or move[1] is None:
                raise _Unexpected(end)
            self._reduce(state_stack, value_stack, move[1])
            if state_stack[-1] == self.end:
                tree = value_stack[-1]
                assert isinstance(tree, Tree)
                return tree

    def _reduce(self, state_stack: list[int], value_stack: list[object],
                reduce: _Reduce) -> None:
        size, origin, callback = reduce
        if size:
            children = value_stack[-size:]
            del state_stack[-size:]
            del value_stack[-size:]
        else:
            children = []
        value_stack.append(callback(children))
        state_stack.append(self.states[state_stack[-1]][origin][0])


@lru_cache(maxsize=1)
def _parser() -> tuple[_Driver, _GoLexer]:
    lark, lexer = _lark()
    return _Driver(lark), lexer


# --- positions --------------------------------------------------------------------------------


class _Where:
    """Turns character offsets into Go's byte-based (offset, line, column)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.ascii = source.isascii()
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", source)]
        # byte offset of each line start, so a position costs one line's encoding, not the
        # whole prefix's (which made positions quadratic in a non-ASCII template)
        self.line_bytes = self.line_starts
        if not self.ascii:
            self.line_bytes = list(itertools.accumulate(
                (len(source[a:b].encode("utf-8", "surrogatepass"))
                 for a, b in itertools.pairwise(self.line_starts)), initial=0))

    def line(self, offset: int) -> int:
        return bisect.bisect_right(self.line_starts, offset)

    def pos(self, offset: int) -> n.Pos:
        line = bisect.bisect_right(self.line_starts, offset)
        start = self.line_starts[line - 1]
        if self.ascii:
            return n.Pos(offset, line, offset - start + 1)
        col = len(self.source[start:offset].encode("utf-8", "surrogatepass")) + 1
        return n.Pos(self.line_bytes[line - 1] + col - 1, line, col)

    def eof_line(self) -> int:
        return len(self.line_starts)


# --- literals (strconv semantics) -------------------------------------------------------------

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


# --- the flat item stream ---------------------------------------------------------------------


@dataclass
class _Action:
    """One `{{ … }}` from the grammar, before nesting is resolved."""

    kind: str                 # act_pipe, act_if, … (the grammar's alias)
    tree: Tree
    start: int                # offset of `{{`
    close: int                # offset of the closing `}}` (after any ` -`)
    trim_left: bool
    trim_right: bool
    keyword: Token | None = None   # the `if`/`with` after `else`, `define` etc.


@dataclass
class _Frame:
    """An open control structure (or define/block body) waiting for its `{{ end }}`."""

    kind: str                       # if, range, with, define, block
    node: n.Node | None
    list: n.ListNode
    saved_vars: int
    chained: bool = False           # opened by `{{ else if }}`/`{{ else with }}`
    in_else: bool = False
    # `builtins.list`: the field `list` above shadows the builtin inside this class body
    outer_vars: builtins.list[str] = field(default_factory=builtins.list)
    name: str = ""
    open_close: int = 0             # offset of the opener's `}}` (Go blames it for a block)


class _Builder:
    """Nests the flat stream like Go's recursive parser, with Go's checks and lines."""

    def __init__(self, source: str, name: str, where: _Where) -> None:
        self.source = source
        self.name = name
        self.where = where
        self.vars: list[str] = ["$"]
        self.root = n.ListNode(pos=where.pos(0))
        self.stack: list[_Frame] = []
        self.trees: dict[str, n.ListNode] = {}

    # errors

    def fail(self, message: str, offset: int, line: int | None = None) -> TemplateSyntaxError:
        p = self.where.pos(offset)
        return TemplateSyntaxError(message, line=line if line is not None else p.line,
                                   col=p.col, name=self.name)

    def fail_at_close(self, message: str, action: _Action) -> TemplateSyntaxError:
        return self.fail(message, action.close)

    # helpers

    def current_list(self) -> n.ListNode:
        return self.stack[-1].list if self.stack else self.root

    def in_range(self) -> bool:
        for frame in reversed(self.stack):
            if frame.kind in ("define", "block"):
                return False
            if frame.kind == "range" and not frame.in_else:
                return True
        return False

    def add_tree(self, name: str, body: n.ListNode, offset: int, line: int | None = None) -> None:
        """Go's (*Tree).add: a non-empty definition may not replace another non-empty one."""
        old = self.trees.get(name)
        if old is None or is_empty_tree(old):
            self.trees[name] = body
        elif not is_empty_tree(body):
            raise self.fail(f"template: multiple definition of template {name!r}", offset, line)

    # the stream

    def text(self, value: str, offset: int) -> None:
        self.current_list().nodes.append(n.TextNode(value, pos=self.where.pos(offset)))

    def comment(self, value: str, offset: int) -> None:
        self.current_list().nodes.append(n.CommentNode(value, pos=self.where.pos(offset)))

    def action(self, act: _Action) -> None:
        pos = self.where.pos(act.start)
        kind = act.kind
        body = act.tree
        if kind == "act_pipe":
            pipe = self.pipeline(body.children[0], "command", act.close)
            self.current_list().nodes.append(n.ActionNode(pipe, pos=pos))
        elif kind in ("act_if", "act_with", "act_range"):
            ctl = kind[4:]
            saved = len(self.vars)
            pipe_tree = body.children[1]
            if ctl == "range":
                pipe = self.range_pipeline(pipe_tree, act.close)
            else:
                pipe = self.pipeline(pipe_tree, ctl, act.close)
            cls = {"if": n.IfNode, "with": n.WithNode, "range": n.RangeNode}[ctl]
            node = cls(pipe=pipe, list=n.ListNode(pos=self.where.pos(act.close + 2)), pos=pos)
            self.current_list().nodes.append(node)
            self.stack.append(_Frame(ctl, node, node.list, saved))
        elif kind in ("act_else", "act_else_if", "act_else_with"):
            self.else_action(act, pos)
        elif kind == "act_end":
            self.end_action(act)
        elif kind in ("act_break", "act_continue"):
            word = kind[4:]
            if not self.in_range():
                raise self.fail_at_close(f"{{{{{word}}}}} outside {{{{range}}}}", act)
            cls2 = n.BreakNode if word == "break" else n.ContinueNode
            self.current_list().nodes.append(cls2(pos=pos))
        elif kind == "act_define":
            if self.stack:
                kw = act.keyword
                assert kw is not None
                raise self.fail("unexpected \"define\" in command: {{define}} is only allowed "
                                "at the top level, outside any other action", _start(kw))
            tname = self.template_name(body.children[1])
            frame = _Frame("define", None, n.ListNode(pos=self.where.pos(act.close + 2)), 0,
                           outer_vars=self.vars, name=tname)
            self.vars = ["$"]
            self.stack.append(frame)
        elif kind == "act_template":
            tname = self.template_name(body.children[1])
            pipe_opt = (self.pipeline(body.children[2], "template clause", act.close)
                        if len(body.children) > 2 else None)
            self.current_list().nodes.append(n.TemplateNode(tname, pipe_opt, pos=pos))
        elif kind == "act_block":
            tname = self.template_name(body.children[1])
            pipe = self.pipeline(body.children[2], "block clause", act.close)
            self.current_list().nodes.append(
                n.TemplateNode(tname, pipe, from_block=True, pos=pos))
            frame = _Frame("block", None, n.ListNode(pos=self.where.pos(act.close + 2)), 0,
                           outer_vars=self.vars, name=tname, open_close=act.close)
            self.vars = ["$"]
            self.stack.append(frame)
        else:  # pragma: no cover - the grammar has no other alternative
            raise self.fail(f"unknown action {kind}", act.start)

    def else_action(self, act: _Action, pos: n.Pos) -> None:
        chain = {"act_else_if": "if", "act_else_with": "with"}.get(act.kind)
        blame = _start(act.keyword) if chain and act.keyword is not None else act.close
        frame = self.else_frame(chain, blame)
        frame.in_else = True
        assert isinstance(frame.node, n.BranchNode)
        else_list = n.ListNode(pos=self.where.pos(act.close + 2 if chain is None else act.start))
        frame.node.else_list = else_list
        frame.list = else_list
        if chain is None:
            return
        saved = len(self.vars)
        pipe = self.pipeline(act.tree.children[2], chain, act.close)
        cls = n.IfNode if chain == "if" else n.WithNode
        node = cls(pipe=pipe, list=n.ListNode(pos=self.where.pos(act.close + 2)), pos=pos)
        else_list.nodes.append(node)
        self.stack.append(_Frame(chain, node, node.list, saved, chained=True))

    def else_frame(self, chain: str | None, blame: int) -> _Frame:
        """Go's checks on an {{else}} (made before it parses an else-if pipeline): the frame
        it belongs to."""
        if not self.stack:
            raise self.fail("unexpected {{else}}: there is no open {{if}}, {{range}} or "
                            "{{with}}", blame)
        frame = self.stack[-1]
        if frame.kind in ("define", "block"):
            where = "define" if frame.kind == "define" else "block"
            offset = blame if frame.kind == "define" else frame.open_close
            raise self.fail(f"unexpected {{{{else}}}} in {where} clause", offset)
        if frame.in_else:
            raise self.fail("expected end; found {{else}}: an {{if}}/{{range}}/{{with}} has "
                            "at most one {{else}}", blame)
        if chain is not None and chain != frame.kind:
            raise self.fail(f"unexpected \"{chain}\" in input: {{{{else {chain}}}}} is only "
                            f"allowed in {{{{{chain}}}}}", blame)
        return frame

    def check_partial(self, tokens: list[Token], offset: int) -> None:
        """Go's checks on the tokens of an action up to `offset`, where the grammar rejected
        it: Go parses left to right and stops at an undefined function or variable, a bad
        literal, a misplaced {{else if}} or {{define}} before it reaches that point."""
        head = [t for t in tokens if _start(t) < offset]
        if len(head) >= 2 and head[0].type == "ELSE" and head[1].type in ("IF", "WITH"):
            self.else_frame(head[1].type.lower(), _start(head[1]))
        if head and head[0].type == "DEFINE" and self.stack:
            raise self.fail("unexpected \"define\" in command: {{define}} is only allowed "
                            "at the top level, outside any other action", _start(head[0]))
        pipe_start = True
        for i, tok in enumerate(head):
            kind = tok.type
            after = tokens[i + 1].type if i + 1 < len(tokens) else None
            if kind == "VARIABLE" and pipe_start and after in ("DECLARE", "ASSIGN", "COMMA"):
                self.vars.append(str(tok))
            elif kind in _TERM_TOKENS:
                node = self.term(tok, lead_var=pipe_start)
                chain = list(itertools.takewhile(lambda t: t.type == "CHAINFIELD", head[i + 1:]))
                if chain and isinstance(node, _CONSTANT_NODES):
                    raise self.constant_chain(tok, _end(chain[-1]))
            named = kind in ("STRING", "RAWSTRING") and i > 0 and head[i - 1].type in (
                "TEMPLATE", "BLOCK")
            pipe_start = kind in _PIPELINE_OPENERS or named or (
                kind == "COMMA" and head[0].type == "RANGE")

    def end_action(self, act: _Action) -> None:
        if not self.stack:
            raise self.fail_at_close("unexpected {{end}}: nothing is open", act)
        frame = self.stack.pop()
        while frame.chained:
            frame = self.stack.pop()
        if frame.kind in ("define", "block"):
            self.vars = frame.outer_vars
            self.add_tree(frame.name, frame.list, act.close)
        else:
            del self.vars[frame.saved_vars:]

    def finish(self) -> None:
        eof = len(self.source)
        if self.stack:
            frame = self.stack[-1]
            while frame.chained:
                frame = self.stack[self.stack.index(frame) - 1]
            opener = frame.kind
            raise self.fail(f"unexpected EOF: {{{{{opener}}}}} has no matching {{{{end}}}}",
                            eof, line=self.where.eof_line())
        self.add_tree("", self.root, eof, line=self.where.eof_line())

    # pipelines

    def template_name(self, name_tree: Tree) -> str:
        tok = name_tree.children[0]
        assert isinstance(tok, Token)
        return self.string_value(tok)

    def string_value(self, tok: Token) -> str:
        try:
            return unquote_string(str(tok))
        except ValueError as exc:
            raise self.fail(f"invalid syntax in string {str(tok)}: {exc}", _start(tok)) \
                from None

    def declare(self, tok: Token, pipe: n.PipeNode) -> None:
        pipe.decl.append(n.VariableNode([str(tok)], pos=self.where.pos(_start(tok))))
        self.vars.append(str(tok))

    def pipeline(self, tree: Tree, context: str, close: int) -> n.PipeNode:
        first = _first_token(tree)
        pipe = n.PipeNode(pos=self.where.pos(_start(first) if first else close))
        children = tree.children
        cmds_tree = children[-1]
        if len(children) == 2:
            decl = children[0]
            assert isinstance(decl, Tree)
            var, op = decl.children
            assert isinstance(var, Token) and isinstance(op, Token)
            pipe.is_assign = op.type == "ASSIGN"
            self.declare(var, pipe)
            self.commands(cmds_tree, pipe, close, lead_var=False)
        else:
            self.commands(cmds_tree, pipe, close, lead_var=True)
        return pipe

    def range_pipeline(self, tree: Tree, close: int) -> n.PipeNode:
        if tree.data == "range_plain":
            return self.pipeline(tree, "range", close)
        first = tree.children[0]
        assert isinstance(first, Token)
        pipe = n.PipeNode(pos=self.where.pos(_start(first)))
        if tree.data == "range_two":
            v1, _comma, v2, op, cmds = tree.children
            assert isinstance(v2, Token) and isinstance(op, Token)
            self.declare(first, pipe)
            self.declare(v2, pipe)
            pipe.is_assign = op.type == "ASSIGN"
            self.commands(cmds, pipe, close, lead_var=False)
            return pipe
        # `range $i, $v`: only $i is declared; the pipeline must start with a variable.
        _v, _comma, cmds = tree.children
        lead = _first_token(cmds)
        if lead is None or lead.type != "VARIABLE":
            blame = _start(lead) if lead else close
            raise self.fail("range can only initialize variables", blame)
        self.declare(first, pipe)
        self.commands(cmds, pipe, close, lead_var=True)
        return pipe

    def commands(self, tree: Tree | Token, pipe: n.PipeNode, close: int, *,
                 lead_var: bool) -> None:
        assert isinstance(tree, Tree)
        stages: list[list[Tree]] = [[]]
        for child in tree.children:
            if isinstance(child, Tree):
                stages[-1].append(child)
            else:  # PIPE
                stages.append([])
        for i, operands in enumerate(stages):
            if not operands:  # after a trailing `|`
                continue
            args = [self.operand(op, lead_var=lead_var and i == 0 and j == 0)
                    for j, op in enumerate(operands)]
            pipe.cmds.append(n.CommandNode(args, pos=args[0].pos))
        # Go checks this when it reaches the end of the pipeline, after every stage parsed.
        for i, cmd in enumerate(pipe.cmds[1:], start=2):
            if isinstance(cmd.args[0], (n.BoolNode, n.DotNode, n.NilNode, n.NumberNode,
                                        n.StringNode)):
                raise self.fail(f"non executable command in pipeline stage {i}: a constant "
                                "cannot receive piped input", close)

    def operand(self, tree: Tree, *, lead_var: bool) -> n.Node:
        term = tree.children[0]
        chain = [c for c in tree.children[1:] if isinstance(c, Token)]
        node = self.term(term, lead_var=lead_var)
        if not chain:
            return node
        names = [str(c)[1:] for c in chain]
        if isinstance(node, n.FieldNode):
            node.ident.extend(names)
            return node
        if isinstance(node, n.VariableNode):
            node.ident.extend(names)
            return node
        if isinstance(node, _CONSTANT_NODES):
            raise self.constant_chain(term, _end(chain[-1]))
        return n.ChainNode(node, names, pos=node.pos)

    def constant_chain(self, term: Tree | Token, end: int) -> TemplateSyntaxError:
        """Go's error for fields after a constant, raised where the chain ends."""
        return self.fail(f"unexpected . after term {_term_text(term)!r}: a constant has no "
                         "fields", end)

    def term(self, term: Tree | Token, *, lead_var: bool) -> n.Node:
        if isinstance(term, Tree):  # paren
            lpar, pipe_tree, rpar = term.children
            assert isinstance(lpar, Token) and isinstance(rpar, Token)
            assert isinstance(pipe_tree, Tree)
            return self.pipeline(pipe_tree, "parenthesized pipeline", _start(rpar))
        pos = self.where.pos(_start(term))
        kind = term.type
        text = str(term)
        if kind == "IDENT":
            if text not in KNOWN_FUNCS:
                raise self.fail(f"function {text!r} not defined", _start(term))
            return n.IdentifierNode(text, pos=pos)
        if kind == "FIELD":
            return n.FieldNode([text[1:]], pos=pos)
        if kind == "VARIABLE":
            if text not in self.vars:
                # Go has already looked at the next token when the variable leads a pipeline
                # (to see whether it is declared there): its line is the one Go reports.
                line = None
                if lead_var:
                    line = self.where.line(_next_nonspace(self.source, _end(term)))
                raise self.fail(f"undefined variable {text!r}", _start(term), line)
            return n.VariableNode([text], pos=pos)
        if kind == "DOT":
            return n.DotNode(pos=pos)
        if kind == "NIL":
            return n.NilNode(pos=pos)
        if kind == "BOOL":
            return n.BoolNode(text == "true", pos=pos)
        if kind in ("NUMBER", "CHAR"):
            try:
                return new_number(text, pos)
            except (ValueError, IndexError) as exc:
                raise self.fail(f"{exc}" if kind == "NUMBER" else
                                f"invalid character constant {text}: {exc}",
                                _start(term)) from None
        if kind in ("STRING", "RAWSTRING"):
            return n.StringNode(text, self.string_value(term), pos=pos)
        raise self.fail(f"unexpected {text!r} in operand", _start(term))  # pragma: no cover


def _next_nonspace(src: str, pos: int) -> int:
    """Where the next token after `pos` starts, as Go's item line counts it."""
    while pos < len(src) and src[pos] in _GO_SPACE:
        if src.startswith("-}}", pos + 1):
            return pos + 3  # a trim-marked `}}`: Go's item starts after " -"
        pos += 1
    return pos


def _start(tok: Token) -> int:
    """Where `tok` starts. Lark types `start_pos` as optional; every token here comes from
    `_Scan` (or is the `$END` token), which always sets it."""
    offset = tok.start_pos
    assert offset is not None
    return offset


def _end(tok: Token) -> int:
    """Where `tok` ends (set on every token, like `_start`)."""
    offset = tok.end_pos
    assert offset is not None
    return offset


def _first_token(tree: Tree | Token) -> Token | None:
    if isinstance(tree, Token):
        return tree
    for child in tree.children:
        tok = _first_token(child)
        if tok is not None:
            return tok
    return None


def _term_text(term: Tree | Token) -> str:
    return str(term) if isinstance(term, Token) else "(…)"


def is_empty_tree(node: n.Node) -> bool:
    """Go's parse.IsEmptyTree: only blank text and comments."""
    if isinstance(node, n.ListNode):
        return all(is_empty_tree(c) for c in node.nodes)
    if isinstance(node, n.CommentNode):
        return True
    if isinstance(node, n.TextNode):
        return not node.text.strip(_UNICODE_SPACE)
    return False


# bytes.TrimSpace trims unicode.IsSpace runes.
_UNICODE_SPACE = ("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
                  "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


# --- entry point ------------------------------------------------------------------------------


def parse(source: str, name: str = "template") -> n.Template:
    """Parse `source` as Go's text/template would with Ollama's functions; raise
    TemplateSyntaxError (with `name`, Go's line and our column) where Go rejects it."""
    where = _Where(source)
    try:
        items = _flat_items(source, name, where)
        builder = _Builder(source, name, where)
        _build(builder, items)
        builder.finish()
    except RecursionError:
        # Parenthesized pipelines are built recursively: a few hundred levels exhaust
        # Python's stack long before Go's own limit (10000, "max expression depth exceeded").
        raise TemplateSyntaxError(
            "parentheses nest too deeply for this translator (a few hundred levels; Go "
            "allows 10000): split the expression with variables", name=name) from None
    root = builder.trees.pop("", builder.root)
    return n.Template(root=root, defines=builder.trees, source=source, name=name)


def _flat_items(source: str, name: str, where: _Where) -> list[Token | _Action]:
    driver, lexer = _parser()
    scan = lexer.start(source)
    try:
        tree = driver.parse(iter(scan), len(source))
    except (_LexError, _NoToken, _Unexpected) as exc:
        at_end = isinstance(exc, _Unexpected) and exc.token.type == "$END"
        offset = len(source) if at_end else (
            _start(exc.token) if isinstance(exc, _Unexpected) else exc.offset)
        _raise_earlier(source, name, where, scan, offset)
        line: int | None = None
        if isinstance(exc, _LexError):
            message = exc.message
        elif isinstance(exc, _NoToken) or at_end:
            message, offset, line = _explain_characters(source, offset, where)
        else:
            message, offset, line = _explain_token(source, exc.token, offset)
        p = where.pos(offset)
        raise TemplateSyntaxError(message, line=line or p.line, col=p.col, name=name) from None
    except LarkError as exc:  # pragma: no cover - defensive
        raise TemplateSyntaxError(f"cannot parse: {exc}", name=name) from None
    items: list[Token | _Action] = []
    for child in tree.children:
        if isinstance(child, Token):
            items.append(child)
            continue
        ltok, body, rtok = child.children
        assert isinstance(ltok, Token) and isinstance(body, Tree) and isinstance(rtok, Token)
        keyword: Token | None = None
        if body.data in ("act_else_if", "act_else_with", "act_define"):
            word = body.children[1] if body.data != "act_define" else body.children[0]
            assert isinstance(word, Token)
            keyword = word
        items.append(_Action(
            kind=body.data, tree=body, start=_start(ltok),
            close=_end(rtok) - 2, trim_left=ltok.type == "LDELIM_TRIM",
            trim_right=rtok.type == "RDELIM_TRIM", keyword=keyword))
    return items


def _build(builder: _Builder, items: list[Token | _Action]) -> None:
    """Apply trim markers to the text between actions, then nest the stream."""
    count = len(items)
    for idx, item in enumerate(items):
        if isinstance(item, _Action):
            builder.action(item)
            continue
        if item.type == "COMMENT":
            body = str(item)
            inner = body[2:-2]
            if inner.startswith("-") and inner[1:2] in tuple(_GO_SPACE):
                inner = inner[2:]
            if inner[-1:] == "-" and inner[-2:-1] in tuple(_GO_SPACE):
                inner = inner[:-2]
            builder.comment(inner, _start(item))
            continue
        text = str(item)
        start = _start(item)
        if idx > 0 and _trims_right(items[idx - 1]):
            stripped = text.lstrip(_GO_SPACE)
            start += len(text) - len(stripped)
            text = stripped
        if idx + 1 < count and _trims_left(items[idx + 1]):
            text = text.rstrip(_GO_SPACE)
        if text:
            builder.text(text, start)


def _trims_left(item: Token | _Action) -> bool:
    if isinstance(item, _Action):
        return item.trim_left
    return item.type == "COMMENT" and str(item).startswith("{{-")


def _trims_right(item: Token | _Action) -> bool:
    if isinstance(item, _Action):
        return item.trim_right
    return item.type == "COMMENT" and str(item).endswith("-}}") and str(item)[-4] in _GO_SPACE


def _raise_earlier(source: str, name: str, where: _Where, scan: _Scan, offset: int) -> None:
    """Go reports the first error in source order: before blaming `offset`, run Go's checks on
    the actions before the one the grammar rejected (an undefined name or a stray {{end}}
    there) and on the tokens of that action before `offset`."""
    start, end = scan.action_start, scan.action_end
    if start < 0 or 0 <= end <= offset:
        return
    tokens = scan.action_tokens
    builder = _Builder(source, name, where)
    if start > 0:
        prefix = source[:start]
        _build(builder, _flat_items(prefix, name, _Where(prefix)))
    builder.check_partial(tokens, offset)


def _explain_characters(source: str, offset: int,
                        where: _Where) -> tuple[str, int, int | None]:
    """A message in Go's words for characters no terminal matches (or the end of the input
    inside an action), the offset to blame and the line Go reports."""
    eof_line = where.eof_line()
    open_at = source.rfind("{{", 0, offset + 1)
    close_at = source.find("}}", open_at) if open_at >= 0 else -1
    inside = open_at >= 0 and (close_at < 0 or close_at >= offset) and (
        source.rfind("}}", 0, offset) < open_at)
    if inside:
        after = open_at + 2
        if source[after:after + 1] == "-" and source[after + 1:after + 2] in _GO_SPACE:
            after += 2
        if source.startswith("/*", after):
            end = source.find("*/", after + 2)
            if end < 0:
                return "unclosed comment", after, where.line(after)
            return ("comment ends before closing delimiter: write */}} with nothing "
                    "between"), after, where.line(after)
    if offset >= len(source):
        if inside:
            return (f"unclosed action started at {where.line(open_at)}: missing }}}}",
                    open_at, eof_line)
        return "unexpected EOF", len(source), eof_line
    ch = source[offset]
    if ch == '"':
        return "unterminated quoted string", offset, None
    if ch == "`":
        return "unterminated raw quoted string", offset, None
    if ch == "'":
        return "unterminated character constant", offset, None
    if ch == ")":
        return "unexpected right paren", offset, None
    if ch == "/" and source.startswith("/*", offset):
        return ("unexpected \"/\" in command: a comment must start right after {{ "
                "(or {{- )"), offset, None
    if ch in "+-.0123456789":
        return f"bad number syntax near {source[offset:offset + 8]!r}", offset, None
    if ch == ":":
        return "expected :=", offset, None
    return f"unexpected character {_go_rune(ch)} in action", offset, None


def _explain_token(source: str, tok: Token, offset: int) -> tuple[str, int, int | None]:
    """A message in Go's words for a token the grammar does not accept where it stands."""
    if tok.type in ("RDELIM", "RDELIM_TRIM"):
        opened = source.count("(", source.rfind("{{", 0, offset), offset)
        closed = source.count(")", source.rfind("{{", 0, offset), offset)
        close = _end(tok) - 2
        if opened > closed:
            return "unclosed left paren", close, None
        return ("missing value: the action ends before its pipeline (or the pipeline ends "
                "with an empty command)"), close, None
    if tok.type == "COMMA":
        return ("too many declarations: only {{range}} may declare two variables "
                "($i, $v := …)"), _start(tok), None
    if tok.type == "RPAR":
        opened = source.count("(", source.rfind("{{", 0, offset), offset)
        closed = source.count(")", source.rfind("{{", 0, offset), offset)
        if closed >= opened:
            return "unexpected right paren", _start(tok), None
        return "missing value for parenthesized pipeline", _start(tok), None
    return f"unexpected {_describe(tok)} in action", _start(tok), None
