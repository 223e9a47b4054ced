"""Go template AST → portable, readable Jinja that renders Ollama's exact bytes.

The emitted template carries Ollama's behaviour itself: a short prelude computes Ollama's values
(collated messages, `.System`, the think values) from the contract's variables, then the body
follows the Go template node for node. Expressions are translated by Go type (see
`analysis.GoType`): the type decides how a value prints, compares and tests for truth, so the
Jinja never depends on an engine's own printing of booleans, numbers or none.

Portable dialect only (jinja-portability.md §3): every tag is left-trimmed, every byte of
template text is a string literal inside an expression, so the output does not depend on
trim_blocks/lstrip_blocks. Anything that cannot be expressed faithfully raises
TranslationError naming the construct; a Go execution error becomes `raise_exception`.

This module is the walker's core (its state, scopes, output lines, node dispatch, the
prelude and the header); the rest of `Emitter` comes from its parts, one mixin per module.

May depend on: `analysis`, `emit` (its parts and `values`, `paths`, `loops`, `collate`,
`family`), `errors`, `ollama`, `syntax`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from gotmpl2jinja.analysis import (
    MIXABLE,
    Analysis,
    GoType,
    Variable,
    messages_alike_when_nil,
)
from gotmpl2jinja.emit import family, runtime
from gotmpl2jinja.emit.assistant import Blocks
from gotmpl2jinja.emit.collate import Collating, system_join
from gotmpl2jinja.emit.comparisons import Comparisons
from gotmpl2jinja.emit.expressions import Expressions
from gotmpl2jinja.emit.generation import ChatLoop, prints
from gotmpl2jinja.emit.knowledge import Knowledge
from gotmpl2jinja.emit.loops import BreakFlag, Loop, RestoreDot
from gotmpl2jinja.emit.paths import PATH_NEUTRAL_FIELDS, fim_branch, header_name
from gotmpl2jinja.emit.printf import Printf
from gotmpl2jinja.emit.printing import Printing
from gotmpl2jinja.emit.statements import Statements
from gotmpl2jinja.emit.strings import Strings
from gotmpl2jinja.emit.values import (
    ATOM,
    COMPARE,
    COND,
    FAILING_CALLS,
    INDENT,
    OR,
    Expr,
    Retype,
    TemplateMacros,
    const_expr,
    quote,
)
from gotmpl2jinja.errors import TranslationError
from gotmpl2jinja.ollama.capabilities import has_thinking
from gotmpl2jinja.syntax import nodes


@dataclass
class Emitter(Statements, Expressions, Knowledge, Strings, Comparisons, Printing, Printf,
              Collating):
    """Walks the Go AST and writes Jinja lines."""

    template: nodes.Template
    analysis: Analysis
    lines: list[str] = field(default_factory=list)
    depth: int = 0
    pending: list[Expr] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)
    dot: Expr = field(default_factory=lambda: Expr("", GoType.ROOT, stable=True))
    values: dict[int, Expr] = field(default_factory=dict)  # id(Variable) -> its Expr
    facts: list[tuple[str, int]] = field(default_factory=list)  # (len code, known > n)
    root_used: set[str] = field(default_factory=set)
    message_fields: set[str] = field(default_factory=set)
    macros: set[str] = field(default_factory=set)
    loop_names: set[str] = field(default_factory=set)
    mode: str = "messages"  # or "fim": Ollama's fill-in-the-middle path (§3)
    truthy: set[str] = field(default_factory=set)  # codes an enclosing `if`/`with` proved true
    templates: TemplateMacros = field(default_factory=TemplateMacros)
    #: Byte-exact string facts where they hold: Jinja code of a string → an ASCII prefix it is
    #: known to start with (see `prefix_test`). Scoped to the branch the guard proves.
    prefixes: dict[str, str] = field(default_factory=dict)
    #: Placeholder codes of values with no exact Jinja (a string's byte count, a run-time
    #: padding): writing one out raises its error, so only exact uses of them get through.
    refusals: dict[str, TranslationError] = field(default_factory=dict)
    #: The dot and truths from before each LoopWith, by key (see RestoreDot).
    outer_dots: dict[int, tuple[Expr, set[str]]] = field(default_factory=dict)
    #: Placeholders (refusals anywhere else) that become their code where they are printed.
    printable: dict[str, str] = field(default_factory=dict)
    #: The chat loop whose "last" facts and trailing output hold under add_generation_prompt
    #: (`emit.generation`); None where the flags are not honoured.
    chat: ChatLoop | None = None
    #: The nodes printing the assistant's own text, each written inside a `{% generation %}`
    #: block (`emit.assistant`; empty unless asked for).
    generation: Blocks = field(default_factory=dict)

    # --- errors -----------------------------------------------------------------------------

    def error(self, message: str, node: nodes.Node | None) -> TranslationError:
        if node is None:
            return TranslationError(message, name=self.template.name)
        return TranslationError(message, line=node.pos.line, col=node.pos.col,
                                name=self.template.name)

    def refused(self, error: TranslationError) -> str:
        """A placeholder code for a value Jinja cannot compute: `line`/`flush` raise `error`
        if it reaches the output, so it may only be consumed by code that knows it exactly."""
        key = f"\x00refused{len(self.refusals)}\x00"
        self.refusals[key] = error
        return key

    def printed_only(self, code: str, node: nodes.Node | None) -> Expr:
        """A string in which Go prints a memory address: `code` raises the contract's ADDRESS
        failure where Go prints one, which is right only where the string is printed (Go may
        also store, compare or measure it without failing), so anywhere else it is refused."""
        key = self.refused(self.error(
            "a value in which Go prints a memory address, used other than printed (stored, "
            "compared, measured or tested): not supported", node))
        self.printable[key] = f"({code})"
        return Expr(key, GoType.STRING, ATOM)

    def consumed(self, e: Expr) -> None:
        """Refuse `e` where a function or a test consumes it: a string in which Go prints an
        address may be printed (its code then raises), but its length, its bytes, a comparison
        or its truth are Go's stable values that no template can compute."""
        if "\x00refused" in e.code:
            for key in self.printable:
                if key in e.code:
                    raise self.refusals[key]

    def check_refusals(self, text: str) -> None:
        if "\x00refused" in text:
            for key, error in self.refusals.items():
                if key in text:
                    raise error

    def effect(self, e: Expr) -> str | None:
        """Jinja that fails exactly where evaluating `e` fails in Go, for a value Go computes
        but the template may never print or test (a variable, a condition with nothing inside,
        a comparison with nil); None where evaluating it cannot fail. A cut string is checked by
        its range (go_slice_len), not by its bytes: only printing them raises NOT_UTF8. (A cut
        already inside other code is left as it was: its range is not separable there.)"""
        if e.cut is not None:
            self.macros.add("go_slice_len")
            return f"go_slice_len({', '.join(e.cut)})"
        if "go_slice(" not in e.code and ("raise_exception(" in e.code
                                          or FAILING_CALLS.search(e.code)):
            return e.code
        return None

    def evaluated(self, e: Expr) -> None:
        """Evaluate `e` here, printing nothing, where it may fail (see `effect`)."""
        effect = self.effect(e)
        if effect is not None:
            self.line(f"{{%- if ({effect}) is none %}}{{%- endif %}}")

    def evaluated_first(self, args: list[Expr], result: Expr) -> Expr:
        """`result` once every argument that may fail is evaluated: Go evaluates a function's
        arguments before it calls the function, so where one fails (`slice .Content 3`) the
        template fails, even when the function ignores it (Ollama's date functions,
        toTypeScriptType of a non-property, printf's %T)."""
        effects = [effect for a in args if (effect := self.effect(a)) is not None]
        if not effects:
            return result
        test = " and ".join(f"({effect}) is not none" for effect in effects)
        return Expr(f"{result.wrap(OR)} if {test} else {result.wrap(COND)}", result.type, COND,
                    stable=result.stable and all(a.stable for a in args),
                    loop=result.loop or next((a.loop for a in args if a.loop is not None), None))

    @staticmethod
    def raising(message: str) -> Expr:
        """A Go execution error at this point: Jinja raises when it evaluates this."""
        return Expr(f"raise_exception({quote(message)})", GoType.RAISE)

    # --- output -----------------------------------------------------------------------------

    def line(self, text: str) -> None:
        self.flush()
        self.check_refusals(text)
        self.lines.append(INDENT * self.depth + text)

    def output(self, expr: Expr) -> None:
        if expr.is_const and expr.const == "":
            return
        self.pending.append(expr)

    def flush(self) -> None:
        if not self.pending:
            return
        parts: list[Expr] = []
        for expr in self.pending:
            if parts and expr.is_const and parts[-1].is_const:
                parts[-1] = const_expr(str(parts[-1].const) + str(expr.const))
            else:
                parts.append(expr)
        self.pending = []
        code = " ~ ".join(p.wrap(ATOM) if len(parts) > 1 else p.code for p in parts)
        if "\x00refused" in code:
            for key, printed in self.printable.items():
                code = code.replace(key, printed)
        self.check_refusals(code)
        self.lines.append(INDENT * self.depth + "{{- " + code + " }}")

    # --- statements -------------------------------------------------------------------------

    def emit_list(self, lst: nodes.ListNode) -> None:
        chat = self.chat
        for at, node in enumerate(lst.nodes):
            self.emit_node(node)
            if chat is not None and id(node) in chat.path and self.mode == "messages" \
                    and any(prints(after) for after in lst.nodes[at + 1:]):
                self.generation_prompt(nodes.ListNode(nodes=lst.nodes[at + 1:]))
                return

    def generation_prompt(self, after: nodes.ListNode) -> None:
        """What the template prints after its chat loop: the generation prompt's part, printed
        under add_generation_prompt only (`emit.generation`)."""
        self.flush()
        self.line("{%- if add_generation_prompt %}")
        self.depth += 1
        self.emit_list(after)
        self.flush()
        self.depth -= 1
        self.line("{%- endif %}")

    def emit_node(self, node: nodes.Node) -> None:
        if id(node) not in self.generation:
            self.emit_other(node)
            return
        role = self.generation[id(node)]
        self.flush()
        if role is not None:  # the assistant's turn only: the same output otherwise
            test = self.pipeline(nodes.PipeNode(cmds=[nodes.CommandNode(args=[role])]))
            self.line(f"{{%- if {test.wrap(ATOM)} == 'assistant' %}}")
            self.depth += 1
        self.line("{%- generation %}")
        self.emit_other(node)
        self.flush()
        self.line("{%- endgeneration %}")
        if role is not None:
            self.depth -= 1
            self.line("{%- else %}")
            self.depth += 1
            self.emit_other(node)
            self.flush()
            self.depth -= 1
            self.line("{%- endif %}")

    def emit_other(self, node: nodes.Node) -> None:
        if isinstance(node, nodes.TextNode):
            if node.text:
                self.output(const_expr(node.text))
        elif isinstance(node, nodes.CommentNode):
            body = node.text
            if body.startswith("/*") and body.endswith("*/"):
                body = body[2:-2]
            body = body.replace("#}", "# }").strip("\n")
            self.line("{#- " + body.strip() + " #}" if "\n" not in body.strip()
                      else "{#-" + body + " #}")
        elif isinstance(node, nodes.ActionNode):
            self.emit_action(node)
        elif isinstance(node, nodes.IfNode):
            self.emit_if(node)
        elif isinstance(node, nodes.RangeNode):
            self.emit_range(node)
        elif isinstance(node, nodes.WithNode):
            self.emit_with(node)
        elif isinstance(node, nodes.TemplateNode):
            self.emit_template_call(node)
        elif isinstance(node, BreakFlag):
            flag = self.loops[-1].break_flag
            self.line(f"{{%- set {flag}.done = true %}}")
        elif isinstance(node, RestoreDot):
            self.dot, truthy = self.outer_dots[node.key]
            self.truthy = set(truthy)
        elif isinstance(node, nodes.ContinueNode):
            raise self.error("continue in a range's else (Go continues the enclosing range "
                             "from there): not supported", node)
        elif isinstance(node, nodes.BreakNode):
            raise self.error("break left after rewriting", node)
        elif isinstance(node, nodes.ListNode):
            self.emit_list(node)
        else:
            raise self.error(f"{type(node).__name__}: not supported", node)

    def emit_action(self, node: nodes.ActionNode) -> None:
        pipe = node.pipe
        if not pipe.decl:
            self.output(self.text(self.pipeline(pipe), node))
            return
        value = self.bind(pipe, node)
        if value.type == GoType.RAISE:
            self.output(value)

    def bind(self, pipe: nodes.PipeNode, node: nodes.Node) -> Expr:
        """Set the one variable `pipe` declares or assigns (`$x := …`, `$x = …`, also as the
        pipeline of an `if` or `with`) and return the pipeline's value."""
        if len(pipe.decl) != 1:
            raise self.error("a pipeline declaring two variables is only valid in range", node)
        var = self.analysis.variable(pipe.decl[0])
        value = self.pipeline(pipe)
        if value.type == GoType.RAISE:
            if not pipe.is_assign:  # later reads are unreachable, but must still translate
                self.values[id(var)] = value
            return value
        stored = value
        if value.choice is not None and var.condition_only:
            # only ever tested for truth: Go's truth of the and/or is all it needs to hold
            stored = replace(value.choice.truth, type=GoType.TRUTH)
        if pipe.is_assign:
            self.assign(var, stored, node)
            return value
        self.declare(var, stored, node)
        return self.values[id(var)] if stored is value else value

    def declare(self, var: Variable, value: Expr, node: nodes.Node) -> None:
        inline = (
            not var.assigned and value.stable and not var.used_in_deeper_loop
            and self.readable_here(value.loop)
            and value.prec >= COMPARE and len(value.code) <= 60
        )
        if inline:
            self.evaluated(value)  # (Go computes it here, used or not)
            self.values[id(var)] = value
            return
        if var.namespace and self._ns_literal(var) is not None:
            pass  # initialised in the namespace() call at the top of its scope
        else:
            self.line(f"{{%- set {var.ref} = {value.code} %}}")
        alts = self.analysis.mixed.get(id(var))
        if alts is not None:
            self.values[id(var)] = Expr(var.ref, GoType.MIXED, alts=alts)
            return
        self.values[id(var)] = Expr(var.ref, value.type, maybe_undefined=value.maybe_undefined,
                                    unwrapped=value.unwrapped)

    def assign(self, var: Variable, value: Expr, node: nodes.Node) -> None:
        current = self.values.get(id(var))
        if current is None:
            raise self.error(f"assignment to {var.go_name} before it has a value", node)
        if current.type == GoType.RAISE:
            # its declaration is Go's execution error: every run that gets here has failed
            # before (a variable is declared in a scope that encloses its assignments)
            return
        if current.type == GoType.MIXED and value.type in current.alts:
            pass
        elif current.type != value.type and not (
            var.condition_only and {current.type, value.type} <= {GoType.BOOL, GoType.TRUTH,
                                                                    GoType.STRING, GoType.INT}
        ):
            types = set(current.alts or (current.type,)) | {value.type}
            if GoType.STRING in types and len(types) == 2 and types - {GoType.STRING} <= MIXABLE:
                raise Retype(id(var), tuple(sorted(types, key=lambda t: t.value)))
            raise self.error(
                f"{var.go_name} changes type ({current.type.value} → {value.type.value}); "
                "not supported", node)
        if current.type == value.type == GoType.ANY and current.unwrapped != value.unwrapped:
            # a range's element keeps Go's interface (a field of its nil fails), a pipeline's
            # value does not (a field of its nil is nil): one variable cannot say which it holds
            raise self.error(f"{var.go_name} holds a range's decoded-JSON element and a "
                             "pipeline's; not supported", node)
        self.line(f"{{%- set {var.ref} = {value.code} %}}")
        mentions = re.compile(rf"(?<![\w.]){re.escape(var.ref)}(?!\w)")
        for code in [c for c in self.prefixes if mentions.search(c)]:
            del self.prefixes[code]  # its string may differ now

    def _ns_literal(self, var: Variable) -> str | None:
        """A namespace variable declared by a literal directly in its scope: its Jinja value."""
        return getattr(var, "ns_literal", None)

    def open_scope(self, key: int, body: nodes.ListNode) -> None:
        """Create the namespace of the Jinja scope starting here, if a loop assigns into it."""
        members = self.analysis.namespaces.get(key)
        if not members:
            return
        ns = self.analysis.namespace_names[key]
        direct = {id(n.pipe.decl[0]): n for n in body.nodes
                  if isinstance(n, nodes.ActionNode) and n.pipe.decl and not n.pipe.is_assign}
        inits = []
        for var in members:
            literal = None
            action = direct.get(id(var.decl))
            if action is not None and len(action.pipe.cmds) == 1 \
                    and len(action.pipe.cmds[0].args) == 1:
                arg = action.pipe.cmds[0].args[0]
                if isinstance(arg, (nodes.StringNode, nodes.BoolNode, nodes.NumberNode)):
                    literal = self.value(arg).code
            var.ns_literal = literal  # type: ignore[attr-defined]
            inits.append(f"{var.jinja_name}={literal if literal is not None else 'none'}")
        self.line(f"{{%- set {ns} = namespace({', '.join(inits)}) %}}")

    # --- the whole template -----------------------------------------------------------------

    def body_lines(self) -> list[str]:
        """The template body (after its root namespace, if any) as Jinja lines."""
        self.open_scope(0, self.template.root)
        self.emit_list(self.template.root)
        self.flush()
        return self.lines

    def run(self) -> str:
        body = self.body_lines()
        self.emit_template_macros()
        if self.root_used - PATH_NEUTRAL_FIELDS - {"Messages"} \
                or not messages_alike_when_nil(self.template):
            # The request may take Ollama's fill-in-the-middle path, where .System, .Tools and
            # .Messages do not exist and .Prompt/.Suffix do: a second rendering of the body.
            fim = Emitter(self.template, self.analysis, depth=1, mode="fim",
                          templates=self.templates)
            fim_body = fim.body_lines()
            fim.emit_template_macros()
            self.macros |= fim.macros
            self.root_used |= fim.root_used
            body = fim_branch(fim_body, body)
        definitions = [line for entry in self.templates.by_key.values() for line in entry.lines]
        rest = self.prelude() + definitions + body
        return "\n".join(self.header(reads_tools=any("tools" in line for line in rest)) + rest)

    def header(self, *, reads_tools: bool) -> list[str]:
        """The header comment names `tools` only where the template reads it: Ollama grants a
        chat template the tools capability when its text holds `tools` (or `tool_call`), so a
        comment naming it would give a template without tools a capability its Go template
        lacks (and make Ollama prefer it over that template: PreferChatTemplate)."""
        variables = ", ".join(["messages", *(["tools"] if reads_tools else []),
                               "enable_thinking", "reasoning_effort"])
        lines = [
            f"{{#- Translated by gotmpl2jinja from {header_name(self.template.name)}, an Ollama "
            "Go template.",
            "    Renders byte for byte what Ollama renders, under gotmpl2jinja's equivalence",
            f"    contract (variables: {variables}). #}}",
        ]
        if self.macros:
            lines.append(runtime.macro_block(sorted(self.macros)))
        return lines

    def prelude(self) -> list[str]:
        lines: list[str] = []
        used = self.root_used
        steps = family.current()
        if steps.strip_think and used & {"Messages", "System"}:
            lines += family.strip_think_lines()
        if steps.harmony_tools and "Tools" in used:
            lines += family.harmony_tools_lines()
        if "Messages" in used:
            lines += self.collate("System" in used)
        elif "System" in used:
            lines += system_join(collated=False)
        if used & {"Think", "ThinkLevel", "IsThinkSet"}:
            thinking = has_thinking(self.template) or "thinking" in steps.capabilities
            lines += think_prelude(used, thinking)
        return lines


def think_prelude(used: set[str], thinking: bool) -> list[str]:
    """Ollama's think values after its server's steps (equivalence contract): on a template
    with the thinking capability an absent think is true; on one without it, a true think or a
    level is refused by Ollama and rendered here as if absent, so only false is seen."""
    lines: list[str] = []
    if thinking:
        lines.append("{#- Ollama's think values: the model can think (by its template or its"
                     " family), so think defaults to true. #}")
        if "Think" in used or "ThinkLevel" in used:
            lines.append("{%- set think = enable_thinking is not defined or enable_thinking %}")
        if "ThinkLevel" in used:
            lines.append(f"{{%- set think_level = {family.think_level_expression('think')} %}}")
        if "IsThinkSet" in used:
            lines.append("{%- set is_think_set = true %}")
        return lines
    lines.append("{#- Ollama's think values: the template cannot think, so Ollama refuses a true"
                 " think (rendered as if absent) and only false is set. #}")
    if "Think" in used:
        lines.append("{%- set think = false %}")
    if "ThinkLevel" in used:
        lines.append("{%- set think_level = '' %}")
    if "IsThinkSet" in used:
        lines.append("{%- set is_think_set = enable_thinking is defined"
                     " and not enable_thinking %}")
    return lines
