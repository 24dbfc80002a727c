"""The agents' memory tools (``memory_search``, ``memory_save``, ``memory_forget``), given to each agent
whose long-term memory is on and whose ``memory.tools`` is not off."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from massgen_cli.coordination.extension import Equipment, StepExtension
from massgen_cli.features.declaration import Feature, Opened, Opening

if TYPE_CHECKING:
    from massgen_cli.memory.runtime.agent_tools import AgentMemoryTools


class MemoryTools(StepExtension):
    name: ClassVar[str] = "memory tools"

    def __init__(self, memory: AgentMemoryTools):
        self.memory = memory

    def equip(self, agent_id: str, workspace: Path | None) -> Equipment:
        if not self.memory.run.tools_for(agent_id):
            return Equipment()
        from massgen_cli.tools.memory_tools import GUIDANCE, memory_tools

        return Equipment(memory_tools(self.memory, agent_id), GUIDANCE)


def _open(opening: Opening) -> Opened:
    from massgen_cli.memory.runtime.agent_tools import AgentMemoryTools

    long_term = opening.provided("long-term memory")
    return Opened(MemoryTools(AgentMemoryTools(long_term.run, long_term.extension.lookup)))


FEATURE = Feature(
    "memory tools",
    wanted=lambda opening: opening.provided("long-term memory") is not None,
    open=_open,
    needs=("long-term memory",),
    steps_after=("memory files",),
)
