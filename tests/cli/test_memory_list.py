"""`massgen memory list`: `--session` keeps one session's memories; the stubs left of tool results a
compression cut (first line and a note) are hidden unless `--stubs` or `--all`, and their count is said."""

from __future__ import annotations

import json
from pathlib import Path

from massgen_cli.config.memory import RecordingConfig
from massgen_cli.memory.context.compression import shorten_tool_results
from massgen_cli.memory.context.monitor import ContextMonitor
from massgen_cli.memory.longterm.record.rules import messages_to_record
from massgen_cli.messages import Message
from tests.cli.in_process_cli import massgen
from tests.cli.test_memory_commands import CONFIG
from tests.conftest import write_config


def recorded_with_a_cut_tool_result() -> list[str]:
    """What recording keeps of a conversation whose bulky command result a compression cut: the
    question, the call, the stub of its result and the answer (made by the real compression and rules)."""
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "execute_command", "arguments": '{"command": "ls"}'},
    }
    messages: list[Message] = [
        {"role": "user", "content": "Which files are in the harbour folder?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {
            "role": "tool",
            "tool_call_id": "c1",
            "name": "execute_command",
            "content": "exit code: 0\n" + "ferry.txt\n" * 400,
        },
        {"role": "assistant", "content": "The harbour folder holds ferry timetables."},
    ]
    monitor = ContextMonitor(None, 10_000, trigger_threshold=0.75, target_ratio=0.4)
    shortened, cut = shorten_tool_results(messages, monitor, target_tokens=100)
    assert len(cut) == 1
    records = messages_to_record(shortened, RecordingConfig(record_all_tool_calls=True))
    return [record["content"] for record in records]


def test_list_keeps_one_session_and_hides_removed_result_stubs_unless_asked(tmp_path: Path):
    config = str(write_config(tmp_path, CONFIG))
    texts = recorded_with_a_cut_tool_result()
    stub = next(text for text in texts if text.startswith("[Tool result] execute_command: exit code: 0\n"))
    lines = [{"content": text, "session_id": "harbour"} for text in texts]
    lines.append({"content": "The lighthouse opens at nine.", "session_id": "lighthouse"})
    data = tmp_path / "records.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines))
    imported = massgen("memory", "import", str(data), "--config", config)
    assert imported.exit_code == 0, imported.stderr

    def listed(*args: str) -> tuple[list[str], str]:
        result = massgen("memory", "list", "--config", config, "--json", *args)
        assert result.exit_code == 0, result.stderr
        return [json.loads(line)["text"] for line in result.stdout.splitlines()], result.stderr

    everything, said = listed("--session", "harbour", "--stubs")
    assert sorted(everything) == sorted(texts) and stub in everything
    assert "not shown" not in said
    assert sorted(listed("--session", "harbour", "--all")[0]) == sorted(texts)

    shown, said = listed("--session", "harbour")
    assert sorted(shown) == sorted(text for text in texts if text != stub)
    assert "1 stub(s) of removed tool results not shown; --stubs shows them" in said

    assert listed("--session", "lighthouse")[0] == ["The lighthouse opens at nine."]
    assert len(listed()[0]) == len(texts)  # every session, the stub still hidden
    plain = massgen("memory", "list", "--config", config, "--session", "lighthouse")
    assert plain.stdout.count("\n") == 1 and "[user · lighthouse · turn 0]" in plain.stdout
    nothing = massgen("memory", "list", "--config", config, "--session", "nowhere")
    assert nothing.stdout == "" and "no memories of session nowhere stored" in nothing.stderr


def test_list_shows_the_learned_values_memory_values_shows_and_the_user_s_questions_as_the_user_s():
    for question in ("What is the bridge code?", "And the bridge code again?"):
        assert massgen("--config", "@examples/scripted_values", "-q", question).exit_code == 0
    ranked = massgen("memory", "values", "--config", "@examples/scripted_values", "--json")
    learned = {record["text"]: record["value"] for record in map(json.loads, ranked.stdout.splitlines())}
    assert learned and any(value != 0.5 for value in learned.values()), "values were learned"
    for listing in (("--config", "@examples/scripted_values"), ()):  # with the run's config, or none
        result = massgen("memory", "list", "--json", *listing)
        assert result.exit_code == 0, result.stderr
        listed = {record["text"]: record for record in map(json.loads, result.stdout.splitlines())}
        assert {text: listed[text]["value"] for text in learned} == learned
        question = listed["What is the bridge code?"]
        assert (question["role"], question["speaker"]) == ("user", "user")
        assert listed["The bridge code is 1234, from the harbour log."]["speaker"] == "agent_a"
    plain = massgen("memory", "list").stdout
    value = f"{learned['What is the bridge code?']:.3f}"
    assert f"value={value}  [user · bridge_demo · turn 1]  What is the bridge code?" in plain
