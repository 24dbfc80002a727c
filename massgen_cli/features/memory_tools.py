"""The agents' memory tools (``memory_search``, ``memory_save``, ``memory_forget``), given to each agent
whose long-term memory is on and whose ``memory.tools`` is not off."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from massgen_cli.coordination.extension import Equipment, StepExtension
from massgen_cli.memory.runtime.agent_tools import AgentMemoryTools
from massgen_cli.tools.memory_tools import GUIDANCE, memory_tools


class MemoryTools(StepExtension):
    name: ClassVar[str] = "memory tools"

    def __init__(self, memory: AgentMemoryTools):
        self.memory = memory

    def equip(self, agent_id: str, workspace: Path | None) -> Equipment:
        if not self.memory.run.tools_for(agent_id):
            return Equipment()
        return Equipment(memory_tools(self.memory, agent_id), GUIDANCE)
