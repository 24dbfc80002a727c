"""Personas (``coordination.persona_generator``, ``--personas MODE``): before a turn's first step one
request to the first agent's model writes a different persona for every agent, by the diversity mode
(what each optimises for, what kind of solution it builds, or how it works); a reply that cannot be read
gives a fixed set instead. Each agent's system prompt carries its persona until its first answer of the
turn, then drops it, softens it to a preference, or keeps it (``after_first_answer``)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, ClassVar

from massgen_cli.coordination.extension import StepAt, StepExtension
from massgen_cli.events import AgentUsage, EventSink, Notice
from massgen_cli.features.declaration import Feature, Opened, Opening
from massgen_cli.messages import Message

if TYPE_CHECKING:
    from massgen_cli.backends.base import Backend
    from massgen_cli.config.backend import BackendConfig
    from massgen_cli.config.orchestrator import PersonaGeneratorConfig

ASKED = {
    "perspective": "Give each a different priority to optimise for (say correctness, simplicity, cost, "
    "the user's experience, long-term upkeep).",
    "implementation": "Give each a different kind of solution or reading of the question to pursue.",
    "methodology": "Give each a different way of working (say from first principles, from examples, by "
    "breaking the work down, by looking for what could go wrong first).",
}
FIXED = {
    "perspective": [
        "You care most that the answer is correct and complete; check every claim.",
        "You care most that the answer is simple and easy to act on.",
        "You care most about what could go wrong, and about the cases others miss.",
        "You care most about what serves the person who asked in the long run.",
    ],
    "implementation": [
        "You pursue the most direct solution that works.",
        "You pursue the most general solution, one that covers related cases too.",
        "You pursue an unusual reading of the question that others may overlook.",
        "You pursue the solution that is cheapest to build and keep.",
    ],
    "methodology": [
        "You work from first principles, step by step.",
        "You work from concrete examples, then generalise.",
        "You break the work into parts and finish each before the next.",
        "You start by looking for what would make an answer fail.",
    ],
}


class Personas(StepExtension):
    """Each agent's persona in its system prompt (see the module docstring)."""

    name: ClassVar[str] = "personas"

    def __init__(self, settings: PersonaGeneratorConfig, writer: PersonaWriter, emit: EventSink):
        self.settings, self.writer, self.emit = settings, writer, emit
        self.personas: dict[str, str] = {}
        self.turn = 0
        self.first_answered: set[str] = set()
        self._writing = asyncio.Lock()

    async def system_note(self, at: StepAt, *, with_peers: bool) -> str:
        persona = (await self._personas(at)).get(at.agent_id, "")
        if not persona:
            return ""
        if at.agent_id not in self.first_answered or self.settings.after_first_answer == "keep":
            return f"Your persona for this question: {persona}"
        if self.settings.after_first_answer == "soften":
            return f"A preference you may weigh, not a position to defend: {persona}"
        return ""

    def presentation_note(self, agent_id: str) -> str:
        return ""

    async def answered(self, at: StepAt, content: str) -> None:
        self.first_answered.add(at.agent_id)

    async def _personas(self, at: StepAt) -> dict[str, str]:
        async with self._writing:
            if at.turn != self.turn:
                self.turn, self.first_answered = at.turn, set()
                if not (self.personas and self.settings.persist_across_turns):
                    self.personas = await self.writer.write(at.question)
                    for agent_id, persona in self.personas.items():
                        self.emit(Notice("info", f"[{agent_id}] persona: {persona}"))
            return self.personas


class PersonaWriter:
    """Writes the personas with one request to ``backend`` (the first agent's model); its usage is the
    first agent's. A failure or a reply without every agent's persona gives the fixed set."""

    def __init__(
        self,
        backend: Backend,
        config: BackendConfig,
        settings: PersonaGeneratorConfig,
        agent_ids: list[str],
        emit: EventSink,
    ):
        self.backend, self.config, self.settings = backend, config, settings
        self.agent_ids, self.emit = agent_ids, emit

    async def write(self, question: str) -> dict[str, str]:
        from massgen_cli.errors import MassGenError

        try:
            written = await self._ask(question)
        except (MassGenError, OSError) as error:
            self.emit(Notice("warning", f"personas could not be written ({error}); a fixed set is used"))
            return self._fixed()
        if set(written) >= set(self.agent_ids):
            return {agent_id: written[agent_id] for agent_id in self.agent_ids}
        self.emit(Notice("warning", "the personas' reply named not every agent; a fixed set is used"))
        return self._fixed()

    async def _ask(self, question: str) -> dict[str, str]:
        import contextlib

        from massgen_cli.backends.base import Completion, Request
        from massgen_cli.backends.pricing import priced
        from massgen_cli.coordination.decisions import find_json_object

        messages = _messages(
            self.settings.diversity_mode, self.settings.persona_guidelines or "", self.agent_ids, question
        )
        request = Request(messages, response_schema=_schema(self.agent_ids))
        completion = Completion()
        async with contextlib.aclosing(self.backend.stream(request)) as events:
            async for event in events:
                completion.add(event)
        self.emit(AgentUsage(self.agent_ids[0], priced(completion.usage, self.config)))
        found: dict[str, Any] = find_json_object(completion.text) or {}
        return {key: str(value).strip() for key, value in found.items() if str(value).strip()}

    def _fixed(self) -> dict[str, str]:
        personas = FIXED[self.settings.diversity_mode]
        return {agent_id: personas[index % len(personas)] for index, agent_id in enumerate(self.agent_ids)}


def _messages(mode: str, guidelines: str, agent_ids: list[str], question: str) -> list[Message]:
    ids = ", ".join(agent_ids)
    system = (
        f"Write one persona for each of these agents: {ids}. They will each answer the same question, "
        f"and their answers should differ. {ASKED[mode]} A persona is one or two sentences in the "
        "second person. Reply with a JSON object: each agent's id to its persona."
    )
    if guidelines:
        system += f"\n\n{guidelines}"
    return [{"role": "system", "content": system}, {"role": "user", "content": question}]


def _schema(agent_ids: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {agent_id: {"type": "string"} for agent_id in agent_ids},
        "required": agent_ids,
        "additionalProperties": False,
    }


def _open(opening: Opening) -> Opened:
    from massgen_cli.backends.registry import create_backend

    config = opening.config
    settings = config.orchestrator.coordination.persona_generator
    first = config.agents[0].backend
    backend = create_backend(first)
    writer = PersonaWriter(backend, first, settings, config.agent_ids, opening.emit)
    return Opened(Personas(settings, writer, opening.emit), close=backend.aclose)


def _wanted(opening: Opening) -> bool:
    config = opening.config
    return config.orchestrator.coordination.persona_generator.enabled and len(config.agents) > 1


FEATURE = Feature("personas", wanted=_wanted, open=_open, steps_after=("steering inbox",))
"""Its section of the system prompt comes after the others' (the persona is the last word)."""
