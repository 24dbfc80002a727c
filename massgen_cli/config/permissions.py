"""Which of its tools an agent is offered and which calls may run, under MassGen's key names: the
``permissions`` block (roles, ``action(target)`` rules, the automation policy), Claude Code's
``permission_mode`` and ``disallowed_tools``, and ``exclude_file_operation_mcps``. The tools layer
applies them (``tools/permissions.py``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from massgen_cli.config.base import Section
from massgen_cli.config.deferred import deferred

ACTIONS = ("command", "read_file", "write_file", "read_url", "mcp", "*")
"""MassGen's rule actions: what a tool call does, whichever tool does it."""
RULE = re.compile(r"^\s*([A-Za-z_*][\w*]*)\s*(?:\((.*)\)\s*)?$")
Role = Literal["read-only", "researcher", "read-write", "implementer"]
OWN_TOOLS = ("read_file", "list_directory", "search_files", "write_file", "edit_file", "execute_command")
"""The built-in tools ``disallowed_tools`` may name (MCP and custom tools go by their prefixed names)."""
CLAUDE_CODE_TOOLS: dict[str, tuple[str, ...]] = {
    "Read": ("read_file",),
    "Write": ("write_file",),
    "Edit": ("edit_file",),
    "MultiEdit": ("edit_file",),
    "Glob": ("list_directory",),
    "LS": ("list_directory",),
    "Grep": ("search_files",),
    "Bash": ("execute_command",),
}
"""Claude Code's tools that have a counterpart here; ``WebSearch`` turns the provider's search off."""
TOOLS_OF_ITS_OWN = ("mcp__", "custom_tool__", "Bash(")

if TYPE_CHECKING:
    from massgen_cli.config.permission_rules import PermissionsConfig
else:
    PermissionsConfig = deferred("massgen_cli.config.permission_rules", "PermissionsConfig")


def parse_rule(spec: str) -> tuple[str, str]:
    """``action(target)`` as (action, glob); a bare action means any target. A rule that does not parse,
    or names no action of MassGen's, raises ``ValueError`` (a rule that never applies would be worse)."""
    match = RULE.match(spec)
    if match is None:
        raise ValueError(f"rule {spec!r} is not action(target), e.g. command(git push --force*)")
    action, target = match.group(1), match.group(2)
    if action not in ACTIONS:
        raise ValueError(f"rule {spec!r}: unknown action '{action}' (actions: {', '.join(ACTIONS)})")
    return action, "*" if target is None else target


class ToolPermissionSettings(Section):
    """The keys of ``backend:`` that take tools away from an agent or refuse some of its calls."""

    permissions: PermissionsConfig | None = None
    """MassGen's permission engine for this agent (its keys below); true: its defaults."""
    permission_mode: Literal["default", "acceptEdits", "bypassPermissions", "plan"] | None = None
    """Claude Code's permission mode (agent programs): 'plan' offers no write or command tool; the others run
    the tools as configured (no one is asked here).
    """
    disallowed_tools: list[str] = Field(default_factory=list)
    """Tools not offered: ours (read_file, execute_command, mcp__server__tool, custom_tool__name) or Claude
    Code's (Read, Write, Edit, MultiEdit, Glob, LS, Grep, Bash, WebSearch, mcp__server); Bash(pattern)
    refuses the commands that match the glob.
    """
    exclude_file_operation_mcps: bool = False
    """As MassGen's: of the file tools only write_file and edit_file are offered; the agent reads, lists and
    searches with its commands (enable_mcp_command_line).
    """

    def unknown_disallowed(self) -> list[str]:
        """The entries of ``disallowed_tools`` that name no tool this project offers (Claude Code's
        Task, TodoWrite, WebFetch…), to say so."""
        known = {*OWN_TOOLS, *CLAUDE_CODE_TOOLS, "WebSearch"}
        return [
            entry
            for entry in self.disallowed_tools
            if entry not in known and not entry.startswith(TOOLS_OF_ITS_OWN)
        ]

    @field_validator("permissions", mode="before")
    @classmethod
    def _switch(cls, value: Any) -> Any:
        """``permissions: true`` is the engine with its defaults, ``false`` no engine (as MassGen)."""
        if isinstance(value, bool):
            return {"enabled": value}
        return value
