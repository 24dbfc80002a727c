"""What the console says of the events that are no agent's stream: what memory did (with ``--debug``),
and as notices a steering message a person sent and the features' events: a hook that denied or changed
a tool call (or failed), a subagent team that started or finished (with what it spent), a plan kept, a
checklist judged. The live view and the plain lines both print them (``ui.ConsoleView``)."""

from __future__ import annotations

from massgen_cli.events import (
    MemoryRecorded,
    MemoryRetrieved,
    Notice,
    NoticeLevel,
    RunEvent,
    SteeringMessage,
    Usage,
)
from massgen_cli.feature_events import (
    ChecklistJudged,
    HookDecided,
    PlanMade,
    SubagentFinished,
    SubagentStarted,
)
from massgen_cli.text import one_line

SHOWN_MEMORY_CHARS = 100
"""The most characters of a memory's text on the console (with --debug)."""
SHOWN_TASK_CHARS = 100
"""The most characters of a subagent's task, or of a hook's reason, on the console."""
STEERING_LINE_CHARS = 300
"""The most characters of a steering message's line on the console (the logs keep it whole)."""
HOOK_DID = {
    "deny": "denied",
    "rewrite": "rewrote the arguments of",
    "add": "added to the result of",
    "replace": "replaced the result of",
}


def memory_said(event: MemoryRetrieved | MemoryRecorded) -> str:
    """What memory did, as the console says it (with --debug): a line, then one line per memory."""
    if isinstance(event, MemoryRetrieved):
        lines = [f"✅ Total: {len(event.memories)} memories retrieved for {event.agent_id} ({event.reason})"]
        lines += [
            f"   [From {m.owner} Turn {m.turn}] {m.score:.4f} {one_line(m.text, SHOWN_MEMORY_CHARS)}"
            for m in event.memories
        ]
    else:
        new = sum(record.new for record in event.records)
        lines = [f"✅ [recorded] {event.agent_id}: {len(event.records)} memories ({new} new)"]
        lines += [
            f"   {'new' if r.new else 'known'} {r.key}: {one_line(r.text, SHOWN_MEMORY_CHARS)}"
            for r in event.records
        ]
    return "\n".join(lines)


def feature_notice(event: RunEvent) -> Notice | None:
    """The line a feature's event adds to the console (None: it adds none, as a hook that allowed)."""
    if isinstance(event, SteeringMessage):
        unread = " (after the last step began: no agent read it)" if not event.read else ""
        return Notice("info", one_line(f"✉ you said{unread}: {event.text}", STEERING_LINE_CHARS))
    if isinstance(event, HookDecided):
        return _hook_said(event)
    if isinstance(event, SubagentStarted):
        task = one_line(event.task, SHOWN_TASK_CHARS)
        return Notice("info", f"[{event.agent_id}] subagent {event.subagent_id} started: {task}")
    if isinstance(event, SubagentFinished):
        spent = Usage(event.input_tokens, event.output_tokens, cost_usd=event.cost_usd).describe()
        why = f": {one_line(event.reason, SHOWN_TASK_CHARS)}" if event.reason else ""
        said = f"[{event.agent_id}] subagent {event.subagent_id} {event.status} in {event.seconds:.1f}s"
        return Notice("info" if event.status == "completed" else "warning", f"{said} · {spent}{why}")
    if isinstance(event, PlanMade):
        head = f"plan {event.plan_id}: {len(event.tasks)} task(s) in {len(event.chunks)} chunk(s), kept in"
        return Notice("info", "\n".join([f"{head} {event.folder}", *(f"  {task}" for task in event.tasks)]))
    if isinstance(event, ChecklistJudged):
        unmet = f", unmet {', '.join(event.unmet)}" if event.unmet else ""
        refused = "; vote refused, asked for a better answer" if event.refused else ""
        return Notice("info", f"[{event.agent_id}] checklist: {len(event.met)} met{unmet}{refused}")
    return None


def _hook_said(event: HookDecided) -> Notice | None:
    reason = f": {one_line(event.reason, SHOWN_TASK_CHARS)}" if event.reason else ""
    who = f"[{event.agent_id}] " if event.agent_id else ""
    if event.decision == "failed":
        return Notice("warning", f"{who}hook {event.hook} failed at {event.point}, the run goes on{reason}")
    did = HOOK_DID.get(event.decision)
    if did is None:
        return None
    level: NoticeLevel = "warning" if event.decision == "deny" else "info"
    return Notice(level, f"{who}hook {event.hook} {did} {event.tool or event.point}{reason}")
