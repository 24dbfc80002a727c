"""Recording: what agents say goes to long-term memory in the background, what a compression drops goes
there before the next lookup, and when a turn ends its winner and final answer are kept and the values of
the memories that helped are learned. While the store is off, records wait in the spool for a run that
can write them; the first attempt of a run writes what earlier runs left there. So do the records of a
turn numbered offline (the memory server that keeps the session could not be reached): they wait there
until a run that reaches it files them under the number it gives the turn."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import ClassVar

from massgen_cli.attempts import AttemptAt, TurnOutcome
from massgen_cli.config.memory import persistent_enabled
from massgen_cli.events import Notice
from massgen_cli.memory.longterm.record.memories import RecordContext, RecordMessage
from massgen_cli.memory.longterm.record.rules import messages_to_record
from massgen_cli.memory.longterm.record.spool import WinnerMark, waiting_notice
from massgen_cli.memory.runtime.opening import LongTermRun, value_goal
from massgen_cli.messages import Message

RECALL_WAIT_S = 10.0
"""How long a compression waits for what it dropped to be written, so the next lookup can find it."""


class Recording:
    """The run's recording into long-term memory; a part of the attempt lifecycle."""

    part_name: ClassVar[str] = "long-term memory"

    def __init__(self, run: LongTermRun):
        self.run = run
        self.spool_replayed = False

    def begin(self, at: AttemptAt) -> None:
        self.run.begin(at)
        if not self.spool_replayed:  # the first attempt of the run, inside the event loop
            self.spool_replayed = True
            self._replay_spool()

    def records_for(self, agent_id: str) -> bool:
        """Whether ``record`` keeps anything of ``agent_id`` (its long-term memory is on)."""
        return persistent_enabled(self.run.settings.get(agent_id))

    def record(
        self,
        agent_id: str,
        messages: Sequence[Message],
        *,
        reasoning: str = "",
        records: Sequence[RecordMessage] = (),
    ) -> None:
        """Queue what the recording rules keep of ``messages`` (and the model's ``reasoning``), then
        ``records`` as they are (memory files, with their metadata); while the store is off, keep it in
        the spool for a later run."""
        run = self.run
        memory = run.settings.get(agent_id)
        if memory is None or not persistent_enabled(memory):
            return
        selected = [*messages_to_record(list(messages), memory.recording, reasoning=reasoning), *records]
        context = RecordContext(agent_id, run.session_id, run.at.turn, run.at.attempt)
        if run.recorder is not None and not self._held_for_filing():
            run.recorder.submit(selected, context, run.dump_dir)
        elif selected and run.spool is not None:
            run.spool.keep(selected, context)

    def _held_for_filing(self) -> bool:
        """Whether what the turn records waits in the spool: its number was taken offline, and the next
        run that reaches the memory server files it (and its records) under the number it gives."""
        return self.run.at.numbered_offline and self.run.spool is not None

    def dropped_listener(
        self, agent_id: str, then: Callable[[], None]
    ) -> Callable[[list[Message]], Awaitable[None]]:
        """Messages compression drops go to long-term memory and are written before ``then`` (the next
        lookup is made due), so retrieval can bring them back."""

        async def on_dropped(messages: list[Message]) -> None:
            self.record(agent_id, messages)
            if self.run.recorder is not None:
                await self.run.recorder.settled(RECALL_WAIT_S)
            then()

        return on_dropped

    async def commit(self, outcome: TurnOutcome) -> list[str]:
        """Record the winner's final answer and the winner itself, learn values from the outcome,
        flush, and return the errors of the turn."""
        run, winner, final_answer = self.run, outcome.winner, outcome.final_answer
        startup, run.startup_errors = run.startup_errors, []
        if run.store is None or run.recorder is None or self._held_for_filing():
            self._forget_traces()
            if winner is not None and final_answer and run.spool is not None:  # for a run that can write
                self.record(winner, [{"role": "assistant", "content": final_answer}])
                run.spool.keep_winner(self._mark(winner))
            return startup
        if winner is not None and final_answer:
            await self._learn(winner, [agent_id for agent_id in outcome.answers if agent_id != winner])
        self._forget_traces()
        if winner is not None and final_answer:
            self.record(winner, [{"role": "assistant", "content": final_answer}])
            await self._keep_winner(winner)
        return startup + await run.recorder.flush()

    def roll_back(self, at: AttemptAt, *, whole_turn: bool) -> None:
        """What an attempt recorded stays, invisible to the others until its agent wins a turn; a failed
        or cancelled turn leaves no value traces behind."""
        if whole_turn:
            self._forget_traces()

    def _mark(self, winner: str) -> WinnerMark:
        at = self.run.at
        return WinnerMark(self.run.session_id, at.turn, winner, at.attempt)

    async def _keep_winner(self, winner: str) -> None:
        """The store learns who won the turn (turn-aware visibility needs it); kept for later if not."""
        run, mark = self.run, self._mark(winner)
        assert run.store is not None
        try:
            await asyncio.to_thread(run.store.record_winner, mark.session_id, mark.turn, winner, mark.attempt)
        except Exception as error:
            if run.spool is not None:
                run.spool.keep_winner(mark)
            run.failed(f"could not record the winner of turn {mark.turn} (kept for later): {error}", error)

    async def _learn(self, winner: str, rejected: list[str]) -> None:
        run = self.run
        if run.traces is None or run.store is None:
            return
        memory = run.config.memory
        updates = run.traces.outcome(winner, rejected)
        try:
            changed = await asyncio.to_thread(
                run.store.apply_value_updates, updates, value_goal(memory), memory.value_learning.alpha
            )
        except Exception as error:
            run.failed(f"could not update memory values: {error}", error)
            return
        if changed:
            run.emit(Notice("debug", f"📈 updated the values of {len(changed)} memories (winner {winner})"))

    def _forget_traces(self) -> None:
        if self.run.traces is not None:
            self.run.traces.clear()

    def _replay_spool(self) -> None:
        """Records an earlier run could not write are written now (in the background, like any); while
        the store is off they stay in the spool."""
        run = self.run
        if run.recorder is None or run.store is None or run.spool is None:
            return
        spool = run.spool
        try:
            kept = spool.take()
        except OSError as error:  # the spool is left as it is, for a later run
            run.failed(f"could not read the memory spool {spool.path} ({error}); it is left as it is")
            return
        if kept.set_aside:
            run.failed(
                f"{kept.set_aside} damaged line(s) of the memory spool {spool.path} could not be read "
                f"and were set aside in {spool.damaged_path}; the {len(kept)} readable one(s) were kept "
                "and are written now. Look at or delete that file; nothing reads it again"
            )
        if kept:
            run.emit(Notice("info", f"writing {len(kept)} memory record(s) kept from an earlier run"))
        for target, count in kept.waiting.items():
            run.emit(Notice("info", waiting_notice(count, target, spool.path)))
        for messages, context in kept.records:
            run.recorder.submit(messages, context, None)
        for mark in kept.winners:
            try:
                run.store.record_winner(mark.session_id, mark.turn, mark.agent_id, mark.attempt)
            except Exception as error:
                spool.keep_winner(mark)
                run.failed(f"could not record the winner of turn {mark.turn}, kept again: {error}", error)
