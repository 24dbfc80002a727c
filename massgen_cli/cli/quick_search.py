"""``massgen memory search`` read without Typer: the plain form of the command (its query and options,
each given once as ``--option VALUE``) is the one a user or a script runs again and again, and Typer's
import and its reading of the options were a fifth of the command's time. Anything else (``--help``, a
mistake, ``--option=VALUE``, an option given twice, options before ``memory``) is left to Typer, so what
is said about it stays Typer's own words."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from massgen_cli.cli.plain_args import plain_fields

VALUE_OPTIONS = {
    "--config": "config",
    "-c": "config",
    "--state-dir": "state_dir",
    "--session": "session",
    "--agent": "agent",
    "--limit": "limit",
    "--domain": "domain",
    "--task-type": "task_type",
    "--method": "method",
    "--context": "context",
    "--since": "since",
    "--until": "until",
}
"""``memory search``'s options that take a value (``memory_app.memory_search``), by the field they set."""
SWITCHES = {"--json": "as_json", "--debug": "debug"}
METHODS = ("hybrid", "dense", "lexical")
COUNTS = {"limit": 1, "context": 0}
"""The whole-number options, with the least each takes."""


@dataclass(frozen=True)
class SearchCall:
    """A ``memory search`` command line, read: what ``memory_app.memory_search`` receives."""

    query: str
    config: str | None = None
    state_dir: Path | None = None
    session: str | None = None
    agent: str | None = None
    limit: int = 10
    domain: str | None = None
    task_type: str | None = None
    method: str = "hybrid"
    context: int = 1
    since: str | None = None
    until: str | None = None
    as_json: bool = False
    debug: bool = False


def plain_search(args: list[str]) -> SearchCall | None:
    """``args`` as a ``memory search`` when they are its plain form, else None (Typer reads them)."""
    if args[:2] != ["memory", "search"]:
        return None
    fields = plain_fields(args[2:], VALUE_OPTIONS, SWITCHES, "query")
    return _typed(fields) if fields is not None and "query" in fields else None


def _typed(fields: dict[str, Any]) -> SearchCall | None:
    """The fields as ``memory_search`` takes them; None when one is not what Typer would accept."""
    for name, least in COUNTS.items():
        if name in fields:
            text = fields[name]
            if not (text.isascii() and text.isdecimal()) or int(text) < least:
                return None
            fields[name] = int(text)
    if fields.get("method", "hybrid") not in METHODS:
        return None
    if "state_dir" in fields:
        fields["state_dir"] = Path(fields["state_dir"])
    return SearchCall(**fields)


def run_search(call: SearchCall) -> NoReturn:
    """What ``memory_app.memory_search`` does with the same command line; ends with its exit code."""
    from massgen_cli.cli.guard import outcome

    raise SystemExit(outcome(call.debug, lambda: _search(call)))


def _search(call: SearchCall) -> int:
    import os

    # No pydantic plugin sees the config's models here, and looking for plugins took 10 ms.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from massgen_cli.cli import memory_commands
    from massgen_cli.memory.longterm.retrieve.filters import SearchFilter

    scope = SearchFilter(call.session, call.agent, call.domain, call.task_type)
    return memory_commands.search(
        call.query,
        call.config,
        call.state_dir,
        memory_commands.dated(scope, call.since, call.until),
        limit=call.limit,
        as_json=call.as_json,
        method=call.method,
        context=call.context,
    )
