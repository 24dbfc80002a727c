"""The base of every config section: unknown keys are errors; what is known of MassGen's keys in each
section (implemented, ignored with a warning, refused) is in ``massgen_keys``. A key's description is
the docstring written under its field (``descriptions`` reads them for the reference)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field


class Section(BaseModel):
    """A YAML mapping; ``massgen_section`` names it in ``massgen_keys`` (None: no MassGen keys)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=False)
    massgen_section: ClassVar[str | None] = None


# Bounds that many keys share (pydantic's PositiveInt, PositiveFloat, NonNegativeInt and NonNegativeFloat
# are the others).
AtLeastOne = Annotated[int, Field(ge=1)]
"""A count of one or more."""
Fraction = Annotated[float, Field(ge=0, le=1)]
"""A share, from 0 to 1."""


def section(model: type[Section]) -> Any:
    """A nested section's field: ``model`` with its defaults when the YAML leaves the section out."""
    return Field(default_factory=model)
