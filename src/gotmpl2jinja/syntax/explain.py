"""Go's words for what the grammar rejects: the message, the offset to blame, Go's line.

May depend on: syntax.lexer, syntax.position.
"""

from __future__ import annotations

from lark import Token

from gotmpl2jinja.syntax.lexer import _GO_SPACE, _end, _go_rune, _start
from gotmpl2jinja.syntax.position import _Where


def _describe(tok: Token) -> str:
    if tok.type in ("RDELIM", "RDELIM_TRIM"):
        return "'}}'"
    if tok.type == "$END":
        return "end of input"
    return repr(str(tok))


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
