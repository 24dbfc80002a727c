"""MassGen's filesystem memory mode (``coordination.enable_memory_filesystem_mode``): memory an agent keeps
as Markdown files in its own workspace, ``memory/short_term/`` (shown in full before every step) and
``memory/long_term/`` (listed, read on demand), carried over to the next turn through the winner's
workspace and indexed into long-term memory when that is on.

``folder`` reads and writes the files without trusting the workspace, ``prompt`` says them to the agent,
``carry`` merges and carries them over at the end of a turn, ``ledger`` keeps what is recorded already,
``mode`` is the part of the run."""

from massgen_cli.memory.filesystem.ledger import LEDGER_FILE, FileLedger
from massgen_cli.memory.filesystem.mode import MemoryFiles

__all__ = ["LEDGER_FILE", "FileLedger", "MemoryFiles"]
