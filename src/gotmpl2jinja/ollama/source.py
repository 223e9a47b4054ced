"""What the user hands us — a template file, a Modelfile, standard input or an installed model —
read into one `Source`, and the Modelfile rule that goes with it.

Why a Modelfile is more than its TEMPLATE: Ollama's server rewrites the conversation before the
template sees it (ollama-semantics.md §8): Modelfile `SYSTEM` leads unless the conversation
starts with a system message, and the `MESSAGE` lines come before the conversation. A Jinja user
gets none of that from their runtime, so `emit.preamble.convert_source` puts the rule in the
template itself: a short preamble that rewrites `messages` exactly so, then the translation.

A Modelfile without TEMPLATE: `ollama create` keeps what FROM provides (an installed base model's
template, or for a GGUF the built-in template closest to its chat template, §10); only when there
is none does Ollama use `DefaultTemplate`, `{{ .Prompt }}` (§2). We resolve FROM against the
Ollama store when one is given, else convert the default, and say so in a warning.

May depend on: `errors`, `ollama.family`, `ollama.modelfile`, `ollama.store`.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gotmpl2jinja.errors import Gotmpl2JinjaError, TemplateSyntaxError
from gotmpl2jinja.ollama.family import (
    NO_STEPS,
    FamilyError,
    FamilySteps,
    ModelFacts,
    facts_for_family,
    family_hint,
    family_steps,
)
from gotmpl2jinja.ollama.modelfile import (
    Modelfile,
    decode_modelfile,
    looks_like_modelfile,
    parse_modelfile,
)
from gotmpl2jinja.ollama.store import InstalledModel, StoreError, load_model

#: Ollama's `template.DefaultTemplate`: what a model without a template layer renders with.
DEFAULT_TEMPLATE = "{{ .Prompt }}"
#: `ollama:NAME` names an installed model (`ollama:qwen3:8b`).
OLLAMA_PREFIX = "ollama:"
#: Files with these suffixes are Go templates whatever their first line looks like.
TEMPLATE_SUFFIXES: tuple[str, ...] = (".gotmpl", ".tmpl")
STDIN = "-"
#: How an input is read: `auto` (by name, then by its first command), or as said.
INPUT_KINDS: tuple[str, ...] = ("auto", "template", "modelfile")

class InputError(Gotmpl2JinjaError):
    """An input that cannot be read as a template, a Modelfile or an installed model."""


def no_such_file(path: str) -> str:
    """The one wording of a missing input, for every command."""
    return f"{path}: no such file or directory"


@dataclass
class Source:
    """One thing to convert: the Go template Ollama would use plus the Modelfile rule's inputs.

    `system` and `messages` are what Ollama's server adds to every chat (§8); `stop` is what a
    runtime needs besides the template (LM Studio's config carries it); `warnings` are facts the
    user should know (dropped characters, a default template, a built-in renderer…).
    """

    name: str
    template: str
    kind: str  # "template", "modelfile" or "ollama"
    system: str | None = None
    messages: list[dict[str, str]] = field(default_factory=list)
    stop: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: (line, col) in the file where the template's first character is, for a Modelfile's
    #: TEMPLATE; None when the template is the whole file (or not in the file at all).
    origin: tuple[int, int] | None = None
    #: The installed model's weights (its GGUF: where its tokenizer facts are), when known.
    model_path: Path | None = None
    #: What Ollama knows of the model besides the template (its config's family and parser,
    #: a Modelfile's PARSER), None for a plain template; and the steps they make it take.
    facts: ModelFacts | None = None
    family: FamilySteps = NO_STEPS

    def with_facts(self, facts: ModelFacts) -> Source:
        """This Source for a model with these facts (the family's steps recomputed)."""
        self.facts = facts
        self.family = family_steps(self.template, facts)
        return self

    def __post_init__(self) -> None:
        blank = blank_template_warning(self.name, self.template)
        if blank is not None and blank not in self.warnings:
            self.warnings.append(blank)

    def locate(self, line: int, col: int | None) -> tuple[int, int | None]:
        """A template position (1-based; the parser's column counts UTF-8 bytes, as Go's
        positions do) as a position in the file the user has open, its column counted in
        characters, as an editor and the Modelfile parser count it."""
        col = char_column(self.template, line, col)
        if self.origin is None:
            return line, col
        first_line, first_col = self.origin
        if line == 1:
            return first_line, None if col is None else first_col + col - 1
        return first_line + line - 1, col

    @property
    def has_modelfile_rule(self) -> bool:
        """True when Ollama would rewrite the conversation (a non-empty SYSTEM, or MESSAGEs)."""
        return bool(self.system) or bool(self.messages)


def blank_template_warning(name: str, template: str) -> str | None:
    """A template that renders nothing (or only its whitespace) for every conversation is
    translated faithfully, into a Jinja that does the same; the user should still hear of it."""
    if template == "":
        return (f"{name}: the template is empty: Ollama renders nothing from it, whatever the "
                "conversation (and so does its translation)")
    if not template.strip():
        return (f"{name}: the template holds only whitespace: Ollama renders just that, "
                "whatever the conversation (and so does its translation)")
    return None


#: Jinja-only syntax: a statement or comment tag, or an action that starts with a bare name
#: followed by an attribute or a subscript (`{{ message.content }}`, `{{ messages[0] }}`: Go
#: reaches fields from a dot or a variable, never from a name).
_JINJA = re.compile(r"\{%|\{#|\{\{-?\s*[A-Za-z_]\w*(?:\.[A-Za-z_]|\[)")


def looks_like_jinja(template: str) -> bool:
    """Whether the text has syntax only Jinja has (asked only of a text Go cannot parse)."""
    return _JINJA.search(template) is not None


def jinja_hint(exc: Gotmpl2JinjaError, template: str) -> None:
    """A Go syntax error in a file that looks like Jinja: say so (the input, not the template,
    is what is wrong)."""
    if isinstance(exc, TemplateSyntaxError) and looks_like_jinja(template) \
            and JINJA_HINT not in exc.message:
        exc.message += JINJA_HINT


JINJA_HINT = ("; this looks like a Jinja template (it has Jinja's {% … %} tags or syntax): "
              "gotmpl2jinja takes Ollama's Go templates (a Modelfile's TEMPLATE) and writes "
              "the Jinja")


def char_column(text: str, line: int, col: int | None) -> int | None:
    """A byte-counted column of `text` (Go's and the parser's) as a character-counted one:
    the column every message of this tool gives, so that a Modelfile error and a template
    error count alike."""
    if col is None or text.isascii():
        return col
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return col
    head = lines[line - 1].encode("utf-8", "surrogatepass")[: max(col - 1, 0)]
    return len(head.decode("utf-8", "ignore")) + 1


# ---------------------------------------------------------------------------------------------
# Reading


def load_source(spec: str, *, models_dir: Path | None = None, kind: str = "auto") -> Source:
    """Read `spec`: a template file, a Modelfile, `-` (standard input) or `ollama:NAME`.

    `models_dir` is the Ollama store for `ollama:NAME` (default: $OLLAMA_MODELS or
    ~/.ollama/models) and, when given, where a Modelfile's FROM is looked up. `kind`
    ("auto", "template", "modelfile") says how a file or standard input is read.
    """
    if kind not in INPUT_KINDS:
        raise InputError(f"unknown input kind {kind!r}; choose from {', '.join(INPUT_KINDS)}")
    if spec.startswith(OLLAMA_PREFIX) and kind == "auto":
        name = spec[len(OLLAMA_PREFIX):]
        if not name:
            raise InputError(f"{spec!r}: give a model name after 'ollama:' (ollama:qwen3:8b)")
        return source_from_model(load_model(name, models_dir), spec)
    if spec == STDIN:
        return source_from_bytes(sys.stdin.buffer.read(), "<stdin>", models_dir=models_dir,
                                 kind=kind)
    path = Path(spec)
    if path.is_dir():
        raise InputError(f"{spec} is a directory; give a template file or a Modelfile "
                         "(the migrate command converts whole directories)")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(no_such_file(spec)) from None
    except OSError as exc:
        raise InputError(f"{spec}: cannot read it ({exc.strerror or exc})") from None
    return source_from_bytes(data, spec, models_dir=models_dir, kind=kind)


def source_from_bytes(data: bytes, name: str, *, models_dir: Path | None = None,
                      kind: str = "auto") -> Source:
    """A file's bytes as a Source: with kind "auto", a Modelfile when it is named like one or
    looks like one (then a warning says so, and how to read it as a template), else a Go
    template; "template" and "modelfile" say which. (The warning is for standard input, which
    has no name to go by.)"""
    as_modelfile = kind == "modelfile"
    sniffed = False
    if kind == "auto" and not name.lower().endswith(TEMPLATE_SUFFIXES):
        head = data[:4096].decode("utf-8", "replace")
        as_modelfile = looks_like_modelfile(name, head)
        # a file's name says what it is; a Modelfile that starts with FROM is no surprise
        sniffed = as_modelfile and name == "<stdin>" and not _starts_with_from(head)
    if as_modelfile:
        hint = ("read as a Modelfile (its first line that is not blank or a # comment starts "
                "with a Modelfile command); pass --as template to read it as a Go template")
        try:
            modelfile = parse_modelfile(data, name=name)
        except Gotmpl2JinjaError as exc:
            if sniffed:
                exc.message += f" ({hint})"
            raise
        source = source_from_modelfile(modelfile, models_dir=models_dir)
        source.origin = template_origin(decode_modelfile(data), modelfile, source)
        if source.model_path is None and name != "<stdin>":
            source.model_path = from_gguf(Path(name), modelfile)
        if sniffed:
            source.warnings.insert(0, f"{name}: {hint}")
        return source
    return Source(name=name, template=decode_template(data, name), kind="template")


def from_gguf(path: Path, mf: Modelfile) -> Path | None:
    """The .gguf file a Modelfile's FROM names (relative to the Modelfile), when it is there:
    the model whose tokenizer Ollama will use."""
    named = mf.from_ or ""
    if not named.lower().endswith(".gguf"):
        return None
    candidate = path.parent / Path(named).expanduser()
    return candidate if candidate.is_file() else None


def _starts_with_from(text: str) -> bool:
    """The first line that is not blank or a `#` comment is a FROM command."""
    for raw in text.lstrip("\ufeff").splitlines():
        stripped = raw.strip(" \t")
        if stripped and not stripped.startswith("#"):
            return stripped[:5].lower() in ("from ", "from\t")
    return False


def decode_template(data: bytes, name: str) -> str:
    """A template file must be UTF-8: say where it is not instead of guessing an encoding."""
    text = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = exc.start + (len(data) - len(text))
        line = data[:offset].count(b"\n") + 1
        col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
        raise InputError(
            f"not valid UTF-8 (byte 0x{data[offset]:02x}); save the template as UTF-8",
            name=name, line=line, col=col,
        ) from None


def template_origin(text: str, mf: Modelfile, source: Source) -> tuple[int, int] | None:
    """Where the (last, winning) TEMPLATE value starts in the Modelfile: the line of its
    command, after the keyword, the blanks and an opening quote. None when the template did
    not come from this file. Characters Ollama drops earlier on that line would shift it."""
    commands = [c for c in mf.commands if c.name == "template" and c.args]
    if not commands or commands[-1].args != source.template:
        return None
    line_no = commands[-1].line
    lines = re.split(r"\r\n|\r|\n", text.lstrip("\ufeff"))
    if line_no > len(lines):
        return None
    line = lines[line_no - 1]
    match = re.match(r'[ \t]*[A-Za-z]+[ \t]+("""|")?', line)
    if match is None:
        return None
    return line_no, match.end() + 1


def source_from_modelfile(mf: Modelfile, *, models_dir: Path | None = None) -> Source:
    """What `ollama create` would store for this Modelfile, as a Source.

    Empty TEMPLATE/SYSTEM values set nothing (create.go checks `!= ""`), so they count as absent.
    """
    warnings = list(mf.warnings)
    template = mf.template or None
    system = mf.system or None
    messages = [dict(m) for m in mf.messages]
    stop = mf.stop
    base = _installed_base(mf, models_dir, warnings) if template is None else None
    if base is not None:
        template = base.template
        if system is None:
            system = base.system or None
        if not messages:
            messages = _plain_messages(base.messages, f"{base.name} (FROM)", warnings)
        if not stop:
            stop = base.stop
        _refuse_renderer(mf.name, base.renderer)
    model_path = base.model_path if base is not None else None
    if template is None:
        where = "" if base is None else f" (the installed {base.name} has no template layer)"
        warnings.append(
            f"{mf.name}: no TEMPLATE{where}: `ollama create` takes the template from FROM "
            f"{mf.from_!r} (an installed base model's template, or for a GGUF the built-in "
            "template closest to its chat template); only when there is none does Ollama use "
            f"its default template {DEFAULT_TEMPLATE!r}, which is what is converted here"
        )
        template = DEFAULT_TEMPLATE
    _refuse_renderer(mf.name, mf.renderer)
    source = Source(name=mf.name, template=template, kind="modelfile", system=system,
                    messages=messages, stop=list(stop), warnings=warnings,
                    model_path=model_path)
    # the new model keeps its base's config (family, parser) but not its name, which
    # `ollama create` gives it: a by-name rule (deepseek-r1) needs --family
    base_facts = base.facts if base is not None else ModelFacts()
    return source.with_facts(replace(base_facts, parser=mf.parser or base_facts.parser,
                                     model=""))


def _installed_base(mf: Modelfile, models_dir: Path | None,
                    warnings: list[str]) -> InstalledModel | None:
    """The installed model FROM names, when a store was given and it is there (else None)."""
    if models_dir is None or not mf.from_:
        return None
    if mf.from_.startswith((".", "/", "~")) or mf.from_.lower().endswith(".gguf"):
        return None  # a file or directory, not a model name
    try:
        return load_model(mf.from_, models_dir)
    except StoreError as exc:
        warnings.append(f"{mf.name}: FROM {mf.from_!r} is not usable from the store ({exc})")
        return None


def source_from_model(model: InstalledModel, spec: str) -> Source:
    """An installed model as Ollama's GetModel sees it (no template layer → the default)."""
    warnings: list[str] = []
    template = model.template
    if template is None:
        warnings.append(f"{spec}: the model has no template layer; Ollama renders it with its "
                        f"default template {DEFAULT_TEMPLATE!r}, which is what is converted here")
        template = DEFAULT_TEMPLATE
    _refuse_renderer(spec, model.renderer)
    messages = _plain_messages(model.messages, spec, warnings)
    source = Source(name=spec, template=template, kind="ollama", system=model.system or None,
                    messages=messages, stop=model.stop, warnings=warnings,
                    model_path=model.model_path)
    return source.with_facts(model.facts)


def _plain_messages(messages: list[Any], where: str, warnings: list[str]) -> list[dict[str, str]]:
    """Role and content of stored messages (all a Modelfile MESSAGE can set); say what is lost."""
    plain: list[dict[str, str]] = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise InputError(f"{where}: stored message {i} has no role; the store is damaged")
        content = message.get("content", "")
        if not isinstance(content, str):
            raise InputError(f"{where}: stored message {i} has a non-string content")
        extra = sorted(k for k, v in message.items() if k not in ("role", "content") and v)
        if extra:
            warnings.append(f"{where}: stored message {i} also has {', '.join(extra)}; only its "
                            "role and content are carried into the Jinja preamble")
        plain.append({"role": message["role"].lower(), "content": content})
    return plain


def apply_family(source: Source, family: str | None) -> str | None:
    """Give `source` the family a user names (`--family NAME`); without one, the one-line
    notice to print when its model's family is unknown but its text is a family's (None when
    there is nothing to say). A known family (an installed model's config) is kept."""
    known = source.facts is not None and (source.facts.family or source.facts.model)
    if family is not None:
        try:
            named = facts_for_family(family)
        except FamilyError as exc:
            raise InputError(f"--family: {exc}") from None
        base = source.facts or ModelFacts()
        source.with_facts(replace(base, family=named.family or base.family,
                                  model=named.model or base.model))
        return None
    hint = family_hint(source.template)
    if known or hint is None:
        return None
    return (f"note: {source.name}: this is {hint}'s template (harmony's <|channel|> markers), "
            f"and Ollama treats {hint} by its family, not by its template (it thinks, with "
            f"levels, whatever the template says); if the model is {hint}, say so with "
            f"--family {hint}")


def _refuse_renderer(name: str, renderer: str | None) -> None:
    """A model with a RENDERER is rendered by Ollama's built-in Go code: its template is not
    what the model sees, so a translation of it would be meaningless."""
    if renderer:
        raise InputError(f"{name}: RENDERER {renderer!r}: Ollama renders this model with its "
                         f"built-in {renderer!r} renderer (Go code), not with its template; "
                         "the template is not what the model sees, so there is nothing to "
                         "translate (ollama-semantics.md §1)")
