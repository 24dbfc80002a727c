"""Loading a config: read YAML, load ``.env``, expand ``${VAR}``, check keys, validate, merge memory."""

from __future__ import annotations

import copy
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from dotenv import load_dotenv
from pydantic import ValidationError

from massgen_cli.config.memory import MemoryConfig
from massgen_cli.config.problems import describe_error, join_path, path_in_document
from massgen_cli.config.schema import MassGenConfig
from massgen_cli.config.sources import DEFAULT_CONFIG, resolve_config_path
from massgen_cli.config.walk import check_keys
from massgen_cli.errors import ConfigError

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass
class LoadedConfig:
    """A validated config, the file it came from, and the warnings loading it produced."""

    config: MassGenConfig
    path: Path
    warnings: list[str] = field(default_factory=list)


def load_config(source: str | Path | None = None) -> LoadedConfig:
    """Load and validate a config file (the embedded default when ``source`` is None).

    Raises ConfigError listing every problem at once, each naming its YAML path.
    """
    path = resolve_config_path(source or DEFAULT_CONFIG)
    _load_dotenv_files(path)
    document = _read_yaml(path)
    return load_document(document, path)


def load_document(document: Any, path: Path) -> LoadedConfig:
    """Validate an already parsed YAML document."""
    if not isinstance(document, dict):
        raise ConfigError(f"{path.name}: the top level must be a mapping of keys (agents:, memory:, ...)")
    errors: list[str] = []
    document = _expand_variables(document, "", errors)
    cleaned = copy.deepcopy(document)
    keys = check_keys(cleaned, MassGenConfig)
    errors += keys.errors
    overrides = _pop_agent_memory(cleaned)
    config = _validate(MassGenConfig, cleaned, "", errors)
    if config is not None:
        _apply_memory_overrides(config, cleaned.get("memory") or {}, overrides, errors)
    if errors:
        raise ConfigError(errors)
    assert config is not None
    return LoadedConfig(config=config, path=path, warnings=keys.warnings)


def _load_dotenv_files(config_path: Path) -> None:
    for env_file in (Path.cwd() / ".env", config_path.parent / ".env"):
        if env_file.is_file():
            load_dotenv(env_file, override=False)


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown line"
        raise ConfigError(f"{path.name}: {where}: invalid YAML: {exc.problem or exc.context}") from exc
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path.name}: invalid YAML: {exc}") from exc


def _expand_variables(node: Any, path: str, errors: list[str]) -> Any:
    """``${VAR}`` and ``${VAR:-default}`` in strings; an unset variable without default is an error."""
    if isinstance(node, dict):
        return {key: _expand_variables(value, join_path(path, str(key)), errors) for key, value in node.items()}
    if isinstance(node, list):
        return [_expand_variables(value, join_path(path, index), errors) for index, value in enumerate(node)]
    if not isinstance(node, str):
        return node

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = os.environ.get(name)
        if value is None and default is None:
            errors.append(f"{path}: environment variable {name} is not set (export it or add it to .env)")
            return match.group(0)
        return value if value is not None else default

    return _VARIABLE.sub(substitute, node)


def _pop_agent_memory(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Take each agent's ``memory:`` out, keyed by its YAML path, to merge over the global block later."""
    overrides: dict[str, dict[str, Any]] = {}
    agents = document.get("agents")
    items = [(join_path("agents", i), a) for i, a in enumerate(agents)] if isinstance(agents, list) else []
    if isinstance(document.get("agent"), dict):
        items.append(("agent", document["agent"]))
    for path, agent in items:
        if isinstance(agent, dict) and isinstance(agent.get("memory"), dict):
            overrides[path] = agent.pop("memory")
    return overrides


def _validate(model: Any, data: Any, prefix: str, errors: list[str]) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        for error in exc.errors():
            where = path_in_document(data, error["loc"], prefix)
            errors.append(f"{where}: {describe_error(error)}")
        return None


def _apply_memory_overrides(
    config: MassGenConfig, global_memory: dict[str, Any], overrides: dict[str, dict[str, Any]], errors: list[str]
) -> None:
    paths = [join_path("agents", i) for i in range(len(config.agents))]
    if "agent" in overrides:
        overrides[paths[0]] = overrides.pop("agent")
    for path, agent in zip(paths, config.agents, strict=True):
        if path not in overrides:
            agent.memory = config.memory
            continue
        merged = _deep_merge(global_memory, overrides[path])
        agent.memory = _validate(MemoryConfig, merged, join_path(path, "memory"), errors) or config.memory


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged
