"""A step extension takes part in a turn through its hooks alone: its block reaches the request right
after the system prompt, its veto sends the agent back with the reason, and it hears every decision,
answer and vote. The turn names no feature to make that happen."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import ClassVar

import yaml

from massgen_cli.agent_builder import build_agents
from massgen_cli.attempts import Vote
from massgen_cli.config import load_document
from massgen_cli.coordination.extension import BlockMarker, StepAt, StepDone, StepExtension
from massgen_cli.coordination.orchestrator import Orchestrator
from massgen_cli.coordination.policy import CoordinationPolicy
from massgen_cli.coordination.steps import StepContext, compressed_history
from massgen_cli.messages import Message
from tests.scripted import answer, scripted, vote

MARKER = BlockMarker("=== HOUSE RULES ===")


class HouseRules(StepExtension):
    """Shows a block, refuses answers that mention "forbidden", and keeps what it hears."""

    name: ClassVar[str] = "house rules"
    markers: ClassVar[tuple[BlockMarker, ...]] = (MARKER,)

    def __init__(self) -> None:
        self.heard: list[str] = []

    async def blocks(self, at: StepAt, history: Sequence[Message]) -> Sequence[Message]:
        return [MARKER.block(f"be brief, {at.agent_id}")]

    def veto(self, at: StepAt, answer: str | None) -> str:
        return "Answers may not mention the forbidden word." if answer and "forbidden" in answer else ""

    async def decided(self, done: StepDone) -> None:
        self.heard.append(f"decided {done.at.agent_id}")

    async def answered(self, at: StepAt, content: str) -> None:
        self.heard.append(f"answered {at.agent_id}: {content}")

    async def voted(self, at: StepAt, vote: Vote) -> None:
        self.heard.append(f"voted {vote.voter}->{vote.target}")


def test_an_extension_shows_its_block_vetoes_and_hears_the_attempt(tmp_path):
    text = scripted(
        {
            "a": [answer("the forbidden answer"), answer("a fine answer"), vote("agent1", "mine is fine")],
            "b": [vote("agent1", "a is right")],
        },
        orchestrator={"final_presentation": "reuse"},
    )
    config = load_document(yaml.safe_load(text), tmp_path / "c.yaml").config
    agents = build_agents(config, lambda event: None)
    rules = HouseRules()
    context = StepContext(extensions=(rules,))

    result = asyncio.run(Orchestrator(agents, CoordinationPolicy.of(config), context=context).run("Q?"))

    assert result.winner == "a" and result.answers == {"a": "a fine answer"}
    first, second = agents[0].backend.inner.requests[:2]  # type: ignore[attr-defined]
    assert (
        first.messages[0]["role"] == "system"
        and first.messages[1]["content"] == MARKER.block("be brief, a")["content"]
    )
    assert "Answers may not mention the forbidden word." in str(second.messages[-1]["content"]), "re-asked"
    assert "answered a: the forbidden answer" not in rules.heard
    assert "answered a: a fine answer" in rules.heard
    assert {"voted b->a", "decided b"} <= set(rules.heard)


def test_a_compressed_request_keeps_no_block_in_the_thread():
    messages: list[Message] = [
        {"role": "system", "content": "You are a."},
        MARKER.block("be brief"),
        {"role": "user", "content": "earlier question"},
        {"role": "assistant", "content": "earlier answer"},
        {"role": "user", "content": "the task"},
    ]
    assert compressed_history(messages, 1, [MARKER]) == messages[2:4]
    assert compressed_history(messages, 1, []) == messages[1:4], "only marked blocks are taken out"
