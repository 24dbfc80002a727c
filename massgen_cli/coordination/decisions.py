"""Workflow decisions: ``new_answer`` and ``vote``, offered as tools or asked for as a JSON schema."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from massgen_cli.backends.base import Completion, ToolSpec

NEW_ANSWER, VOTE = "new_answer", "vote"


@dataclass(frozen=True)
class NewAnswer:
    content: str


@dataclass(frozen=True)
class VoteFor:
    target: str
    reason: str


Decision = NewAnswer | VoteFor


def workflow_tools(can_answer: bool, vote_targets: list[str]) -> tuple[ToolSpec, ...]:
    """The tools an agent may end its step with; ``vote`` only once there are answers."""
    tools = []
    if can_answer:
        tools.append(
            ToolSpec(
                NEW_ANSWER,
                "Submit a new or improved answer to the original message.",
                {
                    "type": "object",
                    "properties": {"content": {"type": "string", "description": "Your complete answer."}},
                    "required": ["content"],
                },
            )
        )
    if vote_targets:
        tools.append(
            ToolSpec(
                VOTE,
                "Vote for the best existing answer when no new answer is needed.",
                {
                    "type": "object",
                    "properties": {
                        "agent_id": {
                            "type": "string",
                            "enum": vote_targets,
                            "description": "Whose answer wins.",
                        },
                        "reason": {"type": "string", "description": "Why that answer is best."},
                    },
                    "required": ["agent_id", "reason"],
                },
            )
        )
    return tuple(tools)


def decision_schema(can_answer: bool, vote_targets: list[str]) -> dict[str, Any]:
    """A JSON schema with the same choices as the tools, for backends without tool calls."""
    actions = ([NEW_ANSWER] if can_answer else []) + ([VOTE] if vote_targets else [])
    properties: dict[str, Any] = {"action": {"type": "string", "enum": actions}}
    if can_answer:
        properties["content"] = {"type": "string"}
    if vote_targets:
        properties["agent_id"] = {"type": "string", "enum": vote_targets}
        properties["reason"] = {"type": "string"}
    return {"type": "object", "properties": properties, "required": ["action"]}


def parse_decision(completion: Completion) -> Decision | None:
    """The decision a step ended with: its first workflow tool call, else a JSON object in its text."""
    for call in completion.tool_calls:
        decision = _from_arguments(call.name, call.arguments)
        if decision is not None:
            return decision
    payload = find_json_object(completion.text)
    if payload is None:
        return _cut_answer(completion.text)
    return _from_arguments(str(payload.get("action", "")), payload)


def _cut_answer(text: str) -> Decision | None:
    """A ``new_answer`` whose JSON the token limit cut short keeps the content it got to say."""
    if not re.search(r'"action"\s*:\s*"new_answer"', text):
        return None
    content = cut_json_content(text)
    return NewAnswer(content) if content else None


CUT_CONTENT = re.compile(r'"content"\s*:\s*"((?:[^"\\]|\\.)*)')


def cut_json_content(text: str) -> str | None:
    """The ``content`` string of a JSON reply that may have been cut short, decoded; None if absent."""
    cut = CUT_CONTENT.search(text)
    if cut is None:
        return None
    try:
        return str(json.loads(f'"{cut.group(1).rstrip(chr(92))}"')).strip()
    except json.JSONDecodeError:  # cut inside an escape
        return cut.group(1).strip()


def _from_arguments(action: str, arguments: dict[str, Any]) -> Decision | None:
    if action == NEW_ANSWER and str(arguments.get("content", "")).strip():
        return NewAnswer(str(arguments["content"]).strip())
    if action == VOTE and arguments.get("agent_id"):
        return VoteFor(str(arguments["agent_id"]), str(arguments.get("reason", "")))
    return None


def find_json_object(text: str) -> dict[str, Any] | None:
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if not match:
        return None
    try:
        value = json.loads(match.group(0))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
