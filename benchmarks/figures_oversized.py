"""What an oversized input costs in memory: the same run twice, side by side, once with an ordinary
input and once with an oversized one (a 300 MB file read by read_file, a provider line of 50 MB, an MCP
tool result of 50 MB), each in its own process; the figure is the largest growth of peak RSS in MB. Each
side is the least of ``RUNS`` runs: a run's peak varies by tens of MB with what loads at once (prices,
tokenizer) on a busy machine, whatever its input.

Run alone: python benchmarks/figures_oversized.py"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from tests.servers.fake_providers import FakeProviderServer, Reply, openai_stream  # noqa: E402

MCP_SERVER = HERE.parent / "tests" / "servers" / "mcp_fault_server.py"
BIG = 50 * 1024 * 1024
RUNS = 3


RUN_AND_REPORT = """
import sys
from massgen_cli.cli import main, signals

def report():
    with open("/proc/self/status") as status:
        peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    print(f"peak-rss-kb {peak}", file=sys.stderr)

exit_now = signals.exit_now
signals.exit_now = lambda code: (report(), exit_now(code))
try:
    main.main(sys.argv[1:])
finally:
    report()
"""
"""The runner's own peak: its address space's high-water mark (VmHWM). Not ru_maxrss, which Linux carries
over exec from the parent that spawned it (the benchmark, holding a 50 MB reply of its own), and not its
MCP servers' and other children's memory, which is theirs."""


def peak_rss_mb(folder: Path, config: str) -> float:
    """The peak RSS of ``massgen --config config.yaml`` run in ``folder``, in MB."""
    (folder / "config.yaml").write_text(textwrap.dedent(config))
    environment = {**os.environ, "MASSGEN_HOME": str(folder / "state"), "MEM0_TELEMETRY": "False"}
    run = subprocess.run(
        [sys.executable, "-c", RUN_AND_REPORT, "--config", "config.yaml", "-q", "Go."],
        cwd=folder,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    if run.returncode != 0:
        raise RuntimeError(f"the run failed: {run.stderr[-2000:]}")
    return int(run.stderr.rsplit("peak-rss-kb ", 1)[1].split()[0]) / 1024


def _file_config(folder: Path, size: int) -> str:
    workspace = folder / "ws"
    workspace.mkdir(exist_ok=True)
    with (workspace / "data.log").open("wb") as data:  # one long line, written in parts
        for _ in range(max(size, 1 << 20) // (1 << 20)):
            data.write(b"x" * min(size, 1 << 20))
        data.write(b"\nrow\n")
    return f"""
        agent:
          backend:
            type: scripted
            cwd: {workspace}
            responses: [{{calls: [{{tool: read_file, args: {{path: data.log, limit: 5}}}}]}}, "Done."]
        """


def _provider_config(folder: Path, size: int, server: FakeProviderServer) -> str:
    good = openai_stream("Fine.").frames
    server.script(Reply(frames=[good[0], 'data: {"x": "' + "y" * size + '"}\n\n', *good[1:]]))
    return f"""
        agents:
          - id: good
            backend: {{type: scripted, responses: ["Done."]}}
          - id: other
            backend:
              {{type: chatcompletion, model: m, base_url: {server.root_url}/v1, api_key: k, max_retries: 0}}
        orchestrator: {{decide_by: agreement}}
        """


def _mcp_config(folder: Path, size: int) -> str:
    return f"""
        agent:
          backend:
            type: scripted
            mcp_servers:
              - {{name: big, command: {sys.executable}, args: [{MCP_SERVER}]}}
            responses: [{{calls: [{{tool: mcp__big__big, args: {{size: {size}}}}}]}}, "Done."]
        """


def _peak_of(config: Callable[[Path, int], str], size: int) -> float:
    with tempfile.TemporaryDirectory() as folder:
        return peak_rss_mb(Path(folder), config(Path(folder), size))


def oversized_inputs() -> dict[str, float]:
    server = FakeProviderServer().start()
    cases: dict[str, Callable[[Path, int], str]] = {
        "read_file": lambda folder, size: _file_config(folder, size * 6),
        "provider_line": lambda folder, size: _provider_config(folder, size, server),
    }
    if MCP_SERVER.exists():
        cases["mcp_result"] = _mcp_config
    figures: dict[str, float] = {}
    try:
        for name, config in cases.items():
            ordinary = min(_peak_of(config, 1000) for _ in range(RUNS))
            oversized = min(_peak_of(config, BIG) for _ in range(RUNS))
            figures[f"oversized_{name}_extra_rss_mb"] = round(oversized - ordinary, 1)
    finally:
        server.stop()
    figures["oversized_input_extra_rss_mb"] = max(figures.values())
    return figures


if __name__ == "__main__":
    print(json.dumps(oversized_inputs(), indent=1))
