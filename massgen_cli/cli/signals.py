"""How a run ends on a signal, whatever the dispositions it inherited: Ctrl-C (SIGINT) cancels the
running turn, SIGTERM ends the run as Ctrl-C would (exit 143). A run started in the background of a
script inherits SIGINT ignored; it is taken back here, or SIGTERM (which raises SIGINT) would be lost.

Cleaning up after a signal is bounded: if the run has not ended ``FORCE_EXIT_AFTER_S`` after SIGTERM,
or a second SIGTERM comes, the process exits at once with what is flushed."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Any

FORCE_EXIT_AFTER_S = 10.0
TERMINATED_EXIT = 143

TERMINATED = threading.Event()
"""Set by SIGTERM: the run ends as after Ctrl-C (the turn cancelled, everything closed), exit 143."""


def terminate_like_ctrl_c(signum: int, frame: Any) -> None:
    """SIGTERM: cancel as Ctrl-C does (the event loop's SIGINT handler cancels the turn), and make sure
    the process ends even when the cleanup does not."""
    if TERMINATED.is_set():
        exit_now(TERMINATED_EXIT)
    TERMINATED.set()
    timer = threading.Timer(FORCE_EXIT_AFTER_S, exit_now, args=(TERMINATED_EXIT,))
    timer.daemon = True
    timer.start()
    signal.raise_signal(signal.SIGINT)


def exit_now(code: int) -> None:
    """End the process now, whatever threads are still running (what was written is flushed first)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def end_on_signals() -> None:
    """For the whole process (the ``massgen`` command): SIGINT raises KeyboardInterrupt and SIGTERM ends
    the run like it, whatever was inherited."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, terminate_like_ctrl_c)
