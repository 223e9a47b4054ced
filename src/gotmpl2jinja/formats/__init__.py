"""Stage 7, formats: how a translation is written out (`jinja`, `hf`, `lmstudio`, `gguf`) and
how a parsed template is shown.

May depend on `errors`, `syntax` and `ollama`.
"""
