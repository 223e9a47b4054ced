"""gotmpl2jinja: Ollama Go chat templates → equivalent, portable Jinja chat templates.

The Python API. The imports inside its functions are deferred for start-up time: `import
gotmpl2jinja` loads no stage until a function runs.

May depend on: `emit`, `errors`, `ollama` (`vocab`), `syntax`, `verify`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gotmpl2jinja.errors import (
    Gotmpl2JinjaError,
    ModelfileError,
    ReferenceRendererError,
    RenderError,
    TemplateSyntaxError,
    TranslationError,
)

if TYPE_CHECKING:
    from gotmpl2jinja.ollama.vocab import BosFacts

__all__ = [
    "Gotmpl2JinjaError",
    "ModelfileError",
    "ReferenceRendererError",
    "RenderError",
    "TemplateSyntaxError",
    "TranslationError",
    "parse",
    "translate",
]

__version__ = "0.1.0"


def parse(source: str, name: str = "template"):  # noqa: ANN201 - re-export
    """Parse a Go template into a `syntax.nodes.Template` (raises TemplateSyntaxError)."""
    from gotmpl2jinja.syntax.parser import parse as _parse

    return _parse(source, name=name)


def translate(source: str, name: str = "template", *, check: bool = True,
              bos: BosFacts | None = None) -> str:
    """Translate a Go template into equivalent Jinja (raises TranslationError).

    With `check` (the default) the Jinja is first verified against Go itself — every message
    shape of one message plus 200 random conversations, on every engine available — and
    `verify.TranslationDiverged` (a TranslationError) is raised instead of returning a
    translation that renders other bytes. `check=False` is for callers that verify anyway.
    `bos`: the model's tokenizer facts (`ollama.vocab.facts_from_gguf` …): when its tokenizer
    adds BOS, the Jinja writes `bos_token` first, as Hugging Face templates do."""
    from gotmpl2jinja.emit import translate as _translate

    jinja = _translate(source, name=name, bos=bos)
    if check:
        from gotmpl2jinja.verify.check import check_translation

        check_translation(source, jinja, name=name, bos=bos)
    return jinja
