"""The command line as read before Typer reads it: its first word (a subcommand or a question), the
options written before a subcommand's name, ``--ray`` without a value."""

from __future__ import annotations

from collections.abc import Collection

VALUE_OPTIONS = (
    "--config",
    "-c",
    "--state-dir",
    "--session",
    "--session-id",
    "--backend",
    "--model",
    "--system-message",
    "--base-url",
    "--output-file",
    "--max-cost",
    "--agent",
    "--limit",
    "--goal",
    "--domain",
    "--task-type",
    "--out",
    "--concurrency",
    "--shared-session",
    "--validate",
    "--older-than",
    "--host",
    "--port",
    "--max-concurrent",
    "--max-waiting",
    "--api-key-env",
    "--token",
)
"""The options that take a value (the next word is theirs, not a subcommand or a question)."""


def first_positional(argv: list[str]) -> str | None:
    skip = False
    for token in argv:
        if skip:
            skip = False
        elif token == "--":
            return None
        elif token in VALUE_OPTIONS:
            skip = True
        elif not token.startswith("-"):
            return token
    return None


def options_after_command(args: list[str], groups: Collection[str]) -> list[str]:
    """Options written before a subcommand's name (one word, or a group's name and its command's, as in
    ``sessions list``) go after it: ``massgen --state-dir X sessions list`` is ``massgen sessions list
    --state-dir X`` (Typer reads a command's options only after its name), so ``--state-dir``,
    ``--config``, ``--debug``… mean the same on either side; an option the command does not take is
    refused by it, by name."""
    names: list[str] = []
    before: list[str] = []
    wanted, at = 1, 0
    while at < len(args) and len(names) < wanted and args[at] != "--":
        token = args[at]
        if not token.startswith("-"):
            names.append(token)
            wanted = 2 if token in groups else wanted
        elif token in VALUE_OPTIONS and at + 1 < len(args):
            before += [token, args[at + 1]]
            at += 1
        else:
            before.append(token)
        at += 1
    return [*names, *before, *args[at:]]


def ray_value(args: list[str]) -> list[str]:
    """``--ray`` alone means a local Ray instance: it takes a value only when one that looks like an
    address follows (``auto``, ``local`` or something with a ``:``)."""
    if "--ray" not in args:
        return args
    at = args.index("--ray") + 1
    following = args[at] if at < len(args) else ""
    if following in ("auto", "local") or (":" in following and not following.startswith("-")):
        return args
    return [*args[:at], "local", *args[at:]]
