"""A client's tools (those a served request offers, ``massgen serve``): offered to every agent beside its
own, and run by the client, not here. An agent that calls one ends its step with that call as its answer;
peers judge it as they judge any answer, and when it wins, the turn's answer is the call, final as it
stands, for the client to run. The client's next request brings the results: its turn goes on from them,
each agent's task followed by the calls and their results, as after a tool of its own."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from massgen_cli.backends.base import Completion, ToolSpec
from massgen_cli.coordination.extension import StepAt, StepExtension
from massgen_cli.messages import Message

CLIENT_TOOLS_NOTE = (
    "The client's tools ({names}) run in the user's application, not here: calling one ends your step, "
    "and the call is your answer. When the team picks it, the client runs it and its result comes back "
    "after the question. Call one only when its result is needed to answer."
)


@dataclass(frozen=True)
class ClientCall:
    """A call of a client's tool as the client receives it: its id, the tool and the arguments (JSON)."""

    id: str
    name: str
    arguments: str


@dataclass
class ClientTurn:
    """What a request brings for its client's tools: the tools, and the calls of them the client answered
    (``exchange``: assistant messages with the calls, each followed by the client's results, as a thread
    keeps a tool exchange). ``calls`` is filled as agents call the tools: each answer's calls, by the
    answer's text."""

    tools: tuple[ToolSpec, ...] = ()
    exchange: tuple[Message, ...] = ()
    calls: dict[str, tuple[ClientCall, ...]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, calls: tuple[ClientCall, ...]) -> str:
        """The answer ``calls`` make, as peers read it; kept so the answer can be told back as the calls."""
        text = "\n".join(f"Call the client's tool {call.name} with {call.arguments}" for call in calls)
        with self._lock:
            self.calls.setdefault(text, calls)
        return text

    def calls_of(self, answer: str) -> tuple[ClientCall, ...] | None:
        """The calls an answer is, or None for an answer of another kind."""
        with self._lock:
            return self.calls.get(answer)


class ClientTools(StepExtension):
    """The client's tools in every step; a call of one is the agent's answer (see the module docstring)."""

    name: ClassVar[str] = "client tools"

    def __init__(self, turn: ClientTurn):
        self.turn = turn
        self.names = frozenset(tool.name for tool in turn.tools)

    async def system_note(self, at: StepAt, *, with_peers: bool) -> str:
        return CLIENT_TOOLS_NOTE.format(names=", ".join(sorted(self.names))) if self.names else ""

    def answer_tools(self, agent_id: str) -> Sequence[ToolSpec]:
        return self.turn.tools

    def answer_in(self, at: StepAt, completion: Completion) -> str | None:
        called = [call for call in completion.tool_calls if call.name in self.names]
        if not called:
            return None
        return self.turn.record(tuple(_client_call(call.name, call.arguments) for call in called))

    def after_task(self, at: StepAt) -> Sequence[Message]:
        return self.turn.exchange

    def final_as_it_is(self, answer: str) -> bool:
        return self.turn.calls_of(answer) is not None


def _client_call(name: str, arguments: dict[str, object]) -> ClientCall:
    """A call with an id of its own: the id the client answers with, unique across agents and turns."""
    return ClientCall(f"call_{uuid.uuid4().hex[:24]}", name, json.dumps(arguments, ensure_ascii=False))
