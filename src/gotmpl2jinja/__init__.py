"""gotmpl2jinja: Ollama Go chat templates → equivalent, portable Jinja chat templates."""

from __future__ import annotations

from gotmpl2jinja.errors import (
    Gotmpl2JinjaError,
    ModelfileError,
    ReferenceRendererError,
    RenderError,
    TemplateSyntaxError,
    TranslationError,
)

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
    """Parse a Go template into a `gotmpl2jinja.nodes.Template` (raises TemplateSyntaxError)."""
    from gotmpl2jinja.parser import parse as _parse

    return _parse(source, name=name)


def translate(source: str, name: str = "template") -> str:
    """Translate a Go template into equivalent Jinja (raises TranslationError)."""
    from gotmpl2jinja.emit import translate as _translate

    return _translate(source, name=name)
