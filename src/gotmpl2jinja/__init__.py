"""gotmpl2jinja: Ollama Go chat templates → equivalent, portable Jinja chat templates.

The Python API, listed whole in `__all__` (and in docs/api.md, which also says what may change
before 1.0). Everything else in the package is internal.

Its imports are deferred for start-up time, inside the functions and `__getattr__`: `import
gotmpl2jinja` loads only the errors, and `translate(source, check=False)` only the parser and
the translator; no verification stage and no engine until a function needs one.

May depend on: `emit`, `errors`, `ollama` (`vocab`, `reference`), `pipeline`, `syntax`,
`verify`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gotmpl2jinja.errors import (
    Gotmpl2JinjaError,
    ModelfileError,
    ReferenceRendererError,
    RenderError,
    TemplateSyntaxError,
    TranslationError,
)

if TYPE_CHECKING:
    from gotmpl2jinja import pipeline
    from gotmpl2jinja.ollama import reference
    from gotmpl2jinja.ollama.vocab import (
        BosFacts,
        VocabError,
        facts_from_gguf,
        facts_from_tokenizer_config,
    )
    from gotmpl2jinja.syntax.nodes import Template
    from gotmpl2jinja.verify import (
        Divergence,
        TranslationDiverged,
        VerifyResult,
        verify_template,
    )

__all__ = [
    # translating
    "parse",
    "translate",
    # checking: Go's own rendering (`reference.render`: the module gotmpl2jinja.ollama.reference),
    # and the differential harness
    "reference",
    "verify_template",
    "VerifyResult",
    "Divergence",
    # the model's tokenizer facts that decide BOS
    "BosFacts",
    "facts_from_gguf",
    "facts_from_tokenizer_config",
    # errors: every one derives from Gotmpl2JinjaError; str(error) is one line
    "Gotmpl2JinjaError",
    "TemplateSyntaxError",
    "TranslationError",
    "TranslationDiverged",
    "ModelfileError",
    "RenderError",
    "ReferenceRendererError",
    "VocabError",
    # the steps the command line and the playground share, as a library (the module
    # gotmpl2jinja.pipeline: read_input, convert, ollama_prompt, render, verify)
    "pipeline",
]

__version__ = "0.1.0"

#: The names `__getattr__` imports on first use: name → the module that defines it (for
#: `reference`, the module itself).
_LAZY = {
    "reference": "gotmpl2jinja.ollama.reference",
    "pipeline": "gotmpl2jinja.pipeline",
    "verify_template": "gotmpl2jinja.verify",
    "VerifyResult": "gotmpl2jinja.verify",
    "Divergence": "gotmpl2jinja.verify",
    "TranslationDiverged": "gotmpl2jinja.verify",
    "BosFacts": "gotmpl2jinja.ollama.vocab",
    "facts_from_gguf": "gotmpl2jinja.ollama.vocab",
    "facts_from_tokenizer_config": "gotmpl2jinja.ollama.vocab",
    "VocabError": "gotmpl2jinja.ollama.vocab",
}


def __getattr__(name: str) -> Any:
    """A public name of a later stage, imported when first asked for (deferred: see above)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'gotmpl2jinja' has no attribute {name!r}")
    from importlib import import_module  # deferred: only for a lazy name

    found = import_module(module)
    value = found if module.endswith("." + name) else getattr(found, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def parse(source: str, name: str = "template") -> Template:
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
