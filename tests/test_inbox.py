"""The steering inbox: messages kept in order, each headed as the user's in a step's task and in the
winner's presentation; an empty one refused."""

from __future__ import annotations

import asyncio

import pytest

from massgen_cli.coordination.extension import StepAt
from massgen_cli.features.steering import SteeringInbox
from massgen_cli.inbox import MAX_MESSAGE_CHARS, STEERING_HEADER, Inbox


def test_messages_reach_every_later_step_in_order_and_the_presentation():
    inbox = Inbox()
    steering = SteeringInbox(inbox)
    at = StepAt("alpha", "Q?", turn=1)
    assert asyncio.run(steering.task_note(at)) == "", "nothing sent: nothing added"
    inbox.post("  shorter, please \n")
    inbox.post("x" * (MAX_MESSAGE_CHARS + 10))
    note = asyncio.run(steering.task_note(at))
    assert note == f"{STEERING_HEADER} shorter, please\n\n{STEERING_HEADER} {'x' * MAX_MESSAGE_CHARS}"
    assert steering.presentation_note("beta") == note


def test_an_empty_message_is_refused():
    with pytest.raises(ValueError, match="needs some text"):
        Inbox().post(" \n ")
