"""massgen-cli from Python: ``run`` asks a team one question and returns its ``Result``; ``arun`` does it
from async code; ``stream`` yields the run's typed events as they happen; a ``Team`` keeps one set of
agents open for several questions. Nothing is printed: what a run says is in its events and result, and
its session, logs and memory are kept in the state folder as a command-line run keeps them.

    import massgen_cli

    result = massgen_cli.run("@examples/scripted_three_agents", "What is 2 + 2?")
    print(result.answer, result.winner, result.cost_usd)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from massgen_cli.attempts import Vote
from massgen_cli.events import RunEvent

if TYPE_CHECKING:
    from massgen_cli.app import MassGenApp
    from massgen_cli.config.loader import LoadedConfig
    from massgen_cli.coordination.outcome import TurnResult

ConfigSource = str | Path | Mapping[str, Any] | None
"""A config file's path, ``@examples/NAME``, a document as YAML would hold it, or None for the embedded
default (three agents on the offline model)."""
BUILT_ORIGIN = "(python)"
"""The name a config given as a document goes by where a file's name would stand."""


@dataclass(frozen=True)
class Result:
    """What one turn gave: the answer, who gave it and how the team decided, what it cost and where its
    record is kept."""

    answer: str | None
    """The final answer (None when no agent produced one: see ``end_reason``)."""
    winner: str | None
    votes: list[Vote]
    answers: dict[str, str]
    """Each agent's last answer of the turn."""
    cost_usd: float | None
    """What the turn's calls cost (None when a model's price is unknown)."""
    tokens: int
    session_id: str
    turn: int
    end_reason: str
    log_folder: Path | None
    """The run's log folder (``massgen logs report`` reads it), None when nothing was kept."""
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, turn: TurnResult, log_folder: Path | None, warnings: list[str]) -> Result:
        return cls(
            answer=turn.final_answer,
            winner=turn.winner,
            votes=list(turn.votes),
            answers=dict(turn.answers),
            cost_usd=turn.turn_usage.cost_usd,
            tokens=turn.turn_usage.tokens,
            session_id=turn.session_id,
            turn=turn.turn,
            end_reason=turn.end_reason,
            log_folder=log_folder,
            warnings=[*warnings, *turn.warnings],
        )


class Team:
    """A configured team answering the questions of one session (``session``: a name to continue, or
    to continue later; a new one otherwise). Use it as a context manager, or ``close`` it."""

    def __init__(
        self,
        config: ConfigSource = None,
        *,
        session: str | None = None,
        state_dir: str | Path | None = None,
        on_event: Callable[[RunEvent], None] | None = None,
    ):
        from massgen_cli.app import MassGenApp
        from massgen_cli.state import resolve_state_dir

        self.warnings: list[str] = []
        """What loading the config and the state folder said (also in each ``Result``)."""
        loaded = _load(config)
        self.warnings += loaded.warnings
        folder = resolve_state_dir(state_dir, warn=self.warnings.append)
        listeners = (on_event,) if on_event is not None else ()
        self._app: MassGenApp = MassGenApp(loaded, listeners=listeners, state_dir=folder, session_id=session)

    @property
    def session_id(self) -> str:
        return self._app.session.id

    def ask(self, question: str) -> Result:
        """One turn: the team answers ``question`` with the session's earlier turns as context."""
        turn = self._app.ask(question)
        log = self._app.run_log
        return Result.of(turn, log.directory if log.written else None, self.warnings)

    def cancel(self) -> None:
        """Cancel the turn ``ask`` is running, from another thread (``ask`` then raises
        ``asyncio.CancelledError``; the session keeps its answered turns)."""
        self._app.cancel_running_turn()

    def close(self) -> None:
        """End the agents' backends, servers and the session's hold (a second call does nothing)."""
        self._app.close()

    def __enter__(self) -> Team:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


def run(
    config: ConfigSource,
    question: str,
    *,
    session: str | None = None,
    state_dir: str | Path | None = None,
    on_event: Callable[[RunEvent], None] | None = None,
) -> Result:
    """Ask the team ``config`` describes one question (``session``: continue that session, or start it
    under that name). ``on_event`` hears each typed event as it happens. Errors are ``MassGenError``s
    (``ConfigError`` names the YAML path of each problem)."""
    with Team(config, session=session, state_dir=state_dir, on_event=on_event) as team:
        return team.ask(question)


async def arun(
    config: ConfigSource,
    question: str,
    *,
    session: str | None = None,
    state_dir: str | Path | None = None,
    on_event: Callable[[RunEvent], None] | None = None,
) -> Result:
    """``run`` from async code: the team works on a thread of its own (it keeps its own event loop for
    its backends), and this coroutine waits for its result."""
    return await asyncio.to_thread(
        run, config, question, session=session, state_dir=state_dir, on_event=on_event
    )


async def stream(
    config: ConfigSource, question: str, *, session: str | None = None, state_dir: str | Path | None = None
) -> AsyncIterator[RunEvent]:
    """The run's typed events as they happen (the agents' text, their states and votes, tool calls,
    memory, the final answer, ``TurnEnded`` last); a failure of the run is raised after its events.
    Leaving the loop early cancels the turn (the session keeps what it had)."""
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[RunEvent] = asyncio.Queue()

    def hear(event: RunEvent) -> None:
        loop.call_soon_threadsafe(events.put_nowait, event)

    team = await asyncio.to_thread(Team, config, session=session, state_dir=state_dir, on_event=hear)
    try:
        running = asyncio.ensure_future(asyncio.to_thread(team.ask, question))
        try:
            while not running.done() or not events.empty():
                waiting = asyncio.ensure_future(events.get())
                await asyncio.wait({waiting, running}, return_when=asyncio.FIRST_COMPLETED)
                if waiting.done():
                    yield waiting.result()
                else:
                    waiting.cancel()
            running.result()
        finally:
            if not running.done():
                team.cancel()
                await asyncio.wait({running})
                with contextlib.suppress(BaseException):  # the cancelled turn's own ending
                    running.result()
    finally:
        await asyncio.to_thread(team.close)


def _load(config: ConfigSource) -> LoadedConfig:
    from massgen_cli.config import load_config
    from massgen_cli.config.loader import load_built

    if isinstance(config, Mapping):
        return load_built(dict(config), Path.cwd() / BUILT_ORIGIN)
    return load_config(config)
