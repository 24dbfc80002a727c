"""Post-evaluation: the winner checks the final answer and may ask for a new attempt."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from massgen_cli.backends.base import Request, ToolSpec
from massgen_cli.coordination.agents import Agent, run_step
from massgen_cli.coordination.decisions import find_json_object
from massgen_cli.events import RunEvent
from massgen_cli.logs import AttemptLog
from massgen_cli.messages import Message

SUBMIT, RESTART = "submit", "restart_orchestration"

INSTRUCTIONS = """\
Check the final answer below against the original message. If it fully answers it, call `submit`. \
If it is wrong or incomplete, call `restart_orchestration` with the reason and instructions for the \
next attempt."""

JSON_INSTRUCTIONS = (
    'Reply with one JSON object only: {"action": "submit"} or '
    '{"action": "restart_orchestration", "reason": "<why>", "instructions": "<what to do differently>"}.'
)

TOOLS = (
    ToolSpec(SUBMIT, "Accept the final answer.", {"type": "object", "properties": {}}),
    ToolSpec(
        RESTART,
        "Reject the final answer and start a new attempt.",
        {
            "type": "object",
            "properties": {"reason": {"type": "string"}, "instructions": {"type": "string"}},
            "required": ["reason", "instructions"],
        },
    ),
)

SCHEMA = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": [SUBMIT, RESTART]},
        "reason": {"type": "string"},
        "instructions": {"type": "string"},
    },
    "required": ["action"],
}


@dataclass(frozen=True)
class Verdict:
    restart: bool
    reason: str = ""
    instructions: str = ""


async def post_evaluate(
    agent: Agent, question: str, final_answer: str, emit: Callable[[RunEvent], None], log: AttemptLog | None
) -> Verdict:
    """Ask the winner whether the final answer stands; anything unclear counts as ``submit``."""
    uses_json = not agent.backend.capabilities.tool_calls
    body = (
        f"{INSTRUCTIONS}\n\n<ORIGINAL MESSAGE>\n{question}\n</ORIGINAL MESSAGE>\n\n"
        f"<FINAL ANSWER>\n{final_answer}\n</FINAL ANSWER>"
    )
    messages: list[Message] = [
        {"role": "user", "content": body + (f"\n\n{JSON_INSTRUCTIONS}" if uses_json else "")}
    ]
    request = (
        Request(messages, response_schema=SCHEMA, purpose="post_evaluation")
        if uses_json
        else Request(messages, tools=TOOLS, purpose="post_evaluation")
    )
    completion = await run_step(agent, request, emit, log, text_kind="evaluation")
    arguments = next((call.arguments for call in completion.tool_calls if call.name == RESTART), None)
    if arguments is None and not completion.tool_calls:
        payload = find_json_object(completion.text) or {}
        arguments = payload if payload.get("action") == RESTART else None
    if arguments is None:
        return Verdict(restart=False)
    return Verdict(True, str(arguments.get("reason", "")), str(arguments.get("instructions", "")))
