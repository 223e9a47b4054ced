"""Stage 3, analysis: the Go type of every name (the Ollama data model) and variable scopes.

May depend on `errors` and `parse`.
"""
