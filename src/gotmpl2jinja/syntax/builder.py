"""Nests the grammar's flat stream of actions into nodes, with Go's checks and lines.

May depend on: errors, syntax.nodes, syntax.lexer, syntax.literals, syntax.position.
"""

from __future__ import annotations

import builtins
import itertools
from dataclasses import dataclass, field

from lark import Token, Tree

from gotmpl2jinja.errors import TemplateSyntaxError
from gotmpl2jinja.syntax import nodes as n
from gotmpl2jinja.syntax.lexer import _GO_SPACE, _end, _start
from gotmpl2jinja.syntax.literals import new_number, unquote_string
from gotmpl2jinja.syntax.position import _Where

GO_BUILTINS = frozenset(
    "and or not eq ne lt le gt ge len index slice print printf println html js urlquery call"
    .split()
)
OLLAMA_FUNCS = frozenset({"json", "currentDate", "yesterdayDate", "toTypeScriptType"})
KNOWN_FUNCS = GO_BUILTINS | OLLAMA_FUNCS

_TERM_TOKENS = frozenset(
    "IDENT VARIABLE NUMBER CHAR STRING RAWSTRING NIL BOOL DOT FIELD".split())
_CONSTANT_NODES = (n.BoolNode, n.StringNode, n.NumberNode, n.NilNode, n.DotNode)
# Tokens after which a pipeline starts (where `$x :=` declares a variable).
_PIPELINE_OPENERS = frozenset({"LDELIM", "LDELIM_TRIM", "IF", "WITH", "RANGE", "LPAR"})


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
