"""The question command's options for the quick start, sessions and scripts, as Typer reads them (MassGen's
names)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

BackendOption = Annotated[
    str | None,
    typer.Option(
        "--backend",
        metavar="TYPE",
        help="Quick start, no config file: the backend of the agents (default: the one the model's name "
        "implies; see --list-backends).",
    ),
]
ModelOption = Annotated[
    list[str] | None,
    typer.Option(
        "--model", metavar="NAME", help="Quick start: an agent on this model; repeat for one agent per model."
    ),
]
SystemMessageOption = Annotated[
    str | None,
    typer.Option("--system-message", metavar="TEXT", help="Quick start: the agents' system message."),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url", metavar="URL", help="Quick start: the server's address (an OpenAI-compatible /v1)."
    ),
]
SessionOption = Annotated[
    str | None, typer.Option("--session", "--session-id", help="Continue (or create) this session.")
]
ContinueOption = Annotated[
    bool, typer.Option("--continue", help="Continue the most recent session (of the state folder).")
]
ListSessionsOption = Annotated[
    bool, typer.Option("--list-sessions", help="List the sessions (as `massgen sessions list`).")
]
ListBackendsOption = Annotated[
    bool, typer.Option("--list-backends", help="List the backend types and the variable of each one's key.")
]
OutputFileOption = Annotated[
    Path | None, typer.Option("--output-file", metavar="FILE", help="Also write the final answer to FILE.")
]
AutomationOption = Annotated[
    bool,
    typer.Option(
        "--automation",
        help="For scripts: no progress; LOG_DIR and STATUS on the first lines of stdout, then the answer; "
        "status.json kept current in the log folder; exit 0 answered, 1 config error, 2 failed, 3 timeout, "
        "4 interrupted.",
    ),
]
StreamEventsOption = Annotated[
    bool,
    typer.Option(
        "--stream-events",
        help="Every event as one JSON line on stdout (as events.jsonl holds it), the final answer last; "
        "implies --automation (its LOG_DIR and STATUS lines go to stderr).",
    ),
]
WebOption = Annotated[
    bool,
    typer.Option(
        "--web",
        help="Watch and steer the run in the live web view, served on 127.0.0.1 while it runs (its "
        "address on stderr); the answer goes to stdout and the view stops when the run ends.",
    ),
]
