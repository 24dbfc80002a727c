"""The events of two optional features, part of the run's event vocabulary (``events.RunEvent``): what
the config's hooks decided, and the subagents an agent handed work to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

HookPoint = Literal["before_tool", "after_tool", "turn_start", "turn_end"]
HookVerdict = Literal["allow", "deny", "rewrite", "add", "replace", "heard", "failed"]
SubagentStatus = Literal["completed", "timeout", "cost_cap", "failed", "cancelled"]
REASON_CHARS = 500
SUBAGENT_TEXT_CHARS = 2000


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class HookDecided:
    """A hook of the config ran at ``point`` and decided: ``allow``, ``deny`` (the call was not run),
    ``rewrite`` (its arguments), ``add`` to or ``replace`` its result, ``heard`` (a turn hook), or
    ``failed`` (it failed or timed out and the run went on; a fail_closed hook's failure is a ``deny``).
    ``agent_id``, ``tool`` and ``call_id`` are empty for a turn hook."""

    point: HookPoint
    hook: str
    decision: HookVerdict
    reason: str = ""
    agent_id: str = ""
    tool: str = ""
    call_id: str = ""
    seconds: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "reason", _clip(self.reason, REASON_CHARS))


@dataclass(frozen=True)
class SubagentStarted:
    """Agent ``agent_id`` handed ``task`` to a subagent: a team of its own working in ``workspace``,
    ``depth`` levels below the run the user started."""

    agent_id: str
    subagent_id: str
    task: str
    workspace: str
    depth: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "task", _clip(self.task, SUBAGENT_TEXT_CHARS))


@dataclass(frozen=True)
class SubagentFinished:
    """A subagent's run ended: how (``status``; ``reason`` says why when it did not complete), its answer
    (cut to ``SUBAGENT_TEXT_CHARS``; its result file keeps it whole), what it spent, and where its
    workspace and logs are."""

    agent_id: str
    subagent_id: str
    status: SubagentStatus
    answer: str = ""
    reason: str = ""
    seconds: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    workspace: str = ""
    log_folder: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "answer", _clip(self.answer, SUBAGENT_TEXT_CHARS))


@dataclass(frozen=True)
class PlanMade:
    """Plan mode kept the plan a planning turn chose: its id and folder (``plan.json`` and
    ``metadata.json`` under ``<state>/plans/``), the chunks in execution order and a line per task."""

    plan_id: str
    folder: str
    chunks: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChecklistJudged:
    """An agent judged the answer it voted for against the evaluation criteria (``submit_checklist``):
    the ids of the criteria it found met and unmet; ``refused`` when its vote was refused for an unmet
    primary or standard criterion (it was asked to answer better instead)."""

    agent_id: str
    met: tuple[str, ...] = ()
    unmet: tuple[str, ...] = ()
    refused: bool = False
