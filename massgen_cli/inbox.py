"""The steering inbox of a run: messages a person sends while the agents work (MassGen's inbox idea).
Whoever watches the run posts to it from any thread; the agents read it at their next step. It only
holds messages: how they reach the agents is the steering extension's (``features/steering.py``)."""

from __future__ import annotations

import threading

from massgen_cli.events import STEERING_CHARS

STEERING_HEADER = "[Message from the user during the run]"
"""How a steering message is headed where an agent reads it."""
MAX_MESSAGE_CHARS = STEERING_CHARS
"""The most characters of one message (every later step of every agent carries it)."""
MAX_MESSAGES = 50
"""The most messages one run takes."""


class InboxFull(ValueError):
    """The run took ``MAX_MESSAGES`` messages already."""


class Inbox:
    """The messages sent to one run (a served turn, or ``--web``'s run), in order; thread-safe (posted
    from the server's loop, read by the run's)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._messages: list[str] = []

    def post(self, text: str) -> str:
        """Keep ``text`` (stripped, at most ``MAX_MESSAGE_CHARS``); a ``ValueError`` when it is empty, an
        ``InboxFull`` when ``MAX_MESSAGES`` came already."""
        text = text.strip()[:MAX_MESSAGE_CHARS]
        if not text:
            raise ValueError("a steering message needs some text")
        with self._lock:
            if len(self._messages) >= MAX_MESSAGES:
                raise InboxFull(f"a run takes at most {MAX_MESSAGES} steering messages")
            self._messages.append(text)
        return text

    def messages(self) -> list[str]:
        """Every message sent so far, oldest first."""
        with self._lock:
            return list(self._messages)
