"""An agent's toolbox: the tools its config gives it, and the one way a call is run (bounded in time;
a failure becomes the result text)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from massgen_cli.backends.base import ToolSpec
from massgen_cli.config.massgen_keys import massgen_installed
from massgen_cli.config.orchestrator import OrchestratorConfig
from massgen_cli.config.schema import AgentConfig
from massgen_cli.config.tools import ContextPath
from massgen_cli.errors import ConfigError
from massgen_cli.events import ToolCall
from massgen_cli.redaction import redact
from massgen_cli.state import known_state_folders, user_umask
from massgen_cli.text import one_line
from massgen_cli.tools.agent_model import AgentModel
from massgen_cli.tools.attachments import question_roots
from massgen_cli.tools.base import (
    COMMAND_TOOL,
    EXIT_CODE,
    RESULT_CHARS,
    CommandOutcome,
    Tool,
    ToolError,
    ToolOutput,
    bounded,
)
from massgen_cli.tools.custom import (
    CustomToolLoadError,
    custom_tool,
    load_function,
    load_massgen_function,
)
from massgen_cli.tools.custom_check import check_tool_file
from massgen_cli.tools.files import file_tools
from massgen_cli.tools.massgen_media import Reach, own_massgen_tool, own_tool
from massgen_cli.tools.paths import Root, Roots
from massgen_cli.tools.permissions import FILE_WRITERS, ToolGate, command_patterns

if TYPE_CHECKING:
    from massgen_cli.config.extra_tools import CustomToolConfig
    from massgen_cli.tools.commands import SandboxSettings


@dataclass(frozen=True)
class ToolResult:
    """One call's outcome: the text the model reads, whether it worked, how long it took, and what became
    of the shell command it ran (``command``)."""

    text: str
    ok: bool
    seconds: float
    command: CommandOutcome | None = None


@dataclass(frozen=True)
class ToolSources:
    """What an agent's tools reach beyond its own config: folders its file tools may read (its view of
    its peers' snapshots, the skills), and the folders and files its commands must not see (the
    runner's folder, state and config, other agents' workspaces), and the runner's state folder, which
    no tool reaches."""

    readable: tuple[Path, ...] = ()
    private: tuple[Path, ...] = ()
    state_folder: Path | None = None


@dataclass
class Toolbox:
    """Tools by name, run with a per-call timeout. ``roots`` is where the file tools may go; ``guidance``
    is what the system prompt says of the tools besides the roots (what the features' tools are for)."""

    tools: dict[str, Tool] = field(default_factory=dict)
    call_timeout_s: float = 120.0
    roots: Roots | None = None
    guidance: tuple[str, ...] = ()
    gate: ToolGate = field(default_factory=ToolGate)
    """Which of the config's tools are offered, and which of their calls may run."""
    model: AgentModel = field(default_factory=AgentModel)
    """How its tools ask the agent's own model (bound once the agent's backend exists)."""

    def __contains__(self, name: object) -> bool:
        return name in self.tools

    def __bool__(self) -> bool:
        return bool(self.tools)

    @property
    def specs(self) -> tuple[ToolSpec, ...]:
        return tuple(tool.spec for tool in self.tools.values())

    def add(self, tools: Iterable[Tool], guidance: str = "") -> None:
        """Tools the run gives beside the config's (a feature's), with what the prompt says of them."""
        self.tools.update({tool.name: tool for tool in tools})
        if guidance:
            self.guidance = (*self.guidance, guidance)

    def add_configured(self, tools: Iterable[Tool]) -> None:
        """More of the config's own tools (its MCP servers'), those the gate offers."""
        self.tools.update({tool.name: tool for tool in tools if self.gate.offers(tool.name)})

    def instructions(self) -> str:
        """What the system prompt says about the tools: where the agent's files are (the workspace, what
        a relative path means, the roots one per line with their permission), then the features' guidance."""
        parts = list(self.guidance)
        if self.roots is not None:
            parts.insert(0, self.roots.explained())
        return "\n\n".join(parts)

    async def run(self, call: ToolCall) -> ToolResult:
        """Run one call; an unknown tool, bad arguments, a failure or a timeout come back as text."""
        started = time.monotonic()
        tool = self.tools.get(call.name)
        try:
            if tool is None:
                raise ToolError(f"no tool named '{call.name}' (available: {', '.join(self.tools)})")
            if refused := self.gate.refusal(call.name, dict(call.arguments)):
                raise ToolError(refused)
            async with asyncio.timeout(self.call_timeout_s + tool.grace_s):
                output = await tool.run(dict(call.arguments))
            done = output if isinstance(output, ToolOutput) else ToolOutput(output)
            # every tool's result is bounded and cleared of secrets here, whatever the tool (MCP servers and
            # custom functions too): a .env or a key read by a tool never reaches the model or the thread
            text = bounded(redact(done.text), RESULT_CHARS, LONG_RESULT_HINT)
            return ToolResult(text, True, time.monotonic() - started, _cleared(done.command))
        except TimeoutError:
            return _failed(f"the call took longer than {self.call_timeout_s:g}s and was stopped", started)
        except ToolError as error:
            return _failed(str(error), started, error.command)
        except Exception as error:  # a custom function's own failure is the model's to read
            return _failed(f"{type(error).__name__}: {error}", started)


LONG_RESULT_HINT = "ask the tool for less (a narrower query, a range, a page)"
SUMMARY_CHARS = 160


def result_summary(name: str, text: str) -> str:
    """What the run's events say of a tool's result (``ToolFinished.summary``): a command's exit code and
    first lines of output; otherwise (a refused or failed command too) its text on one line, cut at
    ``SUMMARY_CHARS``."""
    if name == COMMAND_TOOL and text.startswith(EXIT_CODE):
        from massgen_cli.tools.commands import command_summary

        return command_summary(text)
    return one_line(text, SUMMARY_CHARS)


def _failed(message: str, started: float, command: CommandOutcome | None = None) -> ToolResult:
    text = bounded(redact(f"Error: {message}"), RESULT_CHARS)
    return ToolResult(text, False, time.monotonic() - started, _cleared(command))


def _cleared(command: CommandOutcome | None) -> CommandOutcome | None:
    """The command line as the console and the logs may show it: cleared of secrets, as results are."""
    return None if command is None else replace(command, command=redact(command.command))


def build_toolbox(
    agent: AgentConfig, index: int, orchestrator: OrchestratorConfig, sources: ToolSources | None = None
) -> Toolbox:
    """The tools ``agent`` (the ``index``-th of ``agents:``) is given by its config, with the folders
    ``sources`` lets it read; a problem is a ``ConfigError`` naming the YAML path."""
    backend, where, sources = agent.backend, f"agents[{index}].backend", sources or ToolSources()
    require_existing_paths("orchestrator.context_paths", orchestrator.context_paths)
    require_existing_paths(f"{where}.context_paths", backend.context_paths)
    context_paths = [*orchestrator.context_paths, *backend.context_paths]
    # With an isolating write_mode an agent with a workspace changes copies there, never the originals.
    copies = orchestrator.coordination.isolates_writes and backend.cwd is not None
    roots = agent_roots(backend.cwd, context_paths, sources.readable, sources.state_folder, copies=copies)
    tools: list[Tool] = file_tools(roots) if roots is not None else []
    if backend.exclude_file_operation_mcps:  # MassGen keeps write_file and edit_file; commands do the rest
        tools = [tool for tool in tools if tool.name in FILE_WRITERS]
    timeout_s = orchestrator.tool_call_timeout_seconds
    if backend.enable_mcp_command_line:
        tools.append(_command_tool(agent, roots, where, timeout_s, sources.private))
    model = AgentModel(backend.protocol)
    tools += custom_tools(agent, roots, where, model)
    gate = ToolGate.of(backend)
    offered = {tool.name: tool for tool in tools if gate.offers(tool.name)}
    return Toolbox(offered, timeout_s, roots, gate=gate, model=model)


def own_workspace(toolbox: Toolbox, agent: AgentConfig) -> Path | None:
    """The agent's own workspace (``backend.cwd``, resolved), if it has one."""
    roots = toolbox.roots
    return roots.base if roots is not None and agent.backend.cwd is not None else None


def require_existing_paths(where: str, context_paths: Sequence[ContextPath]) -> None:
    missing = [
        f"{where}[{number}].path: {entry.path} does not exist (context paths must exist; check the path, "
        "relative to the current directory)"
        for number, entry in enumerate(context_paths)
        if not Path(entry.path).expanduser().exists()
    ]
    if missing:
        raise ConfigError(missing)


def agent_roots(
    cwd: str | None,
    context_paths: Sequence[ContextPath],
    readable: Sequence[Path] = (),
    state_folder: Path | None = None,
    *,
    copies: bool = False,
) -> Roots | None:
    """The workspace (created if missing), the context paths (written in the final presentation only;
    never with ``copies``, where the agent changes copies in its workspace) and the ``readable`` folders
    (peers' snapshots, skills), with the state folder (and every other the user has used) out of reach,
    or None without any of them."""
    if cwd is None and not context_paths and not readable:
        return None
    workspace = Path(cwd).expanduser() if cwd is not None else None
    if workspace is not None and not workspace.exists():
        workspace.mkdir(parents=True)
        workspace.chmod(0o777 & ~user_umask())  # the user's folder, not the process's private state
    roots = [Root.of(workspace, writable=True)] if workspace is not None else []
    roots += [
        Root.of(
            entry.path,
            False,
            final_only=entry.permission == "write" and not copies,
            protected=entry.protected_paths,
        )
        for entry in context_paths
    ]
    roots += [Root.of(folder, writable=False) for folder in readable]
    base = roots[0].path if workspace is not None else Path.cwd().resolve()
    own = (state_folder.expanduser().resolve(),) if state_folder is not None else ()
    return Roots(base, tuple(roots), private=(*own, *known_state_folders()))


def _command_tool(
    agent: AgentConfig, roots: Roots | None, where: str, timeout_s: float, private: tuple[Path, ...]
) -> Tool:
    """The command tool (its code, the policy's and the sandbox's imported only for an agent that has it)."""
    from massgen_cli.tools.command_policy import CommandPolicy
    from massgen_cli.tools.commands import Confinement, command_tool

    backend = agent.backend
    try:
        blocked = [
            *(backend.command_line_blocked_commands or ()),
            *command_patterns(backend.disallowed_tools),
        ]
        policy = CommandPolicy.of(backend.command_line_allowed_commands, blocked)
    except Exception as error:  # re.error: an invalid pattern
        raise ConfigError(f"{where}: invalid command pattern: {error}") from None
    roots = roots or Roots(Path.cwd().resolve(), (Root.of(Path.cwd(), writable=True),))
    return command_tool(Confinement(roots, command_sandbox(agent, where, private)), policy, timeout_s)


def command_sandbox(agent: AgentConfig, where: str, private: tuple[Path, ...]) -> SandboxSettings | None:
    """The sandbox of the agent's commands (None: unconfined, as the config asks); a mode that cannot
    run here is a ``ConfigError`` saying why and what to do."""
    from massgen_cli.tools.commands import SandboxSettings
    from massgen_cli.tools.sandbox import UNAVAILABLE_CHOICES, SandboxUnavailable, require_sandbox

    backend, mode_path = agent.backend, f"{where}.command_line_execution_mode"
    if backend.command_line_execution_mode == "local_unsandboxed":
        return None
    try:
        require_sandbox()
    except SandboxUnavailable as error:
        raise ConfigError(
            f"{mode_path}: commands run in a sandbox, which cannot start here ({error}); "
            f"{UNAVAILABLE_CHOICES}"
        ) from None
    return SandboxSettings(private, backend.command_network, backend.command_line_limits)


def custom_tools(
    agent: AgentConfig, roots: Roots | None, where: str, model: AgentModel | None = None
) -> Iterable[Tool]:
    """The config's custom tools; MassGen's multimodal tool files are ours while MassGen is not installed
    (they read inside ``roots``, else the current folder, and ask the agent's ``model``)."""
    workspace = roots.base if roots is not None and agent.backend.cwd is not None else None
    reach = Reach(roots or question_roots(None), model or AgentModel(agent.backend.protocol))
    for number, entry in enumerate(agent.backend.custom_tools):
        if entry.from_massgen and not massgen_installed():
            continue  # said when the config loaded
        with _entry_problems(f"{where}.custom_tools[{number}]"):
            for function in entry.functions():
                yield _custom_tool(entry, function, workspace, reach)


def check_custom_tools(agent: AgentConfig, where: str) -> None:
    """What building the config's custom tools would fail on (a ``ConfigError``), found without running
    a tool file: each file is checked as written (``custom_check``); MassGen's own tools and ours for
    its multimodal files are built as a start builds them (no file of the config runs for those)."""
    reach = Reach(question_roots(None), AgentModel(agent.backend.protocol))
    for number, entry in enumerate(agent.backend.custom_tools):
        if entry.from_massgen and not massgen_installed():
            continue
        with _entry_problems(f"{where}.custom_tools[{number}]"):
            for function in entry.functions():
                if _is_tool_file(entry, function[1]):
                    check_tool_file(str(entry.path), function[1], function[3])
                else:
                    _custom_tool(entry, function, None, reach)


@contextlib.contextmanager
def _entry_problems(where: str) -> Iterator[None]:
    """A custom tool entry's failure to load as a ``ConfigError`` naming its YAML path."""
    try:
        yield
    except (CustomToolLoadError, ValueError) as error:
        raise ConfigError(f"{where}: {error}") from None
    except Exception as error:  # MassGen's own tools, from an installed MassGen that cannot import
        raise ConfigError(f"{where}: {type(error).__name__}: {error}") from None


def _is_tool_file(entry: CustomToolConfig, function_name: str) -> bool:
    """Whether ``function_name`` of ``entry`` comes from the config's own Python file (which a start
    imports), rather than from MassGen's package or our own tools."""
    if entry.from_massgen:
        return False
    return massgen_installed() or own_tool(str(entry.path), function_name) is None


def _custom_tool(
    entry: CustomToolConfig,
    function: tuple[str, str, str | None, dict[str, Any]],
    workspace: Path | None,
    reach: Reach,
) -> Tool:
    """One function of ``entry``: ``(tool name, function name, description, preset arguments)``."""
    name, function_name, description, preset = function
    own = None if entry.from_massgen or massgen_installed() else own_tool(str(entry.path), function_name)
    if own is not None:
        return own_massgen_tool(own, name, description, preset, reach)
    if entry.from_massgen:
        found = load_massgen_function(entry.path, function_name)
    else:
        found = load_function(str(entry.path), function_name)
    return custom_tool(name, found, description, preset, workspace)
