"""The model family's steps (ollama.family) in the Jinja: the think values a family grants and
harmony's "max" → "high", and the thinking Ollama takes out of earlier assistant messages for
qwen3 and deepseek-r1 (ollama-semantics.md §8 "By family").

Why a context variable: the family is an input of the whole translation (every Emitter of a
template, the legacy path's included, writes the same prelude), not of one node; `translating_for`
sets it around one translation.

May depend on: `emit.collate`, `emit.runtime`, `ollama.family`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from gotmpl2jinja.emit.collate import MESSAGE_DEFAULTS, OPTIONAL_MESSAGE_KEYS, content_of
from gotmpl2jinja.emit.runtime import item_or, literal
from gotmpl2jinja.ollama.family import NO_STEPS, FamilySteps

_FAMILY: ContextVar[FamilySteps] = ContextVar("gotmpl2jinja_family", default=NO_STEPS)


@contextmanager
def translating_for(steps: FamilySteps | None) -> Iterator[None]:
    """Translate for a model with these family steps (none: the template alone)."""
    token = _FAMILY.set(steps or NO_STEPS)
    try:
        yield
    finally:
        _FAMILY.reset(token)


def current() -> FamilySteps:
    """The family steps of the translation under way."""
    return _FAMILY.get()


#: Go's unicode.IsSpace but for space, tab, CR and LF, which every engine's lstrip() trims
#: (minja's trims no other: not even \v and \f).
_GO_SPACES = "\v\f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009" \
    "\u200a\u2028\u2029\u202f\u205f\u3000"
#: What some engine's lstrip() trims that Go does not (Python's \x1c-\x1f, JavaScript's
#: U+FEFF), each with a character of the same length in every engine's units to stand for it.
_ENGINE_ONLY = {"\x1c": "x", "\x1d": "x", "\x1e": "x", "\x1f": "x", "\ufeff": "\ufffd"}


def trim_left(src: str, dst: str) -> list[str]:
    """Jinja setting `dst` to `src` (a string variable) without the white space Go's
    strings.TrimLeftFunc(unicode.IsSpace) trims, on every engine: a copy where Go's other
    spaces are ASCII spaces of the same length (in the engine's own units: bytes, code points
    or UTF-16) and what only an engine trims is a character it keeps, is lstrip()ed, and `src`
    is cut where the copy's white space ends."""
    expr = src
    for ch, stand_in in _ENGINE_ONLY.items():
        expr += f".replace({literal(ch)}, {literal(stand_in)})"
    for ch in _GO_SPACES:
        expr += f".replace({literal(ch)}, ['', ' ', '  ', '   '][{literal(ch)}|length])"
    return [f"{{%- set family_copy = {expr} %}}",
            f"{{%- set {dst} = {src}[(family_copy|length) - (family_copy.lstrip()|length):] %}}"]


def strip_think_lines() -> list[str]:
    """Ollama's filterThinkTags: every assistant message before the last user message keeps
    what its thinking parser leaves of the content (white space, then a <think>…</think>
    block, then white space, taken off the front; a content that is white space or the start
    of "<think>" only, or whose block never closes, becomes empty). Messages that change are
    rebuilt with the fields collate copies; the list is left as it is when none changes."""
    fields = ["'role': message['role']", "'content': family_content",
              *(f"'{key}': {item_or('message', key, MESSAGE_DEFAULTS[key])}"
                for key in OPTIONAL_MESSAGE_KEYS)]
    body = [
        "{%- set family_ns = namespace(last=-1, messages=[], changed=false) %}",
        "{%- for message in messages %}",
        "    {%- if (message['role']|lower) == 'user' %}{%- set family_ns.last = loop.index0 %}"
        "{%- endif %}",
        "{%- endfor %}",
        "{%- for message in messages %}",
        "    {%- set family_content = none %}",
        "    {%- if loop.index0 < family_ns.last and (message['role']|lower) == 'assistant' %}",
        f"        {{%- set family_text = {content_of('message')} %}}",
        *("        " + line for line in trim_left("family_text", "family_trimmed")),
        "        {%- if family_trimmed.startswith('<think>') %}",
        "            {%- set family_parts = family_trimmed[7:].split('</think>') %}",
        "            {%- set family_rest = family_parts[1:]|join('</think>') %}",
        *("            " + line for line in trim_left("family_rest", "family_content")),
        "            {%- if family_parts|length < 2 %}{%- set family_content = '' %}"
        "{%- endif %}",
        "        {%- elif '<think>'.startswith(family_trimmed) %}",
        "            {%- set family_content = '' %}",
        "        {%- endif %}",
        "    {%- endif %}",
        "    {%- if family_content is none %}",
        "        {%- set family_ns.messages = family_ns.messages + [message] %}",
        "    {%- else %}",
        "        {%- set family_ns.changed = true %}",
        "        {%- set family_ns.messages = family_ns.messages + [{" + ", ".join(fields)
        + "}] %}",
        "    {%- endif %}",
        "{%- endfor %}",
        "{%- if family_ns.changed %}{%- set messages = family_ns.messages %}{%- endif %}",
    ]
    return ["{#- Ollama's qwen3/deepseek-r1 step: earlier assistant messages lose their"
            " <think>…</think> block. #}",
            "{%- if messages is defined and messages %}", *("    " + line for line in body),
            "{%- endif %}"]


def think_level_expression(thinking: str) -> str:
    """The Jinja of .ThinkLevel on a model that can think (`thinking`: the think variable):
    harmony's "max" is "high"."""
    effort = "reasoning_effort"
    if current().harmony_levels:
        effort = "('high' if reasoning_effort == 'max' else reasoning_effort)"
    return f"{effort} if reasoning_effort is defined else 'medium' if {thinking} else ''"


#: The contract's failure where harmony would rename a tool by Unicode's letter and digit
#: classes, which no portable Jinja can test (the harness takes it where Go rendered).
HARMONY_NAME = ("harmony renames this tool by Unicode's letters and digits (a character past "
                "ASCII in its name): outside the contract")
_ASCII_KEPT = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$"
#: The ASCII the harmony parser drops (space, '-' and '.' become '_' before).
_ASCII_DROPPED = "".join(chr(c) for c in range(128)
                         if chr(c) not in _ASCII_KEPT and chr(c) not in " -.")
#: Tools harmony knows as built-in keep their names.
_HARMONY_BUILTINS = ("browser.open", "browser.search", "browser.find", "python")


def harmony_tools_lines() -> list[str]:
    """The harmony parser's names for the request's tools (ollama-semantics.md §8): space,
    '-' and '.' as '_', other characters but ASCII letters, digits, '_' and '$' dropped,
    "unnamed" for nothing left, '_' before a leading digit, "_2", "_3"… after a name already
    given; the four built-ins kept. Tools are rebuilt with the fields Go's tool has."""
    name = "family_name"
    kept = name
    for ch in " -.":
        kept += f".replace({literal(ch)}, '_')"
    dropped = "family_kept"
    for ch in _ASCII_DROPPED:
        dropped += f".replace({literal(ch)}, '')"
    rest = "family_base"
    for ch in _ASCII_KEPT:
        rest += f".replace({literal(ch)}, '')"
    builtins = "[" + ", ".join(literal(b) for b in _HARMONY_BUILTINS) + "]"
    empty = "''"
    function = ("{'name': family_name, "
                f"'description': {item_or('family_fn', 'description', empty)}, "
                f"'parameters': {item_or('family_fn', 'parameters', '{}')}}}")
    tool = (f"{{'type': {item_or('tool', 'type', empty)}, 'items': {item_or('tool', 'items')}, "
            f"'function': {function}}}")
    body = [
        "{%- set family_tools = namespace(list=[], taken=[]) %}",
        "{%- for tool in tools %}",
        f"    {{%- set family_fn = {item_or('tool', 'function', '{}')} %}}",
        "    {%- set family_fn = family_fn if family_fn is mapping else {} %}",
        f"    {{%- set family_name = {item_or('family_fn', 'name', empty)} %}}",
        f"    {{%- if family_name and family_name not in {builtins} %}}",
        f"        {{%- set family_kept = {kept} %}}",
        f"        {{%- set family_base = {dropped} %}}",
        f"        {{%- if {rest} %}}{{{{- raise_exception({literal(HARMONY_NAME)}) }}}}"
        "{%- endif %}",
        "        {%- set family_base = family_base if family_base else 'unnamed' %}",
        "        {%- set family_base = ('_' ~ family_base) if family_base[:1] in"
        " '0123456789' else family_base %}",
        "        {%- set family_pick = namespace(name=family_base) %}",
        "        {%- for n in range(2, family_tools.taken|length + 3) %}",
        "            {%- if family_pick.name in family_tools.taken %}",
        "                {%- set family_pick.name = family_base ~ '_' ~ n %}",
        "            {%- endif %}",
        "        {%- endfor %}",
        "        {%- set family_name = family_pick.name %}",
        "    {%- endif %}",
        "    {%- if family_name %}",
        "        {%- set family_tools.taken = family_tools.taken + [family_name] %}",
        "    {%- endif %}",
        f"    {{%- set family_tools.list = family_tools.list + [{tool}] %}}",
        "{%- endfor %}",
        "{%- set tools = family_tools.list %}",
    ]
    return ["{#- Ollama's harmony step: the harmony parser's names for the tools. #}",
            "{%- if tools is defined and tools %}", *("    " + line for line in body),
            "{%- endif %}"]
