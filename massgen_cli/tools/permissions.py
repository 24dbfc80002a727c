"""Which of the config's tools an agent is offered, and which of its calls may run (``ToolGate``):
``disallowed_tools`` and Claude Code's plan mode take tools away; MassGen's permission engine
(``PermissionEngine``) refuses catastrophic commands always, then applies the agent's role and
``action(target)`` rules (deny first, then allow, then ask), then the call's risk, and decides each ask
by its automation policy, as MassGen does when no one is there to ask.

Only the config's own tools are judged (the file tools, the command tool, MCP and custom tools), as in
MassGen, where the engine sits at the MCP and custom tool chokepoint; the run's own tools (planning,
skills, memory) and the workflow tools are not."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.permissions import CLAUDE_CODE_TOOLS, parse_rule
from massgen_cli.tools.base import COMMAND_TOOL

if TYPE_CHECKING:
    from massgen_cli.config.permission_rules import PermissionsConfig

FILE_READERS = frozenset({"read_file", "list_directory", "search_files"})
FILE_WRITERS = frozenset({"write_file", "edit_file"})
NETWORK_HINTS = ("fetch", "read_url", "websearch", "web_search", "browse")
WRITE_HINTS = ("write", "edit", "create", "move", "copy", "apply_patch", "notebook", "delete", "remove")
READ_HINTS = ("read", "grep", "glob", "list", "view", "search", "cat")
PATH_KEYS = ("path", "file_path", "destination", "destination_path", "target", "notebook_path")
READ_ONLY = {"deny": ["write_file(*)", "command(*)"], "ask": ["read_url(*)"], "allow": ["read_file(*)"]}
ROLES = {"read-only": READ_ONLY, "researcher": READ_ONLY, "read-write": {}, "implementer": {}}

# The engine's deterministic floor and risk tiers, as MassGen sets them.
CATASTROPHIC = (
    # '/' itself (or '/*'): a folder under it is a path like any other (`rm -rf /tmp/scratch` was refused).
    (
        r"\brm\s+(-[a-zA-Z-]*\s+)*-?[a-zA-Z]*[rf]+[a-zA-Z]*\s+(-[a-zA-Z-]*\s+)*/(?:\s|$|\*)",
        "recursive delete of '/'",
    ),
    (r":\s*\(\s*\)\s*\{\s*:\s*\|\s*:?\s*&\s*\}\s*;\s*:", "a fork bomb"),
    (r"\bdd\b.*\bof=/dev/(?:sd|nvme|disk|hd)", "writing a raw disk with dd"),
    (r"\bmkfs(\.\w+)?\b", "formatting a filesystem"),
    (r">\s*/dev/(?:sd|nvme|disk|hd)[a-z]?[0-9]*", "overwriting raw disk blocks"),
    (r"\bmv\b.+\s+/dev/null\b", "moving files into /dev/null"),
)
HIGH_RISK_COMMANDS = re.compile(
    r"\bsudo\b|\bsu\b|\bgit\s+push\b.*--force|\bgit\s+push\s+-f\b|--force-with-lease"
    r"|\bgit\s+(reset\s+--hard|clean\s+-[a-z]*f)"
    r"|\bnpm\s+publish\b|\byarn\s+publish\b|\bpip\s+.*\bupload\b|\btwine\s+upload\b|\bgh\s+release\s+create\b"
    r"|\bdocker\s+push\b|\bchmod\b|\bchown\b|\bdd\b|\bmkfs|\bfdisk\b|\brm\s+-[a-zA-Z]*r"
    r"|\bkill(all)?\b|\bshutdown\b|\breboot\b|\bcrontab\b|\bsystemctl\b|\blaunchctl\b"
    r"|\b(curl|wget|nc|netcat|ssh|scp|sftp|rsync|telnet)\b"
)
LOW_RISK_COMMANDS = re.compile(
    r"^\s*(git\s+(status|diff|log|show|branch|remote|config\s+--get)|ls|ll|cat|head|tail|pwd|echo|which"
    r"|whoami|date|env|wc|grep|find|tree|stat|file)\b"
)


def action_target(name: str, arguments: dict[str, Any]) -> tuple[str, str] | None:
    """What a call of tool ``name`` does, as a rule names it: (action, target); None for a tool the
    engine does not judge (the run's own)."""
    if name == COMMAND_TOOL:
        return "command", str(arguments.get("command") or "")
    if name in FILE_READERS or name in FILE_WRITERS:
        return ("write_file" if name in FILE_WRITERS else "read_file"), _path(arguments)
    if name.startswith("mcp__"):
        server, _, tool = name.removeprefix("mcp__").partition("__")
        if _has(tool, NETWORK_HINTS):
            return "read_url", str(arguments.get("url") or arguments.get("domain") or "")
        return "mcp", f"{server}/{tool}"
    if name.startswith("custom_tool__"):
        if _has(name, NETWORK_HINTS):
            return "read_url", str(arguments.get("url") or arguments.get("domain") or "")
        if _has(name, WRITE_HINTS) or _has(name, READ_HINTS):
            return ("write_file" if _has(name, WRITE_HINTS) else "read_file"), _path(arguments)
        return "mcp", name
    return None


def high_risk(name: str, action: str, arguments: dict[str, Any]) -> bool | None:
    """True for a high-risk call, False for a low-risk one, None for the rest (medium)."""
    if action == "command":
        command = str(arguments.get("command") or "")
        if HIGH_RISK_COMMANDS.search(command):
            return True
        return False if LOW_RISK_COMMANDS.search(command) else None
    lowered = name.lower()
    if _has(lowered, NETWORK_HINTS):
        return True
    if "delete" in lowered or "remove" in lowered or "rm_" in lowered:
        return None
    return False if _has(lowered, READ_HINTS) or _has(lowered, WRITE_HINTS) else None


@dataclass
class PermissionEngine:
    """One agent's engine: its rules by decision (its role's first), its automation policy and the asks
    it let run in a row."""

    rules: dict[str, list[tuple[str, str]]]
    policy: str = "risk-based"
    budget: int | None = None
    let_run: int = 0

    @classmethod
    def of(cls, config: PermissionsConfig) -> PermissionEngine:
        scopes = [ROLES.get(config.role or "", {}), config.rules.model_dump()]
        rules = {
            decision: [parse_rule(spec) for scope in scopes for spec in scope.get(decision, ())]
            for decision in ("deny", "allow", "ask")
        }
        return cls(rules, config.automation_default, config.max_consecutive_auto)

    def withholds(self, name: str) -> bool:
        """Whether every call of ``name`` would be refused by a rule (then it is not offered)."""
        found = action_target(name, {})
        if found is None:
            return False
        action, target = found
        fixed = action == "mcp"  # its target is the tool itself, not an argument
        return any(
            rule_action in (action, "*")
            and (pattern == "*" or (fixed and fnmatch.fnmatchcase(target, pattern)))
            for rule_action, pattern in self.rules["deny"]
        )

    def refusal(self, name: str, arguments: dict[str, Any]) -> str | None:
        """Why the call may not run, or None."""
        found = action_target(name, arguments)
        if found is None:
            return None
        action, target = found
        if action == "command" and (catastrophic := _catastrophic(target)):
            return f"refused: {catastrophic} is never allowed"
        decision = self._decision(action, target)
        if decision == "deny":
            return f"refused by the permission rules ({action}({target}) is denied)"
        if decision == "allow":
            return None
        risky = high_risk(name, action, arguments)
        if decision is None and risky is False:
            return None
        return self._ask(f"{action}({target})", risky)

    def _decision(self, action: str, target: str) -> str | None:
        for decision in ("deny", "allow", "ask"):
            if any(self._matches(rule, action, target) for rule in self.rules[decision]):
                return decision
        return None

    @staticmethod
    def _matches(rule: tuple[str, str], action: str, target: str) -> bool:
        rule_action, pattern = rule
        return rule_action in (action, "*") and fnmatch.fnmatchcase(target, pattern)

    def _ask(self, what: str, risky: bool | None) -> str | None:
        """An ask, decided by the automation policy (no one is asked here)."""
        if self.policy == "deny-all" or (self.policy == "risk-based" and risky):
            kind = "every call that needs approval" if self.policy == "deny-all" else "a high-risk call"
            return f"refused: {what} is {kind}, and no one is here to approve it ({self.policy})"
        self.let_run += 1
        if self.budget is not None and self.let_run > self.budget:
            most = f"{self.budget} calls in a row ran without approval, the most allowed"
            return f"refused: {most} (max_consecutive_auto)"
        return None


@dataclass(frozen=True)
class ToolGate:
    """The tools ``disallowed_tools`` (and Claude Code's plan mode) take away, and the permission
    engine, if the agent has one."""

    withheld: frozenset[str] = frozenset()
    withheld_servers: tuple[str, ...] = ()
    engine: PermissionEngine | None = None

    @classmethod
    def of(cls, backend: BackendConfig) -> ToolGate:
        names, servers, _ = _disallowed(backend.disallowed_tools)
        if backend.program is not None and backend.permission_mode == "plan":
            names += [*FILE_WRITERS, COMMAND_TOOL]  # the program plans: it changes nothing
        permissions = backend.permissions
        engine = PermissionEngine.of(permissions) if permissions is not None and permissions.enabled else None
        return cls(frozenset(names), servers, engine)

    def offers(self, name: str) -> bool:
        if name in self.withheld or any(name.startswith(server) for server in self.withheld_servers):
            return False
        return self.engine is None or not self.engine.withholds(name)

    def refusal(self, name: str, arguments: dict[str, Any]) -> str | None:
        """Why the call may not run (the engine's reason), or None."""
        return self.engine.refusal(name, arguments) if self.engine is not None else None


def command_patterns(disallowed: Iterable[str]) -> list[str]:
    """``Bash(glob)`` entries of ``disallowed_tools`` as command patterns (regular expressions): a
    command matching the glob is refused. Claude Code's ``prefix:*`` is the prefix and anything after."""
    return [fnmatch.translate(glob) for glob in _disallowed(disallowed)[2]]


def _disallowed(entries: Iterable[str]) -> tuple[list[str], tuple[str, ...], tuple[str, ...]]:
    """Tool names, MCP server prefixes and command globs of ``disallowed_tools``."""
    names: list[str] = []
    servers: list[str] = []
    globs: list[str] = []
    for entry in entries:
        bash = re.fullmatch(r"Bash\((.*)\)", entry.strip())
        if bash:
            inner = bash.group(1).strip()
            globs.append(inner[:-2] + "*" if inner.endswith(":*") else inner)
        elif entry.startswith("mcp__") and "__" not in entry.removeprefix("mcp__"):
            servers.append(f"{entry}__")
        else:
            names += CLAUDE_CODE_TOOLS.get(entry, (entry,))
    return names, tuple(servers), tuple(globs)


def _catastrophic(command: str) -> str:
    return next((what for pattern, what in CATASTROPHIC if re.search(pattern, command)), "")


def _has(name: str, hints: tuple[str, ...]) -> bool:
    return any(hint in name.lower() for hint in hints)


def _path(arguments: dict[str, Any]) -> str:
    return next((value for key in PATH_KEYS if isinstance(value := arguments.get(key), str) and value), "")
