"""Parse a Go `text/template` (Go 1.27, default delimiters) into the typed AST of `nodes`.

The grammar (grammar/gotemplate.lark) defines the tokens and the LALR tables: a two-mode
lexer over its terminals tokenises the source and an LALR loop over Lark's tables parses it.
The grammar is flat (a stream of text, comments and actions); the syntax package pairs `{{ end }}`
and `{{ else }}` with their openers, applies trim markers, resolves variable scopes and
function names, and decodes literals. Go's own parser does those checks outside its grammar
too, so doing them here lets every rejection carry Go's verdict, Go's line and a message a
person can act on.

Go reports only a line for parse errors; the column we add is the place we blame.

May depend on: errors, syntax.nodes and the other modules of syntax (lexer, builder, explain,
position).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import lru_cache

from lark import Lark, Token, Tree
from lark.exceptions import LarkError
from lark.parsers.lalr_analysis import Shift

from gotmpl2jinja.errors import TemplateSyntaxError
from gotmpl2jinja.syntax import nodes as n
from gotmpl2jinja.syntax.builder import _Action, _Builder
from gotmpl2jinja.syntax.explain import _explain_characters, _explain_token
from gotmpl2jinja.syntax.lexer import (
    _GO_SPACE,
    _end,
    _GoLexer,
    _lark,
    _LexError,
    _NoToken,
    _Scan,
    _start,
)
from gotmpl2jinja.syntax.position import _Where


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
