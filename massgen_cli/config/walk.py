"""A walk over the raw YAML beside the models: it finds unknown keys (errors, with a suggestion) and
MassGen keys we do not implement yet (warnings), and removes both before pydantic sees the data."""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from massgen_cli.config.base import Section
from massgen_cli.config.problems import join_path, suggest


@dataclass
class WalkResult:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def check_keys(
    raw: Any, model: type[Section], path: str = "", result: WalkResult | None = None
) -> WalkResult:
    """Check ``raw`` (changed in place) against ``model`` and the models nested in it."""
    result = result if result is not None else WalkResult()
    if not isinstance(raw, dict):
        return result
    names = _accepted_names(model)
    used: dict[str, str] = {}
    for key in list(raw):
        key_path = join_path(path, str(key))
        if key in model.massgen_unimplemented:
            result.warnings.append(f"{key_path}: MassGen key '{key}' is not implemented yet and is ignored")
            del raw[key]
        elif key in model.massgen_retired:
            result.errors.append(f"{key_path}: {model.massgen_retired[key]}")
            del raw[key]
        elif key not in names:
            result.errors.append(f"{key_path}: unknown key '{key}'{suggest(str(key), names)}")
            del raw[key]
        elif names[key][0] in used:
            result.errors.append(
                f"{key_path}: '{key}' and '{used[names[key][0]]}' set the same option; keep one"
            )
            del raw[key]
        elif raw[key] is None and _is_required_section(names[key][1]):
            del raw[key]  # an empty section (its contents commented out) means its defaults
        else:
            used[names[key][0]] = key
            _check_value(raw[key], names[key][1], key_path, result)
    return result


def _accepted_names(model: type[BaseModel]) -> dict[str, tuple[str, Any]]:
    """Every key the model accepts (field names, aliases), mapped to its field name and annotation."""
    names: dict[str, tuple[str, Any]] = {}
    for name, info in model.model_fields.items():
        names[name] = (name, info.annotation)
        if info.alias:
            names[info.alias] = (name, info.annotation)
        choices = getattr(info.validation_alias, "choices", None) or []
        names.update({alias: (name, info.annotation) for alias in choices if isinstance(alias, str)})
    return names


def _is_required_section(annotation: Any) -> bool:
    return _nested_model(annotation, None) is not None and type(None) not in _union_members(annotation)


def _check_value(value: Any, annotation: Any, path: str, result: WalkResult) -> None:
    item_model = _nested_model(annotation, list)
    if item_model is not None and isinstance(value, list):
        for index, item in enumerate(value):
            check_keys(item, item_model, join_path(path, index), result)
        return
    if item_model is not None and isinstance(value, dict) and getattr(item_model, "keyed_by_name", False):
        for name, item in value.items():  # the mapping form of a list of named items
            check_keys(item, item_model, join_path(path, str(name)), result)
        return
    model = _nested_model(annotation, None)
    if model is not None:
        check_keys(value, model, path, result)


def _nested_model(annotation: Any, container: type | None) -> type[Section] | None:
    """The Section class inside ``annotation`` (through Optional), directly or as ``container[Model]``."""
    for candidate in _union_members(annotation):
        if container is None and isinstance(candidate, type) and issubclass(candidate, Section):
            return candidate
        if container is not None and typing.get_origin(candidate) is container:
            (inner,) = typing.get_args(candidate)
            if isinstance(inner, type) and issubclass(inner, Section):
                return inner
    return None


def _union_members(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)
