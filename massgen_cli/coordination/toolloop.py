"""The tool loop inside a step: while the model calls its toolbox's tools, run them (the calls of one
reply concurrently), append the calls and results, and ask again, until a reply calls none of them.

Bounded by ``limit`` calls per step: past it the tools are withdrawn and the model is told to decide.
Backends without tool calls get the tools as a ``call_tool`` action of their JSON schema. A cancelled
step cancels its running tools (a command's process group is killed)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from massgen_cli.agent.data import Agent, CompressedListener, Emit, with_reasoning
from massgen_cli.agent.pipeline import run_step
from massgen_cli.agent.tool_calls import run_tool
from massgen_cli.backends.base import Completion, Request, ToolSpec
from massgen_cli.coordination.command_output import LiveCommandOutput
from massgen_cli.coordination.decisions import cut_json_content, find_json_object
from massgen_cli.events import CommandRan, ToolCall, ToolFinished, ToolStarted
from massgen_cli.messages import Message, ToolCallPart
from massgen_cli.runlogs.writer import AttemptLog
from massgen_cli.tools.base import COMMAND_TOOL, OUTPUT_HEARD
from massgen_cli.tools.toolbox import ToolResult, result_summary

Recall = Callable[[list[Message]], Awaitable[list[Message]]]
"""Looks long-term memory up again for a request compressed inside a step."""


class StepWatch(Protocol):
    """What the orchestrator says at a step's tool-call boundaries (MassGen's hooks): a reason to refuse
    the next tool calls (the hard round timeout), and notes for the latest tool result (a peer's new
    answer, a wrap-up notice)."""

    def refusal(self) -> str | None: ...

    def notes(self) -> str: ...


class ToolsRefused(Exception):
    """A step whose tool calls were refused too many times in a row: the agent is out of the attempt."""


REFUSALS_IN_A_ROW = 10

CALL_TOOL = "call_tool"
EVENT_ARGUMENT_CHARS = 500
SINGLE_ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"action": {"type": "string", "enum": ["answer"]}, "content": {"type": "string"}},
    "required": ["action", "content"],
    "additionalProperties": False,
}
"""What a lone agent without tool calls replies when it has tools: an answer, or (added) a tool call."""


@dataclass
class ToolStep:
    """How a step ended: the reply that called no tool, and the tool exchange before it."""

    completion: Completion
    exchange: list[Message] = field(default_factory=list)
    calls: int = 0


async def run_with_tools(
    agent: Agent,
    request: Request,
    emit: Emit,
    log: AttemptLog | None,
    *,
    limit: int,
    decide_now: str,
    on_compressed: CompressedListener | None = None,
    recall: Recall | None = None,
    watch: StepWatch | None = None,
) -> ToolStep:
    """Run one step of ``agent`` with its tools (see the module docstring). A compression inside the
    step carries over to its next calls; ``recall`` then looks long-term memory up again; ``watch`` may
    refuse tool calls and add notes to their results. Each call passes the agent's request hooks (one may
    refuse it with a ``StepRefused``, which ends the step)."""
    step, messages, refused = ToolStep(Completion()), list(request.messages), 0
    while True:
        # Only the first call's request is system + thread + task, the shape the thread writer expects.
        fitted = _Fitted(on_compressed if not step.exchange else None)
        offered = agent.toolbox.specs if step.calls < limit else ()
        sent = offer_tools(replace(request, messages=messages), offered, agent)
        step.completion = await run_step(agent, sent, emit, log, on_compressed=fitted)
        if fitted.messages is not None:
            messages = await recall(fitted.messages) if recall is not None else fitted.messages
        calls = toolbox_calls(step.completion, agent, step.calls)
        if not calls:
            return step
        refusal = watch.refusal() if watch is not None else None
        refused = refused + len(calls) if refusal else 0
        if refused >= REFUSALS_IN_A_ROW:
            raise ToolsRefused(f"{refusal} ({refused} tool calls refused in a row)")
        if refusal:
            results = [ToolResult(f"Error: not run: {refusal}", False, 0.0) for _ in calls]
        else:
            results = await _run_calls(agent, calls, limit - step.calls, emit)
        added = _with_notes(exchange_messages(step.completion, calls, results), watch)
        step.calls += min(len(calls), limit - step.calls)
        if _decided_too(step.completion, agent):
            step.exchange += added
            step.completion = _without_tool_calls(step.completion, agent)
            return step
        if step.calls >= limit:
            added.append({"role": "user", "content": decide_now.format(limit=limit)})
        step.exchange += added
        messages = [*messages, *added]  # each request keeps the messages it was sent with


def _with_notes(added: list[Message], watch: StepWatch | None) -> list[Message]:
    """The exchange with the watch's notes appended to its last tool result."""
    notes = watch.notes() if watch is not None else ""
    if notes:
        last = added[-1]
        added[-1] = {**last, "content": f"{last.get('content') or ''}\n\n{notes}"}
    return added


class _Fitted:
    """Keeps the compressed request of one call, and passes it on to ``listener``."""

    def __init__(self, listener: CompressedListener | None):
        self.listener = listener
        self.messages: list[Message] | None = None

    async def __call__(self, messages: list[Message]) -> None:
        self.messages = messages
        if self.listener is not None:
            await self.listener(messages)


def offer_tools(request: Request, tools: tuple[ToolSpec, ...], agent: Agent) -> Request:
    """``request`` with ``tools``: as tool definitions, or as a ``call_tool`` action of its JSON schema."""
    if not tools:
        return request
    if agent.backend.capabilities.tool_calls:
        return replace(request, tools=(*request.tools, *tools))
    if request.response_schema is None:
        return request
    return replace(request, response_schema=with_call_tool(request.response_schema, tools))


def with_call_tool(schema: dict[str, Any], tools: tuple[ToolSpec, ...]) -> dict[str, Any]:
    """``schema`` or ``{"action": "call_tool", "tool": NAME, "arguments": {...}}`` with each tool's own
    argument schema, so a grammar-constrained model can only write a valid call."""
    calls = [
        {
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": [CALL_TOOL]},
                "tool": {"type": "string", "enum": [tool.name]},
                "arguments": tool.parameters,
            },
            "required": ["action", "tool", "arguments"],
            "additionalProperties": False,
        }
        for tool in tools
    ]
    return {"anyOf": [schema, *calls]}


def json_tool_instructions(tools: tuple[ToolSpec, ...]) -> str:
    """How a model without tool calls calls a tool, and which tools there are."""
    lines = [
        'To use a tool before you decide, reply with "action": "call_tool", "tool": its name and '
        '"arguments": an object of its arguments; its result comes back and you reply again. Tools:'
    ]
    for tool in tools:
        arguments = ", ".join(tool.parameters.get("properties", {}))
        lines.append(f"- {tool.name}({arguments}): {tool.description}")
    return "\n".join(lines)


def json_answer(text: str) -> str:
    """The ``content`` of a JSON ``answer`` reply (what there is of it when the reply was cut short); a
    reply that is not JSON is the answer itself."""
    payload = find_json_object(text)
    if payload is not None:
        return str(payload.get("content") or "").strip()
    cut = cut_json_content(text)
    return text.strip() if cut is None else cut


def toolbox_calls(completion: Completion, agent: Agent, earlier: int) -> list[ToolCall]:
    """The reply's calls of toolbox tools (from a JSON ``call_tool`` action for backends without tools)."""
    calls = [call for call in completion.tool_calls if call.name in agent.toolbox]
    if calls or agent.backend.capabilities.tool_calls or not agent.toolbox:
        return calls
    payload = find_json_object(completion.text)
    if payload is None or payload.get("action") != CALL_TOOL:
        return []
    arguments = payload.get("arguments")
    return [
        ToolCall(
            f"json_call_{earlier + 1}",
            str(payload.get("tool", "")),
            arguments if isinstance(arguments, dict) else {},
        )
    ]


async def _run_calls(agent: Agent, calls: list[ToolCall], room: int, emit: Emit) -> list[ToolResult]:
    refused = ToolResult(
        "Error: not run: the tool call limit of this step is reached; decide now.", False, 0.0
    )
    run = [_run_one(agent, call, emit) for call in calls[: max(room, 0)]]
    return [*await asyncio.gather(*run), *[refused] * (len(calls) - len(run))]


async def _run_one(agent: Agent, call: ToolCall, emit: Emit) -> ToolResult:
    emit(ToolStarted(agent.id, call.id, call.name, _shown_arguments(call.arguments)))
    live = LiveCommandOutput(agent.id, call.id, str(call.arguments.get("command", "")), emit)
    hearing = OUTPUT_HEARD.set(live) if call.name == COMMAND_TOOL else None
    if hearing is not None:
        live.started()
    try:
        result = await run_tool(agent, call)
    finally:
        live.close()
        if hearing is not None:
            OUTPUT_HEARD.reset(hearing)
    summary = result_summary(call.name, result.text)
    seconds = round(result.seconds, 3)
    if (command := result.command) is not None:  # told before the call's end, which it belongs to
        emit(CommandRan(agent.id, call.id, command.command, command.end, command.exit_code, seconds))
    emit(ToolFinished(agent.id, call.id, call.name, result.ok, seconds, summary, len(result.text)))
    return result


def _shown_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """Arguments for the event log: long strings cut (a written file's content can be large)."""
    return {
        key: value[:EVENT_ARGUMENT_CHARS] + "…"
        if isinstance(value, str) and len(value) > EVENT_ARGUMENT_CHARS
        else value
        for key, value in arguments.items()
    }


def exchange_messages(
    completion: Completion, calls: list[ToolCall], results: list[ToolResult]
) -> list[Message]:
    """The assistant message with the tool calls, then one tool message per result, as a thread keeps them."""
    parts: list[ToolCallPart] = [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
        }
        for call in calls
    ]
    text = (completion.text or None) if completion.tool_calls else None  # a JSON call's text is the call
    assistant = with_reasoning({"role": "assistant", "content": text, "tool_calls": parts}, completion)
    answers: list[Message] = [
        {"role": "tool", "tool_call_id": call.id, "name": call.name, "content": result.text}
        for call, result in zip(calls, results, strict=True)
    ]
    return [assistant, *answers]


def tool_activity(exchange: list[Message]) -> str:
    """One line saying which tools a step used and how often, or "" when it used none."""
    used = Counter(call["function"]["name"] for m in exchange for call in m.get("tool_calls") or ())
    return ("Used tools: " + ", ".join(f"{name} ×{count}" for name, count in used.items())) if used else ""


def _decided_too(completion: Completion, agent: Agent) -> bool:
    """Whether the reply also called a tool outside the toolbox (a workflow decision)."""
    return any(call.name not in agent.toolbox for call in completion.tool_calls)


def _without_tool_calls(completion: Completion, agent: Agent) -> Completion:
    """The deciding reply without the toolbox calls (already in the exchange) and their text."""
    kept = [call for call in completion.tool_calls if call.name not in agent.toolbox]
    return replace(completion, text="", tool_calls=kept)
