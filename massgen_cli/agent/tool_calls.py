"""One tool call of an agent's step through the agent's hooks: each ``before_tool`` in turn may change
the call or stand in for its result (then it is not run, and no later hook sees it), the toolbox runs
it, and each ``after_tool`` in turn may change the result."""

from __future__ import annotations

from massgen_cli.agent.data import Agent
from massgen_cli.events import ToolCall
from massgen_cli.tools.toolbox import ToolResult


async def run_tool(agent: Agent, call: ToolCall) -> ToolResult:
    """``call`` run by ``agent``'s toolbox, as its hooks allow and change it."""
    for hook in agent.hooks:
        decided = await hook.before_tool(agent.id, call)
        if isinstance(decided, ToolResult):
            return decided
        call = decided
    result = await agent.toolbox.run(call)
    for hook in agent.hooks:
        result = await hook.after_tool(agent.id, call, result)
    return result
