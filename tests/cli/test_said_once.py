"""What the console says about a turn is said once, in order, and true: a timeout, a turn without an
answer, a cancelled turn, the context lines (before the turn's end) and a compression's target."""

from __future__ import annotations

import re

from tests.conftest import run_cli, write_config


def test_an_orchestrator_timeout_without_answers_is_said_once_and_claims_no_answer(tmp_path):
    slow = "{type: scripted, responses: [{text: thinking, delay: 60}]}"
    config = write_config(
        tmp_path,
        f"""
        agents:
          - {{id: a, backend: {slow}}}
          - {{id: b, backend: {slow}}}
        timeout_settings: {{orchestrator_timeout_seconds: 1}}
        """,
    )
    result = run_cli("--config", str(config), "Q?")
    assert result.returncode == 1
    assert result.stderr.count("orchestrator timeout (1s) reached") == 1, result.stderr
    assert "best available answer" not in result.stderr, "there was none"
    assert "error: no answer in turn 1" in result.stderr
    quiet = run_cli("--config", str(config), "-q", "Q?")
    assert quiet.returncode == 1
    assert quiet.stderr.strip().endswith("error: no answer: orchestrator timeout (1s) reached"), quiet.stderr


def test_an_agent_timing_out_among_agreeing_agents_is_said_once(tmp_path):
    config = write_config(
        tmp_path,
        """
        agents:
          - {id: quick, backend: {type: scripted, responses: ["Paris."]}}
          - {id: stuck, backend: {type: scripted, responses: [{text: late, delay: 60}]}}
        orchestrator: {decide_by: agreement, step_timeout_seconds: 1}
        """,
    )
    result = run_cli("--config", str(config), "Q?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Paris.\n"
    assert result.stderr.count("timed out after 1s") == 1, result.stderr


def test_the_context_line_comes_before_the_end_of_the_turn(tmp_path):
    # Between half the trigger and the trigger by its bytes, the request is counted exactly in a thread
    # while the model works; the scripted answer is back long before the count.
    config = write_config(
        tmp_path, "agent: {id: solo, context_window: 1000, backend: {type: scripted, responses: [Fine.]}}\n"
    )
    result = run_cli("--config", str(config), "--debug", "Tell me about this: " + "word " * 90)
    assert result.returncode == 0, result.stderr
    context = result.stderr.index("📊 [solo] Context Window (Turn 1): 10")
    assert context < result.stderr.index("Turn 1 ended"), result.stderr


def test_a_provider_overflow_compresses_below_what_was_sent(tmp_path):
    config = write_config(
        tmp_path,
        "agent: {id: solo, backend: {type: scripted, responses: [{error: context_length}, Fits.]}}\n",
    )
    result = run_cli("--config", str(config), "What is the capital of France, in one word?")
    assert result.returncode == 0 and result.stdout == "Fits.\n", result.stderr
    sent, target = map(
        int, re.search(r"Attempting compression \((\d+) → (\d+) tokens\)", result.stderr).groups()
    )
    assert 0 < target < sent, result.stderr
