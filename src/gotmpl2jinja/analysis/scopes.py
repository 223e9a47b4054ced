"""Variables and their scopes, resolved the way Go's parser does, each with a Jinja home.

A `:=` lives until the `end` of the enclosing control structure; a range body is a fresh scope
per iteration. Each variable gets a Jinja home: a plain `set` when it is only assigned where it
was declared, or a namespace attribute when a loop body assigns it (Jinja's `for` would
otherwise drop the assignment). Shadowing and clashes with the prelude's names get a new Jinja
name. Analysis also records what the emitter needs to know of the whole template.

May depend on: `analysis.datamodel`, `errors`, `syntax`.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from gotmpl2jinja.analysis.datamodel import GoType
from gotmpl2jinja.errors import TranslationError
from gotmpl2jinja.syntax import nodes

#: Names the prelude and the runtime macros take; a Go variable with one of them is renamed.
JINJA_RESERVED = {
    "messages", "system", "tools", "think", "think_level", "is_think_set", "collated", "loop",
    "namespace", "range", "raise_exception", "strftime_now", "true", "false", "none", "True",
    "False", "None", "and", "or", "not", "in", "is", "if", "else", "elif", "for", "endfor",
    "set", "macro", "call", "caller", "varargs", "kwargs", "self", "super", "enable_thinking",
    "reasoning_effort", "add_generation_prompt", "prompt", "suffix", "ns", "dict", "lipsum",
    "cycler", "joiner", "with", "without", "ignore", "missing", "block", "endblock", "dot",
    # llama.cpp reads these attributes of a namespace as its built-in methods, never as the
    # value set there (`ns.length` is a function): a variable living in a namespace avoids them
    "length", "items", "keys", "values", "get", "join", "tojson", "string",
}


# --- variables ------------------------------------------------------------------------------


@dataclass(eq=False)
class Variable:
    """One Go variable declaration (`$x :=`, a range variable, or `$` itself)."""

    go_name: str
    decl: nodes.Node | None
    loop_depth: int  # Jinja scope depth (for/macro bodies) of the declaration
    scope_key: int  # identity of the Jinja scope (for body) that holds it
    role: str = "plain"  # plain | range_index | range_elem | root | template_arg
    range_node: nodes.RangeNode | None = None
    assigned_in_deeper_loop: bool = False
    assigned: bool = False
    uses: list[tuple[int, bool]] = field(default_factory=list)  # (loop depth, as condition)
    jinja_name: str = ""
    namespace: str | None = None  # set when the variable lives in a Jinja namespace
    shadows: bool = False  # declared while a same-named variable is still live
    definitions: list[nodes.PipeNode] = field(default_factory=list)  # its `:=` and every `=`

    @property
    def condition_only(self) -> bool:
        """Every use tests it for truth (so a mixed-type and/or value may be stored as such)."""
        return bool(self.uses) and all(cond for _, cond in self.uses)

    @property
    def used_in_deeper_loop(self) -> bool:
        return any(depth > self.loop_depth for depth, _ in self.uses)

    @property
    def non_negative(self) -> bool:
        """Every value it ever holds is an int >= 0: each `:=`/`=` is a non-negative integer
        constant or a `len …` (flow-insensitive, so true at every read). The emitter needs it
        where Go's result depends on a sign it cannot test portably (printf's `%*s` width)."""
        return self.role == "plain" and bool(self.definitions) \
            and all(_non_negative_pipe(p) for p in self.definitions)

    @property
    def ref(self) -> str:
        """The Jinja expression that reads it."""
        return f"{self.namespace}.{self.jinja_name}" if self.namespace else self.jinja_name


@dataclass
class Analysis:
    """Result of `analyze`: the variable behind every VariableNode, and per-scope namespaces."""

    variables: dict[int, Variable] = field(default_factory=dict)  # id(VariableNode) -> Variable
    namespaces: dict[int, list[Variable]] = field(default_factory=dict)  # scope key -> vars
    namespace_names: dict[int, str] = field(default_factory=dict)
    fields_used: set[str] = field(default_factory=set)  # Go field names anywhere
    template_args: dict[str, Variable] = field(default_factory=dict)  # define name -> its `$`
    mixed: dict[int, tuple[GoType, ...]] = field(default_factory=dict)  # id(Variable) -> types
    uses_tools: bool = False

    def variable(self, node: nodes.VariableNode) -> Variable:
        return self.variables[id(node)]


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def jinja_identifier(go_name: str) -> str:
    """`$lastUserIdx` -> `lastUserIdx`: Go names are kept, made safe for Jinja."""
    name = go_name.lstrip("$")
    name = re.sub(r"[^A-Za-z0-9_]", "_", name) or "v"
    if name[0].isdigit():
        name = "v_" + name
    if name in JINJA_RESERVED or keyword.iskeyword(name) or name.startswith("_"):
        name = name.strip("_") + "_var" if name.strip("_") else "v"
    return name


def _non_negative_pipe(pipe: nodes.PipeNode) -> bool:
    """`len …` or a non-negative integer constant, as the whole pipeline."""
    if len(pipe.cmds) != 1:
        return False
    args = pipe.cmds[0].args
    head = args[0]
    if isinstance(head, nodes.IdentifierNode):
        return head.ident == "len"
    return len(args) == 1 and isinstance(head, nodes.NumberNode) and head.is_int \
        and head.int64 >= 0


class _Analyzer:
    """One walk over the AST mirroring Go's parse-time variable scopes."""

    def __init__(self, template: nodes.Template) -> None:
        self.template = template
        self.result = Analysis()
        self.go_scopes: list[dict[str, Variable]] = []
        self.loop_depth = 0
        self.scope_keys: list[int] = [0]
        self.all_vars: list[Variable] = []

    def error(self, message: str, node: nodes.Node) -> TranslationError:
        return TranslationError(message, line=node.pos.line, col=node.pos.col,
                                name=self.template.name)

    # scopes
    def lookup(self, name: str, node: nodes.Node) -> Variable:
        for scope in reversed(self.go_scopes):
            if name in scope:
                return scope[name]
        raise self.error(f"undefined variable {name}", node)

    def declare(self, node: nodes.VariableNode, role: str = "plain",
                range_node: nodes.RangeNode | None = None) -> Variable:
        var = Variable(node.ident[0], node, self.loop_depth, self.scope_keys[-1], role,
                       range_node)
        var.shadows = any(var.go_name in scope for scope in self.go_scopes)
        self.go_scopes[-1][var.go_name] = var
        self.result.variables[id(node)] = var
        self.all_vars.append(var)
        return var

    def run(self) -> Analysis:
        root = Variable("$", None, 0, 0, "root")
        self.go_scopes.append({"$": root})
        self.walk_list(self.template.root)
        self.go_scopes.pop()
        for name, body in self.template.defines.items():
            # A definition sees none of the caller's variables; its `$` is the argument.
            # It becomes a Jinja macro: a scope of its own, keyed by the body list.
            arg = Variable("$", None, 1, id(body), "template_arg")
            self.result.template_args[name] = arg
            self.go_scopes.append({"$": arg})
            self.loop_depth += 1
            self.scope_keys.append(id(body))
            self.walk_list(body)
            self.scope_keys.pop()
            self.loop_depth -= 1
            self.go_scopes.pop()
        self.assign_names()
        return self.result

    def walk_list(self, lst: nodes.ListNode) -> None:
        for node in lst.nodes:
            self.walk(node)

    def walk(self, node: nodes.Node) -> None:
        if isinstance(node, nodes.ActionNode):
            self.walk_pipe(node.pipe, cond=False)
        elif isinstance(node, nodes.RangeNode):
            if node.pipe.is_assign:
                # Go sets the outer variables to the pipeline's value, then to each index and
                # element, and they keep the last after the loop: not modelled
                raise self.error("range assigning to variables declared before it "
                                 "(`range $x = …`): not supported", node)
            self.go_scopes.append({})
            self.walk_pipe(node.pipe, cond=False, declare=False)
            self.loop_depth += 1
            self.scope_keys.append(id(node))
            decl = node.pipe.decl
            if len(decl) == 2:
                self.declare(decl[0], "range_index", node)
                self.declare(decl[1], "range_elem", node)
            elif len(decl) == 1:
                self.declare(decl[0], "range_elem", node)
            self.walk_list(node.list)
            self.scope_keys.pop()
            self.loop_depth -= 1
            if node.else_list is not None:
                self.walk_list(node.else_list)
            self.go_scopes.pop()
        elif isinstance(node, (nodes.IfNode, nodes.WithNode)):
            self.go_scopes.append({})
            self.walk_pipe(node.pipe, cond=isinstance(node, nodes.IfNode))
            self.walk_list(node.list)
            if node.else_list is not None:
                self.walk_list(node.else_list)
            self.go_scopes.pop()
        elif isinstance(node, nodes.TemplateNode):
            if node.pipe is None:
                raise self.error(f"{{{{ template {node.name!r} }}}} without an argument: Ollama "
                                 "rejects it", node)
            self.walk_pipe(node.pipe, cond=False)
        elif isinstance(node, nodes.ListNode):
            self.walk_list(node)

    def walk_pipe(self, pipe: nodes.PipeNode, *, cond: bool, declare: bool = True) -> None:
        single = len(pipe.cmds) == 1
        for i, cmd in enumerate(pipe.cmds):
            self.walk_command(cmd, cond=cond and single and i == 0)
        if not declare:
            return
        for var_node in pipe.decl:
            if pipe.is_assign:
                var = self.lookup(var_node.ident[0], var_node)
                self.result.variables[id(var_node)] = var
                var.assigned = True
                var.definitions.append(pipe)
                if self.loop_depth > var.loop_depth:
                    var.assigned_in_deeper_loop = True
            else:
                self.declare(var_node).definitions.append(pipe)

    def walk_command(self, cmd: nodes.CommandNode, *, cond: bool) -> None:
        args = cmd.args
        head = args[0] if args else None
        if isinstance(head, nodes.IdentifierNode):
            in_cond = cond and head.ident in ("and", "or", "not")
            for arg in args[1:]:
                self.walk_arg(arg, cond=in_cond)
        else:
            for arg in args:
                self.walk_arg(arg, cond=cond and len(args) == 1)

    def walk_arg(self, arg: nodes.Node, *, cond: bool) -> None:
        if isinstance(arg, nodes.VariableNode):
            var = self.lookup(arg.ident[0], arg)
            self.result.variables[id(arg)] = var
            var.uses.append((self.loop_depth, cond and len(arg.ident) == 1))
            self.result.fields_used.update(arg.ident[1:])
        elif isinstance(arg, nodes.FieldNode):
            self.result.fields_used.update(arg.ident)
        elif isinstance(arg, nodes.ChainNode):
            self.result.fields_used.update(arg.field)
            self.walk_arg(arg.node, cond=False)
        elif isinstance(arg, nodes.PipeNode):
            if arg.decl:
                raise self.error("a declaration inside a parenthesised pipeline is not "
                                 "supported", arg)
            single = len(arg.cmds) == 1
            for cmd in arg.cmds:
                self.walk_command(cmd, cond=cond and single)

    def assign_names(self) -> None:
        """Give every variable a Jinja name; put loop-assigned ones in a namespace."""
        used_names: set[str] = set()
        depth_of: dict[int, int] = {}
        for var in self.all_vars:
            depth_of[var.scope_key] = var.loop_depth
            base = jinja_identifier(var.go_name)
            name = base
            if var.shadows:
                n = 2
                while f"{base}_{n}" in used_names:
                    n += 1
                name = f"{base}_{n}"
            var.jinja_name = name
            used_names.add(name)
            if var.assigned_in_deeper_loop:
                self.result.namespaces.setdefault(var.scope_key, []).append(var)
        for key, members in self.result.namespaces.items():
            depth = depth_of[key]
            ns = "ns" if depth == 0 else f"ns{depth}"
            self.result.namespace_names[key] = ns
            for var in members:
                var.namespace = ns


def analyze(template: nodes.Template) -> Analysis:
    """Resolve every variable of `template` and decide its Jinja home."""
    return _Analyzer(template).run()


def iter_fields(template: nodes.Template) -> Iterator[str]:
    """Every Go field name the template mentions (for prelude decisions)."""
    for _, tree in template.trees():
        for node in tree.walk():
            if isinstance(node, nodes.FieldNode):
                yield from node.ident
            elif isinstance(node, nodes.VariableNode):
                yield from node.ident[1:]
            elif isinstance(node, nodes.ChainNode):
                yield from node.field


# --- the fill-in-the-middle path ------------------------------------------------------------


def _is_messages(arg: nodes.Node) -> bool:
    """`.Messages` or `$.Messages`, nothing chained after it."""
    if isinstance(arg, nodes.FieldNode):
        return arg.ident == ["Messages"]
    return isinstance(arg, nodes.VariableNode) and arg.ident == ["$", "Messages"]


def _mentions_messages(node: nodes.Node) -> bool:
    for n in node.walk():
        if isinstance(n, nodes.FieldNode) and "Messages" in n.ident \
                or isinstance(n, nodes.VariableNode) and "Messages" in n.ident[1:] \
                or isinstance(n, nodes.ChainNode) and "Messages" in n.field:
            return True
    return False


def _truth_alike(arg: nodes.Node) -> bool:
    """`arg` is only tested for truth: nil and an empty list are both false."""
    if _is_messages(arg):
        return True
    if isinstance(arg, nodes.PipeNode) and not arg.decl and len(arg.cmds) == 1:
        args = arg.cmds[0].args
        if len(args) == 1:
            return _truth_alike(args[0])
        head = args[0]
        if isinstance(head, nodes.IdentifierNode) and head.ident in ("and", "or", "not"):
            for operand in args[1:]:
                if head.ident == "and" and _is_messages(operand):
                    return True  # false for both, and the later operands are never evaluated
                if not _truth_alike(operand):
                    return False
            return True
    return not _mentions_messages(arg)


def _guards(pipe: nodes.PipeNode) -> bool:
    """The pipe is true only for a non-empty `.Messages` (`.Messages`, `and … .Messages …`)."""
    if pipe.decl or len(pipe.cmds) != 1:
        return False
    args = pipe.cmds[0].args
    if len(args) == 1:
        return _is_messages(args[0])
    head = args[0]
    return isinstance(head, nodes.IdentifierNode) and head.ident == "and" \
        and any(_is_messages(a) for a in args[1:])


def _reads_any(node: nodes.Node | None, variables: list[nodes.VariableNode]) -> bool:
    """`node` reads a variable of one of those names (a redeclared one counts too)."""
    names = {v.ident[0] for v in variables}
    return node is not None and any(
        isinstance(n, nodes.VariableNode) and n.ident[0] in names for n in node.walk())


def _alike(node: nodes.Node) -> bool:
    if isinstance(node, nodes.ListNode):
        return all(_alike(n) for n in node.nodes)
    if isinstance(node, nodes.ActionNode):
        return not _mentions_messages(node.pipe)
    if isinstance(node, nodes.TemplateNode):
        return node.pipe is None or not _mentions_messages(node.pipe)
    if isinstance(node, nodes.BranchNode):
        pipe = node.pipe
        else_ok = node.else_list is None or _alike(node.else_list)
        if isinstance(node, nodes.RangeNode):
            args = pipe.cmds[0].args if len(pipe.cmds) == 1 else []
            if len(args) == 1 and _is_messages(args[0]):
                # the body runs once per message: never, for both; but Go binds the range's
                # variables to the list itself before it iterates, so an else that reads them
                # sees nil in one and an empty list in the other
                return else_ok and not _reads_any(node.else_list, pipe.decl)
            return not _mentions_messages(pipe) and _alike(node.list) and else_ok
        cond_ok = not _mentions_messages(pipe) if pipe.decl else _truth_alike(pipe)
        return cond_ok and (_guards(pipe) or _alike(node.list)) and else_ok
    return True


def messages_alike_when_nil(template: nodes.Template) -> bool:
    """Whether the template renders the same when `.Messages` is Go's nil (the root map of
    Ollama's fill-in-the-middle path has no such key, §3) as with an empty list (a chat with no
    messages) — so that path needs no second rendering of the body. True when `.Messages` is
    only ranged over, tested for truth by if/with (directly or through and/or/not), or read in a
    body that runs only for a non-empty list; any other read (`len`, printing, `json`, `eq`,
    `slice`, `index`, a variable) may tell nil from empty."""
    return all(_alike(tree) for _, tree in template.trees())
