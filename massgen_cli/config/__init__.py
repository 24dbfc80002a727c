"""Config: pydantic models of MassGen-style YAML, and the loader that reports every problem at once.

The names below are imported on first use, so a part of the package (``config.memory`` for a memory
command) loads without the models of every other section."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from massgen_cli.config.backend import BackendConfig
    from massgen_cli.config.loader import LoadedConfig, load_built, load_config, load_document
    from massgen_cli.config.memory import MemoryConfig
    from massgen_cli.config.schema import AgentConfig, MassGenConfig
    from massgen_cli.config.scripted import ScriptEntry
    from massgen_cli.config.sources import shipped_configs

_HOMES = {
    "BackendConfig": "backend",
    "ScriptEntry": "scripted",
    "LoadedConfig": "loader",
    "load_built": "loader",
    "load_config": "loader",
    "load_document": "loader",
    "MemoryConfig": "memory",
    "AgentConfig": "schema",
    "MassGenConfig": "schema",
    "shipped_configs": "sources",
}
__all__ = [
    "AgentConfig",
    "BackendConfig",
    "LoadedConfig",
    "MassGenConfig",
    "MemoryConfig",
    "ScriptEntry",
    "load_built",
    "load_config",
    "load_document",
    "shipped_configs",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(__import__(f"{__name__}.{home}", fromlist=[name]), name)  # seen by -X importtime
    globals()[name] = value
    return value
