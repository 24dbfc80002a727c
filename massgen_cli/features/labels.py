"""Each agent's alias, as its peers see it (the labels its snapshots and plans are shown under)."""

from __future__ import annotations

from massgen_cli.config.schema import MassGenConfig
from massgen_cli.coordination.tally import alias_map


def agent_labels(config: MassGenConfig) -> dict[str, str]:
    return {agent_id: alias for alias, agent_id in alias_map(config.agent_ids).items()}
