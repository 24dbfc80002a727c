"""A walk over the raw YAML beside the models: it finds unknown keys (errors, with a suggestion), MassGen
keys that are ignored here (warnings) or refused (errors with the fix), and MassGen values with a rule of
their own (``massgen_keys``), and removes what is not for pydantic before it sees the data."""

from __future__ import annotations

import functools
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from massgen_cli.config.base import Section
from massgen_cli.config.deferred import section_class
from massgen_cli.config.massgen_keys import NOT_YET, PROGRAM_BACKENDS, MassGenKey, rule, value_rule
from massgen_cli.config.problems import MAX_WARNINGS, CappedLines, join_path, suggest


@dataclass
class WalkResult:
    errors: CappedLines = field(default_factory=lambda: CappedLines("problems"))
    warnings: CappedLines = field(default_factory=lambda: CappedLines("warnings", MAX_WARNINGS))
    notes: CappedLines = field(default_factory=lambda: CappedLines("notes", MAX_WARNINGS))
    """MassGen values that run another way here (the run says so in one line each)."""


def check_keys(
    raw: Any, model: type[Section], path: str = "", result: WalkResult | None = None
) -> WalkResult:
    """Check ``raw`` (changed in place) against ``model`` and the models nested in it."""
    result = result if result is not None else WalkResult()
    if not isinstance(raw, dict):
        return result
    names = accepted_names(model)
    used: dict[str, str] = {}
    program = raw.get("type") in PROGRAM_BACKENDS
    for key in list(raw):
        key_path = join_path(path, str(key))
        known = rule(model.massgen_section, str(key), program=program)
        if known is not None and known.status in ("ignored", "refused"):
            _not_taken(str(key), key_path, known, result)
            del raw[key]
        elif key not in names:
            result.errors.add(functools.partial(_unknown_key, str(key), key_path, names))
            del raw[key]
        elif names[key][0] in used:
            twin = used[names[key][0]]
            result.errors.add(f"{key_path}: '{key}' and '{twin}' set the same option; keep one")
            del raw[key]
        elif raw[key] is None and _is_required_section(names[key][1]):
            del raw[key]  # an empty section (its contents commented out) means its defaults
        else:
            used[names[key][0]] = key
            _note_value(model, str(key), raw[key], key_path, result)
            _check_value(raw[key], names[key][1], key_path, result)
    return result


def _unknown_key(key: str, key_path: str, names: dict[str, tuple[str, Any]]) -> str:
    return f"{key_path}: unknown key '{key}'{suggest(key, names)}"


def _not_taken(key: str, key_path: str, known: MassGenKey, result: WalkResult) -> None:
    """A MassGen key that is ignored (a warning saying what is ignored) or refused (the reason)."""
    if known.status == "refused":
        result.errors.add(f"{key_path}: {known.why}")
        return
    said = "is not implemented yet and is ignored" if known.why == NOT_YET else f"is ignored: {known.why}"
    result.warnings.add(f"{key_path}: MassGen key '{key}' {said}")


def _note_value(model: type[Section], key: str, value: Any, key_path: str, result: WalkResult) -> None:
    """A MassGen value that runs another way here: one line saying how (a warning when it works
    differently). A refused value is the model's error to raise, with the same reason."""
    known = value_rule(model.massgen_section, key, value)
    if known is not None and known.status == "implemented":
        result.notes.add(f"{key_path}: '{value}': {known.why}")
    elif known is not None and known.status == "substituted":
        result.warnings.add(f"{key_path}: '{value}': {known.why}")


@functools.cache
def accepted_names(model: type[BaseModel]) -> dict[str, tuple[str, Any]]:
    """Every key the model accepts (field names, aliases), mapped to its field name and annotation
    (worked out once per model: a config may hold thousands of mappings of one kind). Not to be changed."""
    names: dict[str, tuple[str, Any]] = {}
    for name, info in model.model_fields.items():
        names[name] = (name, info.annotation)
        if info.alias:
            names[info.alias] = (name, info.annotation)
        choices = getattr(info.validation_alias, "choices", None) or []
        names.update({alias: (name, info.annotation) for alias in choices if isinstance(alias, str)})
    return names


@functools.cache
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


@functools.cache
def _nested_model(annotation: Any, container: type | None) -> type[Section] | None:
    """The Section class inside ``annotation`` (through Optional), directly or as ``container[Model]``
    (worked out once per annotation: the walk asks for every value of the config)."""
    for candidate in _union_members(annotation):
        if container is None and (model := section_class(candidate)) is not None:
            return model
        if container is not None and typing.get_origin(candidate) is container:
            (inner,) = typing.get_args(candidate)
            if (model := section_class(inner)) is not None:
                return model
    return None


def _union_members(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)
