"""`massgen batch`: questions from JSONL answered several at once against a real OpenAI-compatible server
on 127.0.0.1, one result line per question as it finishes; failures recorded, resume, Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli, wait_until, write_config
from tests.servers.paced import paced_server


@pytest.fixture
def server():  # type: ignore[no-untyped-def]
    with paced_server.PacedServer(latency_s=0.3, tokens_per_s=200, tokens=10) as running:
        yield running


def one_agent(url: str) -> str:
    backend = f'{{type: openai, model: gpt-4o, api_key: sk-test-batch, base_url: "{url}"}}'
    return f"agent: {{id: solo, backend: {backend}}}\n"


def write_questions(folder: Path, count: int, extra: str = "") -> Path:
    path = folder / "questions.jsonl"
    lines = [json.dumps({"id": f"q{n}", "question": f"What is {n} + {n}?"}) for n in range(1, count + 1)]
    path.write_text("\n".join(lines) + "\n" + extra)
    return path


def results(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in path.read_text().splitlines()]


def most_at_once(served: list) -> int:  # type: ignore[type-arg]
    edges = sorted([(s.arrived, 1) for s in served] + [(s.ended, -1) for s in served])
    level = peak = 0
    for _, step in edges:
        level += step
        peak = max(peak, level)
    return peak


def test_questions_run_at_most_n_at_once_and_each_gets_one_line(tmp_path: Path, server):
    write_config(tmp_path, one_agent(server.base_url))
    questions = write_questions(tmp_path, 6)
    run = run_cli("batch", str(questions), "-c", "config.yaml", "--out", "out.jsonl", "--concurrency", "3")
    assert run.returncode == 0, run.stderr
    lines = results(tmp_path / "out.jsonl")
    assert sorted(line["id"] for line in lines) == [f"q{n}" for n in range(1, 7)]
    for line in lines:
        assert line["final_answer"] == "The answer is 42." and line["error"] is None
        assert line["winner"] == "solo" and line["tokens"] == 110 and line["cost"] > 0
        assert Path(line["log_folder"], "turn_1", "attempt_1", "summary.json").is_file()
    assert most_at_once([s for s in server.served if s.ended]) == 3
    assert "6 answered, 0 failed" in run.stderr


def test_a_failing_question_is_recorded_and_resume_skips_what_was_answered(tmp_path: Path, server):
    write_config(tmp_path, one_agent(server.base_url))
    questions = write_questions(tmp_path, 2, extra='{"id": "broken"}\nnot json\n')
    first = run_cli("batch", str(questions), "-c", "config.yaml", "--out", "out.jsonl")
    assert first.returncode == 1, first.stderr
    lines = {line["id"]: line for line in results(tmp_path / "out.jsonl")}
    assert set(lines) == {"q1", "q2", "broken", "line-4"}
    assert "question" in lines["broken"]["error"] and lines["line-4"]["error"].startswith("line 4")
    again = run_cli("batch", str(questions), "-c", "config.yaml", "--out", "out.jsonl")
    assert again.returncode == 2 and "--resume" in again.stderr, "an output with results is never overwritten"
    asked = len(server.served)
    resumed = run_cli("batch", str(questions), "-c", "config.yaml", "--out", "out.jsonl", "--resume")
    assert "2 question(s) already answered in out.jsonl; 2 failed" in resumed.stderr, resumed.stderr
    assert resumed.returncode == 1, "the broken lines are still broken"
    assert len(server.served) == asked, "no answered question is asked again"
    assert sorted(line["id"] for line in results(tmp_path / "out.jsonl")) == ["broken", "line-4", "q1", "q2"]


def test_resume_asks_the_failed_questions_again(tmp_path: Path, server):
    write_config(tmp_path, one_agent(server.base_url))
    questions = write_questions(tmp_path, 2)
    out = tmp_path / "out.jsonl"
    assert run_cli("batch", str(questions), "-c", "config.yaml", "--out", str(out)).returncode == 0
    questions = write_questions(tmp_path, 4)  # two more, asked while the server cannot be reached
    write_config(
        tmp_path, one_agent("http://127.0.0.1:9/v1").replace("}}", ", max_retries: 0}}"), "down.yaml"
    )
    down = run_cli("batch", str(questions), "-c", "down.yaml", "--out", str(out), "--resume")
    assert down.returncode == 1, down.stderr
    failed = {line["id"] for line in results(out) if line["error"]}
    assert failed == {"q3", "q4"}
    asked = len(server.served)
    resumed = run_cli("batch", str(questions), "-c", "config.yaml", "--out", str(out), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "2 question(s) already answered" in resumed.stderr and "2 failed" in resumed.stderr
    assert len(server.served) == asked + 2, "only the failed questions are asked again"
    lines = results(out)
    assert sorted(line["id"] for line in lines) == ["q1", "q2", "q3", "q4"], "each id keeps one line"
    assert all(line["error"] is None and line["final_answer"] == "The answer is 42." for line in lines)


def test_ctrl_c_leaves_a_file_that_resume_completes_with_each_id_once(tmp_path: Path):
    with paced_server.PacedServer(latency_s=1.0, tokens_per_s=200, tokens=10) as slow:
        write_config(tmp_path, one_agent(slow.base_url))
        questions = write_questions(tmp_path, 6)
        out = tmp_path / "out.jsonl"
        command = [sys.executable, "-m", "massgen_cli", "batch", str(questions), "-c", "config.yaml"]
        batch = subprocess.Popen(
            [*command, "--out", str(out), "--concurrency", "2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ),
        )
        try:
            wait_until(lambda: out.is_file() and len(out.read_text().splitlines()) >= 2)
            wait_until(lambda: sum(not s.ended for s in slow.served) >= 1)  # a question is running
            batch.send_signal(signal.SIGINT)
            _, stderr = batch.communicate(timeout=60)
        finally:
            if batch.poll() is None:
                batch.kill()
        assert batch.returncode == 130, stderr
        assert "add --resume to go on" in stderr
        kept = results(out)
        assert 2 <= len(kept) < 6 and all(line["error"] is None for line in kept)
        resumed = run_cli("batch", str(questions), "-c", "config.yaml", "--out", str(out), "--resume")
        assert resumed.returncode == 0, resumed.stderr
    ids = [line["id"] for line in results(out)]
    assert sorted(ids) == [f"q{n}" for n in range(1, 7)], "each id answered exactly once"


def test_a_shared_session_takes_the_questions_as_its_turns(tmp_path: Path, server):
    write_config(tmp_path, one_agent(server.base_url))
    questions = write_questions(tmp_path, 3)
    run = run_cli(
        "batch",
        str(questions),
        "-c",
        "config.yaml",
        "--out",
        "out.jsonl",
        "--shared-session",
        "all",
        "--concurrency",
        "3",
    )
    assert run.returncode == 0, run.stderr
    record = json.loads((Path(os.environ["MASSGEN_HOME"]) / "sessions" / "all" / "session.json").read_text())
    assert [exchange["turn"] for exchange in record["exchanges"]] == [1, 2, 3]
    assert most_at_once([s for s in server.served if s.ended]) == 1


def priced_agent(url: str) -> str:
    """One agent whose each call costs a dollar (the server reports 100 input tokens a reply)."""
    pricing = "pricing: {input_per_million: 10000, output_per_million: 0}"
    backend = f'{{type: openai, model: gpt-4o, api_key: sk-test-batch, base_url: "{url}", {pricing}}}'
    return f"agent: {{id: solo, backend: {backend}}}\n"


def test_max_cost_caps_the_whole_batch_and_resume_asks_the_rest(tmp_path: Path, server):
    """Six one-dollar questions, two at a time, under $2.50: the first two start at once; after them a
    third would take the batch past its cap at a dollar a question, so it is not asked, and neither are
    the rest. --resume with more room asks them."""
    write_config(tmp_path, priced_agent(server.base_url))
    questions = write_questions(tmp_path, 6)
    capped = run_cli(
        "batch", str(questions), "-c", "config.yaml", "--out", "out.jsonl",
        "--concurrency", "2", "--max-cost", "2.5",
    )  # fmt: skip
    assert capped.returncode == 1, capped.stderr
    lines = results(tmp_path / "out.jsonl")
    assert len(lines) == 2 and all(line["error"] is None for line in lines)
    assert sum(line["cost"] for line in lines) == pytest.approx(2.0)
    assert len(server.served) == 2, "no call beyond the two questions asked"
    assert "spending cap reached: $2.00 of $2.50; 4 question(s) not asked" in capped.stderr
    resumed = run_cli(
        "batch", str(questions), "-c", "config.yaml", "--out", "out.jsonl",
        "--concurrency", "2", "--max-cost", "100", "--resume",
    )  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(line["id"] for line in results(tmp_path / "out.jsonl")) == [f"q{n}" for n in range(1, 7)]


def test_max_cost_of_a_batch_is_refused_with_ray(tmp_path: Path, server):
    write_config(tmp_path, priced_agent(server.base_url))
    questions = write_questions(tmp_path, 1)
    run = run_cli(
        "batch", str(questions), "-c", "config.yaml", "--out", "o.jsonl", "--ray", "--max-cost", "1"
    )
    assert run.returncode == 2 and "--max-cost caps a batch answered in this process" in run.stderr
