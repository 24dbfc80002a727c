"""The features a run may have: the built-in ones, in the order of registration, and any registered
beside them (``register``). The composition root opens those a config wants, in the order their needs
and declared places give (see ``features.declaration``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from massgen_cli.features import (
    circuit_breakers,
    client_tools,
    context_copies,
    criteria,
    fast_iteration,
    hooks,
    long_term,
    memory_files,
    memory_tools,
    personas,
    plan_mode,
    planning,
    rate_limits,
    shared_block,
    skills,
    snapshots,
    steering,
    subagents,
    telemetry,
)
from massgen_cli.features.declaration import Feature

BUILT_IN: tuple[Feature, ...] = (
    snapshots.FEATURE,
    skills.FEATURE,
    planning.FEATURE,
    plan_mode.FEATURE,
    fast_iteration.FEATURE,
    criteria.FEATURE,
    shared_block.FEATURE,
    long_term.FEATURE,
    memory_files.FEATURE,
    memory_tools.FEATURE,
    context_copies.FEATURE,
    steering.FEATURE,
    client_tools.FEATURE,
    personas.FEATURE,
    telemetry.FEATURE,
    circuit_breakers.FEATURE,
    rate_limits.FEATURE,
    hooks.FEATURE,
    subagents.FEATURE,
)
_registered: list[Feature] = []


def register(feature: Feature) -> None:
    """Add ``feature`` to every run built from now on in this process (again under the same name: the
    new declaration replaces the old). Its names of other features must be declared ones."""
    unregister(feature.name)
    _check_names([*declared(), feature])
    _registered.append(feature)


def unregister(name: str) -> None:
    """Remove the feature registered as ``name`` (a built-in one stays)."""
    _registered[:] = [feature for feature in _registered if feature.name != name]


def declared() -> tuple[Feature, ...]:
    """Every feature, built-in first, in the order of registration."""
    return (*BUILT_IN, *_registered)


def _check_names(features: Sequence[Feature]) -> None:
    names = [feature.name for feature in features]
    if len(set(names)) != len(names):
        raise ValueError(f"two features share a name: {sorted(n for n in names if names.count(n) > 1)}")
    for feature in features:
        unknown = {*feature.needs, *feature.steps_after, *feature.commits_after} - set(names)
        if unknown:
            raise ValueError(f"feature {feature.name!r} names no declared feature: {sorted(unknown)}")


def ordered(features: Sequence[Feature], after: Callable[[Feature], Iterable[str]]) -> list[Feature]:
    """``features`` with each after the ones ``after`` names (those among them), else in their given
    order; a circle of names is a ``ValueError`` naming the features in it."""
    names = {feature.name for feature in features}
    waiting = {feature.name: {name for name in after(feature) if name in names} for feature in features}
    done: list[Feature] = []
    while len(done) < len(features):
        ready = [feature for feature in features if feature.name in waiting and not waiting[feature.name]]
        if not ready:
            raise ValueError(f"features wait for each other: {sorted(waiting)}")
        chosen = ready[0]
        done.append(chosen)
        del waiting[chosen.name]
        for names_left in waiting.values():
            names_left.discard(chosen.name)
    return done


_check_names(BUILT_IN)
