"""The two paths of a template (chat and fill-in-the-middle), the header comment, and
how the emitted statements of two paths are merged.

May depend on: `emit.values`.
"""

from __future__ import annotations

import difflib
import re

from gotmpl2jinja.emit.values import INDENT

#: Root fields of the fill-in-the-middle path besides Response and the think values.
FIM_FIELDS = {"Prompt": "prompt", "Suffix": "suffix"}

#: Root fields whose value is the same in the fill-in-the-middle path as in a chat. `.Messages`
#: is not one of them: it is Go's nil there, not an empty list (`len` fails, it prints
#: `<no value>`); see analysis.messages_alike_when_nil for when that cannot show.
PATH_NEUTRAL_FIELDS = {"Response", "Think", "ThinkLevel", "IsThinkSet"}

#: Ollama's fill-in-the-middle condition (`Prompt != "" && Suffix != ""`, §3) on the contract's
#: variables: passed only for a fill-in-the-middle request, and tested for being non-empty too
#: so that a host passing empty strings gets the chat path, as Ollama would.
FIM_CONDITION = "prompt is defined and suffix is defined and prompt and suffix"
#: Its negation, for a template whose fill-in-the-middle rendering is empty.
CHAT_CONDITION = "prompt is not defined or suffix is not defined or not prompt or not suffix"


#: Characters a name may not carry into a Jinja comment as they are: what could close the
#: comment or open a tag on some engine, the escape character itself, and line breaks.
_UNSAFE_IN_COMMENT = set("{}#%\\")


def header_name(name: str) -> str:
    """`name` (a file name, `<stdin>`, `ollama:NAME`) as data for the header comment.

    Nothing from outside the template's text becomes Jinja code: `{`, `}`, `#`, `%`, `\\` and
    every non-printable character are percent-encoded (UTF-8 bytes), so the name can neither
    close the comment nor open a tag. An absolute path, or one climbing with `..`, is cut to
    its last component: the user's directories stay out of published files."""
    if not name.startswith("ollama:"):
        parts = re.split(r"[\\/]", name)
        if name.startswith(("/", "\\", "~")) or re.match(r"[A-Za-z]:", name) or ".." in parts:
            name = parts[-1]
    return "".join(
        ch if ch.isprintable() and ch not in _UNSAFE_IN_COMMENT
        else "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        for ch in name)


def fim_branch(fim_lines: list[str], chat_lines: list[str]) -> list[str]:
    """Wrap a chat rendering with Ollama's fill-in-the-middle path.

    The path depends on the request, not on the template (Ollama takes it whenever prompt and
    suffix are non-empty), so every template needs the branch unless its two renderings cannot
    differ. `fim_lines` are rendered at depth 1, `chat_lines` at depth 0; empty `fim_lines`
    give a single `if` around the chat. The two renderings mostly share their first
    statements (variables, a system block): `merge_paths` writes those once."""
    if not fim_lines:
        return ["{#- Ollama's fill-in-the-middle path: a request with a prompt and a suffix"
                " renders the whole template once, to nothing here. #}",
                f"{{%- if {CHAT_CONDITION} %}}", *(INDENT + line for line in chat_lines),
                "{%- endif %}"]
    merged, shared = merge_paths([line.removeprefix(INDENT) for line in fim_lines], chat_lines,
                                 FIM_CONDITION, CHAT_CONDITION)
    if not shared:
        return ["{#- Ollama's fill-in-the-middle path: a request with a prompt and a suffix"
                " renders the whole template once. #}", *merged]
    return ["{#- Ollama's fill-in-the-middle path (a request with a prompt and a suffix renders"
            " the whole template once) shares this body: what one path alone renders stands in"
            " an if of that path. #}", *merged]


def merge_paths(first: list[str], second: list[str], first_if: str,
                second_if: str) -> tuple[list[str], bool]:
    """Two renderings (lines at depth 0) of which a request takes one, `first` where
    `first_if` holds and `second` where `second_if` (its negation) does, as one: each
    statement both have is written once, the others stand in an `if` of their path. Run on
    either path, the statements are exactly that path's, in its order (no engine scopes a
    `set` inside an `if`); the conditions must not change while it runs. Returns the lines
    and whether any statement was shared."""
    a, b = statements(first), statements(second)
    out: list[str] = []
    shared = False
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        only_a = [INDENT + line for stmt in a[a0:a1] for line in stmt]
        only_b = [INDENT + line for stmt in b[b0:b1] for line in stmt]
        if op == "equal":
            shared = True
            out += [line for stmt in b[b0:b1] for line in stmt]
        elif op == "delete":
            out += [f"{{%- if {first_if} %}}", *only_a, "{%- endif %}"]
        elif op == "insert":
            out += [f"{{%- if {second_if} %}}", *only_b, "{%- endif %}"]
        else:
            out += [f"{{%- if {first_if} %}}", *only_a, "{%- else %}", *only_b, "{%- endif %}"]
    return out, shared


def statements(lines: list[str]) -> list[tuple[str, ...]]:
    """Emitted lines at depth 0 cut into top-level statements, each with its nested lines."""
    out: list[list[str]] = []
    for line in lines:
        closing = line.startswith(("{%- end", "{%- else", "{%- elif"))
        if out and (closing or not line.startswith("{")):  # nested (indented) or a closing tag
            out[-1].append(line)
        else:
            out.append([line])
    return [tuple(stmt) for stmt in out]
