"""The memory block of a config file on its own: what ``massgen memory …`` reads. It is checked as
loading the whole file checks it (keys, ``${VAR}``, values, each problem naming its YAML path) without
building the models of the agents, their backends and tools, which a memory command does not use."""

from __future__ import annotations

import copy
from pathlib import Path

from massgen_cli.config.memory import MemoryConfig
from massgen_cli.config.reading import (
    expand_variables,
    load_dotenv_files,
    read_config_yaml,
    secret_settings,
    validate_section,
)
from massgen_cli.config.sources import DEFAULT_CONFIG, resolve_config_path
from massgen_cli.config.walk import WalkResult, check_keys
from massgen_cli.errors import ConfigError
from massgen_cli.redaction import remember

SECTION = "memory"


def load_memory_config(source: str | Path | None = None) -> MemoryConfig:
    """The top-level ``memory:`` block of a config file (the embedded default when ``source`` is None),
    its defaults when the file has none. Raises ConfigError listing every problem in the block."""
    path = resolve_config_path(source or DEFAULT_CONFIG)
    load_dotenv_files(path)
    document = read_config_yaml(path)
    if not isinstance(document.value, dict):
        raise ConfigError(f"{path.name}: the top level must be a mapping of keys (agents:, memory:, ...)")
    errors = document.duplicates
    block = copy.deepcopy(document.value.get(SECTION))
    block = {} if block is None else block
    keys = check_keys(block, MemoryConfig, SECTION, WalkResult(errors=errors))
    memory = validate_section(MemoryConfig, expand_variables(block, SECTION, errors), SECTION, errors)
    if errors:
        raise ConfigError(errors.lines(), keys.warnings.lines())
    assert memory is not None
    remember(secret_settings(memory.model_dump()))
    return memory
