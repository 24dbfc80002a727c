"""What a running turn keeps for a late watcher: every item in order with when it was said, and the text an
agent streams in a step joined as one item, bounded, in the place and time of its first piece."""

from __future__ import annotations

from massgen_cli.events import AgentStatus, AgentText, Notice
from massgen_cli.serve.kept_items import REPLAY_PRESENTATION_CHARS, REPLAY_STEP_CHARS, KeptItems


def test_a_step_s_pieces_are_one_item_in_the_place_of_the_first():
    kept: KeptItems[object] = KeptItems()
    kept.keep(AgentStatus("a", "working"), 1.0)
    kept.keep(AgentText("a", "Par"), 1.1)
    kept.keep(AgentStatus("b", "working"), 1.2)
    kept.keep(AgentText("b", "Lyon"), 1.3)
    kept.keep(AgentText("a", "is"), 1.4)
    kept.keep(AgentText("a", "thinking", "reasoning"), 1.5)
    kept.keep(AgentStatus("a", "answered", "Paris"), 1.6)
    kept.keep(AgentStatus("a", "working"), 1.7)
    kept.keep(AgentText("a", "again"), 1.8)
    assert kept.items == [
        AgentStatus("a", "working"),
        AgentText("a", "Paris"),
        AgentStatus("b", "working"),
        AgentText("b", "Lyon"),
        AgentText("a", "thinking", "reasoning"),
        AgentStatus("a", "answered", "Paris"),
        AgentStatus("a", "working"),
        AgentText("a", "again"),
    ]
    assert [kept.at[id(item)] for item in kept.items] == [1.0, 1.1, 1.2, 1.3, 1.5, 1.6, 1.7, 1.8]
    assert len(kept.at) == len(kept.items), "no time kept for a piece that was joined"


def test_a_long_stream_keeps_its_last_characters_and_the_final_answer_its_first():
    kept: KeptItems[object] = KeptItems()
    for number in range(10_000):
        kept.keep(AgentText("a", f"{number:05d} "), float(number))
        kept.keep(AgentText("a", "answer " * 5, "presentation"), float(number))
    kept.keep(Notice("info", "done"), 10_000.0)
    step, presentation, notice = kept.items
    assert isinstance(step, AgentText) and isinstance(presentation, AgentText)
    assert len(step.text) == REPLAY_STEP_CHARS and step.text.endswith("09999 ")
    assert len(presentation.text) == REPLAY_PRESENTATION_CHARS and presentation.text.startswith("answer")
    assert notice == Notice("info", "done") and kept.at[id(step)] == 0.0
