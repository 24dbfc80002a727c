"""What every tool is: a spec the model sees and an async function of its arguments that returns text (or a
``ToolOutput``: the text with what became of the shell command it ran)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from massgen_cli.backends.base import ToolSpec
from massgen_cli.tool_contract import CommandOutcome, ToolError

RESULT_CHARS = 20_000
"""The most characters of one tool result the model is sent."""
COMMAND_TOOL = "execute_command"
EXIT_CODE = "exit code: "
"""How a command's result starts (``tools.commands``), before its exit code."""
OUTPUT_HEARD: ContextVar[Callable[[bytes], None] | None] = ContextVar("command_output_heard", default=None)
"""Who hears a command's output as it comes (the run's views, through the tool loop); nobody when None.
Here, not in ``tools.commands``, so a run without the command tool does not import it."""


@dataclass(frozen=True)
class ToolOutput:
    """A result with more than its text: ``command``, the shell command the tool ran."""

    text: str
    command: CommandOutcome | None = None


@dataclass(frozen=True)
class Tool:
    """A callable tool: ``run(arguments)`` returns the result or raises ``ToolError``. ``grace_s``: how long
    past the call's timeout the toolbox waits for a tool that stops itself at that timeout and then cleans
    up (a command: its processes killed, its sandbox removed), so it can say how it ended."""

    spec: ToolSpec
    run: Callable[[dict[str, Any]], Awaitable[str | ToolOutput]]
    grace_s: float = 0.0

    @property
    def name(self) -> str:
        return self.spec.name


def bounded(text: str, limit: int = RESULT_CHARS, hint: str = "") -> str:
    """``text`` within ``limit`` characters, the note of what was cut (and ``hint``: how to see more)
    included; a text already bounded is left as it is."""
    if len(text) <= limit:
        return text
    keep, note = limit, ""
    while len(text[:keep]) + len(note) > limit or not note:  # the note's length depends on its count
        keep = max(0, limit - len(note))
        note = (
            f"\n[cut: {len(text) - keep:,} of {len(text):,} characters not shown"
            f"{'; ' + hint if hint else ''}]"
        )
    return text[:keep] + note


def schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A JSON schema of an object with ``properties``, of which ``required`` must be given."""
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def argument(arguments: dict[str, Any], name: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
    """``arguments[name]`` checked against ``kind`` (or ``default`` when absent and not required)."""
    value = arguments.get(name, default)
    if value is None and default is None:
        raise ToolError(f"missing argument '{name}'")
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        wanted = kind.__name__ if isinstance(kind, type) else "a number"
        raise ToolError(f"argument '{name}' must be {wanted}, not {type(value).__name__}")
    return value
