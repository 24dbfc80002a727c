"""The steering inbox: messages kept in order, each headed as the user's in a step's task and in the
winner's presentation, and told once (a ``SteeringMessage``) as the first step to carry it begins; an
empty one refused, and more than a run takes."""

from __future__ import annotations

import asyncio

import pytest

from massgen_cli.coordination.extension import StepAt
from massgen_cli.events import EventSink, RunEvent, SteeringMessage
from massgen_cli.features.steering import SteeringInbox
from massgen_cli.inbox import MAX_MESSAGE_CHARS, MAX_MESSAGES, STEERING_HEADER, Inbox, InboxFull


def test_messages_reach_every_later_step_in_order_and_the_presentation():
    inbox = Inbox()
    told: list[RunEvent] = []
    steering = SteeringInbox(inbox, EventSink(told.append))
    at = StepAt("alpha", "Q?", turn=1)
    assert asyncio.run(steering.task_note(at)) == "", "nothing sent: nothing added"
    inbox.post("  shorter, please \n")
    inbox.post("x" * (MAX_MESSAGE_CHARS + 10))
    note = asyncio.run(steering.task_note(at))
    assert note == f"{STEERING_HEADER} shorter, please\n\n{STEERING_HEADER} {'x' * MAX_MESSAGE_CHARS}"
    assert steering.presentation_note("beta") == note
    assert told == [SteeringMessage("shorter, please"), SteeringMessage("x" * MAX_MESSAGE_CHARS)], "once"
    inbox.post("and in French")
    assert asyncio.run(steering.task_note(StepAt("beta", "Q?", turn=1))).endswith("and in French")
    assert told[2:] == [SteeringMessage("and in French")]


def test_a_run_takes_a_bounded_number_of_messages():
    inbox = Inbox()
    for number in range(MAX_MESSAGES):
        inbox.post(f"message {number}")
    with pytest.raises(InboxFull):
        inbox.post("one more")
    assert len(inbox.messages()) == MAX_MESSAGES


def test_an_empty_message_is_refused():
    with pytest.raises(ValueError, match="needs some text"):
        Inbox().post(" \n ")
