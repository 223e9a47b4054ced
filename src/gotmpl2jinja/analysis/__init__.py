"""Stage 3, analysis: what every name means before any Jinja is written — the Go type of each
field of Ollama's data (`datamodel`) and the variables with their scopes (`scopes`).

May depend on `errors` and `syntax`.
"""

from gotmpl2jinja.analysis.datamodel import (
    DICT_METHODS,
    FIELDS,
    MAP_VALUES,
    MIXABLE,
    ROOT_FIELDS,
    SLICE_ELEMENTS,
    STRUCTS,
    UNMODELLED_FIELDS,
    GoType,
)
from gotmpl2jinja.analysis.scopes import (
    Analysis,
    Variable,
    analyze,
    jinja_identifier,
    messages_alike_when_nil,
)

__all__ = [
    "Analysis",
    "DICT_METHODS",
    "FIELDS",
    "GoType",
    "MAP_VALUES",
    "MIXABLE",
    "ROOT_FIELDS",
    "SLICE_ELEMENTS",
    "STRUCTS",
    "UNMODELLED_FIELDS",
    "Variable",
    "analyze",
    "jinja_identifier",
    "messages_alike_when_nil",
]
