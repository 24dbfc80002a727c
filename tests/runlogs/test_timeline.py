"""The report's timeline places a lane's marks so none overlaps another and none is cut off at the
drawing's right edge, even when the events come close together at the lane's end (a vote, the final
answer and the agent's end within a few milliseconds)."""

from __future__ import annotations

import itertools

from massgen_cli.events import VoteCast
from massgen_cli.runlogs.marks import Mark
from massgen_cli.runlogs.timeline import MARK_SPACING, WIDTH, Scale, placed


def test_marks_close_together_at_a_lanes_end_neither_overlap_nor_leave_the_drawing():
    scale = Scale(10.0)
    marks = [
        Mark("answer", 2.0, "new answer"),
        Mark("vote", 9.990, "vote", vote=VoteCast("alpha", "beta", "shorter")),
        Mark("final", 9.995, "final answer"),
        Mark("done", 9.999, "done"),
        Mark("tool", 9.999, "a tool call", until=10.0),
    ]
    row = placed(marks, scale)
    assert [mark.kind for mark, _, _ in row] == ["answer", "vote", "final", "done", "tool"], "in time order"
    assert row[0][1] == scale.x(2.0), "a mark with room stays at its time"
    spans = [(x, x + width + 6 * len("→ beta" if mark.kind == "vote" else "")) for mark, x, width in row]
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert start - end >= MARK_SPACING, spans
    assert spans[-1][1] <= WIDTH - MARK_SPACING, "the last one is inside the drawing"
    assert all(x >= scale.x(2.0) for x, _ in spans)
