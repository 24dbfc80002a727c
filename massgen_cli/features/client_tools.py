"""A served request's own tools (``massgen serve``), offered to every agent beside its own and run by
the client, not here: the system prompt says so, and a call of one is the agent's answer
(``coordination/call_answers.py``)."""

from __future__ import annotations

from typing import ClassVar

from massgen_cli.coordination.call_answers import CallAnswers, ClientTurn
from massgen_cli.coordination.extension import StepAt, StepExtension
from massgen_cli.features.declaration import Feature, Opened, Opening

CLIENT_TOOLS_NOTE = (
    "The client's tools ({names}) run in the user's application, not here: calling one ends your step, "
    "and the call is your answer. When the team picks it, the client runs it and its result comes back "
    "after the question. Call one only when its result is needed to answer."
)


class ClientTools(StepExtension):
    """The client's tools in every step; a call of one is the agent's answer."""

    name: ClassVar[str] = "client tools"

    def __init__(self, turn: ClientTurn):
        self.turn = turn

    async def system_note(self, at: StepAt, *, with_peers: bool) -> str:
        names = ", ".join(sorted(tool.name for tool in self.turn.tools))
        return CLIENT_TOOLS_NOTE.format(names=names) if names else ""

    def call_answers(self) -> CallAnswers:
        return self.turn


def _open(opening: Opening) -> Opened:
    client = opening.place.outside.client
    assert client is not None, "wanted only with a served request's tools"
    return Opened(ClientTools(client))


FEATURE = Feature(
    "client tools",
    wanted=lambda opening: opening.place.outside.client is not None,
    open=_open,
    steps_after=("steering inbox",),
)
"""A served request's own tools, when it brings any."""
