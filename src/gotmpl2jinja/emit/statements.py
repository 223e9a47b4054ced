"""Go's statements as Jinja: if/else chains, with, range (over
every operand type), template calls and the `define`d templates as macros.

May depend on: `analysis`, `emit.loops`, `emit.runtime`, `emit.values`, `errors`, `syntax`.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gotmpl2jinja.analysis import (
    MAP_VALUES,
    SLICE_ELEMENTS,
    STRUCTS,
    GoType,
    Variable,
    jinja_identifier,
)
from gotmpl2jinja.emit.loops import (
    MAX_LOOP_NESTING,
    Loop,
    LoopWith,
    counts_itself,
    else_without_break,
    has_break,
    has_loop_control,
    without_loop_control,
)
from gotmpl2jinja.emit.runtime import sorted_items
from gotmpl2jinja.emit.values import (
    ARITH,
    ATOM,
    COMPARE,
    FAILING_CALLS,
    INDENT,
    Expr,
    TemplateMacro,
)
from gotmpl2jinja.errors import TranslationError
from gotmpl2jinja.syntax import nodes


class Statements:
    """Emitter methods for if, with, range and template (a mixin of `Emitter`)."""

    def emit_template_call(self, node: nodes.TemplateNode) -> None:
        """`{{ template "name" pipeline }}`: a call of the definition's macro. Go runs the
        definition with `.` and `$` set to the pipeline's value and none of the caller's
        variables, which is what a macro with one parameter is."""
        if node.pipe is None:
            raise self.error(f"{{{{ template {node.name!r} }}}} without an argument: Ollama "
                             "rejects it", node)
        args = node.pipe.cmds[0].args if len(node.pipe.cmds) == 1 else []
        if len(args) == 1 and isinstance(args[0], nodes.DotNode) and not node.pipe.decl:
            value = self.dot  # `.` itself, the root map included
            if value.type == GoType.ANY:  # (a pipeline still: Go unwraps the interface)
                value = replace(value, unwrapped=True)
        else:
            value = self.pipeline(node.pipe)
        if value.type == GoType.RAISE:
            self.output(value)
            return
        if node.name not in self.template.defines:
            self.output(self.raising(f'template: no such template "{node.name}"'))
            return
        self.consumed(value)  # (the definition may measure or compare it)
        folded = value.is_const or value.type == GoType.ROOT
        key: tuple[object, ...] = (node.name, self.mode, value.type, value.maybe_undefined,
                                   value.unwrapped, repr(value.const) if folded else None)
        entry = self.templates.by_key.get(key)
        if entry is None:
            base = ("fim_" if self.mode == "fim" else "") + "template_" \
                + jinja_identifier(node.name)
            taken = self.templates.taken() | {
                v.jinja_name for v in self.analysis.variables.values()}
            macro, n = base, 2
            while macro in taken:
                macro, n = f"{base}_{n}", n + 1
            if value.type == GoType.NIL:
                # Go hands a nil argument over as no data at all: `.X` of it is <no value>
                value = replace(value, type=GoType.NO_DATA)
            dot = value if folded else Expr("dot", value.type, stable=True,
                                             maybe_undefined=value.maybe_undefined,
                                             unwrapped=value.unwrapped)
            entry = TemplateMacro(node.name, macro, dot, self.mode, not folded)
            self.templates.by_key[key] = entry
            self.templates.queue.append(entry)
        args = ", ".join([*([] if folded else [value.code]), *self.definition_params()])
        self.output(Expr(f"{entry.macro}({args})", GoType.STRING))

    def definition_params(self) -> list[str]:
        """What a definition's macro takes besides its argument, and its calls pass: nothing
        here; on the legacy path, the turn's fields (emit.legacy)."""
        return []

    def definition_emitter(self, entry: TemplateMacro) -> Statements:
        """The emitter of a definition's body, for the argument `entry.dot`."""
        return type(self)(self.template, self.analysis, depth=1,  # type: ignore[call-arg]
                          mode=entry.mode, templates=self.templates, dot=entry.dot)

    def emit_template_macros(self) -> None:
        """Write the macros of every definition requested so far (and those they request)."""
        while self.templates.queue:
            entry = self.templates.queue.pop(0)
            body = self.template.defines[entry.go_name]
            child = self.definition_emitter(entry)
            child.values[id(self.analysis.template_args[entry.go_name])] = entry.dot
            child.open_scope(id(body), body)
            child.emit_list(body)
            child.flush()
            self.macros |= child.macros
            self.root_used |= child.root_used
            self.message_fields |= child.message_fields
            param = ", ".join([*(["dot"] if entry.takes_argument else []),
                               *self.definition_params()])
            entry.lines = [
                "{#- Go's {{ define \"" + entry.go_name.replace("#}", "# }") + "\" }}"
                + (f" for a {entry.dot.type.value} argument" if entry.takes_argument else "")
                + ". #}",
                f"{{%- macro {entry.macro}({param}) %}}", *child.lines, "{%- endmacro %}"]

    def emit_if(self, node: nodes.IfNode) -> None:
        if node.pipe.decl:  # `if $x := …`: $x is set, then its truth decides
            cond = self.truth(self.bind(node.pipe, node))
        else:
            cond = self.condition(node.pipe, node)
        if cond.is_const:
            taken = node.list if cond.const else node.else_list
            if taken is not None:
                self.emit_list(taken)
            return
        self.flush()
        start = len(self.lines)
        self.line(f"{{%- if {cond.code} %}}")
        saved_truthy = set(self.truthy)
        self.truthy |= self.proven_true(node.pipe, cond)
        with self.knowing(self.prefix_guards(node.pipe, holds=True)):
            self.body(node.list)
        self.truthy = saved_truthy
        with self.knowing(self.prefix_guards(node.pipe, holds=False)):
            self.emit_else_chain(node)
        self.tidy_if(start, cond)

    def proven_true(self, pipe: nodes.PipeNode, cond: Expr) -> set[str]:
        """Codes that are truthy where `cond` holds (itself, or each operand of an `and`)."""
        proven = {cond.code} if cond.stable else set()
        cmd = pipe.cmds[0] if len(pipe.cmds) == 1 and not pipe.decl else None
        if cmd is not None and isinstance(cmd.args[0], nodes.IdentifierNode) \
                and cmd.args[0].ident == "and":
            for arg in cmd.args[1:]:
                try:
                    part = self.cond_arg(arg)
                except TranslationError:
                    continue
                if part.stable:
                    proven.add(part.code)
        return proven

    def tidy_if(self, start: int, cond: Expr) -> None:
        """Readability: an `if` with nothing inside goes; an empty then-branch before a plain
        `else` becomes the negated condition (no engine prints anything for either)."""
        block = self.lines[start:]
        pad = block[0][:len(block[0]) - len(block[0].lstrip())]
        if len(block) == 2 and "raise_exception" not in cond.code \
                and not FAILING_CALLS.search(cond.code):
            del self.lines[start:]
            return
        if len(block) > 2 and block[1] == pad + "{%- else %}" and not any(
                line.startswith((pad + "{%- else", pad + "{%- elif")) for line in block[2:]):
            self.lines[start:start + 2] = [f"{pad}{{%- if {self.negate(cond).code} %}}"]

    def emit_else_chain(self, node: nodes.IfNode) -> None:
        else_list = node.else_list
        while else_list is not None:
            chained = else_list.nodes[0] if len(else_list.nodes) == 1 else None
            if isinstance(chained, nodes.IfNode) and not chained.pipe.decl:
                cond = self.condition(chained.pipe, chained)
                if cond.is_const:
                    if cond.const:
                        self.line("{%- else %}")
                        self.body(chained.list)
                        break
                    else_list = chained.else_list
                    continue
                self.line(f"{{%- elif {cond.code} %}}")
                with self.knowing(self.prefix_guards(chained.pipe, holds=True)):
                    self.body(chained.list)
                self.prefixes.update(self.prefix_guards(chained.pipe, holds=False))
                else_list = chained.else_list
                continue
            self.line("{%- else %}")
            self.body(else_list)
            break
        self.line("{%- endif %}")

    def body(self, lst: nodes.ListNode) -> None:
        self.flush()
        self.depth += 1
        self.emit_list(lst)
        self.flush()
        self.depth -= 1

    def emit_with(self, node: nodes.WithNode) -> None:
        # `with $x := …`: $x holds the value in both branches, and `.` in the first
        value = self.bind(node.pipe, node) if node.pipe.decl else self.pipeline(node.pipe)
        truth = self.truth(value)
        saved = self.dot
        if isinstance(node, LoopWith):
            self.outer_dots[node.key] = (saved, set(self.truthy))
        if truth.is_const:
            if truth.const:
                self.dot = value
                self.emit_list(node.list)
                self.dot = saved
            elif node.else_list is not None:
                self.emit_list(node.else_list)
            return
        if value.prec < ATOM or len(value.code) > 40:
            name = self.fresh_name("value")
            self.line(f"{{%- set {name} = {value.code} %}}")
            value = replace(value, code=name, prec=ATOM, slice_of=None)
            truth = self.truth(value)
        self.line(f"{{%- if {truth.code} %}}")
        self.dot = value
        saved_truthy = set(self.truthy)
        if value.stable:
            self.truthy.add(value.code)
        self.body(node.list)
        self.truthy = saved_truthy
        self.dot = saved
        if node.else_list is not None:
            self.line("{%- else %}")
            self.body(node.else_list)
        self.line("{%- endif %}")

    def fresh_name(self, base: str) -> str:
        taken = {v.jinja_name for v in self.analysis.variables.values()} | self.loop_names
        name, n = base, 2
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        self.loop_names.add(name)
        return name

    def emit_range(self, node: nodes.RangeNode) -> None:
        pipe = node.pipe
        bare = nodes.PipeNode(cmds=pipe.cmds, pos=pipe.pos)
        coll = self.pipeline(bare)
        decl = [self.analysis.variable(d) for d in pipe.decl]
        index_var = decl[0] if len(decl) == 2 else None
        elem_var = decl[-1] if decl else None
        loop_id = id(node)
        if coll.type == GoType.RAISE:
            self.output(coll)
            return
        if coll.type == GoType.ANY:
            if index_var is not None:
                raise self.error("range $k, $v over a decoded-JSON value: not supported (its "
                                 "key is a string for a map, an int for a list)", node)
            coll = self.json_elements(coll)
        if coll.type == GoType.INT:
            if index_var is not None:  # Go's execution error, reached with any int
                self.output(self.raising("can't use an int to iterate over more than one "
                                         "variable"))
                return
            elem_type, natural, key_name = GoType.INT, "i", None
            iterable = f"range({coll.code})"
        elif coll.type in SLICE_ELEMENTS:
            elem_type, natural = SLICE_ELEMENTS[coll.type]
            key_name = None
            iterable = (self.concrete(coll) if coll.maybe_undefined else coll).wrap(ATOM)
        elif coll.type in MAP_VALUES:
            elem_type, natural_key, natural = MAP_VALUES[coll.type]
            key_name = natural_key
            iterable = sorted_items(self.concrete(coll).wrap(ATOM))
        elif coll.type in (GoType.NIL, GoType.NO_DATA):
            # ranging over a nil interface or no data: no iterations (Go treats it as empty)
            if node.else_list is not None:
                self.bind_range_else(node, decl, coll)
                self.emit_list(else_without_break(node.else_list))
            return
        elif coll.type in (GoType.STRING, GoType.FLOAT, GoType.BOOL) or coll.type in STRUCTS:
            # Go: "range can't iterate over …", whatever the value (else branch or not)
            self.output(self.raising(f"range can't iterate over a {coll.type.value}"))
            return
        else:
            raise self.error(f"range over {coll.type.value}: not supported", node)
        elem_name = self.loop_var(elem_var, natural)
        if key_name is not None:
            key_name = self.loop_var(index_var, key_name)
        has_else = node.else_list is not None
        if has_else:
            # the else runs when there is no iteration: an int's are none below 1, not only at 0
            truth = (Expr(f"{coll.wrap(COMPARE)} > 0", GoType.BOOL, COMPARE)
                     if coll.type == GoType.INT else self.truth(coll))
            self.line(f"{{%- if {truth.code} %}}")
            self.depth += 1
        body_nodes = node.list.nodes
        flag = None
        if has_loop_control(body_nodes):
            try:
                body_nodes = without_loop_control(body_nodes)
            except TranslationError as exc:
                exc.name = self.template.name
                raise
            if has_break(body_nodes):
                flag = self.fresh_name(f"{elem_name}_loop")
                self.line(f"{{%- set {flag} = namespace(done=false) %}}")
        if len(self.loops) >= MAX_LOOP_NESTING:
            raise self.error(f"more than {MAX_LOOP_NESTING} nested range loops: jinja2 cannot "
                             "compile the Jinja (Python's limit on nested blocks)", node)
        saved_dot, saved_facts = self.dot, self.facts
        self.flush()
        header_from, header_depth, plain = len(self.lines), self.depth, iterable
        if key_name is None and coll.type in SLICE_ELEMENTS and counts_itself(node):
            # by index: an index, a last or a length costs a subscript here, where the loop
            # object's attributes cost some twenty on jinja2's sandbox
            if not (coll.stable and iterable.isidentifier()):
                listed = self.fresh_name(f"{elem_name}_list")
                self.line(f"{{%- set {listed} = {iterable} %}}")
                iterable = listed
            at = self.fresh_name(f"{elem_name}_at")
            self.line(f"{{%- for {at} in range({iterable}|length) %}}")
            loop = Loop(loop_id, node, coll, flag, index=at, size=f"{iterable}|length")
            self.depth += 1
            self.line(f"{{%- set {elem_name} = {iterable}[{at}] %}}")
        else:
            head = f"{key_name}, {elem_name}" if key_name else elem_name
            self.line(f"{{%- for {head} in {iterable} %}}")
            loop = Loop(loop_id, node, coll, flag)
            self.depth += 1
        self.loops.append(loop)
        body_from = len(self.lines)
        # its namespace first: a nested loop may assign the range's own variables there
        self.open_scope(loop_id, node.list)
        position = self.message_position(coll, loop)
        if position is not None and position.loop is not None and elem_var is not None \
                and elem_var.used_in_deeper_loop:
            # a nested loop may compare the element: its place, in a name that loop sees
            at = self.fresh_name(f"{elem_name}_at")
            self.line(f"{{%- set {at} = {position.code} %}}")
            position = Expr(at, GoType.INT, stable=True, non_negative=True)
        elem = Expr(elem_name, elem_type, stable=True, position=position)
        self.dot = elem
        if elem_var is not None and elem_var.namespace:
            self.line(f"{{%- set {elem_var.ref} = {elem_name} %}}")
            self.values[id(elem_var)] = Expr(elem_var.ref, elem_type)  # no longer the element
        elif elem_var is not None:
            self.values[id(elem_var)] = elem
        if index_var is not None:
            if key_name is not None and index_var.namespace:
                self.line(f"{{%- set {index_var.ref} = {key_name} %}}")
                self.values[id(index_var)] = Expr(index_var.ref, GoType.STRING)
            elif key_name is not None:
                self.values[id(index_var)] = Expr(key_name, GoType.STRING, stable=True)
            elif index_var.assigned or (index_var.used_in_deeper_loop and loop.size is None):
                name = index_var.ref
                self.line(f"{{%- set {name} = {loop.index} %}}")
                self.values[id(index_var)] = Expr(name, GoType.INT, stable=not index_var.namespace,
                                                  non_negative=True)
            else:
                self.values[id(index_var)] = Expr(loop.index, GoType.INT, stable=True,
                                                  loop=loop_id, non_negative=True)
        if flag is not None:
            self.line(f"{{%- if not {flag}.done %}}")
            self.depth += 1
        self.emit_list(nodes.ListNode(nodes=body_nodes))
        self.flush()
        if flag is not None:
            self.depth -= 1
            self.line("{%- endif %}")
        self.depth -= 1
        self.loops.pop()
        self.dot, self.facts = saved_dot, saved_facts
        self.line("{%- endfor %}")
        if loop.size is not None and not any(re.search(rf"\b{loop.index}\b", line)
                                             for line in self.lines[body_from:]):
            # the body never asked for its index: the plain loop reads better
            self.lines[header_from:body_from] = [
                INDENT * header_depth + f"{{%- for {elem_name} in {plain} %}}"]
        if has_else:
            self.depth -= 1
            self.line("{%- else %}")
            assert node.else_list is not None
            self.depth += 1
            self.bind_range_else(node, decl, coll)
            self.depth -= 1
            self.body(else_without_break(node.else_list))
            self.line("{%- endif %}")

    @staticmethod
    def message_position(coll: Expr, loop: Loop) -> Expr | None:
        """The place in the collated messages of the element a range over `.Messages` (or a
        slice of it from a known start) is at: its index, read in this loop only (where it is
        `loop.index0`)."""
        if coll.type != GoType.MESSAGES:
            return None
        base, start = coll.slice_of if coll.slice_of is not None else (coll, None)
        if base.code != "messages":
            return None
        index = Expr(loop.index, GoType.INT, ATOM, stable=True, non_negative=True,
                     loop=loop.ident if loop.size is None else None)
        if start is None:
            return index
        return Expr(f"{start.wrap(ARITH)} + {index.code}", GoType.INT, ARITH,
                    stable=start.stable, loop=start.loop or index.loop, non_negative=True)

    def json_elements(self, value: Expr) -> Expr:
        """What `range` walks in a decoded-JSON value, as a list: a map's values in key order,
        a list itself, nothing for null; Go fails on a string, a number or a bool (before
        any `else`, so the failure comes first here too)."""
        a = value.wrap(COMPARE)
        items = self.fresh_name("json_elements")
        self.line(f"{{%- set {items} = namespace(list=[]) %}}")
        self.line(f"{{%- if {a} is mapping %}}")
        self.depth += 1
        key, element = self.fresh_name("json_key"), self.fresh_name("json_element")
        self.line(f"{{%- for {key}, {element} in {sorted_items(value.wrap(ATOM))} %}}")
        self.line(f"{INDENT}{{%- set {items}.list = {items}.list + [{element}] %}}")
        self.line("{%- endfor %}")
        self.depth -= 1
        self.line(f"{{%- elif {a} is string or {a} is number or {a} is boolean %}}")
        self.line(f"{INDENT}{{{{- raise_exception(\"range can't iterate over this value\") }}}}")
        self.line(f"{{%- elif {a} is not none %}}")
        self.line(f"{INDENT}{{%- set {items}.list = {value.code} %}}")
        self.line("{%- endif %}")
        return Expr(f"{items}.list", GoType.ANYS, ATOM, stable=True)

    def bind_range_else(self, node: nodes.RangeNode, decl: list[Variable], coll: Expr) -> None:
        """In a range's `else` Go's range variables hold the collection (evalPipeline pushes it
        for each; only iterations set them). The else is outside the Jinja loop: the range's
        namespace is created again here, and an assigned variable gets a `set` of its own."""
        assert node.else_list is not None
        self.open_scope(id(node), node.else_list)
        for var in decl:
            if var.go_name != "$_":
                self.declare(var, coll, node)

    def loop_var(self, var: Variable | None, natural: str) -> str:
        if var is not None and var.go_name != "$_":
            self.loop_names.add(var.jinja_name)
            return var.jinja_name
        return self.fresh_name(natural)
