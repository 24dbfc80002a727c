"""The embedded model's server: xllamacpp's OpenAI-compatible HTTP server in a child process.

The parent side is ``LocalServer``: it starts ``python -m massgen_cli.backends.local_server --model
PATH --port 0``, waits until it answers, and stops it by its PID. The child side is ``main``: once the
server listens it prints one JSON line ``{"address": "http://127.0.0.1:PORT"}`` on stdout (port 0
picks a free port) and serves until its stdin closes (the parent is gone), or SIGTERM or SIGINT.
xllamacpp is imported only in the child.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import IO, Any

from massgen_cli.errors import BackendError

DEFAULT_ALIAS = "smollm2-135m"
# Each slot gets ctx / parallel tokens: 4 slots of 4096 serve the default three agents at once with
# room for coordination prompts that quote several answers (SmolLM2 was trained on 8192).
DEFAULT_CTX = 16384
DEFAULT_PARALLEL = 4
DEFAULT_THREADS = 2
# The prompt cache keeps recent slot states in RAM; llama.cpp's default (8 GiB) is far more than a
# small machine should give a 135M model.
PROMPT_CACHE_MIB = 512
# libgomp threads spin 300k rounds before they sleep. With two threads on two cores and any other busy
# process, llama.cpp then spends its time spinning: measured 120 -> 8 tokens/s for three parallel
# requests. A short spin keeps the speed of an idle machine and degrades far less (41 tokens/s).
OPENMP_SPIN_COUNT = "1000"
START_TIMEOUT_SECONDS = 60.0
STOP_GRACE_SECONDS = 5.0
POLL_INTERVAL_SECONDS = 0.05
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass(frozen=True)
class ServerSettings:
    """How the server is started: the model, the context shared by the slots, and CPU threads."""

    model_path: str
    ctx: int = DEFAULT_CTX
    parallel: int = DEFAULT_PARALLEL
    threads: int = DEFAULT_THREADS
    alias: str = DEFAULT_ALIAS

    @property
    def slot_ctx(self) -> int:
        """Tokens one request may use (prompt and answer)."""
        return self.ctx // self.parallel

    def command(self) -> list[str]:
        """The child's command line; port 0 lets the server pick a free port and report it."""
        return [
            sys.executable, "-m", "massgen_cli.backends.local_server", "--model", self.model_path,
            "--port", "0", "--alias", self.alias, "--ctx", str(self.ctx),
            "--parallel", str(self.parallel), "--threads", str(self.threads),
        ]  # fmt: skip


@dataclass
class LocalServer:
    """A running server child process; ``start`` returns it ready and warmed up."""

    process: subprocess.Popen[bytes]
    settings: ServerSettings
    log: IO[bytes]
    base_url: str = ""

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    @classmethod
    def start(cls, settings: ServerSettings, timeout: float = START_TIMEOUT_SECONDS) -> LocalServer:
        """Start the child, wait until ``/v1/models`` answers, then send one small warm-up request."""
        # The child's stderr, kept open for its whole life so that errors can quote its tail; appending,
        # so that reading it does not move where the child writes.
        log = tempfile.TemporaryFile(mode="a+b", prefix="massgen-local-server-")  # noqa: SIM115
        try:
            process = subprocess.Popen(
                settings.command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                env=_child_environment(), start_new_session=True,
            )  # fmt: skip
        except OSError:
            log.close()
            raise
        server = cls(process, settings, log)
        try:
            server._wait_ready(time.monotonic() + timeout)
            server._warm_up()
        except BaseException:
            server.stop()
            raise
        return server

    def _wait_ready(self, deadline: float) -> None:
        address = self._read_address(deadline)
        self.base_url = f"{address}/v1"
        while not self._answers("/models"):
            if not self.alive:
                raise self._failure("the local model server exited while starting")
            if time.monotonic() > deadline:
                raise self._failure("the local model server did not answer in time")
            time.sleep(POLL_INTERVAL_SECONDS)

    def _read_address(self, deadline: float) -> str:
        # A timer kills a child that hangs while loading, which ends the blocking reads below.
        watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), self.process.kill)
        watchdog.start()
        try:
            address = _first_address(self.process.stdout)
        finally:
            watchdog.cancel()
        if address is None:
            raise self._failure("the local model server did not start")
        return address

    def _answers(self, path: str) -> bool:
        try:
            with _NO_PROXY.open(self.base_url + path, timeout=2) as response:
                return bool(response.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def _warm_up(self) -> None:
        message = {"role": "user", "content": "Hi"}
        body = {"model": self.settings.alias, "messages": [message], "max_tokens": 1}
        request = urllib.request.Request(
            self.base_url + "/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            with _NO_PROXY.open(request, timeout=30) as response:
                response.read()
        except (urllib.error.URLError, OSError) as error:
            raise self._failure(f"the local model server failed its warm-up request ({error})") from None

    def _failure(self, message: str) -> BackendError:
        return BackendError(f"{message}. Its last log lines:\n{self.log_tail()}", provider="local")

    def log_tail(self, lines: int = 15) -> str:
        """The end of the child's stderr."""
        with contextlib.suppress(ValueError, OSError):
            self.log.seek(0)
            return "\n".join(self.log.read().decode(errors="replace").splitlines()[-lines:])
        return ""

    def stop(self, grace: float = STOP_GRACE_SECONDS) -> None:
        """Terminate the child, kill it after ``grace`` seconds, and reap it."""
        if self.alive:
            self.process.terminate()
            try:
                self.process.wait(grace)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream:
                stream.close()
        self.log.close()


def _child_environment() -> dict[str, str]:
    environment = dict(os.environ)
    if "OMP_WAIT_POLICY" not in environment:
        environment.setdefault("GOMP_SPINCOUNT", OPENMP_SPIN_COUNT)
    return environment


def _first_address(stdout: IO[bytes] | None) -> str | None:
    """The address the child announces on stdout; the pipe is closed once it is read."""
    if stdout is None:
        return None
    with stdout:
        for line in stdout:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                return str(json.loads(line)["address"])
    return None


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line of the server process."""
    parser = argparse.ArgumentParser(prog="python -m massgen_cli.backends.local_server")
    parser.add_argument("--model", required=True, help="path of the GGUF file")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1; 0 picks a free one")
    parser.add_argument("--alias", default=DEFAULT_ALIAS, help="model name the server reports")
    parser.add_argument("--ctx", type=int, default=DEFAULT_CTX, help="total context, shared by the slots")
    parser.add_argument("--parallel", type=int, default=DEFAULT_PARALLEL, help="requests served at once")
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS, help="CPU threads")
    return parser.parse_args(argv)


def build_params(args: argparse.Namespace) -> Any:
    """xllamacpp's server parameters for the arguments; each slot gets ctx / parallel tokens."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.hostnames = ["127.0.0.1"]
    params.port = args.port
    params.n_ctx = args.ctx
    params.n_parallel = args.parallel
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.cache_ram_mib = PROMPT_CACHE_MIB
    params.ui = False
    return params


def _stop_on_signal(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)


def serve(args: argparse.Namespace) -> None:
    """Start the server, announce its address, and block until stdin closes or a signal arrives."""
    import xllamacpp

    signal.signal(signal.SIGTERM, _stop_on_signal)
    signal.signal(signal.SIGINT, _stop_on_signal)
    server = xllamacpp.Server(build_params(args))
    try:
        print(json.dumps({"address": server.listening_address}), flush=True)
        # Nobody reads stdout after the address: send any later output to the log on stderr.
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        sys.stdin.buffer.read()
    finally:
        del server


def main(argv: list[str] | None = None) -> int:
    """Entry point; exit code 1 when the server cannot start (details are on stderr)."""
    args = parse_args(argv)
    try:
        serve(args)
    except RuntimeError as error:
        print(f"local_server: {error}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
