"""Config: pydantic models of MassGen-style YAML, and the loader that reports every problem at once."""

from massgen_cli.config.backend import BackendConfig, ScriptEntry
from massgen_cli.config.loader import LoadedConfig, load_built, load_config, load_document
from massgen_cli.config.memory import MemoryConfig
from massgen_cli.config.schema import AgentConfig, MassGenConfig
from massgen_cli.config.sources import shipped_configs

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
