"""One connection to the PostgreSQL server per index, shared by the threads of a process under a lock;
the server's errors become one clear ``MemoryStoreError`` line."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from massgen_cli.errors import MemoryStoreError, StoreUnreachable
from massgen_cli.memory.longterm.store.contention import ConnectionLost, StoreContention
from massgen_cli.memory.longterm.store.vector_stores import (
    PGVECTOR_CONNECT_SECONDS,
    pgvector_conninfo,
    pgvector_problem,
)

ABORTED_FOR_ANOTHER = ("40P01", "40001")
"""SQLSTATEs of a transaction the server aborted for another's sake: a deadlock, a serialization
conflict."""


class ServerConnection:
    """Autocommit statements, or several in one transaction (``transaction``); a connection lost
    between statements is opened again for the next one. A write the server aborted for another's
    sake, or whose connection broke, raises ``StoreContention`` (``contention.retried`` tries it
    again)."""

    def __init__(self, connection_string: str):
        self.conninfo = pgvector_conninfo(connection_string)
        self._lock = threading.RLock()
        self._connection: Any = None
        self._pipelined = False
        with self._lock:
            self._open()

    def _open(self) -> Any:
        import psycopg

        if self._connection is None or self._connection.closed:
            try:
                self._connection = psycopg.connect(
                    self.conninfo, autocommit=True, connect_timeout=PGVECTOR_CONNECT_SECONDS
                )
            except psycopg.Error as error:
                raise StoreUnreachable(pgvector_problem(self.conninfo, error)) from error
        return self._connection

    def rows(self, statement: str, params: Any = None) -> list[tuple[Any, ...]]:
        """What a statement that returns rows returns (in a pipeline, after waiting for it)."""
        return self.rows_later(statement, params)()

    def rows_later(self, statement: str, params: Any = None) -> Callable[[], list[tuple[Any, ...]]]:
        """Send a statement that returns rows; what it returned is read when the function given back is
        called (in a pipeline the server is not waited for until then, so thousands of statements go
        without a round trip each). Call it before the transaction ends."""
        with self.cursor(keep=True) as cursor:
            cursor.execute(statement, params)

        def read() -> list[tuple[Any, ...]]:
            with self._lock, self._failures():
                try:
                    return cursor.fetchall() if self._pipelined or cursor.description else []
                finally:
                    cursor.close()

        return read

    def one(self, statement: str, params: Any = None) -> tuple[Any, ...] | None:
        found = self.rows(statement, params)
        return found[0] if found else None

    def run(self, statement: str, params: Any = None) -> int:
        """Run one statement; how many rows it changed."""
        with self.cursor() as cursor:
            cursor.execute(statement, params)
            return int(cursor.rowcount)

    def many(self, statement: str, rows: list[Any]) -> None:
        if rows:
            with self.cursor() as cursor:
                cursor.executemany(statement, rows)

    @contextlib.contextmanager
    def cursor(self, *, keep: bool = False) -> Iterator[Any]:
        """A cursor of the connection, closed after the block (``keep``: left open for its results to
        be read later, closed then)."""
        with self._lock, self._failures():
            cursor = self._open().cursor()
            try:
                yield cursor
            except BaseException:
                cursor.close()
                raise
            if not keep:
                cursor.close()

    @contextlib.contextmanager
    def _failures(self) -> Iterator[None]:
        """A lost connection becomes one clear line (and is opened again for the next statement)."""
        import psycopg

        try:
            yield
        except psycopg.OperationalError as error:
            raise self._failure(error) from error

    @contextlib.contextmanager
    def transaction(self, *, pipelined: bool = False) -> Iterator[ServerConnection]:
        """Statements run inside it commit together, or not at all; ``pipelined``, they are sent
        without waiting for each answer (the server is waited for where an answer is read: ``rows``),
        which a bulk write of thousands of statements needs. Inside a pipelined transaction a nested
        one is part of it (no savepoint, which would wait for the server twice)."""
        import psycopg

        with self._lock:
            if self._pipelined:  # inside a bulk write: one transaction, whose first failure ends it
                yield self
                return
            connection = self._open()
            sending = connection.pipeline() if pipelined else contextlib.nullcontext()
            try:
                with sending, connection.transaction():
                    self._pipelined = pipelined
                    yield self
            except psycopg.OperationalError as error:
                raise self._failure(error) from error
            finally:
                self._pipelined = False

    def _failure(self, error: Exception) -> MemoryStoreError:
        """The error to raise for a server error: a transaction the server aborted for another's sake
        (a deadlock, a serialization conflict) is ``StoreContention``, and says so; a lost connection
        is dropped (opened again for the next statement)."""
        if getattr(error, "sqlstate", None) in ABORTED_FOR_ANOTHER:
            detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            return StoreContention(
                f"the PostgreSQL memory store aborted a write that met another process's ({detail}); "
                "nothing of it was kept"
            )
        lost = bool(getattr(self._connection, "broken", False))  # mid-statement: the server may be back
        self._drop()
        return (ConnectionLost if lost else StoreUnreachable)(pgvector_problem(self.conninfo, error))

    def _drop(self) -> None:
        with contextlib.suppress(Exception):
            self._connection.close()
        self._connection = None

    def close(self) -> None:
        with self._lock:
            self._drop()
