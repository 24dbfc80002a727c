"""The exception tree. Messages are whole sentences that say what to do next."""

from __future__ import annotations


class MassGenError(Exception):
    """Base class of every error this package raises on purpose."""

    exit_code = 1


class UsageError(MassGenError):
    """The command line was used wrongly."""

    exit_code = 2


class ConfigError(MassGenError):
    """A config could not be loaded; ``problems`` holds one readable line per problem, ``warnings`` what
    loading it would have warned of besides."""

    exit_code = 2

    def __init__(self, problems: list[str] | str, warnings: list[str] | None = None):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        self.warnings = list(warnings or [])
        super().__init__("\n".join(self.problems))


class BackendError(MassGenError):
    """A backend call failed. ``retryable`` says whether trying again may help."""

    retryable = False

    def __init__(self, message: str, *, provider: str = "", status: int | None = None):
        self.provider = provider
        self.status = status
        super().__init__(message)


class MissingAPIKeyError(BackendError):
    """No API key was configured; the message names the variable to set. A setup problem: exit 2."""

    exit_code = 2


class RateLimitError(BackendError):
    """HTTP 429. ``retry_after`` is the server's hint in seconds, when it sent one."""

    retryable = True

    def __init__(self, message: str, *, provider: str = "", retry_after: float | None = None):
        super().__init__(message, provider=provider, status=429)
        self.retry_after = retry_after


class ServerError(BackendError):
    """HTTP 5xx from the provider."""

    retryable = True


class ConnectionFailedError(BackendError):
    """The provider could not be reached, or the stream was cut."""

    retryable = True


class BackendTimeoutError(BackendError):
    """The provider did not answer in time."""

    retryable = True


class ContextLengthError(BackendError):
    """The request did not fit the model's context window; memory compression can act on it."""


class MemoryStoreError(MassGenError):
    """Long-term memory failed. Logged and shown; it never ends a turn."""


class StoreUnreachable(MemoryStoreError):
    """The memory server could not be reached (its connection refused, lost or timed out): one cause for
    every call until it is back, so a run says it once."""


def outside_failure(error: BaseException) -> str | None:
    """The one line for an error that comes from outside the process (the disk, a file, a child process,
    a damaged database file), or None for one that does not: that one is a bug of ours.

    Providers' errors are ``BackendError`` already (``backends.stream_failures``); MCP servers' and tools'
    errors are the tool call's result; these are what is left to reach the command line."""
    import sqlite3
    import subprocess

    if isinstance(error, OSError):
        where = f" ({error.filename})" if error.filename else ""
        return f"the system refused an operation{where}: {error.strerror or error}"
    if isinstance(error, sqlite3.DatabaseError):
        return f"a database file of the state folder is damaged or unreadable: {error}"
    if isinstance(error, subprocess.SubprocessError):
        return f"a child process failed: {error}"
    if isinstance(error, UnicodeDecodeError):
        return f"a file or input is not UTF-8 text ({error.reason} at byte {error.start})"
    return None
