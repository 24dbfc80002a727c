"""Each agent's own workspace (``backend.cwd``), resolved."""

from __future__ import annotations

from pathlib import Path

from massgen_cli.config.schema import MassGenConfig


def agent_workspaces(config: MassGenConfig) -> dict[str, Path]:
    return {
        agent.id or "": Path(agent.backend.cwd).expanduser().resolve()
        for agent in config.agents
        if agent.backend.cwd is not None
    }
