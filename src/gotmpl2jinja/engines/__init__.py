"""Stage 5, engines: every Jinja engine the output must render alike on, each configured as its
host configures it (jinja2, transformers, @huggingface/jinja, minijinja, llama.cpp, minja).

May depend on `errors` and `ollama` (the shared cache folder of the built drivers).
"""
