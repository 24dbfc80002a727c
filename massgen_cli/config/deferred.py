"""Sections whose models are built only when a YAML has them. Building a pydantic model costs
milliseconds, and most configs have no ``hooks:``, no subagent team, no permission rules: a field
typed ``deferred(module, name)`` validates through the model ``module.name``, imported on the first
value it sees. Its errors keep their YAML paths, and the key walk and the docs find the model
through ``section_in``."""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, GetCoreSchemaHandler
from pydantic_core import core_schema

from massgen_cli.config.base import Section


@dataclass(frozen=True)
class DeferredSection:
    """The place of a section's model (``module``, class ``name``), imported when first needed."""

    module: str
    name: str

    def model(self) -> type[BaseModel]:
        # ``__import__`` rather than ``importlib.import_module``: ``python -X importtime`` shows it
        model: type[BaseModel] = getattr(__import__(self.module, fromlist=[self.name]), self.name)
        return model

    def validate(self, value: Any) -> Any:
        model = self.model()
        return value if value is None or isinstance(value, model) else model.model_validate(value)

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(self.validate)


def deferred(module: str, name: str) -> Any:
    """A field type that validates as the section model ``module.name``, built on first use (give the
    real class to type checkers under ``TYPE_CHECKING``)."""
    return Annotated[Any, DeferredSection(module, name)]


def section_in(annotation: Any) -> type[BaseModel] | None:
    """The model of a deferred section (``deferred(...)``), imported now; None for any other type."""
    if typing.get_origin(annotation) is not Annotated:
        return None
    marks = [mark for mark in annotation.__metadata__ if isinstance(mark, DeferredSection)]
    return marks[0].model() if marks else None


def section_class(annotation: Any) -> type[Section] | None:
    """The Section class ``annotation`` is, or that a deferred section names (imported now); None for
    any other type."""
    model = section_in(annotation) or annotation
    return model if isinstance(model, type) and issubclass(model, Section) else None
