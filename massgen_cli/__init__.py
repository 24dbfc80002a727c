"""massgen-cli: a command-line multi-agent LLM runner with real memory."""

__version__ = "0.1.0"
