"""Stage 5, engines: every Jinja engine the output must render alike on, each configured as its
host configures it (jinja2, transformers, @huggingface/jinja, minijinja, llama.cpp, minja).

May depend on `errors`, `lifetime` and `ollama` (the shared cache folder of the built drivers).
"""

from gotmpl2jinja.engines.registry import (
    ENGINES,
    EngineSpec,
    get_engine,
    get_engines,
    select_engines,
)

__all__ = ["ENGINES", "EngineSpec", "get_engine", "get_engines", "select_engines"]
