"""How a feature declares itself: when the config wants it, how it opens, which features it needs opened
first, and where its step extension and attempt part go among the others'.

A declaration is light: importing it loads nothing of the feature's own code (its ``open`` imports that),
so the composition root can read every declaration and pay only for the features a config turns on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from massgen_cli.agent.spending import SpendingGate
from massgen_cli.coordination.call_answers import Outside

if TYPE_CHECKING:
    from pydantic import BaseModel

    from massgen_cli.attempts import AttemptPart
    from massgen_cli.config.schema import MassGenConfig
    from massgen_cli.coordination.extension import StepExtension
    from massgen_cli.events import EventSink
    from massgen_cli.memory.context.guard import DroppedListener
    from massgen_cli.nesting import TeamRunner
    from massgen_cli.session import Session


@dataclass(frozen=True)
class Place:
    """Where a run lives: its session, the state folder (which no agent's tool may reach) and whether
    anything is kept there (``kept_in`` None: it cannot be written), and the folders and files no agent's
    command may see."""

    session: Session
    state_folder: Path
    kept_in: Path | None
    private: tuple[Path, ...] = ()
    outside: Outside = field(default_factory=Outside)
    """What reaches the run from outside: messages sent while it works (a served or ``--web`` run), a
    served request's own tools."""
    teams: TeamRunner | None = None
    """What runs the nested teams of subagents; None: no team can be nested in this run."""
    spent_above: Callable[[], str] | None = None
    """In a nested team's run: why the run that nested it may start no step (its caps are spent), or ""."""

    @property
    def session_folder(self) -> Path | None:
        """The session's folder when the run keeps anything, else None."""
        return self.session.directory if self.kept_in is not None else None


@dataclass(frozen=True)
class Opened:
    """What a feature opened: its step extension and attempt part (either may be None), what it offers
        the features that need it (``provides``), where compression hands what it drops, by agent, and how it
    closes."""

    extension: StepExtension | None = None
    part: AttemptPart | None = None
    provides: Any = None
    keepers: Mapping[str, DroppedListener] = field(default_factory=dict)
    close: Callable[[], Awaitable[None]] | None = None
    """What ends what it holds open, when the run closes."""


@dataclass(frozen=True)
class Opening:
    """What a feature opens with: the config, where the run lives, the run's events, its own settings
    (its ``features.<name>`` block, validated by its model; None without one) and what the features it
    needs opened (only those the config turned on)."""

    config: MassGenConfig
    place: Place
    emit: EventSink
    settings: Any = None
    needed: Mapping[str, Opened] = field(default_factory=dict)
    spending: SpendingGate = field(default_factory=SpendingGate)
    """The run's spending caps: what a nested team's calls count against too."""

    def provided(self, name: str) -> Any:
        """What the needed feature ``name`` offers, or None when it is off."""
        opened = self.needed.get(name)
        return opened.provides if opened is not None else None


@dataclass(frozen=True)
class Feature:
    """A feature as the composition root sees it.

    ``wanted`` reads the config (and what the needed features opened); ``open`` builds the feature and
    may return None when there is nothing to add after all. ``needs``: features opened before it, handed
    to it when on. ``steps_after``: features whose step extensions come before its own in the turn's walk
    (the order of the blocks after the system prompt and of the tools' guidance). ``commits_after``:
    features whose attempt parts commit before its own. Where nothing orders two features, the order of
    registration does. ``settings``: the model of its ``features.<name>`` block in the config."""

    name: str
    wanted: Callable[[Opening], bool]
    open: Callable[[Opening], Opened | None]
    needs: tuple[str, ...] = ()
    steps_after: tuple[str, ...] = ()
    commits_after: tuple[str, ...] = ()
    settings: type[BaseModel] | None = None
