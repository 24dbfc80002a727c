"""massgen-cli: a command-line multi-agent LLM runner with real memory.

From Python: ``massgen_cli.run(config, question)`` returns a ``Result``; ``arun`` is its async form,
``stream`` yields the run's typed events, and a ``Team`` answers several questions of one session
(``massgen_cli.api``). They are imported on first use, so ``massgen --help`` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Result", "Team", "arun", "run", "stream"]

if TYPE_CHECKING:
    from massgen_cli.api import Result, Team, arun, run, stream


def __getattr__(name: str) -> Any:
    if name in __all__:
        from massgen_cli import api

        return getattr(api, name)
    raise AttributeError(f"module 'massgen_cli' has no attribute {name!r}")
