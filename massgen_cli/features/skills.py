"""Skills (``coordination.use_skills``): the skills found are listed in the system prompt, loaded with the
``load_skill`` tool, and their folders are readable."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from massgen_cli.coordination.extension import Equipment, StepExtension
from massgen_cli.tools.skills import Skill, skill_tool, skills_instructions


class Skills(StepExtension):
    name: ClassVar[str] = "skills"

    def __init__(self, skills: Sequence[Skill]):
        self.skills = list(skills)

    def readable(self, agent_id: str) -> Sequence[Path]:
        return [skill.folder for skill in self.skills]

    def equip(self, agent_id: str, workspace: Path | None) -> Equipment:
        return Equipment([skill_tool(self.skills)], skills_instructions(self.skills))
