"""Tools added to an agent beside its own: Python functions from a file (``custom_tools``) and MCP
servers (``mcp_servers``). Models of their own, built only when a config adds such tools."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, PositiveFloat, field_validator, model_validator

from massgen_cli.config.base import Section


class CustomToolConfig(Section):
    """Python functions offered as tools (``custom_tool__<name>``), loaded from a file."""

    massgen_section: ClassVar[str] = "custom_tool"

    name: list[str]
    """Tool name, or one name per function."""
    function: list[str]
    """Function name in the file, or a list of them."""
    path: str | None = None
    """Python file defining the functions (relative to the current directory, else to the config's folder).
    Null, or a module name without '.py': MassGen's own tools, taken from the massgen package as MassGen
    does (when it is installed; otherwise the agent runs without them). Without MassGen installed, the
    files of its understand_image, understand_file and understand_video
    (massgen/tool/_multimodal_tools/...) are tools of ours that ask the agent's own model; they need no
    checkout.
    """
    description: list[str] | None = None
    """What the tool does (one for all, or one per function); null uses the docstring."""
    category: str = "default"
    """A label for grouping tools (shown in logs)."""
    preset_args: list[dict[str, Any]] | None = None
    """Arguments always passed (one mapping, or one per function); the model never sees them."""

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

    name: str
    """The server's name; its tools are offered as mcp__<name>__<tool>."""
    type: Literal["stdio", "streamable-http"] = "stdio"
    """'stdio': run `command`; 'streamable-http': connect to `url`."""
    command: str | None = None
    """stdio: the program to run."""
    args: list[str] = Field(default_factory=list)
    """stdio: its arguments; ${cwd} is the agent's workspace."""
    env: dict[str, str] = Field(default_factory=dict)
    """stdio: environment variables added to a minimal environment."""
    cwd: str | None = None
    """stdio: the folder it runs in; null: the current one."""
    url: str | None = None
    """streamable-http: the server's address."""
    headers: dict[str, str] = Field(default_factory=dict)
    """streamable-http: request headers."""
    startup_timeout_seconds: PositiveFloat = 30.0
    """Seconds the server may take to start and list its tools; one that has not is stopped (killed if need
    be) and the run goes on without it.
    """
    max_result_bytes: int = Field(default=1_000_000, ge=1024)
    """The largest answer kept from the server, in bytes: a longer tool result is cut while it arrives (the
    rest is never held in memory) and the model reads its start with a note of the bytes sent and kept; a
    longer answer to anything else (such as the tool list) fails.
    """
    sandbox: bool = False
    """stdio: run the server in the commands' sandbox, writing only in its cwd (default
    mcp_workspaces/<name>), reading the system, its virtualenv and the files named in its args.
    """
    sandbox_network: bool = False
    """stdio, sandboxed: the server reaches the network."""

    @model_validator(mode="after")
    def _where(self) -> McpServerConfig:
        if self.type == "stdio" and not self.command:
            raise ValueError(f"MCP server '{self.name}' (stdio) needs 'command'")
        if self.type == "streamable-http" and not self.url:
            raise ValueError(f"MCP server '{self.name}' (streamable-http) needs 'url'")
        return self
