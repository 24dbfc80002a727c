"""One self-contained HTML page of runs (``massgen logs report``): per turn and attempt, who won and why,
a timeline with one lane per agent (``timeline``), what each agent spent, the answers and votes, and a
panel that shows the content of any item of a timeline clicked (or chosen with the keyboard).

The page needs nothing from the network: its style and script are inside it. Everything taken from a
log is hostile text (an answer may hold ``</script>`` or HTML) and is escaped where it is written; the
script only moves elements the page already holds, never builds markup from text.
"""

from __future__ import annotations

from datetime import datetime
from html import escape
from importlib import resources
from typing import Any

from massgen_cli.events import Usage
from massgen_cli.runlogs.marks import Lane, Mark
from massgen_cli.runlogs.reader import Run
from massgen_cli.runlogs.story import AttemptStory, tell
from massgen_cli.runlogs.timeline import timeline_svg
from massgen_cli.text import one_line
from massgen_cli.ui import cost_text

LEGEND = (
    ("step", "a step: request to end; darker while it streamed"),
    ("cut", "a step cut off (or set aside) by a restart"),
    ("answer", "new answer"),
    ("vote", "vote (→ target)"),
    ("restart", "restart (↺ whose answer caused it)"),
    ("final", "final answer"),
    ("tool", "tool call"),
    ("hook", "hook decision"),
    ("subagent", "subagent run"),
    ("recall", "memory retrieved"),
    ("record", "memory recorded"),
    ("compression", "compression"),
)
ERROR_CATCHER = (
    "window.addEventListener('error',function(e){var b=document.getElementById('report-errors');"
    "b.hidden=false;b.textContent+='script error: '+e.message+'\\n';});"
)


def report_html(runs: list[Run], title: str, *, back: tuple[str, str] | None = None) -> str:
    """The page for ``runs`` (oldest first), titled ``title`` (a run's or a session's name); ``back``
    (an address and its words) is a link at its top to where it was opened from (the live view)."""
    details = _Details()
    stories = [tell(record) for run in runs for record in run.attempts]
    body = [_turn(story, details) for story in stories] or ["<p>These runs logged no turn.</p>"]
    return "\n".join(
        [
            "<!doctype html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>massgen report · {escape(title)}</title>",
            '<link rel="icon" href="data:,">',  # asks nothing of a server (the live view serves it)
            f"<style>{_asset('report.css')}</style>",
            "</head><body>",
            f'<div id="report-errors" hidden></div><script>{ERROR_CATCHER}</script>',
            '<div class="page"><main>',
            f'<nav class="back"><a href="{escape(back[0])}">{escape(back[1])}</a></nav>' if back else "",
            _header(runs, title, stories),
            *body,
            "</main>",
            '<aside id="detail" aria-live="polite"><p class="hint">Click an item of a timeline (or focus it '
            "and press Enter) to see its content here.</p></aside>",
            "</div>",
            f'<div id="details-store" hidden>{"".join(details.sections)}</div>',
            f"<script>{_asset('report.js')}</script>",
            "</body></html>",
        ]
    )


class _Details:
    """The content of every item of the timelines, in hidden sections the panel shows copies of."""

    def __init__(self) -> None:
        self.sections: list[str] = []

    def __call__(self, kind: str, title: str, details: tuple[tuple[str, str], ...]) -> str:
        ident = f"d-{len(self.sections) + 1}"
        rows = "".join(f"<dt>{escape(label)}</dt><dd>{escape(text)}</dd>" for label, text in details)
        self.sections.append(
            f'<section id="{ident}" class="detail kind-{escape(kind)}"><h3>{escape(title)}</h3>'
            f"<dl>{rows}</dl></section>"
        )
        return ident


def _asset(name: str) -> str:
    text = resources.files("massgen_cli.runlogs").joinpath(name).read_text(encoding="utf-8")
    return text.replace("</", "<\\/") if name.endswith(".js") else text


def _header(runs: list[Run], title: str, stories: list[AttemptStory]) -> str:
    sessions = sorted({run.session_id or "?" for run in runs})
    spent = Usage.total(story.usage for story in stories)
    generated = datetime.now().isoformat(sep=" ", timespec="seconds")
    run_names = ", ".join(run.name for run in runs)
    legend = "".join(
        f'<li><svg width="22" height="14" aria-hidden="true"><rect class="swatch {kind}" x="1" y="2" '
        f'width="20" height="10" rx="2"/></svg>{escape(text)}</li>'
        for kind, text in LEGEND
    )
    return (
        f"<header><h1>massgen report · {escape(title)}</h1>"
        f'<p class="meta">session {escape(", ".join(sessions))} · run {escape(run_names)} · '
        f"{len(stories)} attempt(s) · {escape(spent.describe())} · generated {escape(generated)}</p>"
        f'<ul class="legend">{legend}</ul></header>'
    )


def _turn(story: AttemptStory, details: _Details) -> str:
    record = story.record
    anchor = f"turn-{record.turn}-attempt-{record.attempt}"
    final = str(story.summary.get("final_answer") or "")
    heading = f"<h3>Final answer · {escape(story.winner or '?')}</h3>"
    final_block = f'<div class="final">{heading}<p>{escape(final)}</p></div>' if final else ""
    notices = "".join(f"<li>{escape(one_line(notice, 400))}</li>" for notice in story.notices)
    return "\n".join(
        [
            f'<section class="turn" id="{anchor}">',
            f"<h2>Turn {record.turn} · attempt {record.attempt} "
            f'<span class="status {escape(record.status)}">{escape(record.status)}</span> '
            f'<span class="took">{story.duration:.2f}s · {escape(story.usage.describe())}</span></h2>',
            f'<p class="question">{escape(record.question or "(question unknown)")}</p>',
            _steering(story),
            _turn_hooks(story),
            f'<p class="verdict">{_verdict(story)}</p>',
            f'<div class="timeline-box">{timeline_svg(story, details)}</div>',
            _agents_table(story),
            _answers_and_votes(story),
            final_block,
            f'<ul class="notices">{notices}</ul>' if notices else "",
            "</section>",
        ]
    )


def _steering(story: AttemptStory) -> str:
    """The messages sent during the attempt, whole, each with when it reached the agents."""
    items = "".join(
        f'<li><span class="at">{at:.2f}s</span> you said: {escape(text)}</li>' for at, text in story.steering
    )
    return f'<ul class="steering">{items}</ul>' if items else ""


def _turn_hooks(story: AttemptStory) -> str:
    """What the turn's own hooks decided, each with when."""
    items = "".join(
        f'<li><span class="at">{at:.2f}s</span> {escape(text)}</li>' for at, text in story.turn_hooks
    )
    return f'<ul class="turn-hooks">{items}</ul>' if items else ""


def _verdict(story: AttemptStory) -> str:
    winner = story.winner
    badge = f'<span class="winner">winner: {escape(winner)}</span> · ' if winner else ""
    return badge + escape(story.verdict())


def _agents_table(story: AttemptStory) -> str:
    head = "".join(
        f"<th>{name}</th>"
        for name in (
            "agent",
            "steps",
            "tokens",
            "cost",
            "busy",
            "tool calls",
            "restarts",
            "answers",
            "decision",
        )
    )
    rows = "".join(_agent_row(lane, story.summary) for lane in story.lanes)
    total = story.usage
    foot = (
        f'<tr class="total"><td>all</td><td>{sum(len(lane.steps) for lane in story.lanes)}</td>'
        f"<td>{_tokens(total)}</td><td>{escape(cost_text(total.cost_usd))}</td>"
        f"<td>{story.duration:.2f}s</td><td>{sum(lane.tool_calls[0] for lane in story.lanes)}</td>"
        f"<td>{sum(len(lane.of('restart')) for lane in story.lanes)}</td>"
        f"<td>{sum(len(lane.of('answer')) for lane in story.lanes)}</td><td></td></tr>"
    )
    return f'<table class="agents"><thead><tr>{head}</tr></thead><tbody>{rows}{foot}</tbody></table>'


def _agent_row(lane: Lane, summary: dict[str, Any]) -> str:
    calls, failed = lane.tool_calls
    status = (summary.get("agent_status") or {}).get(lane.agent_id) or {}
    decision = one_line(f"{status.get('status', '')} {status.get('detail', '')}".strip(), 80)
    winner = " winner" if summary.get("winner") == lane.agent_id else ""
    return (
        f'<tr class="agent{winner}"><td>{escape(lane.agent_id)}</td><td>{len(lane.steps)}</td>'
        f"<td>{_tokens(lane.usage)}</td><td>{escape(cost_text(lane.usage.cost_usd))}</td>"
        f"<td>{lane.busy_seconds:.2f}s</td><td>{calls}{f' ({failed} failed)' if failed else ''}</td>"
        f"<td>{len(lane.of('restart'))}</td><td>{len(lane.of('answer'))}</td>"
        f"<td>{escape(decision)}</td></tr>"
    )


def _tokens(usage: Usage) -> str:
    return f"{usage.tokens:,}{' (est.)' if usage.estimated else ''}"


def _answers_and_votes(story: AttemptStory) -> str:
    """Every answer and vote in full, folded on screen and open in print."""
    items = sorted(
        ((lane.agent_id, mark) for lane in story.lanes for mark in lane.of("answer", "vote")),
        key=lambda pair: pair[1].at,
    )
    if not items:
        return ""
    rows = "".join(
        f'<li class="{mark.kind}"><span class="at">{mark.at:.2f}s</span> <b>{escape(agent)}</b> '
        f"{escape(_said(mark))}</li>"
        for agent, mark in items
    )
    return (
        f'<details class="said"><summary>Answers and votes ({len(items)})</summary><ol>{rows}</ol></details>'
    )


def _said(mark: Mark) -> str:
    if mark.vote is not None:
        return f"voted for {mark.vote.target}: {mark.vote.reason or 'none given'}"
    return f"answered: {dict(mark.details).get('answer', '')}"
