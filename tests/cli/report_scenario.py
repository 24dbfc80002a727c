"""A realistic scripted session for the logs and report tests (and the README's screenshot): three agents
over two turns, with a file tool, streams cut off by new answers (restarts), votes, a final
presentation, and long-term memory on (the offline embedder), so turn 2 retrieves what turn 1's winner
said. One answer carries hostile text (``</script>``, HTML) that every view must show as text."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write_config
from tests.scripted import answer, scripted, vote

HOSTILE = "</script><script>alert(1)</script><b>bold</b>"
TURN_ONE_WINNER_TEXT = "The vault opens with the brass key kept under the mat."
QUESTIONS = ("How does the vault open?", "And how does it open now?")

SESSION = scripted(
    {
        "analyst": [
            {"calls": [{"tool": "write_file", "args": {"path": "notes.md", "content": "The brass key.\n"}}]},
            answer(f"The vault opens with the brass key under the mat {HOSTILE}.", delay=0.05),
            vote("agent1", "mine cites the notes", delay=1.5),  # cut off by the critic's answer
            vote("agent1", "still the clearest"),
            TURN_ONE_WINNER_TEXT,
            answer("Turn two: the brass key, as recorded last time.", delay=0.05),
            vote("agent1", "it uses what we found in turn one"),
            "The brass key opens the vault, as found in turn one.",
        ],
        "critic": [
            answer("A silver key, perhaps.", delay=2.0),  # cut off by the analyst's answer
            answer("The brass key under the mat, per the analyst's notes.", delay=0.15),
            vote("agent1", "the analyst checked the notes"),
            vote("agent1", "consistent with turn one", delay=0.2),
        ],
        "scout": [
            vote("agent1", "first look", delay=2.0),  # cut off by the analyst's answer
            vote("agent1", "clearest so far", delay=1.5),  # cut off by the critic's answer
            vote("agent1", "clearest"),
            vote("agent1", "matches the memory", delay=0.3),
        ],
    },
    backends={"analyst": {"cwd": "ws_analyst"}},
    orchestrator={"final_presentation": "present"},
    memory={"enabled": True, "persistent_memory": {"enabled": True}},
)


def session_config(directory: Path) -> Path:
    return write_config(directory, SESSION, name="vault.yaml")
