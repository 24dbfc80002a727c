"""The steering inbox: messages kept in order, each headed as the user's in a step's task and in the
winner's presentation, and told once (a ``SteeringMessage``) as the first step to carry it begins; an
empty one refused, and more than a run takes."""

from __future__ import annotations

import asyncio
import io

import pytest
from rich.console import Console

from massgen_cli.attempts import AttemptAt, TurnOutcome
from massgen_cli.coordination.extension import StepAt
from massgen_cli.event_lines import STEERING_LINE_CHARS
from massgen_cli.events import EventSink, RunEvent, SteeringMessage
from massgen_cli.features.steering import SteeringInbox
from massgen_cli.inbox import MAX_MESSAGE_CHARS, MAX_MESSAGES, STEERING_HEADER, Inbox, InboxFull
from massgen_cli.runlogs.marks import UNREAD, Marks
from massgen_cli.ui import ConsoleView


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


def test_a_message_no_step_carried_is_told_as_the_turn_ends_as_read_by_no_agent():
    inbox = Inbox()
    told: list[RunEvent] = []
    steering = SteeringInbox(inbox, EventSink(told.append))
    at = AttemptAt(turn=1)
    inbox.post("read this one")
    asyncio.run(steering.task_note(StepAt("alpha", "Q?", turn=1)))
    inbox.post("too late")
    steering.roll_back(at, whole_turn=False)
    assert told == [SteeringMessage("read this one")], "a rejected attempt's next steps still carry it"
    assert asyncio.run(steering.commit(TurnOutcome(at, "alpha", "Paris.", {"alpha": "Paris."}))) == []
    assert told[1:] == [SteeringMessage("too late", read=False)]
    inbox.post("after a failed turn")
    steering.roll_back(AttemptAt(turn=2), whole_turn=True)
    assert told[2:] == [SteeringMessage("after a failed turn", read=False)], "told once"
    asyncio.run(steering.commit(TurnOutcome(at, None, None, {})))
    assert len(told) == 3


def test_the_console_says_each_steering_message_on_a_line_of_its_own():
    err = io.StringIO()
    view = ConsoleView(["a"], console=Console(file=err, width=400, color_system=None), out=io.StringIO())
    view.begin_turn()
    view(SteeringMessage("shorter, please"))
    view(SteeringMessage("in French\nplease " + "x" * 1000, read=False))
    view.end_turn()
    lines = err.getvalue().splitlines()
    assert lines[0] == "✉ you said: shorter, please"
    assert lines[1].startswith("✉ you said (after the last step began: no agent read it): in French please x")
    assert len(lines) == 2 and len(lines[1]) <= STEERING_LINE_CHARS


def test_the_report_marks_a_message_no_agent_read():
    marks = Marks({}, has_recall_events=False)
    marks.add(SteeringMessage("too late", read=False), 1.5)
    marks.add(SteeringMessage("in time"), 0.5)
    assert marks.steering == [(1.5, f"too late {UNREAD}"), (0.5, "in time")]
