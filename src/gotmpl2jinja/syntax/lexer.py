"""Go's lexer for actions and text: the grammar's terminals, scanned in two modes.

May depend on: nothing else of gotmpl2jinja (the grammar file `grammar/gotemplate.lark`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from functools import lru_cache
from importlib import resources
from pathlib import Path

from lark import Lark, Token
from lark.common import LexerConf
from lark.lark import PostLex
from lark.lexer import Lexer, LexerState, TerminalDef
from lark.utils import TextSlice

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
