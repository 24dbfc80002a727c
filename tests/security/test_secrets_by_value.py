"""Secrets by value: a value a ``.env`` set (whatever its name), a database URL's password, a personal
access token and a webhook never reach a command's environment, the model (a file the agent reads), the
logs or the state folder."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from massgen_cli.redaction import REDACTED, command_environment
from tests.conftest import run_cli, write_config

SECRETS = {
    "BILLING_SERVICE": "s3cr3t-value-from-dotenv-42",  # named like nothing; a .env value all the same
    "DATABASE_URL": "postgresql://app:db-pass-9876@db.internal/app",
    "GITHUB_PAT": "ghp_abcdefghijklmnop1234",
    "SLACK_WEBHOOK": "https://hooks.slack.example/T000/B000/XXXXXXXXXXXX",
    "HTTPS_PROXY": "http://me:proxy-pass-5555@proxy.internal:3128",
}
LEAKS = (
    "s3cr3t-value-from-dotenv-42",
    "db-pass-9876",
    "ghp_abcdefghijklmnop1234",
    "XXXXXXXXXXXX",
    "proxy-pass-5555",
)


def test_a_command_s_environment_is_the_allow_list_alone():
    shown = command_environment({**SECRETS, "PATH": "/bin", "LC_ALL": "C", "OPENAI_API_KEY": "sk-x"})
    assert shown == {"PATH": "/bin", "LC_ALL": "C"}, "no credential, whatever its name"


def test_secrets_by_value_reach_no_command_model_log_or_state(tmp_path: Path, monkeypatch):
    (tmp_path / ".env").write_text(f"BILLING_SERVICE={SECRETS['BILLING_SERVICE']}\n")
    for name in ("DATABASE_URL", "GITHUB_PAT", "SLACK_WEBHOOK", "HTTPS_PROXY"):
        monkeypatch.setenv(name, SECRETS[name])
    settings = f"db: {SECRETS['DATABASE_URL']}\nhook: {SECRETS['SLACK_WEBHOOK']}\n"
    (tmp_path / "settings.txt").write_text(settings)
    responses = [
        {"tool": "read_file", "args": {"path": ".env"}},
        {"tool": "read_file", "args": {"path": "settings.txt"}},
        {"tool": "execute_command", "args": {"command": "env; echo END"}},
        "done",
    ]
    backend = {"type": "scripted", "responses": responses, "cwd": ".", "enable_mcp_command_line": True}
    write_config(tmp_path, yaml.safe_dump({"agent": {"id": "solo", "backend": backend}}))

    result = run_cli("--config", "config.yaml", "--session", "kept", "-q", "Q?")

    assert result.returncode == 0, result.stderr
    state = Path(os.environ["MASSGEN_HOME"])
    written = [path for path in state.rglob("*") if path.is_file() and path.suffix in (".json", ".jsonl")]
    requests = [path for path in written if "requests" in path.parts]
    assert requests, "the requests the model was sent are logged"
    seen_by_model = "\n".join(path.read_text() for path in requests)
    assert "PATH=" in seen_by_model and "END" in seen_by_model, "the command ran and its output came back"
    assert REDACTED in seen_by_model, "the .env file and the settings were read, with their secrets marked"
    kept = "\n".join(path.read_text(errors="replace") for path in written)
    assert not [leak for leak in LEAKS if leak in result.stdout + result.stderr + kept]
