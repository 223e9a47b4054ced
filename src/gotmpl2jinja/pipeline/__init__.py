"""The pipeline as a library: read an input, convert it, render a conversation, verify —
the steps the command line and the playground (`serve`) share, so that neither holds a copy
of the other's logic. Results are dataclasses of plain data (`to_json()` where they nest).

- `read_input(spec | text=…)` → `Source` (a template, a Modelfile, `ollama:NAME`);
- `convert(source, …)` → `Conversion`: the Jinja, the check's verdict per engine, the
  notes, the BOS facts, the files of each text format;
- `ollama_prompt(source, conversation)` → Ollama's prompt (the `render` command);
- `render(source, conversation, …)` → `RenderResult`: Go's and each engine's rendering of one
  conversation with the host's flags and BOS facts;
- `verify(source | path, jinja=…, progress=…)` → `Verification`: divergences with their
  minimal conversations.

Errors are the project's (`errors.Gotmpl2JinjaError` and its kinds), placed in the input as
`FILE:LINE:COL` (`.name`, `.line`, `.col`).

May depend on: `pipeline.checking`, `pipeline.converting`, `pipeline.reading`,
`pipeline.rendering`.
"""

from gotmpl2jinja.pipeline.checking import Verification, planned_cases, token_level, verify
from gotmpl2jinja.pipeline.converting import Conversion, OutputFile, bos_facts, convert
from gotmpl2jinja.pipeline.reading import Note, read_input, set_timeout
from gotmpl2jinja.pipeline.rendering import (
    Rendering,
    RenderResult,
    TokenView,
    ollama_prompt,
    read_conversation,
    render,
)

__all__ = [
    "Conversion",
    "Note",
    "OutputFile",
    "RenderResult",
    "Rendering",
    "TokenView",
    "Verification",
    "bos_facts",
    "convert",
    "ollama_prompt",
    "planned_cases",
    "read_conversation",
    "read_input",
    "render",
    "set_timeout",
    "token_level",
    "verify",
]
