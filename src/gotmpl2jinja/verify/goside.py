"""The Go side of verifying a Source: Ollama's render with the source's Modelfile rule.

May depend on: `ollama.source`, `verify.outcomes`.
"""

from __future__ import annotations

from gotmpl2jinja.ollama.source import Source
from gotmpl2jinja.verify.outcomes import GoRenderer, GoSide


def go_renderer(source: Source) -> GoRenderer:
    """The Go side of verification for this Source: Ollama's render with the Modelfile rule
    and the model's family steps.

    A `verify.GoSide`: `verify_template(render=…)` renders it in batches (`reference.render_many`
    with the same rule), single cases by calling it.
    """
    return GoSide(modelfile_system=source.system or None,
                  modelfile_messages=tuple((m["role"], m.get("content", ""))
                                           for m in source.messages),
                  family=source.family)
