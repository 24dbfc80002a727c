"""Hooks written as Python callables, as a user's module would hold them (named by dotted path in the
tests' configs)."""

from __future__ import annotations

from typing import Any

HEARD: list[dict[str, Any]] = []
"""What the turn hooks heard, in order."""


def quieter_commands(event: Any) -> dict[str, Any] | None:
    """Rewrites a command's arguments: its output goes through ``head -n 1``."""
    command = event.tool_input.get("command", "")
    return {"updated_input": {**event.tool_input, "command": f"{command} | head -n 1"}}


async def note_after(event: Any) -> dict[str, Any]:
    """Adds a line after every tool result, as MassGen's injection does."""
    return {"inject": {"content": f"[checked {event.tool_name}]", "strategy": "tool_result"}}


def hear_turn(event: Any) -> None:
    HEARD.append(event.to_dict())


class Verdict:
    """A reply shaped as MassGen's HookResult (an object with its fields)."""

    def __init__(self, allowed: bool, reason: str):
        self.allowed, self.reason = allowed, reason


def deny_writes(event: Any) -> Verdict:
    return Verdict(False, f"{event.tool_name} is not allowed in this run")
