"""``status.json`` follows a run as its events come: each change of state is on disk at once, whole (a
reader never sees half a file), in MassGen's field names; the run's end completes it."""

from __future__ import annotations

import json
from pathlib import Path

from massgen_cli.events import AgentStatus, AgentText, AgentUsage, FinalAnswer, TurnEnded, Usage, VoteCast
from massgen_cli.runlogs.status import StatusFile


def read(path: Path) -> dict:  # type: ignore[type-arg]
    return json.loads(path.read_text())


def test_each_change_is_on_disk_as_it_happens_and_the_end_completes_it(tmp_path: Path):
    path = tmp_path / "log_1" / "status.json"
    failures: list[str] = []
    status = StatusFile(path, ["a", "b"], {"question": "Q?", "session_id": "s"}, failures.append)
    start = read(path)
    assert start["finish_reason"] == "in_progress" and start["is_complete"] is False
    assert start["coordination"]["phase"] == "initial_answer"
    assert {agent["status"] for agent in start["agents"].values()} == {"waiting"}

    status(AgentStatus("a", "working"))
    assert read(path)["agents"]["a"]["status"] == "streaming"
    status(AgentStatus("a", "answered", "Paris."))
    status(AgentUsage("a", Usage(100, 20, cost_usd=0.002)))
    status(VoteCast("b", "a", "the only answer"))
    voting = read(path)
    assert voting["coordination"]["phase"] == "enforcement"
    assert voting["agents"]["a"] | {"token_usage": None} == {
        "status": "answered",
        "answer_count": 1,
        "latest_answer": "Paris.",
        "vote_cast": None,
        "times_restarted": 0,
        "error": None,
        "token_usage": None,
    }
    assert voting["agents"]["a"]["token_usage"]["estimated_cost"] == 0.002
    assert voting["agents"]["b"]["vote_cast"] == {"voted_for_agent": "a", "reason_preview": "the only answer"}
    assert voting["costs"] == {
        "total_estimated_cost": 0.002,
        "total_input_tokens": 100,
        "total_output_tokens": 20,
    }

    status(AgentStatus("b", "answered", "Paris, France."))
    assert read(path)["agents"]["b"]["vote_cast"] is None, "a new answer clears the votes cast before it"
    status(AgentStatus("a", "restarted"))
    status(AgentText("a", "Par", "presentation"))
    presenting = read(path)
    assert presenting["coordination"] == {"phase": "presentation", "is_final_presentation": True}
    assert presenting["agents"]["a"]["times_restarted"] == 1

    status(FinalAnswer("a", "Paris is the capital."))
    status(TurnEnded(1, "all agents voted", {}, "a", {"a": 2}))
    status.finish("completed", None, 0)
    done = read(path)
    assert done["is_complete"] is True and done["exit_code"] == 0
    assert done["finish_reason"] == "completed" and done["finish_reason_details"] == "all agents voted"
    assert done["results"] == {
        "votes": {"a": 2},
        "winner": "a",
        "final_answer": "Paris is the capital.",
        "final_answer_preview": "Paris is the capital.",
    }
    assert done["meta"]["question"] == "Q?" and done["meta"]["elapsed_seconds"] >= 0
    assert [p.name for p in path.parent.iterdir()] == ["status.json"], "no temporary file is left"
    assert failures == []


def test_streamed_text_does_not_rewrite_the_file(tmp_path: Path):
    path = tmp_path / "status.json"
    status = StatusFile(path, ["a"], {}, [].append)
    status(AgentText("a", "Hel", "presentation"))
    written = path.stat().st_mtime_ns, path.stat().st_ino
    for piece in ("lo", " the", "re"):
        status(AgentText("a", piece, "presentation"))
        status(AgentText("a", piece, "content"))
    assert (path.stat().st_mtime_ns, path.stat().st_ino) == written


def test_a_failed_agent_has_its_error_and_a_disk_that_refuses_is_said_once(tmp_path: Path):
    path = tmp_path / "log" / "status.json"
    failures: list[str] = []
    status = StatusFile(path, ["a"], {}, failures.append)
    status(AgentStatus("a", "failed", "429 rate limited"))
    assert read(path)["agents"]["a"]["error"] == {"type": "error", "message": "429 rate limited"}
    path.unlink()
    path.parent.rmdir()
    path.parent.write_text("a file where the log folder was")  # refused whoever runs the test, root too
    status(AgentStatus("a", "working"))
    status(AgentStatus("a", "answered", "x"))
    status.finish("completed", None, 0)
    assert len(failures) == 1 and f"the status file {path} stopped" in failures[0]
