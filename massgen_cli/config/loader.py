"""Loading a config: read YAML, load ``.env``, expand ``${VAR}``, check keys, validate, merge memory."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from massgen_cli.config.features import feature_warnings, tool_warnings
from massgen_cli.config.massgen_keys import massgen_installed
from massgen_cli.config.memory import MemoryConfig
from massgen_cli.config.problems import CappedLines, join_path
from massgen_cli.config.reading import (
    expand_variables,
    load_dotenv_files,
    read_config_yaml,
    secret_settings,
    validate_section,
)
from massgen_cli.config.schema import AgentConfig, MassGenConfig
from massgen_cli.config.sources import (
    DEFAULT_CONFIG,
    EXAMPLES_PREFIX,
    massgen_counterpart,
    resolve_config_path,
)
from massgen_cli.config.tools import upload_warnings
from massgen_cli.config.walk import WalkResult, check_keys
from massgen_cli.errors import ConfigError
from massgen_cli.redaction import remember


@dataclass
class LoadedConfig:
    """A validated config, the file it came from, the warnings loading it produced, and notes on MassGen
    values that run another way here (said in one line each, never a failure)."""

    config: MassGenConfig
    path: Path
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    agents_key: str = "agents"
    """How the file names its agents: ``agents`` (a list) or ``agent`` (one)."""
    risks: list[str] = field(default_factory=list)
    """Of the warnings, those about what the run may do to the user's machine (commands run unconfined):
    said even with ``--quiet``."""
    built: dict[str, Any] | None = None
    """The document the command line built (quick start), kept in its session so ``--continue`` runs
    the same agents without the flags again."""

    def agent_path(self, index: int) -> str:
        """The YAML path of the ``index``-th agent, as the file writes it."""
        return _agent_path(self.agents_key, index)


def load_config(source: str | Path | None = None) -> LoadedConfig:
    """Load and validate a config file (the embedded default when ``source`` is None).

    Raises ConfigError listing every problem at once (up to ``MAX_LINES``, then a count of the rest),
    each naming its YAML path.
    """
    path = resolve_config_path(source or DEFAULT_CONFIG)
    load_dotenv_files(path)
    document = read_config_yaml(path)
    loaded = load_document(document.value, path, document.duplicates)
    ours = massgen_counterpart(str(source)) if str(source).startswith(EXAMPLES_PREFIX) else None
    if ours is not None:
        loaded.notes.append(f"{source} is MassGen's example config; its counterpart here is @examples/{ours}")
    return loaded


def load_built(document: dict[str, Any], origin: Path) -> LoadedConfig:
    """Validate a document built in code rather than read from a file (the command line's quick start),
    on the path a file takes: the ``.env`` files beside ``origin`` (a name in the folder it stands for)
    are loaded, then the document is checked as a YAML file's would be."""
    load_dotenv_files(origin)
    return load_document(document, origin)


def load_document(document: Any, path: Path, found: CappedLines | None = None) -> LoadedConfig:
    """Validate an already parsed YAML document; ``found``: problems reading it found already."""
    if not isinstance(document, dict):
        raise ConfigError(f"{path.name}: the top level must be a mapping of keys (agents:, memory:, ...)")
    errors = found if found is not None else CappedLines("problems")
    cleaned = copy.deepcopy(document)
    # Keys first, so variables inside ignored MassGen keys (mcp_servers env...) need not be set.
    keys = check_keys(cleaned, MassGenConfig, result=WalkResult(errors=errors))
    config, agent_memories = _validate_document(cleaned, errors)
    if errors:
        raise ConfigError(errors.lines(), keys.warnings.lines())
    assert config is not None
    remember(secret_settings(config.model_dump()))
    warnings, risks = keys.warnings, []
    where = "agents" if document.get("agents") else "agent"
    for index, agent in enumerate(config.agents):
        agent.memory = agent_memories.get(index, config.memory)
        _anchor_custom_tools(agent, path.parent)
        warnings.extend(_massgen_tools_missing(agent, where, index))
        warnings.extend(feature_warnings(agent.backend, f"{_agent_path(where, index)}.backend"))
        warnings.extend(tool_warnings(agent.backend, f"{_agent_path(where, index)}.backend"))
        warnings.extend(upload_warnings(agent.backend, f"{_agent_path(where, index)}.backend"))
        risks += _unconfined_commands(agent, f"{_agent_path(where, index)}.backend")
    warnings.extend(risks)
    return LoadedConfig(config, path, warnings.lines(), keys.notes.lines(), where, risks)


def _validate_document(
    cleaned: dict[str, Any], errors: CappedLines
) -> tuple[MassGenConfig | None, dict[int, MemoryConfig]]:
    """Variables expanded, then the models' checks, with agents' memory blocks merged over the global
    one. Skipped once past the problem limit: on a file of thousands of mistakes they would only add to
    the count, at a cost of seconds and hundreds of MB."""
    if errors.give_up_if_past_limit():
        return None, {}
    cleaned = expand_variables(cleaned, "", errors)
    overrides = _pop_agent_memory(cleaned)
    config = validate_section(MassGenConfig, cleaned, "", errors)
    return config, _merge_agent_memories(cleaned.get("memory"), overrides, errors)


def _unconfined_commands(agent: AgentConfig, path: str) -> list[str]:
    """The one warning of a run whose agent runs commands outside the sandbox, as its config asks."""
    backend = agent.backend
    if not backend.enable_mcp_command_line or backend.command_line_execution_mode != "local_unsandboxed":
        return []
    patterns = backend.command_line_allowed_commands or backend.command_line_blocked_commands
    return [
        f"{path}.command_line_execution_mode: 'local_unsandboxed': {agent.id}'s commands run unconfined, "
        "able to read and write anything you can and to reach the network"
        + (
            "; its allowed/blocked command patterns are advice, not a boundary (a command a shell builds, "
            "or one run through a program the patterns do not know, passes them)"
            if patterns
            else ""
        )
    ]


def _massgen_tools_missing(agent: AgentConfig, where: str, index: int) -> list[str]:
    """A warning for each custom tool of MassGen's own (no path) while the massgen package is missing."""
    entries = [(number, e) for number, e in enumerate(agent.backend.custom_tools) if e.from_massgen]
    if not entries or massgen_installed():
        return []
    path = _agent_path(where, index)
    return [
        f"{path}.backend.custom_tools[{number}]: {', '.join(entry.name)} is one of MassGen's own tools "
        "(no path), which come with the massgen package: it is not installed, so the agent runs without "
        "it (pip install massgen beside massgen-cli to use it)"
        for number, entry in entries
    ]


def _agent_path(where: str, index: int) -> str:
    return f"{where}[{index}]" if where == "agents" else where


def _anchor_custom_tools(agent: AgentConfig, config_folder: Path) -> None:
    """A relative custom tool file resolves against the current directory (as in MassGen), else
    against the config's folder (so a shipped config finds the file beside it)."""
    for entry in agent.backend.custom_tools:
        if entry.path is None or entry.from_massgen:
            continue
        relative = Path(entry.path).expanduser()
        beside = config_folder / relative
        if not relative.is_absolute() and not relative.is_file() and beside.is_file():
            entry.path = str(beside)


def _pop_agent_memory(document: dict[str, Any]) -> list[tuple[int, str, dict[str, Any]]]:
    """Take each agent's ``memory:`` out as (agent index, YAML path of the agent, block), to merge later."""
    agents = document.get("agents")
    items = [(i, join_path("agents", i), a) for i, a in enumerate(agents)] if isinstance(agents, list) else []
    if isinstance(document.get("agent"), dict):
        items.append((0, "agent", document["agent"]))
    return [
        (index, path, agent.pop("memory"))
        for index, path, agent in items
        if isinstance(agent, dict) and isinstance(agent.get("memory"), dict)
    ]


def _merge_agent_memories(
    global_memory: Any, overrides: list[tuple[int, str, dict[str, Any]]], errors: CappedLines
) -> dict[int, MemoryConfig]:
    """Each agent's memory block deep-merged over the global one and validated, by agent index.

    Skipped when the global block is itself invalid: its problems are reported once, at ``memory``.
    """
    if global_memory is None:
        global_memory = {}
    if not overrides or not isinstance(global_memory, dict) or not _is_valid(MemoryConfig, global_memory):
        return {}
    memories: dict[int, MemoryConfig] = {}
    for index, path, override in overrides:
        merged = _deep_merge(global_memory, override)
        memory = validate_section(MemoryConfig, merged, join_path(path, "memory"), errors)
        if memory is not None:
            memories[index] = memory
    return memories


def _is_valid(model: Any, data: Any) -> bool:
    try:
        model.model_validate(data)
    except ValidationError:
        return False
    return True


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged
