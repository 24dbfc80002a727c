"""Steering: what a person sent to the run's inbox while it works reaches every agent at its next step,
in its task ("[Message from the user during the run] ..."), and the winner when it presents; each
message is told (a ``SteeringMessage`` event) as the first step to carry it begins, and one that came
after the turn's last step began is told as the turn ends, as read by no agent."""

from __future__ import annotations

from typing import ClassVar

from massgen_cli.attempts import AttemptAt, TurnOutcome
from massgen_cli.coordination.extension import StepAt, StepExtension
from massgen_cli.events import EventSink, SteeringMessage
from massgen_cli.features.declaration import Feature, Opened, Opening
from massgen_cli.inbox import STEERING_HEADER, Inbox


class SteeringInbox(StepExtension):
    """The inbox's messages, each headed as the user's, in every step that begins after it came; as an
    attempt part, the messages no step carried are told when the turn ends."""

    name: ClassVar[str] = "steering inbox"
    part_name: ClassVar[str] = "steering inbox"

    def __init__(self, inbox: Inbox, emit: EventSink):
        self.inbox, self.emit = inbox, emit
        self._told = 0

    async def task_note(self, at: StepAt) -> str:
        return self._said()

    def presentation_note(self, agent_id: str) -> str:
        return self._said()

    def begin(self, at: AttemptAt) -> None:
        """A new attempt's steps carry every message, as the ones before did."""

    async def commit(self, outcome: TurnOutcome) -> list[str]:
        self._tell_unread()
        return []

    def roll_back(self, at: AttemptAt, *, whole_turn: bool) -> None:
        if whole_turn:  # a failed or cancelled turn: no later step reads what came
            self._tell_unread()

    def _said(self) -> str:
        messages = self.inbox.messages()
        for text in messages[self._told :]:
            self.emit(SteeringMessage(text))
        self._told = len(messages)
        return "\n\n".join(f"{STEERING_HEADER} {text}" for text in messages)

    def _tell_unread(self) -> None:
        messages = self.inbox.messages()
        for text in messages[self._told :]:
            self.emit(SteeringMessage(text, read=False))
        self._told = len(messages)


def _open(opening: Opening) -> Opened:
    inbox = opening.place.outside.inbox
    assert inbox is not None, "wanted only with an inbox"
    steering = SteeringInbox(inbox, opening.emit)
    return Opened(steering, steering)


FEATURE = Feature(
    "steering inbox",
    wanted=lambda opening: opening.place.outside.inbox is not None,
    open=_open,
    steps_after=("context copies",),
)
"""The run's inbox, read at every step, when someone can write to it."""
