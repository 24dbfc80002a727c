"""MassGen's current release, read from its wheel (downloaded by .ci/run into an ignored cache folder):
its example configs, and the key sets its own validator accepts, parsed from its source without running
any of it."""

from __future__ import annotations

import ast
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from massgen_cli.config.massgen_keys import MASSGEN_RELEASE

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path(os.environ.get("MASSGEN_RELEASE_CACHE", ROOT / ".cache" / "massgen-release"))
WHEEL = CACHE / f"massgen-{MASSGEN_RELEASE}-py3-none-any.whl"
DOWNLOAD = f"pip download --no-deps massgen=={MASSGEN_RELEASE} -d {CACHE}"


def opened_release() -> Iterator[zipfile.ZipFile]:
    """The release's wheel, open; a test without it fails where CI requires it and is skipped elsewhere."""
    if not WHEEL.is_file():
        if os.environ.get("MASSGEN_RELEASE_REQUIRED"):
            pytest.fail(f"MassGen's release wheel is missing from {CACHE}; .ci/run gets it with: {DOWNLOAD}")
        pytest.skip(f"MassGen's release wheel is not in {CACHE}; get it with: {DOWNLOAD}")
    with zipfile.ZipFile(WHEEL) as opened:
        yield opened


def example_configs(wheel: zipfile.ZipFile) -> dict[str, str]:
    """Every ``massgen/configs/**/*.yaml`` of the release: name → text."""
    return {
        name: wheel.read(name).decode("utf-8")
        for name in sorted(wheel.namelist())
        if name.startswith("massgen/configs/") and name.endswith(".yaml")
    }


def release_key_sets(agent_config_source: str) -> dict[str, set[str]]:
    """The keys MassGen's validator accepts under ``timeout_settings``, ``orchestrator`` and
    ``orchestrator.coordination``, from the classmethods of ``agent_config.py`` that list them."""
    classes = {n.name: n for n in ast.parse(agent_config_source).body if isinstance(n, ast.ClassDef)}
    timeout = {
        item.target.id
        for item in classes["TimeoutConfig"].body
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
    }
    coordination = classes["CoordinationConfig"]
    agent = classes["AgentConfig"]
    runtime_extras = {
        value
        for node in ast.walk(_returned(agent, "orchestrator_runtime_keys"))
        if isinstance(node, ast.Set)
        for value in ast.literal_eval(node)
    }
    return {
        "timeout_settings": timeout,
        "coordination": set(_literal(coordination, "yaml_coordination_keys"))
        | set(_literal(coordination, "nested_coordination_field_aliases")),
        "orchestrator": set(_literal(agent, "orchestrator_runtime_direct_fields"))
        | set(_literal(agent, "orchestrator_runtime_bool_fields"))
        | runtime_extras
        | set(_literal(agent, "non_runtime_orchestrator_keys")),
    }


def _returned(cls: ast.ClassDef, method: str) -> ast.expr:
    function = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == method)
    returned = next(n for n in ast.walk(function) if isinstance(n, ast.Return))
    assert returned.value is not None
    return returned.value


def _literal(cls: ast.ClassDef, method: str) -> set[str] | tuple[str, ...] | dict[str, object]:
    value = ast.literal_eval(_returned(cls, method))
    assert isinstance(value, set | tuple | dict)
    return value
