"""The base of every config section: unknown keys are errors, MassGen keys not implemented yet warn."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """A YAML mapping. ``massgen_unimplemented`` lists MassGen keys that load with a warning;
    ``massgen_retired`` maps keys MassGen dropped to the error that explains them."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=False)
    massgen_unimplemented: ClassVar[frozenset[str]] = frozenset()
    massgen_retired: ClassVar[dict[str, str]] = {}
