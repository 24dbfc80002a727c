"""Evaluation criteria (``checklist_criteria_inline``, MassGen's ``--eval-criteria`` file): a model of
their own, built only when a config or the command line gives some."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, TypeAdapter, ValidationError, model_validator

from massgen_cli.config.base import Section
from massgen_cli.config.problems import describe_error
from massgen_cli.errors import ConfigError

CriterionCategory = Literal["primary", "standard", "stretch"]
LEGACY_CATEGORIES = {"must": "standard", "core": "standard", "could": "stretch"}
"""MassGen's older category names, read as it reads them."""


class Criterion(Section):
    """One evaluation criterion, as MassGen's criteria files write it: ``text`` (or ``description`` or
    ``name``), its category, and optionally how to verify it and what fails it."""

    text: str = Field(min_length=1)
    """What an answer must do."""
    category: CriterionCategory = "standard"
    """'primary' and 'standard' must hold for a vote to stand; 'stretch' may fail (MassGen's 'must'/'core'
    read as standard, 'could' as stretch).
    """
    verify_by: str | None = None
    """How to check it."""
    anti_patterns: list[str] = Field(default_factory=list)
    """What fails it."""
    score_anchors: dict[str, str] = Field(default_factory=dict)
    """MassGen's score anchors; shown with the criterion."""

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        """``description`` or ``name`` as ``text``; a legacy category as MassGen maps it."""
        if not isinstance(data, dict):
            return {"text": data} if isinstance(data, str) else data
        data = dict(data)
        for alias in ("description", "name"):
            if alias in data:
                value = data.pop(alias)
                data.setdefault("text", value)
        category = data.get("category")
        if isinstance(category, str):
            lowered = category.strip().lower()
            data["category"] = LEGACY_CATEGORIES.get(lowered, lowered)
        return data


def criteria_file(path: Path) -> list[Criterion]:
    """The evaluation criteria of a JSON file, as MassGen's ``--eval-criteria`` reads it: a list of
    criteria, or ``{"criteria": [...]}``; a ``ConfigError`` naming the file and the item when it is not."""
    where = f"--eval-criteria {path}"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{where}: cannot be read ({error.strerror or error})") from None
    except ValueError as error:
        raise ConfigError(f"{where}: not valid JSON ({error})") from None
    if isinstance(document, dict) and "criteria" in document:
        document = document["criteria"]
    if not isinstance(document, list) or not document:
        raise ConfigError(f'{where}: give a non-empty JSON list of criteria, or {{"criteria": [...]}}')
    try:
        return TypeAdapter(list[Criterion]).validate_python(document)
    except ValidationError as error:
        problems = []
        for problem in error.errors():
            number, *field = problem["loc"]
            key = f" {field[0]}" if field else ""
            problems.append(f"{where}: item {int(number) + 1}{key}: {describe_error(problem)}")
        raise ConfigError(problems) from None
