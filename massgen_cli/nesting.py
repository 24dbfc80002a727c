"""A team run inside a run: what a subagent asks (a config document, a task, its folder, its bounds) and
what it gets back. The runner is given to the run by whoever builds it (the app gives
``subteams.SubTeams``), so the features that nest a team never import the layers that build one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from massgen_cli.events import AgentUsage, Usage

TeamStatus = Literal["completed", "timeout", "cost_cap", "failed", "cancelled"]


@dataclass(frozen=True)
class ParentSpend:
    """What ties a nested team's spend to the run that nested it: each call of the team (its own
    subagents' too) is told to ``charge`` as it ends, which counts it in that run's ledger as the
    spawning agent's; and no step of the team starts while ``reached`` gives a reason (that run's spending
    caps, its own parents' included, are spent)."""

    charge: Callable[[AgentUsage], None]
    reached: Callable[[], str]


@dataclass(frozen=True)
class TeamTask:
    """One task for a nested team: the team's config ``document`` (as YAML would hold it), the ``task``,
    the folder it keeps its state and logs in (``state_folder``), the folders its agents' commands may not
    see (``private``), and its time limit."""

    document: dict[str, Any]
    task: str
    state_folder: Path
    timeout_s: float
    private: tuple[Path, ...] = ()
    spend: ParentSpend | None = None


@dataclass(frozen=True)
class TeamOutcome:
    """How a nested team's run ended: its answer (None when it gave none), why it ended, what it spent and
    where its log is."""

    status: TeamStatus
    answer: str | None = None
    reason: str = ""
    seconds: float = 0.0
    usage: Usage = field(default_factory=lambda: Usage(0, 0))
    log_folder: Path | None = None


class TeamRunner(Protocol):
    """Runs nested teams; ``depth`` is how many levels below the user's run its teams are (1: a subagent
    of one of the user's agents)."""

    @property
    def depth(self) -> int: ...

    async def run(self, task: TeamTask) -> TeamOutcome: ...
