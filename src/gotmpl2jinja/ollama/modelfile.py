"""Ollama's Modelfile grammar, re-implemented rune for rune (ollama `parser/parser.go ParseFile`).

Why exact: the TEMPLATE we translate is whatever Ollama's parser hands to `ollama create`, and
that parser has quirks a "reasonable" Modelfile reader would get wrong — quotes only close at
the end of a line, no escapes, comments only between commands, and every rune Go's
`strconv.IsPrint` rejects (NBSP, ZWJ, control characters…) silently dropped even inside
`\"\"\"…\"\"\"`. We drop them too (so the template is Ollama's) and say so in `warnings`.

Positions: errors and warnings carry the true 1-based line (CRLF counts once) and column (in
characters) of the offending character. Ollama's own `(line N)` can differ: it counts `\\r` and
`\\n` separately and has already counted the newline that triggers an error.

May depend on: `errors`.
"""

from __future__ import annotations

import codecs
import unicodedata
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from gotmpl2jinja.errors import ModelfileError

try:  # a newer Unicode database is closer to Go's (Go 1.27: Unicode 17); stdlib is the fallback
    import unicodedata2 as _unicodedata
except ImportError:  # pragma: no cover - depends on the environment
    _unicodedata = unicodedata  # type: ignore[no-redef]

UNICODE_VERSION: str = _unicodedata.unidata_version

COMMAND_KEYWORDS: tuple[str, ...] = (
    "from", "license", "template", "system", "adapter", "draft", "renderer", "parser",
    "parameter", "message", "requires",
)
MESSAGE_ROLES: tuple[str, ...] = ("system", "user", "assistant")
# `ollama create` prints a warning for these and ignores them (parser.go deprecatedParameters).
DEPRECATED_PARAMETERS: tuple[str, ...] = (
    "penalize_newline", "low_vram", "f16_kv", "logits_all", "vocab_only", "use_mlock",
    "mirostat", "mirostat_tau", "mirostat_eta",
)
# Options whose Go type is a slice: repeated PARAMETER lines accumulate instead of replacing.
LIST_PARAMETERS: tuple[str, ...] = ("stop",)

INVALID_COMMAND = (
    'command must be one of "from", "license", "template", "system", "adapter", "draft", '
    '"renderer", "parser", "parameter", "message", or "requires"'
)
INVALID_ROLE = 'message role must be one of "system", "user", or "assistant"'

_KEPT_UNPRINTABLE = frozenset(" \t\r\n")
_PRINTABLE_CATEGORY_CLASSES = frozenset("LMNPS")


def go_is_print(ch: str) -> bool:
    """Go's `strconv.IsPrint`: Unicode categories L, M, N, P, S, plus the ASCII space only."""
    if ch == " ":
        return True
    return _unicodedata.category(ch)[0] in _PRINTABLE_CATEGORY_CLASSES


def _go_utf8_replace(exc: UnicodeError) -> tuple[str, int]:
    """One U+FFFD per invalid byte, then resume at the next byte — Go's utf8.DecodeRune rule."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return "\ufffd", exc.start + 1


codecs.register_error("gotmpl2jinja-go-utf8", _go_utf8_replace)


def decode_modelfile(data: bytes) -> str:
    """Decode like `unicode.BOMOverride(unicode.UTF8.NewDecoder())`: a UTF-8/UTF-16 BOM wins."""
    if data.startswith(codecs.BOM_UTF8):
        return data[3:].decode("utf-8", "gotmpl2jinja-go-utf8")
    if data.startswith(codecs.BOM_UTF16_BE):
        return data[2:].decode("utf-16-be", "replace")
    if data.startswith(codecs.BOM_UTF16_LE):
        return data[2:].decode("utf-16-le", "replace")
    return data.decode("utf-8", "gotmpl2jinja-go-utf8")


@dataclass(frozen=True)
class Command:
    """One parsed command as Ollama stores it: `name` is `model` for FROM, the lower-case
    keyword for the others, and the parameter's own name (case kept) for PARAMETER."""

    name: str
    args: str
    line: int
    keyword: str

    def __str__(self) -> str:
        return f"{self.keyword.upper()} {self.args!r}"


@dataclass
class Modelfile:
    """A parsed Modelfile plus what `ollama create` would take from it (last one wins, like
    `Modelfile.CreateRequest`, which dispatches on the command name)."""

    name: str
    commands: list[Command] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    from_: str | None = None
    froms: list[str] = field(default_factory=list)
    template: str | None = None
    system: str | None = None
    messages: list[dict[str, str]] = field(default_factory=list)
    parameters: dict[str, list[str]] = field(default_factory=dict)
    licenses: list[str] = field(default_factory=list)
    adapters: list[str] = field(default_factory=list)
    drafts: list[str] = field(default_factory=list)
    renderer: str | None = None
    parser: str | None = None
    requires: str | None = None

    @property
    def stop(self) -> list[str]:
        """The accumulated `PARAMETER stop` values, in file order."""
        return list(self.parameters.get("stop", []))


class _State(Enum):
    NIL = "between commands"
    NAME = "command name"
    VALUE = "value"
    PARAMETER = "parameter name"
    MESSAGE = "message role"
    COMMENT = "comment"


class _Eof(Exception):
    """parser.go answers io.ErrUnexpectedEOF for a newline/other rune where a word must go on."""


def _step(ch: str, state: _State) -> tuple[_State, str | None]:
    """The transition table of parser.go `parseRuneForState`: next state and the rune to keep
    (None where Go returns rune 0, which IsPrint rejects, so nothing is written)."""
    is_space = ch in " \t"
    is_newline = ch in "\r\n"
    if state is _State.NIL:
        if ch == "#":
            return _State.COMMENT, None
        if is_space or is_newline:
            return _State.NIL, None
        return _State.NAME, ch
    if state is _State.NAME:
        if ch.isascii() and ch.isalpha():
            return _State.NAME, ch
        if is_space:
            return _State.VALUE, None
        raise ModelfileError(INVALID_COMMAND)
    if state is _State.VALUE:
        if is_newline or is_space:
            return _State.NIL, ch
        return _State.VALUE, ch
    if state is _State.PARAMETER:
        if ch.isascii() and (ch.isalnum() or ch == "_"):
            return _State.PARAMETER, ch
        if is_space:
            return _State.VALUE, None
        raise _Eof
    if state is _State.MESSAGE:
        if ch.isascii() and ch.isalpha():
            return _State.MESSAGE, ch
        if is_space:
            return _State.VALUE, None
        raise _Eof
    # COMMENT
    if is_newline:
        return _State.NIL, None
    return _State.COMMENT, None


def _unquote(s: str) -> tuple[str, bool]:
    """parser.go `unquote`: a value is complete when its quotes (if any) close at its very end."""
    if s.startswith('"""'):
        if len(s) >= 6 and s.endswith('"""'):
            return s[3:-3], True
        return "", False
    if s.startswith('"'):
        if len(s) >= 2 and s.endswith('"'):
            return s[1:-1], True
        return "", False
    return s, True


def _trim(buffer: list[str]) -> str:
    """strings.TrimSpace on the value buffer. Only these four whitespace runes can be in it:
    every other Unicode space is rejected by IsPrint and so was never written."""
    return "".join(buffer).strip(" \t\r\n")


def _describe(ch: str) -> str:
    name = _unicodedata.name(ch, "") or unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}" + (f" {name}" if name else "")


def parse_modelfile(text: str | bytes, name: str = "Modelfile") -> Modelfile:
    """Parse a Modelfile exactly as Ollama does; raise ModelfileError where Ollama would fail."""
    if isinstance(text, bytes):
        source = decode_modelfile(text)
    else:
        source = text[1:] if text.startswith("\ufeff") else text  # the UTF-8 BOM, as text

    result = Modelfile(name=name)
    state = _State.NIL
    buffer: list[str] = []
    cmd_name = ""
    cmd_keyword = ""
    cmd_line = 1
    role = ""
    warned_new: set[str] = set()
    line, col = 1, 1
    length = len(source)

    for i, ch in enumerate(source):
        here_line, here_col = line, col
        if ch == "\n" or (ch == "\r" and (i + 1 >= length or source[i + 1] != "\n")):
            line, col = line + 1, 1
        else:
            col += 1

        try:
            nxt, keep = _step(ch, state)
        except _Eof:
            what = "PARAMETER name" if state is _State.PARAMETER else "MESSAGE role"
            raise ModelfileError(
                f"unexpected EOF: {''.join(buffer)} (a {what} must be followed by a space and "
                "a value on the same line)", line=here_line, col=here_col, name=name,
            ) from None
        except ModelfileError as exc:
            raise ModelfileError(exc.message, line=here_line, col=here_col, name=name) from None

        if nxt is not state:
            if state is _State.NAME:
                word = "".join(buffer)
                lowered = word.lower()
                if lowered not in COMMAND_KEYWORDS:
                    raise ModelfileError(INVALID_COMMAND, line=here_line, col=here_col, name=name)
                cmd_keyword = lowered
                if lowered == "from":
                    cmd_name = "model"
                elif lowered == "parameter":
                    nxt = _State.PARAMETER
                elif lowered == "message":
                    nxt = _State.MESSAGE
                    cmd_name = lowered
                else:
                    cmd_name = lowered
            elif state is _State.PARAMETER:
                cmd_name = "".join(buffer)
            elif state is _State.MESSAGE:
                word = "".join(buffer)
                if word not in MESSAGE_ROLES:
                    raise ModelfileError(INVALID_ROLE, line=here_line, col=here_col, name=name)
                role = word
            elif state is _State.VALUE:
                value, complete = _unquote(_trim(buffer))
                if not complete or ch in " \t":
                    buffer.append(ch)  # spaces and unfinished quotes never end a value
                    continue
                if role:
                    value = f"{role}: {value}"
                    role = ""
                result.commands.append(Command(cmd_name, value, cmd_line, cmd_keyword))
            if nxt is _State.NAME:
                cmd_line = here_line
            buffer.clear()
            state = nxt

        if keep is None:
            continue
        if go_is_print(keep):
            buffer.append(keep)
            if unicodedata.category(keep) == "Cn" and keep not in warned_new:
                warned_new.add(keep)
                result.warnings.append(
                    f"{name}:{here_line}:{here_col}: {_describe(keep)} is newer than Unicode "
                    f"{unicodedata.unidata_version}; kept here (Unicode {UNICODE_VERSION}), but "
                    "Ollama keeps it only if its Go's Unicode tables know it"
                )
        elif keep not in _KEPT_UNPRINTABLE:
            where = f"{cmd_keyword.upper()} value" if state is _State.VALUE else "a command"
            result.warnings.append(
                f"{name}:{here_line}:{here_col}: {_describe(keep)} is dropped from {where}: "
                "Ollama drops every character Go's strconv.IsPrint rejects"
            )

    if state is _State.VALUE:
        value, complete = _unquote(_trim(buffer))
        if not complete:
            raise ModelfileError(
                f"unexpected EOF: the {cmd_keyword.upper()} value that starts on line "
                f"{cmd_line} never closes its quotes (a closing quote must end its line)",
                line=line, col=col, name=name,
            )
        if role:
            value = f"{role}: {value}"
        result.commands.append(Command(cmd_name, value, cmd_line, cmd_keyword))
    elif state not in (_State.NIL, _State.COMMENT):
        raise ModelfileError(
            f"unexpected EOF: the file ends inside a {state.value}", line=line, col=col, name=name,
        )

    if not any(c.name == "model" for c in result.commands):
        raise ModelfileError("no FROM line", name=name)
    _apply_commands(result)
    return result


def _apply_commands(mf: Modelfile) -> None:
    """What `Modelfile.CreateRequest` takes from the commands, dispatching on the name (so
    `PARAMETER system x` really sets the system prompt, as in Ollama)."""
    for cmd in mf.commands:
        if cmd.name == "model":
            mf.froms.append(cmd.args)
            mf.from_ = cmd.args
        elif cmd.name == "draft":
            mf.drafts.append(cmd.args)
        elif cmd.name == "adapter":
            mf.adapters.append(cmd.args)
        elif cmd.name == "template":
            mf.template = cmd.args
        elif cmd.name == "system":
            mf.system = cmd.args
        elif cmd.name == "license":
            mf.licenses.append(cmd.args)
        elif cmd.name == "renderer":
            mf.renderer = cmd.args
        elif cmd.name == "parser":
            mf.parser = cmd.args
        elif cmd.name == "requires":
            mf.requires = cmd.args
        elif cmd.name == "message":
            role, sep, content = cmd.args.partition(": ")
            mf.messages.append({"role": role, "content": content if sep else ""})
        elif cmd.name in DEPRECATED_PARAMETERS:
            mf.warnings.append(
                f"{mf.name}:{cmd.line}: parameter {cmd.name} is deprecated; Ollama ignores it"
            )
        elif cmd.name in LIST_PARAMETERS:
            mf.parameters.setdefault(cmd.name, []).append(cmd.args)
        else:
            mf.parameters[cmd.name] = [cmd.args]


_MODELFILE_SUFFIXES = (".modelfile",)


def looks_like_modelfile(path: str | Path, text: str) -> bool:
    """Input detection: named `Modelfile` / `*.Modelfile` / `*.modelfile`, or the first thing
    after blank and `#` lines is a Modelfile keyword followed by a space or tab."""
    base = Path(str(path)).name
    if base.lower() == "modelfile" or base.lower().endswith(_MODELFILE_SUFFIXES):
        return True
    for raw in text.lstrip("\ufeff").splitlines():
        stripped = raw.lstrip(" \t")
        if not stripped or stripped.startswith("#"):
            continue
        word = stripped.split(None, 1)[0] if stripped.split() else ""
        rest = stripped[len(word):]
        return word.lower() in COMMAND_KEYWORDS and rest[:1] in (" ", "\t")
    return False
