"""The host function `raise_exception` the Python-hosted engines (jinja2, minijinja) give a
template, and the exception that carries its message out of the engine.

May depend on: nothing of the project.
"""

from __future__ import annotations

from typing import Any


class _Raise(Exception):
    """Internal: carries a template's raise_exception message out of an engine."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _raise_exception(message: Any = "") -> None:
    raise _Raise(str(message))
