"""The base of every config section: unknown keys are errors; what is known of MassGen's keys in each
section (implemented, ignored with a warning, refused) is in ``massgen_keys``."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """A YAML mapping; ``massgen_section`` names it in ``massgen_keys`` (None: no MassGen keys)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=False)
    massgen_section: ClassVar[str | None] = None
