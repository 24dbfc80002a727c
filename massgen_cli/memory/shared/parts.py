"""Shared memory across the turns of a session: what persists, what the orchestrator writes at the
end of a turn, and what is rolled back (scoped entries and the shared conversation) when an attempt
is rejected or a turn fails or is cancelled."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from massgen_cli.config.orchestrator import SharedMemoryConfig
from massgen_cli.config.schema import MassGenConfig
from massgen_cli.events import RunEvent
from massgen_cli.memory.context.conversation import ConversationMemory
from massgen_cli.memory.longterm.record.background import MemoryRecorder
from massgen_cli.memory.longterm.record.spool import Spool
from massgen_cli.memory.longterm.store.persistent import PersistentMemory
from massgen_cli.memory.shared.block import SessionFacts, SharedMemory
from massgen_cli.memory.shared.entries import SharedEntries
from massgen_cli.session import Session
from massgen_cli.state import read_json, write_json

CONVERSATION_FILE = "shared_conversation.json"
ORCHESTRATOR = "orchestrator"


@dataclass
class SharedParts:
    """The configured parts of shared memory (any of them may be None)."""

    settings: SharedMemoryConfig
    conversation: ConversationMemory | None = None
    persistent: PersistentMemory | None = None
    entries: SharedEntries | None = None
    conversation_path: Path | None = None
    marks: dict[tuple[int, int], int] = field(default_factory=dict)

    @classmethod
    def open(cls, config: MassGenConfig, session_dir: Path, store: PersistentMemory | None) -> SharedParts:
        settings = config.orchestrator.shared_memory
        parts = cls(settings, conversation_path=session_dir / CONVERSATION_FILE)
        if settings.conversation:
            parts.conversation = _load_conversation(parts.conversation_path)
        if settings.persistent:
            parts.persistent = store
        if settings.entries:
            parts.entries = SharedEntries.load(session_dir, config.memory.lifecycle)
        return parts

    @staticmethod
    def facts(session: Session) -> SessionFacts:
        winners = [exchange.winner for exchange in session.history() if exchange.winner]
        return SessionFacts(winners[-1] if winners else None, list(dict.fromkeys(winners)))

    def attempt_memory(
        self,
        session: Session,
        emit: Callable[[RunEvent], None],
        recorder: MemoryRecorder | None,
        dump_dir: Path | None,
        spool: Spool | None = None,
    ) -> SharedMemory:
        """The shared memory an attempt's steps see and write, over these parts."""
        shared = SharedMemory(
            self.settings,
            conversation=self.conversation,
            persistent=self.persistent,
            entries=self.entries,
            session_id=session.id,
            emit=emit,
            recorder=recorder,
            dump_dir=dump_dir,
            spool=spool,
        )
        shared.facts = self.facts(session)
        return shared

    def begin_attempt(self, turn: int, attempt: int) -> None:
        """Remember where the shared conversation stood, to roll it back with the attempt or turn."""
        self.marks[(turn, attempt)] = self.conversation.size() if self.conversation is not None else 0

    def _roll_back_conversation(self, turn: int, attempt: int) -> None:
        if self.conversation is not None and (turn, attempt) in self.marks:
            self.conversation.truncate(self.marks[(turn, attempt)])

    def reject_attempt(self, turn: int, attempt: int) -> None:
        if self.entries is not None:
            self.entries.roll_back(turn, attempt)
        self._roll_back_conversation(turn, attempt)

    def finish_turn(self, turn: int, attempt: int, winner: str | None, final: str | None, votes: str) -> None:
        """A turn with an answer leaves the orchestrator's entries; one without is rolled back."""
        if final is None or winner is None:
            self._roll_back_conversation(turn, 1)
        if self.entries is not None:
            if final is None or winner is None:
                self.entries.roll_back(turn)
            else:
                self.entries.add(
                    "winning_answer", f"{winner}: {final}", "conversation", ORCHESTRATOR, turn, attempt
                )
                self.entries.add(
                    "vote_result", votes or "no votes", "conversation", ORCHESTRATOR, turn, attempt
                )
        self.save()

    def cancel_turn(self, turn: int) -> None:
        if self.entries is not None:
            self.entries.roll_back(turn)
        self._roll_back_conversation(turn, 1)
        self.save()

    def stop_saving(self) -> None:
        """What this run adds is kept in memory only (its state folder cannot be written)."""
        self.conversation_path = None
        if self.entries is not None:
            self.entries.path = None

    def save(self) -> None:
        if self.entries is not None:
            self.entries.save()
        if self.conversation is not None and self.conversation_path is not None:
            write_json(self.conversation_path, self.conversation.to_list())


def _load_conversation(path: Path | None) -> ConversationMemory:
    if path is None or not path.is_file():
        return ConversationMemory()
    return ConversationMemory.from_list(read_json(path, "shared conversation"))
