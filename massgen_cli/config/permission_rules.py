"""MassGen's ``permissions`` block of a backend (roles, ``action(target)`` rules, the automation
policy): models of their own, built only when a config has the block."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, field_validator

from massgen_cli.config.base import AtLeastOne, Section, section
from massgen_cli.config.permissions import Role, parse_rule


class PermissionRules(Section):
    """Rules by decision; a deny wins over an allow, an allow over an ask."""

    allow: list[str] = Field(default_factory=list)
    """Calls that run without asking."""
    ask: list[str] = Field(default_factory=list)
    """Calls decided by automation_default (no one is asked here)."""
    deny: list[str] = Field(default_factory=list)
    """Calls refused, whatever else says."""

    @field_validator("allow", "ask", "deny")
    @classmethod
    def _parsed(cls, rules: list[str]) -> list[str]:
        for spec in rules:
            parse_rule(spec)
        return rules


class PermissionsConfig(Section):
    """MassGen's permission engine, for one agent: catastrophic commands always refused, then its
    rules, then the call's risk; what would ask a person is decided by ``automation_default``."""

    massgen_section: ClassVar[str] = "permissions"

    enabled: bool = True
    """false turns the block off (as leaving it out does)."""
    role: Role | None = None
    """read-only (alias researcher): no write or command tools are offered, and a network call is an ask;
    read-write (alias implementer): no preset rules.
    """
    rules: PermissionRules = section(PermissionRules)
    """action(target) rules, target a glob: command(git push --force*), write_file(/etc/**), read_url(*),
    mcp(server/tool), read_file(...), *(...).
    """
    automation_default: Literal["risk-based", "deny-all", "allow-all"] = "risk-based"
    """How an ask is decided (always, here: no one is asked): risk-based refuses a high-risk call (force-push,
    sudo, recursive rm, network from a command, a network tool) and runs the rest; deny-all refuses every
    ask; allow-all runs every one.
    """
    max_consecutive_auto: AtLeastOne | None = None
    """After this many asks in a row decided to run, the agent's next ask is refused; null: no limit."""
