"""Step extensions: how an optional feature takes part in agents' steps without the turn knowing it.

A feature (task planning, workspace snapshots, skills, memory files, the shared block, long-term memory
and its tools) is a ``StepExtension``: it may give agents tools, put context blocks after the system
prompt, add to the system prompt or the task, veto a decision, and react after a decision, a new answer,
a vote, an agent restart or a compression. Every hook does nothing unless the feature overrides it, so a
feature writes only the hooks it needs. The turn walks one list of extensions, as it walks the attempt
parts (``attempts.AttemptPart``) for begin, commit and roll back; a feature that is off is not in it.

Each feature declares itself (``features.declaration``) and the composition root opens those a config
wants; nothing in the turn names one. A step extension is also a request hook (``agent.data.RequestHooks``):
it sees every request of the agents' steps before it is sent and hears its completion.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from massgen_cli.agent.data import RequestHooks
from massgen_cli.attachments import noted
from massgen_cli.attempts import Vote
from massgen_cli.backends.base import Completion, ToolSpec
from massgen_cli.messages import Message, is_system_block
from massgen_cli.tools.base import Tool

if TYPE_CHECKING:
    from massgen_cli.coordination.call_answers import CallAnswers


@dataclass(frozen=True)
class BlockMarker:
    """The header that marks a feature's context block: a system message put after the system prompt for
    one request, rebuilt for every request and never kept in a thread."""

    header: str

    def block(self, body: str) -> Message:
        return {"role": "system", "content": f"{self.header}\n{body}" if body else self.header}

    def marks(self, message: Message) -> bool:
        return is_system_block(message, self.header)


@dataclass(frozen=True)
class Equipment:
    """What a feature gives one agent when agents are built: tools, what the system prompt says of them,
    and folders its file tools may read."""

    tools: Sequence[Tool] = ()
    guidance: str = ""
    readable: Sequence[Path] = ()


@dataclass(frozen=True)
class StepAt:
    """One agent's step: the agent, its workspace (None without one), the question, turn and attempt,
    and the placeholders of the images and files its task carries."""

    agent_id: str
    question: str
    turn: int
    attempt: int = 1
    workspace: Path | None = None
    attached: tuple[str, ...] = ()

    @property
    def asked(self) -> str:
        """The question as records keep it: with the placeholders of what went along."""
        return noted(self.question, self.attached)


@dataclass(frozen=True)
class StepDone:
    """What a step that decided left: the messages it added (tool exchanges, the decision's call and
    result, or its answer as text), the model's reasoning, and a summary of the tools it used."""

    at: StepAt
    messages: Sequence[Message] = ()
    reasoning: str = ""
    tools_used: str = ""


class StepExtension(RequestHooks):
    """A feature's part in agents' steps (see the module docstring), and a hook of every request their
    steps send (``before_request``, ``after_response``). Override the hooks you need."""

    name: ClassVar[str] = "extension"
    markers: ClassVar[tuple[BlockMarker, ...]] = ()
    """The markers of the blocks ``blocks`` returns: how a compressed request is cleaned of them."""

    def equip(self, agent_id: str, workspace: Path | None) -> Equipment:
        """The tools, guidance and readable folders this feature gives ``agent_id``."""
        return Equipment()

    def readable(self, agent_id: str) -> Sequence[Path]:
        """Folders the agent's file tools may read, known before its tools are built."""
        return ()

    async def system_note(self, at: StepAt, *, with_peers: bool) -> str:
        """A section of the agent's system prompt (``with_peers``: a coordination step, which sees peers)."""
        return ""

    async def task_note(self, at: StepAt) -> str:
        """A line added to a coordination step's task (after what a rejected attempt asks)."""
        return ""

    async def blocks(self, at: StepAt, history: Sequence[Message]) -> Sequence[Message]:
        """Context blocks for this request, in the order they appear after the system prompt."""
        return ()

    async def recall(self, at: StepAt, messages: Sequence[Message]) -> Sequence[Message] | None:
        """Blocks made again for a request compressed inside a step, to replace this feature's (what
        compression dropped may come back); None keeps them as they were."""
        return None

    def workflow_tools(self, agent_id: str) -> Sequence[ToolSpec]:
        """Tools offered beside ``new_answer`` and ``vote``, answered with the decision (not run)."""
        return ()

    def replied(self, at: StepAt, completion: Completion) -> None:
        """A coordination step's reply came (its calls of ``workflow_tools`` are this feature's)."""

    def call_answers(self) -> CallAnswers | None:
        """Tools whose call is the agent's answer, run elsewhere (a served request's own tools)."""
        return None

    def veto(self, at: StepAt, answer: str | None) -> str:
        """Why this decision (``answer``: a new answer; None: a vote) may not stand, or "": the agent is
        asked again with the reason."""
        return ""

    async def decided(self, done: StepDone) -> None:
        """A step decided (a new answer, a vote, or an own answer)."""

    async def answered(self, at: StepAt, content: str) -> None:
        """The agent's new answer was accepted in coordination."""

    async def voted(self, at: StepAt, vote: Vote) -> None:
        """The agent's vote was accepted."""

    def restarted(self, agent_id: str, *, compressed: bool = False) -> None:
        """The agent starts again with new answers in view, or its request was compressed."""

    def presentation_note(self, agent_id: str) -> str:
        """A section of the winner's system prompt when it presents the final answer with its tools."""
        return ""
