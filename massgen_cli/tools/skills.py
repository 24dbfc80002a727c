"""Skills (MassGen's ``use_skills``): folders holding a ``SKILL.md`` whose front matter gives a ``name`` and
a ``description``, and whose body says how to do something. They are found in the project's
``skills_directory``, then ``~/.agent/skills``, then among the skills shipped with massgen-cli (the first
of a name wins), listed in the agents' system prompt, and loaded when an agent asks (``load_skill``, or
by reading the file where it lies)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from massgen_cli.backends.base import ToolSpec
from massgen_cli.config.yaml_reader import read_yaml
from massgen_cli.errors import ConfigError
from massgen_cli.tools.base import Tool, ToolError, argument, bounded, schema

SHIPPED = Path(__file__).resolve().parent.parent / "skills"
USER_SKILLS = Path("~/.agent/skills")
SKILL_FILE = "SKILL.md"


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path
    origin: str
    """Where it was found: ``project``, ``user`` or ``shipped``."""

    @property
    def file(self) -> Path:
        return self.folder / SKILL_FILE


def discover_skills(project: Path, shipped: Iterable[str] = ()) -> list[Skill]:
    """The skills of ``project``, the user's and the shipped ones (only the names in ``shipped``, when
    given), the first of a name winning."""
    wanted = {name.lower() for name in shipped}
    found: dict[str, Skill] = {}
    places = [(project, "project"), (USER_SKILLS.expanduser(), "user"), (SHIPPED, "shipped")]
    for root, origin in places:
        for skill in _skills_in(root, origin):
            if origin == "shipped" and wanted and skill.name.lower() not in wanted:
                continue
            found.setdefault(skill.name.lower(), skill)
    return list(found.values())


def _skills_in(root: Path, origin: str) -> list[Skill]:
    if not root.is_dir():
        return []
    return [skill for folder in sorted(root.iterdir()) if (skill := _read(folder, origin)) is not None]


def _read(folder: Path, origin: str) -> Skill | None:
    """The skill in ``folder``, or None when it has no SKILL.md."""
    file = folder / SKILL_FILE
    if not file.is_file():
        return None
    with file.open(encoding="utf-8", errors="replace") as text:
        front = _front_matter(text.read(FRONT_MATTER_CHARS + len("\n---")))
    name = str(front.get("name") or folder.name).strip()
    return Skill(name, str(front.get("description") or "").strip(), folder.resolve(), origin)


FRONT_MATTER_CHARS = 16_000
"""Far more than a name and a description need; a longer front matter is not read."""
FRONT_MATTER_DEADLINE_S = 2.0


def _front_matter(text: str) -> dict[str, Any]:
    """The YAML between the first two ``---`` lines at the start of the file ({} without it, or when it
    is not plain, bounded YAML: a skill's file is read by the bounded reader, which refuses alias bombs,
    deep nesting and tags, as configs are)."""
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    if end <= 0 or end > FRONT_MATTER_CHARS:
        return {}
    try:
        loaded = read_yaml(text[3:end], deadline_s=FRONT_MATTER_DEADLINE_S).value
    except (yaml.YAMLError, ConfigError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def skills_instructions(skills: list[Skill]) -> str:
    """The system prompt's list of skills, and how to use one."""
    if not skills:
        return ""
    lines = [
        "Skills are instructions for tasks that come up often. If one fits your task, load it with "
        "load_skill (or read its SKILL.md where it lies) and follow it; use only the skills listed here.",
        "<skills>",
    ]
    lines += [f"- {skill.name}: {skill.description} ({skill.file})" for skill in skills]
    return "\n".join([*lines, "</skills>"])


def skill_tool(skills: list[Skill]) -> Tool:
    """``load_skill(name)``: a skill's SKILL.md, and the other files its folder holds."""
    by_name = {skill.name.lower(): skill for skill in skills}

    async def load(arguments: dict[str, Any]) -> str:
        name = argument(arguments, "name", str)
        skill = by_name.get(name.strip().lower())
        if skill is None:
            raise ToolError(f"no skill named {name!r} (available: {', '.join(s.name for s in skills)})")
        others = sorted(str(p.relative_to(skill.folder)) for p in skill.folder.rglob("*") if p.is_file())
        others = [other for other in others if other != SKILL_FILE]
        text = skill.file.read_text(encoding="utf-8", errors="replace")
        listing = f"\n\nOther files of this skill (in {skill.folder}): {', '.join(others)}" if others else ""
        return bounded(text) + listing

    names = [skill.name for skill in skills]
    parameters = schema({"name": {"type": "string", "enum": names}}, ["name"])
    spec = ToolSpec("load_skill", "Load a skill's instructions (SKILL.md) by its name.", parameters)
    return Tool(spec, load)
