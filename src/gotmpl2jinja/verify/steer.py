"""What a drawn conversation may hold: the generator steered towards one runtime context's scope.

A runtime context (llama-server's, Ollama's Jinja path) leaves whole kinds of conversation out
of the contract's scope (a developer role, a prefill, fill-in-the-middle, minja-era tools…).
Drawn blind, most conversations are of those kinds there, and only a few get compared. A
`Steer` tells the builders of `verify.strategies` which features not to draw, so a context's
own draws (`verify.percontext`) land in its scope; the out-of-scope check stays the authority
on what is compared. Each field removes only what makes a case out of scope under some kind,
so a steered draw loses no conversation that context could have compared.

May depend on: nothing in the package (the builders and the harness import it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Steer:
    """Features a drawn conversation may have (all allowed: the main draw, `FREE`)."""

    fim: bool = True                 #: fill-in-the-middle requests
    empty_chat: bool = True          #: a chat without messages
    final_assistant: bool = True     #: a final assistant message (a prefill)
    closed_call: bool = True         #: a host's call without generation prompt
    dropped_roles: frozenset[str] = frozenset()  #: roles never drawn
    thinking: bool = True            #: an assistant message's thinking
    tool_calls: bool = True          #: an assistant message's tool calls
    call_index: bool = True          #: a tool call's index
    bare_calls: bool = True          #: a tool call without arguments
    tools: bool = True               #: a tool list
    empty_tools: bool = True         #: an empty tool list
    tool_items: bool = True          #: a tool's own `items`
    #: the `think` values that may be drawn; None: every one
    think: tuple[bool | str, ...] | None = None

    def roles(self, roles: tuple[str, ...]) -> tuple[str, ...]:
        """`roles` without the dropped ones (in order, so the simplest stays first)."""
        return tuple(role for role in roles if role not in self.dropped_roles)

    def think_values(self, values: tuple[bool | str, ...]) -> tuple[bool | str, ...]:
        """The `think` values of `values` this steer draws."""
        return values if self.think is None else tuple(v for v in values if v in self.think)

    def with_tools(self, tools: list[dict[str, Any]]) -> bool:
        """May a conversation carry this tool list?"""
        if not tools:
            return self.empty_tools
        return self.tool_items or not any("items" in tool for tool in tools)

    def tool_lists(self, pool: tuple[list[dict[str, Any]], ...]
                   ) -> tuple[list[dict[str, Any]], ...]:
        """The tool lists of `pool` this steer draws (in order: the simplest stays first)."""
        if self.empty_tools and self.tool_items:
            return pool
        key = (self, id(pool))
        if key not in _TOOL_LISTS:
            _TOOL_LISTS[key] = tuple(tools for tools in pool if self.with_tools(tools))
        return _TOOL_LISTS[key]


#: The tool lists of a pool (the generator's, built once) each steer draws.
_TOOL_LISTS: dict[tuple[Steer, int], tuple[list[dict[str, Any]], ...]] = {}


#: The main draw: every feature allowed.
FREE = Steer()
