"""``hooks:`` (the whole run's, at the top level) and ``backend.hooks`` (one agent's): commands and Python
callables run before and after each tool call and at a turn's start and end, as MassGen writes them
(``PreToolUse``, ``PostToolUse``) or by this project's names (``before_tool``, ``after_tool``,
``turn_start``, ``turn_end``)."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field, model_validator

from massgen_cli.config.base import Section

HookPoint = Literal["before_tool", "after_tool", "turn_start", "turn_end"]
TOOL_POINTS: tuple[HookPoint, ...] = ("before_tool", "after_tool")
TURN_POINTS: tuple[HookPoint, ...] = ("turn_start", "turn_end")


class HookConfig(Section):
    """One hook: a command or a Python callable, the tools it applies to, its time limit."""

    matcher: str = "*"
    """The tools it applies to: glob patterns of tool names, several joined with '|' ('execute_command',
    'write_*|edit_file'); turn hooks ignore it.
    """
    type: Literal["python", "command"] | None = None
    """'python': 'handler' is a callable's dotted path; 'command': 'command' is run; null: chosen by which of
    the two is set.
    """
    handler: str | None = None
    """A Python callable by dotted path ('package.module.function'): it gets the hook's event (tool_name,
    tool_input, tool_output, agent_id…) and returns None, a mapping or an object with decision, reason,
    updated_input, inject, updated_output (MassGen's HookResult works).
    """
    command: str | list[str] | None = None
    """A command run without a shell (a string is split as a shell would split it; no shell runs it): it reads
    the event as JSON on stdin and writes its reply as JSON on stdout; exit code 2 denies with its stderr
    as the reason (as Claude Code's hooks do).
    """
    timeout: float = Field(default=30.0, gt=0, le=600)
    """Seconds the hook may take; past it, it is stopped."""
    fail_closed: bool = False
    """A hook that fails or times out denies the call (before_tool only); false: the call goes on, and the
    failure is logged.
    """

    @model_validator(mode="after")
    def _one_runner(self) -> HookConfig:
        if (self.handler is None) == (self.command is None):
            raise ValueError("a hook needs exactly one of 'handler' (a Python callable) and 'command'")
        kind: Literal["python", "command"] = "python" if self.handler is not None else "command"
        if self.type is not None and self.type != kind:
            given = "handler" if kind == "python" else "command"
            raise ValueError(f"type '{self.type}' does not match the hook's '{given}'")
        if isinstance(self.command, list) and not self.command:
            raise ValueError("'command' must name a program")
        self.type = kind
        return self

    @property
    def name(self) -> str:
        """What the logs call the hook: its handler, or its command line."""
        if self.handler is not None:
            return self.handler
        return self.command if isinstance(self.command, str) else " ".join(self.command or ())


class HookList(Section):
    """MassGen's form of one agent's hooks of one kind that replace the run's (``override: true``)."""

    override: bool = False
    """true: these hooks replace the run's of this kind."""
    hooks: list[HookConfig] = Field(default_factory=list)
    """The hooks, run in order."""


HookEntries = list[HookConfig] | HookList


class ToolHooksConfig(Section):
    """Hooks of tool calls: ``backend.hooks`` of one agent (added to the run's, or replacing them)."""

    before_tool: HookEntries = Field(
        default_factory=list, validation_alias=AliasChoices("before_tool", "PreToolUse")
    )
    """Run before each tool call (MassGen's PreToolUse): each may allow it, deny it (the tool's result says it
    was denied and why; later hooks do not run) or rewrite its arguments.
    """
    after_tool: HookEntries = Field(
        default_factory=list, validation_alias=AliasChoices("after_tool", "PostToolUse")
    )
    """Run after each tool call (MassGen's PostToolUse): each may add to its result (inject) or replace it
    (updated_output).
    """
    override: bool = False
    """MassGen's flag: true, these hooks replace the run's of every kind."""

    def entries(self, point: HookPoint) -> tuple[list[HookConfig], bool]:
        """The hooks of ``point``, and whether they replace the run's."""
        value: HookEntries = getattr(self, point, None) or []
        if isinstance(value, HookList):
            return value.hooks, value.override or self.override
        return value, self.override


class HooksConfig(ToolHooksConfig):
    """``hooks:`` of the whole run: tool hooks for every agent, and the turn's hooks."""

    turn_start: HookEntries = Field(default_factory=list)
    """Run once as a turn starts (they hear its question)."""
    turn_end: HookEntries = Field(default_factory=list)
    """Run once as a turn ends (they hear its answer, winner and how it ended)."""
