"""Legacy (System/Prompt/Response) templates and the fill-in-the-middle path, as Jinja.

A template that never names `.Messages` is not rendered once by Ollama but once per turn
(ollama-semantics.md §9): the collated messages are walked, each completed turn renders the
whole template with `System`/`Prompt`/`Response`, and the final turn renders a *cut* copy (all
after the first `.Response` field removed). One Jinja body cannot express that, so the emitted
Jinja holds a macro `turn(…, final)`: the whole template, or the cut one where `final` is true
(the two share their beginning, written once: `emit.merge_paths`), and one loop over the
messages, collating them as it goes, that calls it exactly where Ollama executes.

A request with a prompt and a suffix takes Ollama's fill-in-the-middle path instead (§3), for
any template: the whole template once, with `Prompt`, `Suffix`, an empty `Response` and the think
values. `emit.fim_branch` (shared with the messages path, re-exported here) wraps a chat
rendering with that branch.

The bodies reuse `emit.Emitter` (expressions, Go printing and truth, loops, variables): only the
root map differs, so `LegacyEmitter` overrides the root fields and, for the final turn, the
calls to Ollama's functions, which Go cannot find there (the cut template has none).

Where Ollama itself fails, the Jinja fails (`raise_exception`) and translation warns with
`OllamaFailureWarning` (Python's `warnings` module; `collect_warnings` gathers them as text):
- the cut falls inside an `if`/`with`/`range` list whose branch has an `{{ else }}` — Ollama
  panics while cutting, and the final turn is cut on every chat request, so every chat request
  fails (fill-in-the-middle requests still render);
- the final turn reaches `json`, `currentDate`, `yesterdayDate` or `toTypeScriptType`, or a
  `template` (or `block`): the cut template is a template of its own, with no definitions.

May depend on: `analysis`, `emit.emitter` (and `values`, `paths`, `collate`, `runtime`,
`family`), `errors`, `ollama`, `syntax`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TypeVar

from gotmpl2jinja.analysis import Analysis, GoType, analyze
from gotmpl2jinja.emit import family, runtime
from gotmpl2jinja.emit.collate import MESSAGE_CONTENT, content_of
from gotmpl2jinja.emit.emitter import Emitter
from gotmpl2jinja.emit.paths import fim_branch, header_name, merge_paths
from gotmpl2jinja.emit.values import INDENT, Expr, Retype, TemplateMacro, quote, retype_refusal
from gotmpl2jinja.errors import TranslationError
from gotmpl2jinja.ollama import facts as ollama
from gotmpl2jinja.syntax import nodes

#: Ollama's own template functions; Go's builtins (and, len, printf…) exist in every turn.
OLLAMA_FUNCS = ("json", "currentDate", "yesterdayDate", "toTypeScriptType")

#: The legacy path's root map (§3): these keys exist, every other one is a missing key.
LEGACY_STRING_FIELDS = ("System", "Prompt", "Response")
THINK_FIELDS = ("Think", "ThinkLevel", "IsThinkSet")

#: The Jinja names the prelude gives the think values (see emit.Emitter.prelude).
THINK_NAMES = {"Think": "think", "ThinkLevel": "think_level", "IsThinkSet": "is_think_set"}

#: Stands for the turn's fields in a definition's macro and its calls (LegacyEmitter), until
#: the fields every body reads are known (`_with_fields`).
LEGACY_FIELDS = "@LEGACY_FIELDS@"

class OllamaFailureWarning(UserWarning):
    """The translated template fails (raise_exception) where Ollama fails to render."""


@dataclass
class LegacyEmitter(Emitter):
    """The emitter for one legacy turn: the root map holds System, Prompt, Response and the
    think values (as macro parameters), every other key is missing (`<no value>`, falsy).

    `final` marks the cut template of the last turn, which Go runs without Ollama's functions."""

    params: dict[str, str] = field(default_factory=dict)  # Go root field -> Jinja parameter
    final: bool = False
    failures: list[str] = field(default_factory=list)

    def field(self, base: Expr, name: str, node: nodes.Node) -> Expr:
        if base.type == GoType.NIL and self.final:
            # in the final turn's data a missing key is Go's invalid value, and a field of it
            # is invalid again: `{{ .Foo.Bar }}` prints <no value>; in a whole turn, as on the
            # messages path, it is a nil interface whose field fails
            return base
        if base.type != GoType.ROOT:
            return super().field(base, name, node)
        self.root_used.add(name)
        if name in LEGACY_STRING_FIELDS:
            return Expr(self.params[name], GoType.STRING, stable=True)
        if name in THINK_FIELDS:
            return Expr(THINK_NAMES[name], GoType.STRING if name == "ThinkLevel"
                        else GoType.BOOL, stable=True)
        # Go map keys are case-sensitive: `.Tools`, `.Suffix`, `.response`… are missing keys.
        return Expr("none", GoType.NIL, const=None, is_const=True, stable=True)

    def emit_template_call(self, node: nodes.TemplateNode) -> None:
        if self.final:
            # Ollama runs the cut template as a template of its own, with no definitions: Go
            # looks the name up (before the argument) and fails
            self.failures.append(
                f"{self.template.name}:{node.pos}: Ollama fails every chat request whose final "
                f'turn reaches {{{{ template "{node.name}" }}}} (the cut template of the '
                "legacy path has no definitions); the Jinja raises there too")
            self.output(self.raising(f'template: no such template "{node.name}" (Ollama runs '
                                     "the last turn of a legacy template without its "
                                     "definitions)"))
            return
        super().emit_template_call(node)

    def definition_params(self) -> list[str]:
        # the turn's fields, as the turn macro takes them: known once every body is written
        return [LEGACY_FIELDS]

    def definition_emitter(self, entry: TemplateMacro) -> LegacyEmitter:
        return LegacyEmitter(self.template, self.analysis, depth=1, mode=entry.mode,
                             templates=self.templates, dot=entry.dot, params=self.params)

    def call(self, name: str, arg_nodes: list[nodes.Node], piped: Expr | None,
             node: nodes.Node) -> Expr:
        if self.final and name in OLLAMA_FUNCS:
            self.failures.append(
                f"{self.template.name}:{node.pos}: Ollama fails every chat request whose final "
                f"turn reaches {name} (the cut template of the legacy path has none of "
                "Ollama's functions); the Jinja raises there too")
            return self.raising(f'"{name}" is not a defined function: Ollama renders the last '
                                "turn of a legacy template without its functions")
        return super().call(name, arg_nodes, piped, node)


def _fresh(base: str, taken: set[str]) -> str:
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def _jinja_names(analysis: Analysis) -> set[str]:
    return {v.jinja_name for v in analysis.variables.values()}


def _macro(name: str, final: str, whole: LegacyEmitter, whole_body: list[str],
           last: LegacyEmitter, last_body: list[str]) -> tuple[list[str], list[str]]:
    """One macro for a turn's two renderings, the whole template and the one cut after its
    first {{ .Response }} (where `final` is true): they share their beginning, written once
    (`merge_paths`). Returns its lines and the Go fields it takes (in order)."""
    used = whole.root_used | last.root_used
    order = [f for f in (*LEGACY_STRING_FIELDS, *THINK_FIELDS) if f in used]
    params = [whole.params[f] if f in whole.params else THINK_NAMES[f] for f in order]
    body, _ = merge_paths([line.removeprefix(INDENT) for line in last_body],
                          [line.removeprefix(INDENT) for line in whole_body], final,
                          f"not {final}")
    lines = [f"{{%- macro {name}({', '.join([*params, final])}) %}}",
             *(INDENT + line for line in body), "{%- endmacro %}"]
    return lines, order


def _with_fields(lines: list[str], fields: list[str]) -> list[str]:
    """`lines` with LEGACY_FIELDS written out: the turn macro's parameters `fields`, which a
    definition's macro takes too (its body reads the turn's System, Prompt, Response…)."""
    joined = ", ".join(fields)
    return [line.replace(", " + LEGACY_FIELDS, ", " + joined if joined else "")
            .replace(LEGACY_FIELDS, joined) for line in lines]


def _call(name: str, order: list[str], values: dict[str, str], final: bool) -> str:
    """A call of the turn macro `name` on the Jinja expressions `values` of the legacy fields."""
    args = [values[f] if f in LEGACY_STRING_FIELDS else THINK_NAMES[f] for f in order]
    return f"{{{{- {name}({', '.join([*args, 'true' if final else 'false'])}) }}}}"


def _legacy_loop(state: str, head: str, before: str, response: str,
                 flush: Callable[[str, str, str], str],
                 last: Callable[[str, str, str], str]) -> list[str]:
    """Ollama's collate and turn loop (§9) in one pass over the request's messages; `flush`
    and `last` render a turn from the Jinja expressions of its system, prompt and response;
    `head`, `before` and `response` are the loop's own variables.

    Collate merges a message into the one before when their roles are alike (compared
    lower-cased, tool excepted); here such a message extends the pending system, prompt or
    response instead. The pending system and prompt live in one dict, the response apart, and
    the namespace is read only where the message before cannot tell the value: a namespace
    read is the dearest step on jinja2's sandbox (about 8 µs, a write under 1 µs), so an
    assistant message only writes, and a user message after a lone system or assistant
    message takes that message's content instead of reading it back. A system message only
    ever follows an empty prompt and response or ends their turn, so it leaves them empty; a
    user message ends a turn with a response and starts with none."""
    lone = (f"(loop_at < 2 or messages[loop_at - 2]['role']|lower != {before})")
    extended = ", ".join(
        f"'{key}': {head}['{key}'] ~ ('\\n\\n' ~ content if role == '{who}' else '')"
        for key, who in (("system", "system"), ("prompt", "user")))
    system, prompt = f"{head}['system']", f"{head}['prompt']"
    ends = "messages[messages|length - 1]['role']|lower"
    return [
        "{#- Ollama's legacy path, with its collate: a message whose role is the one before's"
        " (lower-cased, tool excepted) extends it; a system message ends a turn that has a"
        " prompt or a response, a user message one that has a response; other roles are"
        " ignored. #}",
        f"{{%- set {state} = namespace(head={{'system': '', 'prompt': ''}}, response='') %}}",
        "{%- for loop_at in range(messages|length) %}",
        "    {%- set message = messages[loop_at] %}",
        "    {%- set role = message['role']|lower %}",
        f"    {{%- set content = {MESSAGE_CONTENT} %}}",
        "    {%- if role == 'system' or role == 'user' or role == 'assistant' %}",
        f"        {{%- set {before} = messages[loop_at - 1]['role']|lower if loop_at > 0 else ''"
        " %}",
        f"        {{%- if {before} == role and role == 'assistant' %}}",
        f"            {{%- set {state}.response = {state}.response ~ '\\n\\n' ~ content %}}",
        f"        {{%- elif {before} == role %}}",
        f"            {{%- set {head} = {state}.head %}}",
        f"            {{%- set {state}.head = {{{extended}}} %}}",
        "        {%- elif role == 'assistant' %}",
        f"            {{%- set {state}.response = content %}}",
        "        {%- elif loop_at == 0 %}",
        f"            {{%- set {state}.head = {{'system': content if role == 'system' else '',"
        " 'prompt': content if role == 'user' else ''} %}",
        "        {%- elif role == 'system' %}",
        f"            {{%- set {head} = {state}.head %}}",
        f"            {{%- set {response} = {state}.response %}}",
        f"            {{%- if {prompt} or {response} %}}",
        f"{INDENT * 4}{flush(system, prompt, response)}",
        "            {%- endif %}",
        f"            {{%- set {state}.head = {{'system': content, 'prompt': ''}} %}}",
        f"            {{%- set {state}.response = '' %}}",
        f"        {{%- elif {before} == 'system' and {lone} %}}",
        f"            {{%- set {state}.head = {{'system': {content_of('messages[loop_at - 1]')},"
        " 'prompt': content} %}",
        "        {%- else %}",
        f"            {{%- set {head} = {state}.head %}}",
        f"            {{%- set {response} = {content_of('messages[loop_at - 1]')} if {before} =="
        f" 'assistant' and {lone} else {state}.response %}}",
        f"            {{%- if {response} %}}",
        f"{INDENT * 4}{flush(system, prompt, response)}",
        "            {%- endif %}",
        f"            {{%- set {state}.head = {{'system': '' if {response} else {system},"
        " 'prompt': content} %}",
        f"            {{%- set {state}.response = '' %}}",
        "        {%- endif %}",
        "    {%- endif %}",
        "{%- endfor %}",
        f"{{%- set {head} = {state}.head %}}",
        f"{{%- set {response} = '' if messages|length > 0 and ({ends} == 'user' or {ends} =="
        f" 'system') else {state}.response %}}",
        last(system, prompt, response),
    ]


def _prelude(emitter: Emitter, used: set[str]) -> list[str]:
    """The emitter's prelude for the root fields in `used` (collate and/or think values)."""
    saved = emitter.root_used
    emitter.root_used = used
    try:
        return emitter.prelude()
    finally:
        emitter.root_used = saved


def translate_legacy(template: nodes.Template, name: str) -> str:
    """Jinja for a legacy-path template (no `.Messages`): Ollama's turn loop, the whole and the
    cut template as macros, and the fill-in-the-middle branch. Where Ollama fails, the Jinja
    raises and an OllamaFailureWarning is issued. Raises TranslationError when unfaithful."""
    if ollama.execute_path(template) != "legacy":
        raise TranslationError("translate_legacy: this template takes the messages path "
                               "(it names .Messages)", name=name)
    full = ollama.with_response(template)
    full.name = name
    full_analysis = analyze(full)

    taken = _jinja_names(full_analysis)
    cut: nodes.Template | None = None
    cut_analysis: Analysis | None = None
    panic: ollama.CutPanicError | None = None
    try:
        cut, _ = ollama.cut(template)
        cut.name = name
        cut_analysis = analyze(cut)
        taken |= _jinja_names(cut_analysis)
    except ollama.CutPanicError as exc:
        cut, cut_analysis, panic = None, None, exc
    params = {"System": "system", "Prompt": "prompt", "Response": _fresh("response", taken)}
    names = {base: _fresh(base, taken)
             for base in ("turn", "final", "pending", "pending_head", "before",
                          "pending_response")}
    mine = set(params.values()) | set(names.values()) | {"message", "role", "content", "loop_at"}

    def attempt() -> str:
        """One emission of every body (again when a variable turns out to be MIXED)."""
        failures: list[str] = []
        fim = Emitter(full, full_analysis, depth=1, mode="fim")
        fim.loop_names |= mine
        fim_body = fim.body_lines()
        fim.emit_template_macros()  # the fill-in-the-middle path may call definitions
        fim_definitions = [line for entry in fim.templates.by_key.values()
                           for line in entry.lines]
        macros = set(fim.macros)
        think_used = set(fim.root_used) & set(THINK_FIELDS)

        chat: list[str]
        definitions: list[str] = []
        if panic is not None:
            failures.append(
                f"{name}:{panic.line}:{panic.col}: Ollama fails every chat request for this "
                "template (its legacy path panics cutting the final turn: the first "
                "{{ .Response }} lies inside a branch that has an {{ else }}); the Jinja raises "
                "there too, fill-in-the-middle requests still render")
            chat = ["{{- raise_exception(" + quote(
                "Ollama cannot render a chat with this template: cutting its last turn after "
                "{{ .Response }} panics, because the cut falls inside an if/with/range that has "
                "an else") + ") }}"]
        else:
            assert cut is not None and cut_analysis is not None
            whole = LegacyEmitter(full, full_analysis, depth=1, mode="legacy", params=params)
            last = LegacyEmitter(cut, cut_analysis, depth=1, mode="legacy", params=params,
                                 final=True)
            bodies = []
            for emitter in (whole, last):
                emitter.loop_names |= mine
                bodies.append(emitter.body_lines())
                emitter.emit_template_macros()  # (the cut template calls none: it raises)
                macros |= emitter.macros
                think_used |= emitter.root_used & set(THINK_FIELDS)
            failures += last.failures
            turn_lines, order = _macro(names["turn"], names["final"], whole, bodies[0], last,
                                       bodies[1])
            definitions = _with_fields([
                *(line for entry in whole.templates.by_key.values() for line in entry.lines),
                "{#- One turn of Ollama's legacy path: the whole template, or for the last turn"
                " (final) the template cut after its first {{ .Response }}. #}",
                *turn_lines,
            ], [whole.params[f] if f in whole.params else THINK_NAMES[f] for f in order])
            def calling(final: bool) -> Callable[[str, str, str], str]:
                return lambda *values: _call(names["turn"], order,
                                             dict(zip(LEGACY_STRING_FIELDS, values, strict=True)),
                                             final)

            chat = _legacy_loop(names["pending"], names["pending_head"], names["before"],
                                names["pending_response"], calling(False), calling(True))

        header = [
            f"{{#- Translated by gotmpl2jinja from {header_name(name)}, an Ollama Go template "
            "without .Messages"
            " (Ollama's legacy path).",
            "    Renders byte for byte what Ollama renders, under gotmpl2jinja's equivalence",
            "    contract (variables: messages, enable_thinking, reasoning_effort; prompt and "
            "suffix",
            "    for fill-in-the-middle). #}",
        ]
        if macros:
            header.append(runtime.macro_block(sorted(macros)))
        lines = [
            *header,
            *definitions,
            *fim_definitions,
            # Ollama strips earlier thinking (qwen3, deepseek-r1) before any path's Execute
            *(family.strip_think_lines() if family.current().strip_think else []),
            *_prelude(fim, think_used),
            *fim_branch(fim_body, chat),
        ]
        for message in dict.fromkeys(failures):
            warnings.warn(message, OllamaFailureWarning, stacklevel=3)
        return "\n".join(lines)

    analyses = [a for a in (full_analysis, cut_analysis) if a is not None]
    last: Retype | None = None
    for _ in range(8):
        try:
            return attempt()
        except Retype as retype:
            last = retype
            owner = next((a for a in analyses
                          if any(id(v) == retype.var_id for v in a.variables.values())), None)
            if owner is None or owner.mixed.get(retype.var_id) == retype.types:
                break
            owner.mixed[retype.var_id] = retype.types
    raise retype_refusal(last, (v for a in analyses for v in a.variables.values()), name)


T = TypeVar("T")


@contextmanager
def _recording() -> Iterator[list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", OllamaFailureWarning)
        yield caught


def collect_warnings(translate: Callable[[], T]) -> tuple[T, list[str]]:
    """Run a translation and return its result with the OllamaFailureWarning texts it issued
    (for the `convert` command, which prints them)."""
    with _recording() as caught:
        result = translate()
    texts = [str(w.message) for w in caught if issubclass(w.category, OllamaFailureWarning)]
    for w in caught:  # other warnings go on as usual
        if not issubclass(w.category, OllamaFailureWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return result, texts


__all__ = [
    "LegacyEmitter",
    "OllamaFailureWarning",
    "collect_warnings",
    "fim_branch",
    "translate_legacy",
]
