"""Where an interactive session's lines come from: a pipe (one question per line, read as bytes), or a
terminal, where a prompt with line editing and a history kept across sessions takes them
(prompt_toolkit, imported only then)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console

from massgen_cli.cli.signals import TERMINATED
from massgen_cli.errors import UsageError

HISTORY_FILE = "prompt_history"
"""The questions and commands typed at the prompt, in the state folder (arrow-up recalls them)."""


def chat_lines(console: Console, history_folder: Path | None) -> Iterator[str]:
    """The session's lines until EOF: piped, or typed at a prompt (``history_folder`` keeps its history;
    None keeps it for this session only). Ctrl-C at the prompt drops the line being typed; Ctrl-D
    leaves."""
    if not sys.stdin.isatty():
        yield from piped_lines()
        return
    yield from _typed_lines(console, history_folder)


def piped_lines() -> Iterator[str]:
    """Questions from a pipe, one per line; binary data or text that is not UTF-8 is a usage error."""
    for number, raw in enumerate(sys.stdin.buffer, start=1):
        if b"\0" in raw:
            raise UsageError(f"line {number} of standard input is binary data, not a question")
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError(f"line {number} of standard input is not UTF-8 text; convert it first") from None


def _typed_lines(console: Console, history_folder: Path | None) -> Iterator[str]:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.formatted_text import FormattedText
    from prompt_toolkit.output import create_output

    # The prompt goes where the progress goes (stderr): stdout is for final answers alone.
    session: PromptSession[str] = PromptSession(
        history=_history(history_folder, console), output=create_output(stdout=sys.stderr)
    )
    prompt = FormattedText([("bold ansicyan", "you"), ("", ": ")])
    while True:
        try:
            yield session.prompt(prompt)
        except EOFError:
            return
        except KeyboardInterrupt:
            if TERMINATED.is_set():
                raise
            console.print("[dim](Ctrl-D or /quit leaves)[/]")


def _history(folder: Path | None, console: Console) -> Any:
    """The prompt's history: a file only its user can read (it holds what was asked), or, without a
    writable state folder, one that lasts this session."""
    from prompt_toolkit.history import FileHistory, InMemoryHistory

    if folder is None:
        return InMemoryHistory()
    path = folder / HISTORY_FILE
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
        path.chmod(0o600)  # one made before, or under a looser umask
    except OSError as error:
        console.print(f"[yellow]the prompt history {path} cannot be kept ({error}); it lasts this session[/]")
        return InMemoryHistory()
    return FileHistory(str(path))
