"""A running command's live lines: escape codes and redraws settled, lines bounded, and the last output
never held back when the command ends."""

from __future__ import annotations

import asyncio

from massgen_cli.coordination.command_output import LiveCommandOutput
from massgen_cli.events import LIVE_LINE_CHARS, LIVE_LINES, CommandOutput, RunEvent


def test_lines_are_clean_bounded_and_the_last_ones_are_sent_when_the_command_ends():
    async def run() -> list[RunEvent]:
        sent: list[RunEvent] = []
        live = LiveCommandOutput("a", "c1", "make", sent.append)
        live.started()
        live(b"\x1b[1;32mok\x1b[0m\n\x1b]0;title\x07progress 10%\rprogress 100%\n")
        live("é".encode()[:1])  # a character cut between two reads
        live("é".encode()[1:] + b"x" * (LIVE_LINE_CHARS * 2) + b"\n")
        for number in range(20):
            live(f"line {number}\n".encode())
        live(b"unfinished")
        live.close()
        return sent

    sent = asyncio.run(run())
    assert all(isinstance(event, CommandOutput) for event in sent)
    assert sent[0] == CommandOutput("a", "c1", "make", (), "", 0), "the start, said before any output"
    last = sent[-1]
    assert isinstance(last, CommandOutput)
    assert last.finished_lines == 23 and last.unfinished == "unfinished"
    assert list(last.lines) == [f"line {number}" for number in range(20 - LIVE_LINES, 20)]


def test_escape_codes_redraws_and_long_lines_are_settled():
    async def run() -> CommandOutput:
        sent: list[RunEvent] = []
        live = LiveCommandOutput("a", "c1", "make", sent.append)
        live(b"\x1b[1;32mok\x1b[0m\n\x1b]0;title\x07progress 10%\rprogress 100%\n" + "é".encode()[:1])
        live("é".encode()[1:] + b"x" * (LIVE_LINE_CHARS * 2) + b"\n")
        live.close()
        event = sent[-1]
        assert isinstance(event, CommandOutput)
        return event

    event = asyncio.run(run())
    assert event.lines[:2] == ("ok", "progress 100%")
    assert event.lines[2].startswith("é") and len(event.lines[2]) == LIVE_LINE_CHARS
