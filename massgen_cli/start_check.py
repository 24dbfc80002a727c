"""What a start needs beyond a config that loads, checked all at once for ``--validate``: each backend
builds (its key or variable is there, its endpoint is known), the context paths exist, the files
``upload_files`` sends can be sent, the command tool can run where the config asks (the sandbox), the
custom tool files define their functions and what they import can be found (read, never run), and each
MCP server's command is on the PATH (``--deep``: each server starts and lists its tools).

A problem that stops the start is an error; one the run goes on without (an MCP server) a warning. Each
line names the YAML path and the remedy, as the start would. Nothing is written and no model is asked."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from massgen_cli.config.loader import LoadedConfig
from massgen_cli.config.schema import AgentConfig, MassGenConfig
from massgen_cli.errors import MassGenError
from massgen_cli.events import Notice, RunEvent


@dataclass
class StartCheck:
    """The problems found: ``errors`` stop the start, ``warnings`` the run goes on without."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def check_start(loaded: LoadedConfig, *, deep: bool = False) -> StartCheck:
    """Every agent's needs, each problem once (see the module docstring)."""
    config, found = loaded.config, StartCheck()
    _context_paths("orchestrator.context_paths", config, found)
    for index, agent in enumerate(config.agents):
        where = f"{loaded.agent_path(index)}.backend"
        _backend(agent, where, found)
        _tools(agent, where, found)
        _mcp_commands(agent, where, found)
    if deep:
        _mcp_servers_start(config, found)
    return found


def _backend(agent: AgentConfig, where: str, found: StartCheck) -> None:
    """The backend as the start builds it (a missing key or endpoint is its error), then closed."""
    from massgen_cli.backends.registry import create_backend

    try:
        backend = create_backend(agent.backend)
    except MassGenError as error:
        found.errors.append(f"{where}: {error}")
        return
    asyncio.run(backend.aclose())


def _tools(agent: AgentConfig, where: str, found: StartCheck) -> None:
    from massgen_cli.errors import ConfigError
    from massgen_cli.tools import toolbox

    backend = agent.backend
    try:
        toolbox.require_existing_paths(f"{where}.context_paths", backend.context_paths)
    except ConfigError as error:
        found.errors.extend(error.problems)
    if backend.enable_mcp_command_line:
        try:
            toolbox.command_sandbox(agent, where, ())
        except ConfigError as error:
            found.errors.extend(error.problems)
    try:
        toolbox.check_custom_tools(agent, where)  # read, never run: validating runs no file it names
    except ConfigError as error:
        found.errors.extend(error.problems)
    _uploads(agent, where, found)


def _uploads(agent: AgentConfig, where: str, found: StartCheck) -> None:
    """The files ``upload_files`` and the context paths send with each question, read as the start
    reads them (the limits of the backend's provider)."""
    from massgen_cli.backends.base import EVERY_KIND
    from massgen_cli.errors import ConfigError
    from massgen_cli.tools.uploads import configured_attachments

    paths = [(f"{where}.context_paths[{n}].path", e) for n, e in enumerate(agent.backend.context_paths)]
    try:
        found.warnings += configured_attachments(agent.backend, where, paths, EVERY_KIND).warnings
    except ConfigError as error:
        found.errors.extend(error.problems)


def _context_paths(where: str, config: MassGenConfig, found: StartCheck) -> None:
    from massgen_cli.errors import ConfigError
    from massgen_cli.tools.toolbox import require_existing_paths

    try:
        require_existing_paths(where, config.orchestrator.context_paths)
    except ConfigError as error:
        found.errors.extend(error.problems)


def _mcp_commands(agent: AgentConfig, where: str, found: StartCheck) -> None:
    for number, server in enumerate(agent.backend.mcp_servers):
        command = server.command
        if server.type == "stdio" and command and shutil.which(os.path.expanduser(command)) is None:
            found.warnings.append(
                f"{where}.mcp_servers[{number}].command: '{command}' is not on the PATH, so the run goes "
                f"on without MCP server '{server.name}'; install it or give its full path"
            )


def _mcp_servers_start(config: MassGenConfig, found: StartCheck) -> None:
    """Start each agent's MCP servers as a run does, say those that do not start, and stop them all."""
    from massgen_cli.tools.mcp import McpHub

    said: list[str] = []

    def hear(event: RunEvent) -> None:
        if isinstance(event, Notice) and event.level in ("degraded", "warning", "error"):
            said.append(event.message)

    async def start_all(workspace: Path) -> None:  # a folder of its own: validating writes nothing
        hub = McpHub(hear)
        try:
            for agent in config.agents:
                wanted = agent.backend
                if wanted.mcp_servers:
                    await hub.tools(wanted.mcp_servers, workspace, wanted.allowed_tools, wanted.exclude_tools)
        finally:
            await hub.close()

    with tempfile.TemporaryDirectory(prefix="massgen-validate-") as workspace:
        asyncio.run(start_all(Path(workspace)))
    found.warnings.extend(f"--deep: {message}" for message in said)
