"""Tool settings of a backend, under MassGen's key names: the workspace (``cwd``), extra folders
(``context_paths``), command execution and custom tools."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from massgen_cli.config.base import Section
from massgen_cli.config.massgen_keys import value_rule
from massgen_cli.config.problems import repeated


class ContextPath(Section):
    """A folder or file an agent may use besides its workspace."""

    massgen_section: ClassVar[str] = "context_path"

    path: str = Field(description="The folder or file; relative paths resolve against the current directory.")
    permission: Literal["read", "write"] = Field(
        default="read", description="'read': the file tools only read it; 'write': they may change it."
    )
    protected_paths: list[str] = Field(
        default_factory=list,
        description="Files or folders inside a writable context path that stay read-only for every write "
        "(the file tools, commands, the final presentation); relative to the context path.",
    )


class UploadFile(Section):
    """One of MassGen's ``upload_files``: an image or a file sent to the model with every question."""

    image_path: str | None = Field(
        default=None,
        description="An image (png, jpeg, gif, webp), or an http(s) address the provider fetches; a relative "
        "path resolves against the backend's cwd, else the current directory.",
    )
    file_path: str | None = Field(
        default=None,
        description="A PDF (sent as a document) or a text file (sent as text), or a PDF's http(s) address "
        "(Responses API and claude).",
    )
    audio_path: str | None = Field(
        default=None, description="MassGen's audio upload: not sent here (a warning says so)."
    )
    video_path: str | None = Field(
        default=None, description="MassGen's video upload: not sent here (a warning says so)."
    )

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


class CustomToolConfig(Section):
    """Python functions offered as tools (``custom_tool__<name>``), loaded from a file."""

    massgen_section: ClassVar[str] = "custom_tool"

    name: list[str] = Field(description="Tool name, or one name per function.")
    function: list[str] = Field(description="Function name in the file, or a list of them.")
    path: str | None = Field(
        default=None,
        description="Python file defining the functions (relative to the current directory, else to the "
        "config's folder). Null, or a module name without '.py': MassGen's own tools, taken from the "
        "massgen package as MassGen does (when it is installed; otherwise the agent runs without them). "
        "Without MassGen installed, the files of its understand_image, understand_file and understand_video "
        "(massgen/tool/_multimodal_tools/...) are tools of ours that ask the agent's own model; they need "
        "no checkout.",
    )
    description: list[str] | None = Field(
        default=None,
        description="What the tool does (one for all, or one per function); null uses the docstring.",
    )
    category: str = Field(default="default", description="A label for grouping tools (shown in logs).")
    preset_args: list[dict[str, Any]] | None = Field(
        default=None,
        description="Arguments always passed (one mapping, or one per function); the model never sees them.",
    )

    @field_validator("name", "function", "description", "preset_args", mode="before")
    @classmethod
    def _as_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str | dict) else value

    @property
    def from_massgen(self) -> bool:
        """Whether the functions are MassGen's own tools (no file given)."""
        return self.path is None or not self.path.endswith(".py")

    def functions(self) -> list[tuple[str, str, str | None, dict[str, Any]]]:
        """``(tool name, function name, description, preset arguments)`` for each function."""
        count = len(self.function)
        names = _per_function(self.name, count, "name")
        descriptions = _per_function(self.description or [None], count, "description")
        presets = _per_function(self.preset_args or [{}], count, "preset_args")
        return list(zip(names, self.function, descriptions, presets, strict=True))


def _per_function(values: list[Any], count: int, key: str) -> list[Any]:
    if len(values) == count:
        return values
    if len(values) == 1:
        return values * count
    raise ValueError(f"'{key}' has {len(values)} items for {count} functions; give one, or one per function")


class McpServerConfig(Section):
    """One MCP server: a command run over stdio, or a streamable HTTP address."""

    massgen_section: ClassVar[str] = "mcp_server"

    keyed_by_name: ClassVar[bool] = True  # also written as a mapping of name → server

    name: str = Field(description="The server's name; its tools are offered as mcp__<name>__<tool>.")
    type: Literal["stdio", "streamable-http"] = Field(
        default="stdio", description="'stdio': run `command`; 'streamable-http': connect to `url`."
    )
    command: str | None = Field(default=None, description="stdio: the program to run.")
    args: list[str] = Field(
        default_factory=list, description="stdio: its arguments; ${cwd} is the agent's workspace."
    )
    env: dict[str, str] = Field(
        default_factory=dict, description="stdio: environment variables added to a minimal environment."
    )
    cwd: str | None = Field(default=None, description="stdio: the folder it runs in; null: the current one.")
    url: str | None = Field(default=None, description="streamable-http: the server's address.")
    headers: dict[str, str] = Field(default_factory=dict, description="streamable-http: request headers.")
    startup_timeout_seconds: float = Field(
        default=30.0,
        gt=0,
        description="Seconds the server may take to start and list its tools; one that has not is "
        "stopped (killed if need be) and the run goes on without it.",
    )
    max_result_bytes: int = Field(
        default=1_000_000,
        ge=1024,
        description="The largest answer kept from the server, in bytes: a longer tool result is cut while "
        "it arrives (the rest is never held in memory) and the model reads its start with a note of the "
        "bytes sent and kept; a longer answer to anything else (such as the tool list) fails.",
    )
    sandbox: bool = Field(
        default=False,
        description="stdio: run the server in the commands' sandbox, writing only in its cwd (default "
        "mcp_workspaces/<name>), reading the system, its virtualenv and the files named in its args.",
    )
    sandbox_network: bool = Field(
        default=False, description="stdio, sandboxed: the server reaches the network."
    )

    @model_validator(mode="after")
    def _where(self) -> McpServerConfig:
        if self.type == "stdio" and not self.command:
            raise ValueError(f"MCP server '{self.name}' (stdio) needs 'command'")
        if self.type == "streamable-http" and not self.url:
            raise ValueError(f"MCP server '{self.name}' (streamable-http) needs 'url'")
        return self


def _named_list(value: Any) -> Any:
    """MassGen writes ``mcp_servers`` as a list, or as a mapping of name → server."""
    if isinstance(value, dict):
        return [{"name": name, **(body or {})} for name, body in value.items()]
    return value


class CommandLimits(Section):
    """Resource limits of every process of a sandboxed command (the kernel's rlimits)."""

    processes: int = Field(default=256, gt=0, description="Processes at once (a fork loop stops here).")
    cpu_seconds: int = Field(default=600, gt=0, description="CPU seconds of each process.")
    memory_mb: int = Field(default=4096, gt=0, description="Data memory of each process, in MB.")
    file_size_mb: int = Field(default=1024, gt=0, description="Largest file a process may write, in MB.")


class BackendToolSettings(Section):
    """The tool keys of ``backend:`` (MassGen's names)."""

    cwd: str | None = Field(
        default=None,
        description="The agent's own workspace folder, created if missing (relative to the current "
        "directory); it gives the agent the file tools.",
    )
    context_paths: list[ContextPath] = Field(
        default_factory=list,
        description="Extra folders or files of this agent, added to orchestrator.context_paths (a context "
        "path that is an image or a PDF is also sent to the model with every question).",
    )
    upload_files: list[UploadFile] = Field(
        default_factory=list,
        description="Images and files sent to the model with every question (MassGen's upload_files); "
        "checked at start.",
    )
    enable_mcp_command_line: bool = Field(
        default=False, description="Offer execute_command: shell commands run in the agent's workspace."
    )
    command_line_execution_mode: Literal["local", "local_unsandboxed", "docker"] = Field(
        default="local",
        description="'local' runs commands here in a sandbox (only the agent's folders visible, no network "
        "unless allowed); 'local_unsandboxed' runs them unconfined (one warning per run); 'docker' "
        "(MassGen's container mode) runs them in the same sandbox as 'local', said in a warning.",
    )
    command_line_allow_network: bool | None = Field(
        default=None,
        description="Sandboxed commands reach the network (and this machine's own servers on 127.0.0.1); "
        "null: as command_line_docker_network_mode says, else no network.",
    )
    command_line_docker_network_mode: str | None = Field(
        default=None,
        description="MassGen's: 'none' keeps sandboxed commands off the network, another mode ('bridge', "
        "'host') lets them on.",
    )
    command_line_limits: CommandLimits = Field(
        default_factory=CommandLimits,
        description="Resource limits of each sandboxed command's processes.",
    )
    command_line_allowed_commands: list[str] | None = Field(
        default=None,
        description="Regular expressions; when set, every command of a line (pipelines, lists, $(…), sh -c…) "
        "must match one from its start.",
    )
    command_line_blocked_commands: list[str] | None = Field(
        default=None,
        description="Regular expressions; a line with any command matching one from its start is refused.",
    )
    custom_tools: list[CustomToolConfig] = Field(
        default_factory=list, description="Python functions offered as tools."
    )
    mcp_servers: list[McpServerConfig] = Field(
        default_factory=list,
        description="MCP servers whose tools the agent gets (a list, or a mapping of name → server).",
    )
    allowed_tools: list[str] | None = Field(
        default=None,
        description="When set, only these MCP tools are offered (mcp__server__tool, or the tool's own name).",
    )
    exclude_tools: list[str] = Field(
        default_factory=list, description="MCP tools not offered (mcp__server__tool, or the tool's own name)."
    )

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
