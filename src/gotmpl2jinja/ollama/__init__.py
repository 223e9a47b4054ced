"""Stage 2, Ollama's side: what Ollama reads from a template, a Modelfile or its store, and the
Go reference renderer that renders a prompt exactly as Ollama's server does.

May depend on `errors` and `syntax`.
"""
