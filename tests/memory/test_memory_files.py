"""MassGen's filesystem memory mode in real turns of scripted agents: short-term files shown before every
step, long-term files listed and indexed (found by retrieval and by search, turn-aware), the files
carried over through the winner's workspace, hostile files refused, and the mode off changing nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from massgen_cli.config import load_config
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.visibility import Viewer
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from tests.conftest import run_cli, write_config
from tests.scripted import answer, scripted, vote

MODE = {"coordination": {"enable_memory_filesystem_mode": True}}
LONG_TERM = {"enabled": True, "persistent_memory": {"enabled": True, "session_name": "vault"}}


def note(name: str, description: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


def write(*files: tuple[str, str]) -> dict[str, Any]:
    """A reply that writes ``(path, text)`` files with the file tool."""
    calls = [{"tool": "write_file", "args": {"path": path, "content": text}} for path, text in files]
    return {"calls": calls}


def system_prompt(request: Any) -> str:
    return str(request.messages[0]["content"])


def retrieved(request: Any) -> str:
    texts = [str(message.get("content", "")) for message in request.messages]
    return "".join(text for text in texts if text.startswith("Relevant memories:"))


def visible(store: PersistentMemory, agent_id: str, turn: int, query: str) -> list[Any]:
    return store.search(query, limit=10, scope=SearchFilter(viewer=Viewer(agent_id, "vault", turn)))


PREFS = note("prefs", "what the user prefers", "The user wants every answer in metric units.")
VAULT_1 = note("vault", "how the vault opens", "The vault opens with the brass key.")
VAULT_2 = note("vault", "how the vault opens", "The vault opens with the brass key under the third stair.")


def test_a_short_term_file_written_in_turn_one_is_in_the_request_of_turn_two(in_process, tmp_path: Path):
    workspace = tmp_path / "ws"
    replies = [write(("memory/short_term/prefs.md", PREFS)), "Everest is 8849 m.", "K2 is 8611 m."]
    run = in_process(
        scripted({"solo": replies}, backends={"solo": {"cwd": str(workspace)}}, orchestrator=MODE),
        interactive=True,
    )
    run.app.ask("How tall is Everest?")
    run.app.ask("And K2?")
    first_turn, _, second_turn = run.requests("solo")
    before = system_prompt(first_turn)
    assert "## Memory files" in before and "### Your short-term memories\n(none yet)" in before
    assert "also indexed into long-term memory" not in before, "long-term memory is off"
    assert f"#### memory/short_term/prefs.md\n{PREFS.strip()}" in system_prompt(second_turn)
    assert (workspace / "memory" / "long_term").is_dir()


def crew(tmp_path: Path, replies: dict[str, list[Any]]) -> str:
    """Agents with workspaces ws_<id>, snapshots, the mode and long-term memory in session ``vault``."""
    return scripted(
        replies,
        backends={agent_id: {"cwd": str(tmp_path / f"ws_{agent_id}")} for agent_id in replies},
        orchestrator={"final_presentation": "reuse", "snapshot_storage": str(tmp_path / "snaps"), **MODE},
        memory=LONG_TERM,
    )


def file_dumps(run: Any, name: str, turn: int = 1, attempt: int = 1) -> list[str]:
    """The memory-debug dumps of an attempt that recorded the memory file ``name``, oldest first."""
    folder = run.app.run_log.directory / f"turn_{turn}" / f"attempt_{attempt}" / "memory_debug"
    texts = [json.dumps(json.loads(path.read_text())["messages"]) for path in sorted(folder.glob("*.json"))]
    return [text for text in texts if f"memory/{name}:" in text]


def test_memory_files_are_indexed_found_next_turn_and_carried_over_through_the_winner(
    in_process, tmp_path: Path
):
    first = in_process(
        crew(
            tmp_path,
            {
                "a": [
                    write(("memory/short_term/prefs.md", PREFS), ("memory/long_term/vault.md", VAULT_1)),
                    answer("The vault opens with the brass key."),
                    write(("memory/long_term/vault.md", VAULT_2)),
                    vote("agent1", "mine"),
                ],
                "b": [vote("agent1", "clear", delay=0.3)],
            },
        )
    )
    assert first.app.ask("How does the vault open?").winner == "a"
    b_first, *b_later = first.requests("b")
    assert "Your peers' memories" not in system_prompt(b_first)
    copy = tmp_path / "snaps_views" / "b" / "agent1" / "memory" / "short_term" / "prefs.md"
    assert any(f"##### {copy}" in system_prompt(request) for request in b_later), "a's as of its answer"
    vault_records = file_dumps(first, "long_term/vault.md")
    assert len(vault_records) == 2, "written, then rewritten with new content"
    assert "third stair" not in vault_records[0] and "third stair" in vault_records[1]
    assert len(file_dumps(first, "short_term/prefs.md")) == 1, "an unchanged file is not recorded again"
    store = first.app.run.provided("long-term memory").run.store
    assert store is not None
    assert any("third stair" in hit.text for hit in visible(store, "a", 1, "vault brass key stair"))
    assert not any("memory/long_term" in hit.text for hit in visible(store, "b", 1, "vault brass key stair"))
    first.app.close()
    for agent_id in ("a", "b"):  # merged into the winner's workspace, then given to every agent
        assert (tmp_path / f"ws_{agent_id}" / "memory" / "long_term" / "vault.md").read_text() == VAULT_2
        assert (tmp_path / f"ws_{agent_id}" / "memory" / "short_term" / "prefs.md").read_text() == PREFS

    replies = {"a": [answer("Still the brass key."), vote("agent1", "ok")]}
    second = in_process(crew(tmp_path, {**replies, "b": [vote("agent1", "ok", delay=0.3)]}))
    assert second.app.ask("How does the vault open now?").memory_errors == []
    b_prompt = second.requests("b")[0]
    assert f"#### memory/short_term/prefs.md\n{PREFS.strip()}" in system_prompt(b_prompt)
    assert "- memory/long_term/vault.md: how the vault opens" in system_prompt(b_prompt)
    assert "memory/long_term/vault.md:" in retrieved(b_prompt) and "third stair" in retrieved(b_prompt)
    store = second.app.run.provided("long-term memory").run.store
    assert store is not None
    hits = visible(store, "b", 2, "vault brass key stair")
    hit = next(h for h in hits if "third stair" in h.text and (h.source.agent_id, h.source.turn) == ("a", 1))
    origin = {**hit.memory.extra, **hit.source.extra}
    assert (origin["file"], origin["kind"]) == ("memory/long_term/vault.md", "long_term")
    assert file_dumps(second, "long_term/vault.md", turn=2) == [], "unchanged or carried over: not recorded"


def test_a_rejected_attempt_s_files_are_recorded_again_by_the_attempt_that_wins(in_process, tmp_path: Path):
    restart = {"tool": "restart_orchestration", "args": {"reason": "thin", "instructions": "say more"}}
    plan = note("plan", "the route", "Cross the ridge before noon.")
    replies = [write(("memory/long_term/plan.md", plan)), "Answer one.", restart, "Answer two."]
    settings = {"orchestrator": {"coordination": {**MODE["coordination"], "max_orchestration_restarts": 1}}}
    backends = {"solo": {"cwd": str(tmp_path / "ws")}}
    run = in_process(scripted({"solo": replies}, backends=backends, memory=LONG_TERM, **settings))
    result = run.app.ask("Which route?")
    assert (result.attempt, result.final_answer) == (2, "Answer two.")
    assert len(file_dumps(run, "long_term/plan.md", attempt=1)) == 1
    assert len(file_dumps(run, "long_term/plan.md", attempt=2)) == 1, "unchanged, yet recorded by attempt 2"
    store = run.app.run.provided("long-term memory").run.store
    assert store is not None
    hit = next(h for h in visible(store, "peer", 2, "route ridge noon") if "ridge" in h.text)
    assert (hit.source.agent_id, hit.source.attempt) == ("solo", 2)


MARKS = ("MARK-BIG", "MARK-OUTSIDE", "MARK-HARDLINK", "MARK-ELSEWHERE")


def hostile_workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    short_term = workspace / "memory" / "short_term"
    short_term.mkdir(parents=True)
    (short_term / "brief.md").write_text(note("brief", "style", "Keep replies short. MARK-OK"))
    (short_term / "long.md").write_text("MARK-LONG-START " + "notes " * 6_000 + "MARK-LONG-END")
    (short_term / "big.md").write_text("MARK-BIG " * 8_000)
    (tmp_path / "outside.md").write_text("MARK-OUTSIDE")
    (short_term / "link.md").symlink_to(tmp_path / "outside.md")
    (tmp_path / "outside2.md").write_text("MARK-HARDLINK")
    os.link(tmp_path / "outside2.md", short_term / "hard.md")
    os.mkfifo(short_term / "pipe.md")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "secret.md").write_text("MARK-ELSEWHERE")
    (workspace / "memory" / "long_term").symlink_to(tmp_path / "elsewhere")
    return workspace


def test_links_special_and_oversized_memory_files_are_neither_shown_nor_indexed_and_the_cut_is_said(
    in_process, tmp_path: Path
):
    workspace = hostile_workspace(tmp_path)
    backends = {"solo": {"cwd": str(workspace)}}
    run = in_process(scripted({"solo": ["Done."]}, backends=backends, orchestrator=MODE, memory=LONG_TERM))
    assert run.app.ask("Anything?").final_answer == "Done."
    prompt = system_prompt(run.requests("solo")[0])
    assert "Keep replies short. MARK-OK" in prompt
    assert not [mark for mark in MARKS if mark in prompt]
    assert "MARK-LONG-START" in prompt and "MARK-LONG-END" not in prompt
    cut = "[Cut: short-term memories are shown up to their byte limit; not shown: memory/short_term/long.md ("
    assert cut in prompt
    for reason in (
        "memory/short_term/big.md: over 64,000 bytes",
        "memory/short_term/link.md: a symbolic link",
        "memory/short_term/hard.md: a file with other hard links",
        "memory/short_term/pipe.md: a named pipe (FIFO), not a regular file",
        "memory/long_term: not a folder (a symbolic link or a file)",
    ):
        assert reason in prompt
    store = run.app.run.provided("long-term memory").run.store
    assert store is not None
    texts = [hit.text for hit in store.search("MARK OK BIG OUTSIDE HARDLINK ELSEWHERE", limit=50)]
    assert any("MARK-OK" in text for text in texts), "the usable file was indexed"
    assert not [mark for mark in MARKS if any(mark in text for text in texts)]
    assert "memory file not used: memory/short_term/link.md" in run.err.getvalue()


def test_carrying_memory_files_over_never_writes_through_a_link(in_process, tmp_path: Path):
    victim = tmp_path / "victim.md"
    victim.write_text("untouched")
    planted = tmp_path / "ws_b" / "memory" / "short_term"
    planted.mkdir(parents=True)
    (planted / "prefs.md").symlink_to(victim)
    run = in_process(
        crew(
            tmp_path,
            {
                "a": [write(("memory/short_term/prefs.md", PREFS)), answer("A"), vote("agent1", "mine")],
                "b": [vote("agent1", "fine", delay=0.3)],
            },
        )
    )
    result = run.app.ask("Q?")
    assert result.winner == "a"
    assert victim.read_text() == "untouched"
    assert (planted / "prefs.md").is_symlink()
    assert any(
        "memory/short_term/prefs.md was not carried over to the workspace of b" in error
        for error in result.memory_errors
    )


def test_the_mode_off_changes_nothing(in_process, tmp_path: Path):
    workspace = tmp_path / "ws"
    (workspace / "memory" / "short_term").mkdir(parents=True)
    (workspace / "memory" / "short_term" / "prefs.md").write_text(PREFS)

    def prompt(orchestrator: dict[str, Any]) -> str:
        backends = {"solo": {"cwd": str(workspace)}}
        run = in_process(scripted({"solo": ["Fine."]}, backends=backends, orchestrator=orchestrator))
        run.app.ask("Q?")
        return system_prompt(run.requests("solo")[0])

    on = prompt(MODE)
    assert "The user wants every answer in metric units." in on
    off = prompt({})
    assert on.startswith(off + "\n\n## Memory files") and "metric units" not in off
    assert prompt({"coordination": {"enable_memory_filesystem_mode": False}}) == off


MASSGEN_MEMORY_CONFIG = """
# The shape of MassGen 0.1.97's configs/skills/skills_with_memory.yaml
agents:
  - id: agent_a
    backend: {type: openai, model: gpt-5-mini, cwd: workspace1, enable_mcp_command_line: true,
              command_line_execution_mode: docker}
  - id: agent_b
    backend: {type: openai, model: gpt-5-nano, cwd: workspace2, enable_mcp_command_line: true,
              command_line_execution_mode: docker}
orchestrator:
  snapshot_storage: snapshots
  agent_temporary_workspace: temp_workspaces
  coordination:
    enable_agent_task_planning: true
    task_planning_filesystem_mode: true
    max_tasks_per_plan: 10
    enable_memory_filesystem_mode: true
"""


def test_massgen_s_memory_config_validates_without_a_warning_of_its_memory(tmp_path: Path, monkeypatch):
    """Its memory and planning keys are implemented: the only warnings are docker mode's (the commands run
    in the OS sandbox), and with a key to start with it is valid."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-only")
    path = write_config(tmp_path, MASSGEN_MEMORY_CONFIG)
    checked = run_cli("--validate", str(path))
    assert checked.returncode == 0, checked.stderr
    said = checked.stdout + checked.stderr
    assert "is valid (0 error(s), 2 warning(s))" in said
    assert said.count("no container engine is driven here") == 2
    loaded = load_config(path)
    assert loaded.config.orchestrator.coordination.enable_memory_filesystem_mode is True
    assert not [line for line in loaded.warnings if "enable_memory_filesystem_mode" in line]
