"""Stage 6, verify: the conversation contract, the conversations drawn from it, and the
differential harness that renders Go and Jinja on them and shrinks a divergence.

May depend on every earlier stage: `errors`, `parse`, `ollama`, `analysis`, `emit`, `engines`.
"""
