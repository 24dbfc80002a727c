"""``massgen memory …``: search, list, clear and import long-term memory, without Typer."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from massgen_cli.errors import UsageError
from massgen_cli.memory.longterm.record.keys import segment
from massgen_cli.memory.longterm.record.memories import speaker_of
from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
from massgen_cli.memory.longterm.retrieve.values import DEFAULT_VALUE
from massgen_cli.text import one_line, printable

if TYPE_CHECKING:
    from massgen_cli.config.memory import PersistentMemoryConfig
    from massgen_cli.memory.longterm.retrieve.ranking import Method
    from massgen_cli.memory.longterm.store.index.stale import StaleMark

TEXT_CHARS = 100
REMOVED_RESULT_STUB = re.compile(r"\[the rest of this \S+ result was removed to save context")
"""The note a compression leaves in a tool result it cut to its first line (``memory/context/compression``):
a memory recorded from such a result holds little more than the note."""


@contextmanager
def open_store(config: str | None, state_dir: Path | None, *, searching: bool = False) -> Iterator[Any]:
    """The long-term store a config describes (its memory block, whether or not it is enabled); for a
    search (``searching``), the offline embedder starts loading while the store opens."""
    from massgen_cli.config.memory_loader import load_memory_config
    from massgen_cli.memory.longterm.store.mem0_config import plan_embedder, warm_embedder

    memory = load_memory_config(config)
    loading = warm_embedder(plan_embedder(memory.persistent_memory.embedding)) if searching else None
    # The store's modules load while the embedder does.
    from massgen_cli.memory.longterm.store.persistent import PersistentMemory
    from massgen_cli.memory.longterm.store.vector_stores import close_clients
    from massgen_cli.state import resolve_state_dir

    try:
        folder = resolve_state_dir(state_dir)
        store = PersistentMemory(
            memory.persistent_memory, folder, domain=memory.domain, task_type=memory.task_type
        )
        _say_waiting_records(folder, memory)
        try:
            yield store
        finally:
            store.close()
            close_clients()
    finally:
        if loading is not None:
            loading.join()


def _say_waiting_records(state_dir: Path, memory: Any) -> None:
    """Records in the spool are not in the store yet: said, with which run writes them."""
    from massgen_cli.memory.longterm.record.spool import SPOOL_NAME, Spool, waiting_notice
    from massgen_cli.memory.longterm.store.vector_stores import spool_target

    own = spool_target(memory, state_dir)
    spool = Spool(state_dir / "memory" / SPOOL_NAME, own)
    try:
        waiting = spool.waiting()
    except OSError:
        return
    for target, count in waiting.items():
        if target == own:
            line = (
                f"{count} memory record(s) in {spool.path} are not in this store yet: the next run with "
                "this config writes them"
            )
        else:
            line = waiting_notice(count, target, spool.path)
        print(line, file=sys.stderr)


def dated(scope: SearchFilter, since: str | None, until: str | None) -> SearchFilter:
    """``scope`` with the span of days ``--since`` and ``--until`` name (``record.dates.date_bound``;
    relative dates are resolved against today); a bound that names no date is a usage error."""
    from dataclasses import replace

    first, last = _bound("since", since, end=False), _bound("until", until, end=True)
    if first is not None and last is not None and first > last:
        raise UsageError(f"--since {first} is after --until {last}: no day is between")
    return replace(scope, since=first, until=last)


def _bound(option: str, text: str | None, *, end: bool) -> date | None:
    from massgen_cli.memory.longterm.record.dates import date_bound, today

    if text is None:
        return None
    found = date_bound(text, today(), end=end)
    if found is None:
        raise UsageError(
            f"--{option} '{text}' names no date: give a date (2023-05-08, 8 May 2023), a month "
            "(May 2023), a year (2023) or a relative date (yesterday, last month)"
        )
    return found


def search(
    query: str,
    config: str | None,
    state_dir: Path | None,
    scope: SearchFilter,
    *,
    limit: int,
    as_json: bool,
    method: str = "hybrid",
    context: int = 0,
) -> int:
    """Print the memories that best match ``query`` (``method`` is one that Typer checked), each with
    up to ``context`` memories recorded on each side of it in its session."""
    with open_store(config, state_dir, searching=method != "lexical") as store:
        hits = store.search(query, limit=limit, scope=scope, method=cast("Method", method), context=context)
    for hit in hits:
        record = hit.to_json()
        if as_json:
            print(json.dumps(record, ensure_ascii=False))
            continue
        meta = record["metadata"]
        speaker = speaker_of(hit.memory.role, hit.source.agent_id, hit.source.extra)
        where = f"{speaker} · {meta['session_id']} · turn {meta['turn']}"
        print(printable(f"{hit.score:.3f}  [{where}]  {hit.text}"))  # no control character for a terminal
        for turn in hit.context:
            side = "before" if turn.offset < 0 else "after "
            print(printable(f"       {side} [{turn.source.agent_id} · turn {turn.source.turn}]  {turn.text}"))
    if not hits:
        _stderr().print("no memories found")
    return 0


def list_memories(
    config: str | None,
    state_dir: Path | None,
    *,
    session: str | None,
    agent: str | None,
    as_json: bool,
    include_stale: bool = False,
    include_stubs: bool = False,
    goal: str | None = None,
) -> int:
    """Every memory with its key, who said it, and its learned value for ``goal`` (by default the
    config's ``value_learning.goal``, else the memory's own task type: the goal it learned for, as
    ``memory values`` ranks it); with ``include_stale`` also those agents marked stale, with the reason
    and who marked them. The stubs of tool results cut by a compression are left out (and counted on
    stderr) unless ``include_stubs``."""
    chosen = goal or _configured_goal(config)
    with open_store(config, state_dir) as store:
        memories = store.list_memories(session_id=session, agent_id=agent, include_stale=include_stale)
        goals = {m.id: segment(chosen or m.task_type) for m in memories}
        values = _learned(store.index, goals)
        stale = store.index.stale_marks() if include_stale else {}
    shown = memories if include_stubs else [m for m in memories if not REMOVED_RESULT_STUB.search(m.text)]
    _say_listed(len(shown), len(memories) - len(shown), session)
    for memory in shown:
        first = next(
            (x for x in memory.sources if session in (None, x.session_id) and agent in (None, x.agent_id)),
            memory.first,
        )
        speaker = speaker_of(memory.role, first.agent_id, first.extra)
        value = values.get(memory.id, DEFAULT_VALUE)
        if as_json:
            record = {
                "id": memory.id,
                "key": memory.key,
                "value": round(value, 4),
                "goal": goals[memory.id],
                "text": memory.text,
                "role": memory.role,
                "speaker": speaker,
                "sources": [s.to_json() for s in memory.sources],
                "metadata": memory.extra,
            }
            mark = stale.get(memory.id)
            if mark is not None:
                record["stale"] = {k: v for k, v in vars(mark).items() if k != "memory_id"}
            print(json.dumps(record, ensure_ascii=False))
        else:
            where = f"{speaker} · {first.session_id} · turn {first.turn}"
            line = f"{memory.key}  value={value:.3f}  [{where}]  {one_line(memory.text, TEXT_CHARS)}"
            print(printable(line + _stale_note(stale.get(memory.id))))
    return 0


def _learned(index: Any, goals: dict[str, str]) -> dict[str, float]:
    """The learned value of each memory for its goal (memories that never learned are left out)."""
    values: dict[str, float] = {}
    for goal in set(goals.values()):
        values |= index.values((memory_id for memory_id, its in goals.items() if its == goal), goal)
    return values


def _say_listed(shown: int, hidden: int, session: str | None) -> None:
    """On stderr, before the list: how many stubs of removed tool results it leaves out, or that it is
    empty."""
    console = _stderr(highlight=False)
    if hidden:
        console.print(f"{hidden} stub(s) of removed tool results not shown; --stubs shows them")
    elif not shown:
        console.print(f"no memories of session {session} stored" if session else "no memories stored")


def _stale_note(mark: StaleMark | None) -> str:
    if mark is None:
        return ""
    when = f", turn {mark.turn}" if mark.turn is not None else ""
    return f"  [stale: {one_line(mark.reason, TEXT_CHARS)} — marked by {mark.marked_by}{when}]"


def values(config: str | None, state_dir: Path | None, *, goal: str | None, limit: int, as_json: bool) -> int:
    """Memories ranked by their learned value for ``goal`` (default: the config's goal)."""
    goal = goal or _goal(config)
    with open_store(config, state_dir) as store:
        ranked = store.index.ranked_values(segment(goal), limit)
        memories = store.index.get(memory_id for memory_id, _, _ in ranked)
    for memory_id, value, updates in ranked:
        memory = memories.get(memory_id)
        if memory is None:
            continue
        if as_json:
            record = {
                "id": memory_id,
                "key": memory.key,
                "goal": goal,
                "value": round(value, 4),
                "updates": updates,
            }
            print(json.dumps({**record, "text": memory.text}, ensure_ascii=False))
        else:
            print(f"{value:.3f}  ({updates} updates)  {memory.key}  {one_line(memory.text, TEXT_CHARS)}")
    if not ranked:
        _stderr().print(f"no learned values for goal '{goal}' yet")
    return 0


def _goal(config: str | None) -> str:
    from massgen_cli.config.memory_loader import load_memory_config
    from massgen_cli.memory.runtime.opening import value_goal

    return value_goal(load_memory_config(config))


def _configured_goal(config: str | None) -> str | None:
    """The config's ``value_learning.goal``, if it names one (else values are learned per task type)."""
    from massgen_cli.config.memory_loader import load_memory_config

    return load_memory_config(config).value_learning.goal


def clear(
    config: str | None, state_dir: Path | None, *, session: str | None, everything: bool, yes: bool
) -> int:
    if not session and not everything:
        raise UsageError("say what to clear: --session ID, or --all for every memory")
    what = f"the memories of session {session}" if session else "every stored memory"
    if not yes and not confirm(f"Delete {what}?"):
        _stderr().print("nothing deleted")
        return 0
    with open_store(config, state_dir) as store:
        count = store.clear(session_id=session)
    _stderr().print(f"deleted {count} memories")
    return 0


def confirm(question: str) -> bool:
    """Ask on the terminal; with stdin not a terminal, a ``UsageError`` that asks for ``--yes``."""
    if not sys.stdin.isatty():
        raise UsageError(f"{question} Add --yes to confirm when stdin is not a terminal")
    from rich.prompt import Confirm

    return Confirm.ask(question, console=_stderr())


def migrate(config: str | None, state_dir: Path | None, *, again: bool) -> int:
    """Upload the state folder's local index to the config's server store (PostgreSQL, or a Qdrant
    server), and say what moved."""
    from massgen_cli.config.memory_loader import load_memory_config
    from massgen_cli.memory.longterm.store.migration import local_index_path
    from massgen_cli.memory.longterm.store.migration import migrate as upload
    from massgen_cli.state import resolve_state_dir

    persistent = load_memory_config(config).persistent_memory
    folder = resolve_state_dir(state_dir)
    server = _server_index(persistent, folder)
    try:
        moved = upload(folder, server, again=again)
    finally:
        server.close()
    if moved is None:
        where = local_index_path(folder)
        print(
            f"nothing to move: {where} is not there, is empty, or was moved to {server.identity()} before "
            "(--again moves it again; what the server has stays)"
        )
    else:
        print(f"{moved.describe()} to {server.identity()}")
    return 0


def _server_index(persistent: PersistentMemoryConfig, state_dir: Path) -> Any:
    """The config's server index (PostgreSQL, or a Qdrant server); a ``UsageError`` for any other."""
    from massgen_cli.memory.longterm.store.mem0_config import plan_embedder
    from massgen_cli.memory.longterm.store.persistent import open_index

    url = persistent.pgvector.connection_string
    if not persistent.keeps_truth_on_server or (persistent.vector_store == "pgvector" and not url):
        raise UsageError(
            "memory migrate moves a state folder's index to a server store: give a config whose "
            "persistent_memory uses vector_store: pgvector (with a connection_string), or vector_store: "
            "qdrant with qdrant.mode: server"
        )
    # A Qdrant collection is made for the embedder's vectors; PostgreSQL's table takes any size.
    qdrant = persistent.vector_store == "qdrant"
    return open_index(persistent, state_dir, plan_embedder(persistent.embedding).dimensions if qdrant else 0)


def _stderr(**options: Any) -> Any:
    """A Rich console on stderr for the commands' notices (Rich is imported only when one is said)."""
    from rich.console import Console

    return Console(stderr=True, **options)
