"""An attempt's timeline as inline SVG: a time axis, one lane per agent with its steps as bars (the
streaming part shaded, a step cut off by a restart hatched), decisions above the bars (answers, votes
with their targets, restarts with a line from the answer that caused them, the final answer), and tool
calls, memory and compressions below.

Every drawn item is a focusable group with a ``<title>`` (its hover text) and ``data-detail``, the id of
the section that holds its whole content (see ``report``). All text is escaped here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from html import escape

from massgen_cli.runlogs.marks import Lane, Mark, Step
from massgen_cli.runlogs.story import AttemptStory
from massgen_cli.text import one_line

WIDTH = 1000
LABEL_WIDTH = 118
RIGHT_MARGIN = 70
AXIS_HEIGHT = 24
LANE_HEIGHT = 58
DECISION_Y, BAR_Y, BAR_HEIGHT, LOWER_Y = 11, 21, 16, 47
MARK_SPACING = 12
HOVER_CHARS = 400
DECISIONS = ("answer", "vote", "restart", "final", "done", "failed")
LOWER = ("tool", "recall", "record", "compression", "hook", "subagent")

DetailId = Callable[[str, str, tuple[tuple[str, str], ...]], str]
"""Files an item's (kind, title, details) for the page and gives the id of its section."""


def timeline_svg(story: AttemptStory, detail_id: DetailId) -> str:
    """The attempt's timeline; ``detail_id`` files each item's content and names where it went."""
    scale = Scale(max(story.duration, 1e-3))
    height = AXIS_HEIGHT + LANE_HEIGHT * max(len(story.lanes), 1) + 4
    rows = [line for index, lane in enumerate(story.lanes) for line in _lane(lane, index, scale, detail_id)]
    causes = list(_cause_lines(story, scale))
    return "\n".join(
        [
            f'<svg class="timeline" viewBox="0 0 {WIDTH} {height}" width="100%" role="img" '
            f'aria-label="timeline of turn {story.record.turn}, attempt {story.record.attempt}">',
            _patterns(),
            *_axis(scale, height),
            *rows,
            *causes,
            "</svg>",
        ]
    )


class Scale:
    def __init__(self, duration: float):
        self.duration = duration
        self.plot = WIDTH - LABEL_WIDTH - RIGHT_MARGIN

    def x(self, seconds: float) -> float:
        return round(LABEL_WIDTH + max(seconds, 0.0) / self.duration * self.plot, 1)


def _patterns() -> str:
    return (
        '<defs><pattern id="cut" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><rect width="3" height="6" class="cut-stripe"/></pattern></defs>'
    )


def _axis(scale: Scale, height: int) -> Iterator[str]:
    step = _tick_step(scale.duration)
    for index in range(int(scale.duration / step) + 1):
        seconds = index * step
        x = scale.x(seconds)
        yield f'<line class="grid" x1="{x}" y1="{AXIS_HEIGHT - 4}" x2="{x}" y2="{height}"/>'
        yield f'<text class="tick" x="{x}" y="{AXIS_HEIGHT - 8}">{_seconds(seconds, step)}</text>'


def _tick_step(duration: float) -> float:
    """A round step that gives about eight ticks."""
    raw = duration / 8
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _seconds(value: float, step: float) -> str:
    decimals = max(0, -math.floor(math.log10(step))) if step < 1 else 0
    return f"{value:.{decimals}f}s"


def _lane(lane: Lane, index: int, scale: Scale, detail_id: DetailId) -> Iterator[str]:
    top = AXIS_HEIGHT + index * LANE_HEIGHT
    agent = escape(lane.agent_id)
    yield f'<g class="lane" data-agent="{agent}" transform="translate(0,{top})">'
    yield f'<rect class="lane-bg lane-{index % 2}" x="0" y="0" width="{WIDTH}" height="{LANE_HEIGHT}"/>'
    yield f'<text class="lane-label" x="8" y="{BAR_Y + 12}">{escape(one_line(lane.agent_id, 16))}</text>'
    for step in lane.steps:
        yield _step(lane, step, scale, detail_id)
    yield from _marks([m for m in lane.marks if m.kind in DECISIONS], DECISION_Y, scale, detail_id)
    yield from _marks([m for m in lane.marks if m.kind in LOWER], LOWER_Y, scale, detail_id)
    yield "</g>"


def _step(lane: Lane, step: Step, scale: Scale, detail_id: DetailId) -> str:
    x1, x2 = scale.x(step.start), max(scale.x(step.end), scale.x(step.start) + 2)
    title = _step_title(lane, step)
    details = _step_details(step)
    ident = detail_id("step", title, details)
    cut = " cut" if step.ended_by else ""
    parts = [f'<rect class="bar" x="{x1}" y="{BAR_Y}" width="{round(x2 - x1, 1)}" height="{BAR_HEIGHT}"/>']
    if step.streamed_from is not None:
        xs = scale.x(step.streamed_from)
        parts.append(
            f'<rect class="stream" x="{xs}" y="{BAR_Y}" width="{round(max(x2 - xs, 1), 1)}" '
            f'height="{BAR_HEIGHT}"/>'
        )
    if step.ended_by:
        parts.append(
            f'<rect class="cut-fill" x="{x1}" y="{BAR_Y}" width="{round(x2 - x1, 1)}" height="{BAR_HEIGHT}"/>'
        )
    label = _purpose_label(step.purpose)
    if x2 - x1 > 7 * len(label) + 6:
        parts.append(f'<text class="bar-label" x="{x1 + 4}" y="{BAR_Y + 12}">{escape(label)}</text>')
    return _item(f"step purpose-{escape(step.purpose)}{cut}", ident, title, "".join(parts))


def _purpose_label(purpose: str) -> str:
    return {"final_answer": "final presentation", "post_evaluation": "post-evaluation"}.get(purpose, purpose)


def _step_title(lane: Lane, step: Step) -> str:
    spent = f" · {step.usage.describe()}" if step.usage is not None else ""
    streamed = f" · streamed {step.end - step.streamed_from:.2f}s" if step.streamed_from is not None else ""
    cut = f" · cut off by a restart ({step.ended_by})" if step.ended_by else ""
    return (
        f"{lane.agent_id} step {step.number} · {_purpose_label(step.purpose)} · {step.start:.2f}s → "
        f"{step.end:.2f}s ({step.seconds:.2f}s){streamed}{spent}{cut}"
    )


def _step_details(step: Step) -> tuple[tuple[str, str], ...]:
    details = [
        ("purpose", _purpose_label(step.purpose)),
        ("time", f"{step.start:.3f}s → {step.end:.3f}s ({step.seconds:.3f}s)"),
    ]
    if step.streamed_from is not None:
        details.append(
            ("streaming", f"from {step.streamed_from:.3f}s ({step.end - step.streamed_from:.3f}s)")
        )
    if step.usage is not None:
        details.append(("spent", step.usage.describe()))
    if step.ended_by:
        details.append(("ended by a restart", step.ended_by))
    return tuple(details)


def _marks(marks: list[Mark], y: int, scale: Scale, detail_id: DetailId) -> Iterator[str]:
    """Marks in one row, placed by ``placed`` (each one's time is in its title)."""
    for mark, x, width in placed(marks, scale):
        title = f"{mark.at:.2f}s · {mark.title}" + _hover_text(mark)
        ident = detail_id(mark.kind, mark.title, mark.details)
        failed = "" if mark.ok else " failed"
        yield _item(f"mark {mark.kind}{failed}", ident, title, _shape(mark, x, y, width))


def placed(marks: list[Mark], scale: Scale) -> list[tuple[Mark, float, float]]:
    """Each mark with its x and width, in time order: one that would overlap the one before is moved
    right; marks pushed past the drawing's right edge (events close together at a lane's end) are moved
    left, so none overlaps another and none is cut off."""
    row: list[tuple[Mark, float, float]] = []
    free = 0.0
    for mark in sorted(marks, key=lambda m: m.at):
        x = max(scale.x(mark.at), free)
        width = max(scale.x(mark.until) - scale.x(mark.at), 6.0) if mark.until is not None else 0.0
        row.append((mark, x, width))
        free = x + _extent(mark, width) + MARK_SPACING
    limit: float = WIDTH - MARK_SPACING
    for index in range(len(row) - 1, -1, -1):
        mark, x, width = row[index]
        x = round(min(x, limit - _extent(mark, width)), 1)
        row[index] = (mark, x, width)
        limit = x - MARK_SPACING
    return row


def _extent(mark: Mark, width: float) -> float:
    """How far right of its x a mark reaches (its bar, and the words beside it)."""
    return max(width, 0) + 6 * len(_label(mark))


def _hover_text(mark: Mark) -> str:
    shown = [text for label, text in mark.details if label in ("answer", "reason", "summary", "query")]
    if mark.kind == "recall":
        shown += [text for label, text in mark.details if label.startswith("#")]
    return "".join(f"\n{one_line(text, HOVER_CHARS)}" for text in shown if text)


def _label(mark: Mark) -> str:
    """The words drawn beside a mark: a vote's target, a restart's cause."""
    if mark.vote is not None:
        return f"→ {mark.vote.target}"
    if mark.kind == "restart" and mark.cause is not None:
        return f"↺ {mark.cause[0]}"
    return ""


def _shape(mark: Mark, x: float, y: int, width: float) -> str:
    kind = mark.kind
    if kind in ("tool", "subagent"):
        return f'<rect x="{x}" y="{y - 5}" width="{round(width, 1)}" height="10" rx="2"/>'
    if kind == "vote":
        shape = f'<path d="M{x} {y - 6} L{x + 6} {y} L{x} {y + 6} L{x - 6} {y} Z"/>'
    elif kind == "restart":
        shape = f'<path d="M{x} {y - 6} L{x + 6} {y + 5} L{x - 6} {y + 5} Z"/>'
    elif kind == "final":
        shape = f'<path d="{_star(x, y)}"/>'
    elif kind in ("recall", "record"):
        arrow = "▼" if kind == "recall" else "▲"
        shape = f'<circle cx="{x}" cy="{y}" r="6"/><text class="glyph" x="{x}" y="{y + 3}">{arrow}</text>'
    elif kind == "compression":
        shape = f'<rect x="{x - 5}" y="{y - 5}" width="10" height="10" transform="rotate(45 {x} {y})"/>'
    elif kind in ("done", "failed"):
        shape = f'<rect x="{x - 4}" y="{y - 4}" width="8" height="8"/>'
    else:
        shape = f'<circle cx="{x}" cy="{y}" r="5"/>'
    label = _label(mark)
    if label:
        shape += f'<text class="mark-label" x="{x + 9}" y="{y + 4}">{escape(label)}</text>'
    return shape


def _star(x: float, y: float) -> str:
    points = []
    for index in range(10):
        radius = 7 if index % 2 == 0 else 3
        angle = math.pi / 2 + index * math.pi / 5
        points.append(f"{x + radius * math.cos(angle):.1f} {y - radius * math.sin(angle):.1f}")
    return "M" + " L".join(points) + " Z"


def _cause_lines(story: AttemptStory, scale: Scale) -> Iterator[str]:
    """A dashed line from each new answer that restarted an agent to that restart."""
    rows = {lane.agent_id: index for index, lane in enumerate(story.lanes)}
    for index, lane in enumerate(story.lanes):
        for mark in lane.of("restart"):
            if mark.cause is None or mark.cause[0] not in rows:
                continue
            y1 = AXIS_HEIGHT + rows[mark.cause[0]] * LANE_HEIGHT + DECISION_Y
            y2 = AXIS_HEIGHT + index * LANE_HEIGHT + DECISION_Y
            x1, x2 = scale.x(mark.cause[1]), scale.x(mark.at)
            yield f'<line class="cause" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"/>'


def _item(classes: str, ident: str, title: str, body: str) -> str:
    return (
        f'<g class="item {classes}" tabindex="0" role="button" data-detail="{ident}">'
        f"<title>{escape(title)}</title>{body}</g>"
    )
