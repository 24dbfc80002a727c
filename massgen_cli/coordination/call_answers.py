"""Answers that are calls of tools run elsewhere: a served request's own tools, which its client runs.
Offered in every step beside the decisions (``tools``), a call of one is the agent's answer
(``answer_in``: the text its peers judge); when it wins it is final as it stands (``final_as_it_is``),
the reply to the client; the client's next request brings the results, which follow the task in every
step (``after_task``), as a tool's results. A step extension gives them (``StepExtension.call_answers``);
``answering`` finds them among the extensions that are on, or nothing."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from massgen_cli.backends.base import Completion, ToolSpec
from massgen_cli.messages import Message

if TYPE_CHECKING:
    from massgen_cli.coordination.extension import StepExtension
    from massgen_cli.inbox import Inbox


class CallAnswers(Protocol):
    """Tools whose call is an answer (see the module docstring)."""

    @property
    def tools(self) -> tuple[ToolSpec, ...]: ...

    def answer_in(self, completion: Completion) -> str | None: ...

    def after_task(self) -> Sequence[Message]: ...

    def final_as_it_is(self, answer: str) -> bool: ...


@dataclass(frozen=True)
class ClientCall:
    """A call of a client's tool as the client receives it: its id, the tool and the arguments (JSON)."""

    id: str
    name: str
    arguments: str


@dataclass
class ClientTurn:
    """A served request's own tools, and the calls of them the client answered (``exchange``: assistant
    messages with the calls, each followed by the client's results, as a thread keeps a tool exchange).
    ``calls`` is filled as agents call the tools: each answer's calls, by the answer's text."""

    tools: tuple[ToolSpec, ...] = ()
    exchange: tuple[Message, ...] = ()
    calls: dict[str, tuple[ClientCall, ...]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def answer_in(self, completion: Completion) -> str | None:
        """The answer a reply gives by calling the client's tools, as peers read it; None without one."""
        names = {tool.name for tool in self.tools}
        called = [call for call in completion.tool_calls if call.name in names]
        if not called:
            return None
        calls = tuple(_client_call(call.name, call.arguments) for call in called)
        text = "\n".join(f"Call the client's tool {call.name} with {call.arguments}" for call in calls)
        with self._lock:
            self.calls.setdefault(text, calls)
        return text

    def after_task(self) -> Sequence[Message]:
        return self.exchange

    def final_as_it_is(self, answer: str) -> bool:
        return self.calls_of(answer) is not None

    def calls_of(self, answer: str) -> tuple[ClientCall, ...] | None:
        """The calls an answer is, or None for an answer of another kind."""
        with self._lock:
            return self.calls.get(answer)


@dataclass(frozen=True)
class Outside:
    """What reaches a run from outside it: messages sent while it works (``inbox``; None: not
    steerable), and a served request's own tools and their results (``client``; None: none)."""

    inbox: Inbox | None = None
    client: ClientTurn | None = None


NO_CALL_ANSWERS = ClientTurn()
"""No tool whose call is an answer."""


def answering(extensions: Sequence[StepExtension]) -> CallAnswers:
    """The first extension's call answers, or none."""
    given = (extension.call_answers() for extension in extensions)
    return next((answers for answers in given if answers is not None), NO_CALL_ANSWERS)


def _client_call(name: str, arguments: dict[str, Any]) -> ClientCall:
    """A call with an id of its own: the id the client answers with, unique across agents and turns."""
    return ClientCall(f"call_{uuid.uuid4().hex[:24]}", name, json.dumps(arguments, ensure_ascii=False))
