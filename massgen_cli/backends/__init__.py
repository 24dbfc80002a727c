"""LLM backends behind one async streaming protocol; provider SDKs load only when used."""

from massgen_cli.backends.base import Backend, Capabilities, Completion, Request, ToolSpec, complete

__all__ = ["Backend", "Capabilities", "Completion", "Request", "ToolSpec", "complete"]
