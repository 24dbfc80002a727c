"""The event vocabulary read back from its JSON form: every run event, nested types included, is the event
it was written from; a line that is no event of the vocabulary is refused with a ``ValueError``."""

from __future__ import annotations

import json
from typing import Any, get_args

import pytest

from massgen_cli.events import (
    AgentStatus,
    AgentText,
    AgentUsage,
    BreakerChanged,
    CommandOutput,
    CommandRan,
    ContextStatus,
    FinalAnswer,
    MemoryRecorded,
    MemoryRetrieved,
    Notice,
    RateLimitWait,
    RecordedMemory,
    RetrievedMemory,
    RunEvent,
    SteeringMessage,
    ToolFinished,
    ToolStarted,
    TurnEnded,
    Usage,
    VoteCast,
)
from massgen_cli.events_json import event_from_dict, event_to_dict
from massgen_cli.feature_events import (
    ChecklistJudged,
    HookDecided,
    PlanMade,
    SubagentFinished,
    SubagentStarted,
)

SPENT = Usage(1200, 340, cached_tokens=1000, reasoning_tokens=40, cost_usd=0.0031, estimated=True)
ONE_OF_EACH: list[RunEvent] = [
    AgentText("a", "Paris", "presentation"),
    AgentStatus("a", "answered", "Paris is the capital."),
    VoteCast("b", "a", "the clearest"),
    ContextStatus("a", 2, 5120, 32768),
    Notice("degraded", "long-term memory is off"),
    ToolStarted("a", "c1", "write_file", {"path": "notes.md", "content": "x", "lines": [1, 2]}),
    ToolFinished("a", "c1", "write_file", False, 0.25, "refused: outside the workspace", 30),
    MemoryRetrieved(
        "b", "after_restart", "vault", [RetrievedMemory("m1", "the brass key", 0.9123, "a", "s1", 1)]
    ),
    MemoryRecorded("a", [RecordedMemory("m1", "general:general:0123456789abcdef", "the brass key", True)]),
    FinalAnswer("a", "Paris."),
    AgentUsage("a", SPENT),
    AgentUsage("a", Usage(40, 8), via="research/deeper"),
    CommandRan("a", "c2", "make test", "exited", 2, 1.25),
    CommandOutput("a", "c2", "make test", ("ok 1", "ok 2"), "ok 3 of", 2),
    SteeringMessage("Answer in one word, please."),
    RateLimitWait("b", "openai (api.openai.com)", "requests_per_minute", 41.25),
    BreakerChanged("a", "openai (api.openai.com)", "open", 5, "openai: server error 503"),
    HookDecided("before_tool", "check.py", "deny", "no rm here", "a", "execute_command", "c3", 0.05),
    SubagentStarted("a", "research", "Find the capital.", "ws/subagents/research/workspace", 1),
    SubagentFinished("a", "research", "completed", "Paris.", "", 1.5, 120, 30, None, "ws", "logs"),
    PlanMade("20261124_080256_888187", "state/plans/plan_1", ("C01", "C02"), ("C01 T1 [high] Find it",)),
    ChecklistJudged("b", ("E2",), ("E1",), refused=True),
    TurnEnded(1, "all agents voted", {"a": SPENT, "b": Usage(10, 2, cost_usd=None)}, "a", {"a": 2}),
]


def test_the_examples_cover_every_run_event_type():
    assert {type(event) for event in ONE_OF_EACH} == set(get_args(RunEvent))


@pytest.mark.parametrize("event", ONE_OF_EACH, ids=lambda event: type(event).__name__)
def test_every_run_event_reads_back_as_the_event_it_was_written_from(event: RunEvent):
    assert event_from_dict(event_to_dict(event)) == event
    as_logged = json.loads(json.dumps({"time": "20260101_120000_000000", **event_to_dict(event)}))
    assert event_from_dict(as_logged) == event, "through JSON, beside a log line's own keys"


def test_nested_types_are_read_back_as_their_types():
    turn = event_from_dict(json.loads(json.dumps(event_to_dict(ONE_OF_EACH[-1]))))
    retrieved = event_from_dict(event_to_dict(ONE_OF_EACH[7]))
    assert isinstance(turn, TurnEnded) and isinstance(turn.usage["a"], Usage)
    assert turn.usage["a"].describe() == SPENT.describe() and turn.usage["b"].cost_usd is None
    assert isinstance(retrieved, MemoryRetrieved) and isinstance(retrieved.memories[0], RetrievedMemory)


def test_a_field_an_older_line_lacks_takes_its_default_and_a_newer_ones_extra_key_is_left_out():
    older = {"type": "AgentUsage", "agent_id": "a", "usage": {"input_tokens": 5, "output_tokens": 1}}
    assert event_from_dict(older) == AgentUsage("a", Usage(5, 1))
    newer = {"type": "Notice", "level": "info", "message": "hi", "origin": "a later version"}
    assert event_from_dict(newer) == Notice("info", "hi")


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ({"type": "AgentMood", "agent_id": "a"}, "no run event is of type 'AgentMood'"),
        ({"agent_id": "a", "text": "x"}, "no run event is of type None"),
        ({"type": "FinalAnswer", "agent_id": "a"}, "FinalAnswer lacks text"),
        ({"type": "AgentStatus", "agent_id": "a", "status": "voted"}, "'voted' is not a"),
        ({"type": "Notice", "level": "loud", "message": "x"}, "'loud' is not a"),
        ({"type": "ToolFinished", **event_to_dict(ONE_OF_EACH[6]), "ok": "yes"}, "'yes' is not a"),
        ({"type": "AgentUsage", "agent_id": "a", "usage": [5, 1]}, "Usage is not an object"),
        ({"type": "MemoryRecorded", "agent_id": "a", "records": [{"memory_id": "m1"}]}, "lacks key, text"),
        (
            {"type": "CommandRan", "agent_id": "a", "call_id": "c", "command": "ls", "end": "gone"},
            "'gone' is not a",
        ),
    ],
)
def test_what_is_no_event_of_the_vocabulary_is_refused(data: dict[str, Any], said: str):
    with pytest.raises(ValueError) as refused:
        event_from_dict(data)
    assert said in str(refused.value)


def test_a_command_says_how_it_ended_in_one_line():
    said = [
        CommandRan("a", "c", "make test", "exited", 2).describe(),
        CommandRan("a", "c", "rm -rf /", "refused").describe(),
        CommandRan("a", "c", "sleep 99", "timed_out").describe(),
        CommandRan("a", "c", "echo one\necho two", "failed").describe(),
    ]
    assert said == [
        "$ make test → exit 2",
        "$ rm -rf / → refused",
        "$ sleep 99 → timed out",
        "$ echo one echo two → failed",
    ]
