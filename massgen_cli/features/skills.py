"""Skills (``coordination.use_skills``): the skills found are listed in the system prompt, loaded with the
``load_skill`` tool, and their folders are readable."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from massgen_cli.coordination.extension import Equipment, StepExtension
from massgen_cli.features.declaration import Feature, Opened, Opening

if TYPE_CHECKING:
    from massgen_cli.tools.skills import Skill


class Skills(StepExtension):
    name: ClassVar[str] = "skills"

    def __init__(self, skills: Sequence[Skill]):
        self.skills = list(skills)

    def readable(self, agent_id: str) -> Sequence[Path]:
        return [skill.folder for skill in self.skills]

    def equip(self, agent_id: str, workspace: Path | None) -> Equipment:
        from massgen_cli.tools.skills import skill_tool, skills_instructions

        return Equipment([skill_tool(self.skills)], skills_instructions(self.skills))


def _open(opening: Opening) -> Opened | None:
    """The skills found in ``skills_directory`` (and MassGen's, when asked); none found: nothing to add."""
    from massgen_cli.tools.skills import discover_skills

    coordination = opening.config.orchestrator.coordination
    found = discover_skills(Path(coordination.skills_directory), coordination.massgen_skills)
    return Opened(Skills(found)) if found else None


FEATURE = Feature(
    "skills",
    wanted=lambda opening: opening.config.orchestrator.coordination.use_skills,
    open=_open,
    steps_after=("workspace snapshots",),
)
