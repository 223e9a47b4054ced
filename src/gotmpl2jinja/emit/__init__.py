"""Stage 4, emit: the AST → portable, readable Jinja (and the runtime macros it calls).

May depend on `errors`, `parse`, `ollama` and `analysis`.
"""
