"""A request's own tools (``tools``), read from either API's shape (Chat Completions'
``{"type": "function", "function": {...}}``, the Responses API's ``{"type": "function", "name", …}``) as
the specs agents are offered; and the calls of them the team answers with, in either API's shape. Only
function tools are taken; a name the agents' workflow uses is refused."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from massgen_cli.backends.base import ToolSpec
from massgen_cli.coordination.call_answers import ClientCall
from massgen_cli.serve.wire import bad_request

MAX_TOOLS = 128
"""As many tools as OpenAI takes in one request."""
NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
RESERVED = frozenset({"new_answer", "vote", "submit", "restart_orchestration", "share_memory", "call_tool"})
"""The names of the tools the agents decide with: a client's tool of one of these names would be taken
for a decision."""
EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


def chat_tools(body: dict[str, Any]) -> tuple[ToolSpec, ...]:
    """The Chat Completions request's ``tools`` as specs; none when ``tool_choice`` is ``"none"``."""
    return _tools(body, lambda tool: tool.get("function"), "function")


def responses_tools(body: dict[str, Any]) -> tuple[ToolSpec, ...]:
    """The Responses request's ``tools`` (function tools) as specs; none for ``tool_choice: "none"``."""
    return _tools(body, lambda tool: tool, "")


Unwrap = Callable[[dict[str, Any]], Any]
"""Where a tool's function is in its API's shape."""


def _tools(body: dict[str, Any], function_of: Unwrap, inner: str) -> tuple[ToolSpec, ...]:
    tools = body.get("tools")
    if tools is None:
        return ()
    if not isinstance(tools, list) or len(tools) > MAX_TOOLS:
        raise bad_request(f"tools must be a list of at most {MAX_TOOLS} function tools", "tools")
    specs: list[ToolSpec] = []
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        if not isinstance(tool, dict) or tool.get("type") != "function":
            why = f"{where}: only function tools are supported (type 'function')"
            raise bad_request(why, f"{where}.type")
        function = function_of(tool)
        if not isinstance(function, dict):
            raise bad_request(f"{where}.{inner} must be an object", f"{where}.{inner}")
        specs.append(_spec(function, f"{where}.{inner}" if inner else where))
    names = [spec.name for spec in specs]
    if len(set(names)) < len(names):
        twice = next(name for name in names if names.count(name) > 1)
        raise bad_request(f"two tools are named {twice!r}", "tools")
    return () if body.get("tool_choice") == "none" else tuple(specs)


def _spec(function: dict[str, Any], where: str) -> ToolSpec:
    name, description = function.get("name"), function.get("description")
    parameters = function.get("parameters")
    if not isinstance(name, str) or not NAME.match(name):
        raise bad_request(
            f"{where}.name must be 1 to 64 letters, digits, underscores or dashes", f"{where}.name"
        )
    if name in RESERVED:
        why = f"{where}.name: {name!r} is a name the agents decide with; rename it"
        raise bad_request(why, f"{where}.name")
    if description is not None and not isinstance(description, str):
        raise bad_request(f"{where}.description must be a string", f"{where}.description")
    if parameters is not None and not _object_schema(parameters):
        raise bad_request(f"{where}.parameters must be a JSON schema of an object", f"{where}.parameters")
    return ToolSpec(name, description or "", parameters or dict(EMPTY_PARAMETERS))


def _object_schema(parameters: Any) -> bool:
    return isinstance(parameters, dict) and parameters.get("type", "object") == "object"


def chat_tool_calls(calls: tuple[ClientCall, ...]) -> list[dict[str, Any]]:
    """The calls as a Chat Completions message's ``tool_calls``."""
    return [
        {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}
        for call in calls
    ]


def function_call_item(call: ClientCall, status: str = "completed") -> dict[str, Any]:
    """A call as a Responses output item (``function_call``)."""
    return {
        "id": f"fc_{call.id.removeprefix('call_')}",
        "type": "function_call",
        "status": status,
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments,
    }
