"""The words agents see: coordination instructions, the task with current answers, the presentation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from massgen_cli.attempts import Vote
from massgen_cli.coordination.tally import alias_map
from massgen_cli.messages import Message

COORDINATION_INSTRUCTIONS = """\
You are one of several agents answering the same message together. You see the original message \
and the current answers of all agents, named agent1, agent2, ... Each step, either submit a new or \
improved answer with `new_answer` (when no answer is good enough, or you can clearly do better), or \
vote with `vote` for the best existing answer (when one is already complete and correct). \
Always end with exactly one of these actions."""

JSON_INSTRUCTIONS = """\
Reply with one JSON object only. To answer, set "action" to "new_answer" and put your complete answer \
to the original message in "content". To vote, set "action" to "vote", "agent_id" to the agent whose \
answer is best (for example agent1) and give a short "reason"."""

REASK = (
    "You did not finish with an action. End now with exactly one action: `new_answer` with your "
    "complete answer, or `vote` for the best existing answer."
)

PRESENTATION = """\
You were chosen to present the final answer. Using the original message, all answers and the votes \
below, write the final answer for the user. Give only the answer itself, complete and polished."""

SYNTHESIS = """\
You were chosen to write the final answer as a synthesis. Combine the strengths of all the answers \
below (and what the votes say of them) into one answer to the original message, resolving where they \
disagree. Give only the answer itself, complete and polished."""


TOOL_LIMIT = (
    "You have made {limit} tool calls in this step, the most allowed; the tools are withdrawn. Decide now: "
    "`new_answer` with your complete answer, or `vote` for the best existing answer."
)

ANSWER_NOW = "You have made {limit} tool calls, the most allowed; the tools are withdrawn. Answer now."

SINGLE_JSON_INSTRUCTIONS = (
    'Reply with one JSON object only. To answer, set "action" to "answer" and put your complete answer '
    'in "content".'
)


def own_system_message(agent_system: str | None, *extra: str, appended: str | None = None) -> Message | None:
    """The agent's own system prompt (one agent, or the presentation), ``extra`` parts, and what its
    config appends (``append_system_prompt``), if any."""
    parts = [part for part in (agent_system, *extra, appended) if part]
    return {"role": "system", "content": "\n\n".join(parts)} if parts else None


def system_message(
    agent_system: str | None, *extra: str, uses_json: bool, appended: str | None = None
) -> Message:
    """The coordination system prompt: the agent's own, the instructions, ``extra`` parts (how to judge
    answers, tools), and what its config appends."""
    parts = [part for part in (agent_system, COORDINATION_INSTRUCTIONS) if part]
    if uses_json:
        parts.append(JSON_INSTRUCTIONS)
    parts += [part for part in (*extra, appended) if part]
    return {"role": "system", "content": "\n\n".join(parts)}


def task_message(
    question: str, answers: Mapping[str, str], agent_ids: Sequence[str], extra: str = ""
) -> Message:
    """The user message of a step: the original message and every current answer under its alias."""
    return {"role": "user", "content": _task_text(question, answers, agent_ids, extra)}


def _task_text(question: str, answers: Mapping[str, str], agent_ids: Sequence[str], extra: str) -> str:
    lines = ["<ORIGINAL MESSAGE>", question, "</ORIGINAL MESSAGE>", "", "<CURRENT ANSWERS from the agents>"]
    shown = [(alias, agent_id) for alias, agent_id in alias_map(agent_ids).items() if agent_id in answers]
    if not shown:
        lines.append("(no answers yet)")
    for alias, agent_id in shown:
        lines += [f"<{alias}>", answers[agent_id], f"</{alias}>"]
    lines.append("</CURRENT ANSWERS from the agents>")
    if extra:
        lines += ["", extra]
    return "\n".join(lines)


def presentation_message(
    question: str,
    answers: Mapping[str, str],
    votes: Sequence[Vote],
    agent_ids: Sequence[str],
    synthesis: bool = False,
) -> Message:
    """The winner's task: present the final answer (or a synthesis of every answer)."""
    aliases = {agent_id: alias for alias, agent_id in alias_map(agent_ids).items()}
    task = _task_text(question, answers, agent_ids, "")
    vote_lines = [f"- {aliases[v.voter]} voted for {aliases[v.target]}: {v.reason}" for v in votes]
    instructions = SYNTHESIS if synthesis else PRESENTATION
    body = "\n".join([instructions, "", task, "", "Votes:", *(vote_lines or ["(none)"])])
    return {"role": "user", "content": body}
