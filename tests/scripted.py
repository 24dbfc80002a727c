"""A small builder for configs of scripted agents, so a scenario reads as who says what, in order."""

from __future__ import annotations

from typing import Any

import yaml


def answer(content: str, **entry: Any) -> dict[str, Any]:
    """A reply that calls ``new_answer`` (``entry`` adds ``text``, ``delay``…)."""
    return {"tool": "new_answer", "args": {"content": content}, **entry}


def vote(target: str, reason: str, **entry: Any) -> dict[str, Any]:
    """A reply that votes for ``target`` (an agent id or an alias such as ``agent1``)."""
    return {"tool": "vote", "args": {"agent_id": target, "reason": reason}, **entry}


def scripted(
    agents: dict[str, list[Any]],
    *,
    backends: dict[str, dict[str, Any]] | None = None,
    agent_keys: dict[str, dict[str, Any]] | None = None,
    **sections: Any,
) -> str:
    """The YAML of scripted agents (``id → responses``, in registration order), with more ``backends``
    keys and agent-level ``agent_keys`` per agent id, and any other top-level sections (``orchestrator``,
    ``timeout_settings``, ``memory``…)."""
    document = {
        "agents": [
            {
                "id": agent_id,
                **(agent_keys or {}).get(agent_id, {}),
                "backend": {"type": "scripted", "responses": responses, **(backends or {}).get(agent_id, {})},
            }
            for agent_id, responses in agents.items()
        ],
        **sections,
    }
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
