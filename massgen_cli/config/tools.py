"""Tool settings of a backend, under MassGen's key names: the workspace (``cwd``), extra folders
(``context_paths``), command execution and custom tools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, PositiveInt, field_validator, model_validator

from massgen_cli.config.base import Section, section
from massgen_cli.config.deferred import deferred
from massgen_cli.config.massgen_keys import value_rule
from massgen_cli.config.problems import repeated

if TYPE_CHECKING:
    from massgen_cli.config.extra_tools import CustomToolConfig, McpServerConfig
else:
    CustomToolConfig = deferred("massgen_cli.config.extra_tools", "CustomToolConfig")
    McpServerConfig = deferred("massgen_cli.config.extra_tools", "McpServerConfig")


class ContextPath(Section):
    """A folder or file an agent may use besides its workspace."""

    massgen_section: ClassVar[str] = "context_path"

    path: str
    """The folder or file; relative paths resolve against the current directory."""
    permission: Literal["read", "write"] = "read"
    """'read': the file tools only read it; 'write': they may change it."""
    protected_paths: list[str] = Field(default_factory=list)
    """Files or folders inside a writable context path that stay read-only for every write (the file tools,
    commands, the final presentation); relative to the context path.
    """


class UploadFile(Section):
    """One of MassGen's ``upload_files``: an image or a file sent to the model with every question."""

    image_path: str | None = None
    """An image (png, jpeg, gif, webp), or an http(s) address the provider fetches; a relative path resolves
    against the backend's cwd, else the current directory.
    """
    file_path: str | None = None
    """A PDF (sent as a document) or a text file (sent as text), or a PDF's http(s) address (Responses API and
    claude).
    """
    audio_path: str | None = None
    """MassGen's audio upload: not sent here (a warning says so)."""
    video_path: str | None = None
    """MassGen's video upload: not sent here (a warning says so)."""

    @model_validator(mode="after")
    def _one_path(self) -> UploadFile:
        named = [key for key in UPLOAD_KEYS if getattr(self, key)]
        if len(named) != 1:
            raise ValueError(f"give exactly one of {', '.join(UPLOAD_KEYS)} (this entry has {len(named)})")
        return self

    @property
    def key(self) -> str:
        """Which of MassGen's keys the entry uses."""
        return next(key for key in UPLOAD_KEYS if getattr(self, key))

    @property
    def value(self) -> str:
        return str(getattr(self, self.key))


UPLOAD_KEYS = ("image_path", "file_path", "audio_path", "video_path")
UNSENT_UPLOADS = {"audio_path": "audio", "video_path": "video"}
"""MassGen's upload kinds that are not sent to models here."""


def _named_list(value: Any) -> Any:
    """MassGen writes ``mcp_servers`` as a list, or as a mapping of name → server."""
    if isinstance(value, dict):
        return [{"name": name, **(body or {})} for name, body in value.items()]
    return value


class CommandLimits(Section):
    """Resource limits of every process of a sandboxed command (the kernel's rlimits)."""

    processes: PositiveInt = 256
    """Processes at once (a fork loop stops here)."""
    cpu_seconds: PositiveInt = 600
    """CPU seconds of each process."""
    memory_mb: PositiveInt = 4096
    """Data memory of each process, in MB."""
    file_size_mb: PositiveInt = 1024
    """Largest file a process may write, in MB."""


class BackendToolSettings(Section):
    """The tool keys of ``backend:`` (MassGen's names)."""

    cwd: str | None = None
    """The agent's own workspace folder, created if missing (relative to the current directory); it gives the
    agent the file tools.
    """
    context_paths: list[ContextPath] = Field(default_factory=list)
    """Extra folders or files of this agent, added to orchestrator.context_paths (a context path that is an
    image or a PDF is also sent to the model with every question).
    """
    upload_files: list[UploadFile] = Field(default_factory=list)
    """Images and files sent to the model with every question (MassGen's upload_files); checked at start."""
    enable_mcp_command_line: bool = False
    """Offer execute_command: shell commands run in the agent's workspace."""
    command_line_execution_mode: Literal["local", "local_unsandboxed", "docker"] = "local"
    """'local' runs commands here in a sandbox (only the agent's folders visible, no network unless allowed);
    'local_unsandboxed' runs them unconfined (one warning per run); 'docker' (MassGen's container mode)
    runs them in the same sandbox as 'local', said in a warning.
    """
    command_line_allow_network: bool | None = None
    """Sandboxed commands reach the network (and this machine's own servers on 127.0.0.1); null: as
    command_line_docker_network_mode says, else no network.
    """
    command_line_docker_network_mode: str | None = None
    """MassGen's: 'none' keeps sandboxed commands off the network, another mode ('bridge', 'host') lets them
    on.
    """
    command_line_limits: CommandLimits = section(CommandLimits)
    """Resource limits of each sandboxed command's processes."""
    command_line_allowed_commands: list[str] | None = None
    """Regular expressions; when set, every command of a line (pipelines, lists, $(…), sh -c…) must match one
    from its start.
    """
    command_line_blocked_commands: list[str] | None = None
    """Regular expressions; a line with any command matching one from its start is refused."""
    custom_tools: list[CustomToolConfig] = Field(default_factory=list)
    """Python functions offered as tools."""
    mcp_servers: list[McpServerConfig] = Field(default_factory=list)
    """MCP servers whose tools the agent gets (a list, or a mapping of name → server)."""
    allowed_tools: list[str] | None = None
    """When set, only these MCP tools are offered (mcp__server__tool, or the tool's own name)."""
    exclude_tools: list[str] = Field(default_factory=list)
    """MCP tools not offered (mcp__server__tool, or the tool's own name)."""

    @field_validator("mcp_servers", mode="before")
    @classmethod
    def _servers_by_name(cls, value: Any) -> Any:
        return _named_list(value)

    @field_validator("command_line_execution_mode", mode="before")
    @classmethod
    def _known_mode(cls, value: Any) -> Any:
        known = value_rule("backend", "command_line_execution_mode", value)
        if known is not None and known.status == "refused":
            raise ValueError(f"'{value}' is not supported: {known.why}")
        return "local" if value in ("srt", "docker") else value  # the same confinement, by our own sandbox

    @property
    def command_network(self) -> bool:
        """Whether sandboxed commands reach the network (our key, else MassGen's network mode)."""
        if self.command_line_allow_network is not None:
            return self.command_line_allow_network
        mode = self.command_line_docker_network_mode
        return mode is not None and mode.strip().lower() != "none"

    @model_validator(mode="after")
    def _unique_server_names(self) -> BackendToolSettings:
        twice = repeated([server.name for server in self.mcp_servers])
        if twice:
            raise ValueError(f"MCP server names must be unique; repeated: {', '.join(twice)}")
        return self


def upload_warnings(backend: BackendToolSettings, path: str) -> list[str]:
    """One line per ``upload_files`` entry that is not sent here (audio, video), at YAML ``path``."""
    return [
        f"{path}.upload_files[{number}].{entry.key}: {UNSENT_UPLOADS[entry.key]} is not sent to models here; "
        "the agent runs without it"
        for number, entry in enumerate(backend.upload_files)
        if entry.key in UNSENT_UPLOADS
    ]
