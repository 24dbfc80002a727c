"""The final answer on stdout, and what a stream whose reader went away becomes."""

from __future__ import annotations

import os
from typing import TextIO

from massgen_cli.text import printable


class AnswerOut:
    """The final answer on stdout: what streamed of it, and the rest once it is known. Only a terminal
    sees it stream; a pipe or a file gets the answer once it is final, so a turn that fails or is
    cancelled midway leaves nothing there (stdout is for the final answer alone)."""

    def __init__(self, out: TextIO):
        self.out = out
        self.live = is_terminal(out)
        self.started = False
        self.streamed = ""
        self.line_open = False

    def stream(self, text: str) -> None:
        if self.live:
            self._write(text)
        self.streamed += text

    def finish(self, final: str) -> None:
        """Write what ``final`` adds to the streamed text (all of it, on a new line, when a stream broke
        off and the answer is another text), and end the line."""
        if not self.live:
            self._write(final)
            self.end_line()
            return
        streamed = self.streamed.strip()
        if final.strip() != streamed:
            if streamed and final.startswith(self.streamed):
                self._write(final[len(self.streamed) :])
            else:
                self.end_line()
                self._write(final)
        self.end_line()

    def end_line(self) -> None:
        if self.line_open:
            self._write("\n")
        self.line_open = False

    def _write(self, text: str) -> None:
        if not text:
            return
        try:  # on a terminal, a model's control characters could rewrite the screen or the window title
            self.out.write(printable(text) if self.live else text)
            self.out.flush()
        except BrokenPipeError:  # the reader went away (`| head -1`): the turn still ends and is recorded
            to_devnull(self.out)
        self.line_open = not text.endswith("\n")


def to_devnull(stream: TextIO) -> None:
    """``stream``'s reader went away: what is still buffered for it, and whatever is written to it later,
    goes to /dev/null, so no later write or the interpreter's last flush fails (Python's advice on
    SIGPIPE, which Rich follows too)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, stream.fileno())
    finally:
        os.close(devnull)


def is_terminal(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream: treated as a file
        return False
