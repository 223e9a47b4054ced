"""Stage 4, emit: the AST → portable, readable Jinja (and the runtime macros it calls).

`translator` is the entry (`translate`, `emit`); `emitter.Emitter` walks the AST, its parts in
`statements`, `expressions`, `knowledge`, `strings`, `comparisons`, `printing`, `printf` and
`collate`, with the Go builtins in the table of `builtins`; `legacy` is the per-turn path of
legacy templates; `runtime` the macros that print Go values; `values` what they all share.

May depend on `errors`, `syntax`, `ollama` and `analysis`.
"""

from gotmpl2jinja.emit.paths import FIM_CONDITION
from gotmpl2jinja.emit.translator import emit, translate, uses_messages

__all__ = ["FIM_CONDITION", "emit", "translate", "uses_messages"]
