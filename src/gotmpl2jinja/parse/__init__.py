"""Stage 1, parse: Go `text/template` source → the typed AST of `nodes`, with positions.

Depends on `errors` only; the grammar is `grammar/gotemplate.lark` (packaged as
`gotmpl2jinja/grammar`).
"""
