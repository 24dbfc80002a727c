"""Keys planted in the environment, the YAML, .env and an MCP server's env appear in no log, dump,
request record, summary or output; state and logs are created user-only while the files tools write
for the user keep the user's usual mode."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from tests.conftest import run_cli, write_config
from tests.servers.fake_providers import FakeProviderServer, openai_stream

SERVER = str(Path(__file__).resolve().parents[1] / "tools" / "servers" / "mcp_test_server.py")
KEYS = {
    "environment": "sk-env-planted-0001",
    "yaml": "sk-yaml-planted-0002",
    "dotenv": "sk-dotenv-planted-0003",
    "mcp": "mcp-planted-0004",
}


def test_no_key_leaks_and_state_is_user_only(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEYS["environment"])
    (tmp_path / ".env").write_text(f"MCP_TOKEN={KEYS['dotenv']}\n")
    server = FakeProviderServer().start()
    server.script(
        openai_stream("", tool_calls=[("call_1", "write_file", '{"path": "out.txt", "content": "hello"}')]),
        openai_stream("Written."),
    )
    try:
        write_config(
            tmp_path,
            f"""
            agent:
              id: writer
              backend:
                type: chatcompletion
                model: fake-model
                base_url: {server.root_url}/v1
                api_key: {KEYS["yaml"]}
                cwd: workspace
                mcp_servers:
                  - name: notes
                    command: {sys.executable}
                    args: ["{SERVER}"]
                    env: {{TOKEN: "${{MCP_TOKEN}}", OTHER: "{KEYS["mcp"]}"}}
            memory:
              enabled: true
              persistent_memory: {{enabled: true}}
            """,
        )
        result = run_cli("--config", "config.yaml", "--debug", "Write out.txt.")
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr
    assert server.requests[0].headers["authorization"] == f"Bearer {KEYS['yaml']}", "the key was used"
    state = Path(os.environ["MASSGEN_HOME"])
    files = [path for path in state.rglob("*") if path.is_file()]
    assert any(path.name == "summary.json" for path in files) and any("requests" in str(p) for p in files)
    for path in files:
        content = path.read_bytes()
        for where, key in KEYS.items():
            assert key.encode() not in content, f"the {where} key is in {path}"
    for where, key in KEYS.items():
        assert key not in result.stdout + result.stderr, f"the {where} key was printed"
    for path in [state, *state.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if path.is_symlink():
            continue
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}: readable by others"
    written = tmp_path / "workspace" / "out.txt"
    assert written.read_text() == "hello"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(written.stat().st_mode) == 0o666 & ~umask, "the user's file has the user's mode"
