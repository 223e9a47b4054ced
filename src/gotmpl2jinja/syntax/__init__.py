"""Stage 1, syntax: Go `text/template` source → the typed AST of `nodes`, with positions.

The grammar is `grammar/gotemplate.lark` (packaged as `gotmpl2jinja/grammar`).

May depend on: `errors`.
"""
