"""MassGen's quick start through the command line: ``--model`` (repeated: one agent per model),
``--backend``, ``--system-message`` and ``--base-url`` build the agents with no config file, validated by
the same loader as a YAML file; the flags' mistakes are usage errors naming the flag."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from massgen_cli.cli.main import route
from massgen_cli.cli.run_app import run_app
from massgen_cli.config.massgen_keys import PROGRAM_BACKENDS
from massgen_cli.config.providers import PROVIDERS
from massgen_cli.config.sources import EXAMPLES_DIR, MASSGEN_EXAMPLES, shipped_configs
from tests.cli.in_process_cli import massgen
from tests.conftest import first_attempt_folder, state_folder, write_config
from tests.scripted import scripted
from tests.servers.fake_providers import FakeProviderServer, openai_stream
from tests.servers.paced import PacedServer


@pytest.fixture
def fake():  # type: ignore[no-untyped-def]
    server = FakeProviderServer().start()
    yield server
    server.stop()


def test_one_model_is_one_agent_with_its_system_message_on_the_server(fake):
    fake.script(openai_stream("Paris."))
    url = f"{fake.root_url}/v1"
    result = massgen(
        "--backend", "chatcompletion", "--base-url", url, "--model", "m1", "--system-message", "Be brief.",
        "Capital of France?",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Paris.\n"
    [request] = fake.requests
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "m1"
    assert request.body["messages"][0] == {"role": "system", "content": "Be brief."}
    summary = json.loads((first_attempt_folder() / "summary.json").read_text())
    assert summary["winner"] == "agent1" and summary["final_answer"] == "Paris."
    [session] = (state_folder() / "sessions").iterdir()
    record = json.loads((session / "session.json").read_text())
    assert Path(record["config_path"]).name == "(command line)"


def test_without_a_system_message_the_agent_gets_massgens(fake):
    fake.script(openai_stream("Hi."))
    result = massgen("--backend", "vllm", "--base-url", f"{fake.root_url}/v1", "--model", "m", "Hello?")
    assert result.exit_code == 0, result.stderr
    assert fake.requests[0].body["messages"][0]["content"] == "You are a helpful AI assistant."


def test_each_model_is_an_agent_and_they_coordinate():
    with PacedServer(latency_s=0.0, tokens_per_s=2000, tokens=5) as server:
        server.latency_by_model["model-two"] = 0.5  # agent1 answers first; agent2 sees it and votes
        result = massgen(
            "--backend", "chatcompletion", "--base-url", server.base_url,
            "--model", "model-one", "--model", "model-two", "What is 6 x 7?",
        )  # fmt: skip
        served = {s.model for s in server.served}
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "The answer is 42.\n"
    assert served == {"model-one", "model-two"}
    summary = json.loads((first_attempt_folder() / "summary.json").read_text())
    assert summary["answers"] == {"agent1": "The answer from model-one is 42."}
    assert {vote["voter"] for vote in summary["votes"]} == {"agent1", "agent2"}
    assert summary["winner"] == "agent1"


def test_the_backend_comes_from_each_models_name_and_a_missing_key_names_its_variable(monkeypatch):
    result = massgen("--model", "gpt-4o-mini", "Q?")
    assert result.exit_code == 2
    assert "no API key for backend 'openai': set OPENAI_API_KEY" in result.stderr
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-quickstart-0000")
    result = massgen("--model", "gpt-4o-mini", "--model", "claude-sonnet-4-20250514", "Q?")
    assert result.exit_code == 2
    assert "no API key for backend 'claude': set ANTHROPIC_API_KEY" in result.stderr
    assert result.stdout == ""
    assert not list((state_folder() / "sessions").glob("*/session.json")), "a refused run keeps no session"


def test_a_model_name_that_implies_no_backend_asks_for_one():
    result = massgen("--model", "llama-3.1-8b", "Q?")
    assert result.exit_code == 2
    assert "cannot tell the backend from the model name 'llama-3.1-8b': add --backend TYPE" in result.stderr
    assert "--list-backends" in result.stderr


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--backend", "opnai", "--model", "x"], "error: --backend: unknown backend 'opnai' (did you mean"),
        (["--backend", "openai"], "--backend openai needs --model NAME"),
        (["--backend", "chatcompletion", "--model", "m"], "backend 'chatcompletion' needs 'base_url'"),
        (["--system-message", "Be brief."], "--system-message need --model NAME (or --backend TYPE)"),
        (["--backend", "scripted"], "a scripted backend needs at least one entry in 'responses'"),
    ],
)  # fmt: skip
def test_a_flag_mistake_is_a_usage_error_naming_the_flag(arguments: list[str], said: str):
    result = massgen(*arguments, "Q?")
    assert result.exit_code == 2
    assert said in result.stderr
    assert "Traceback" not in result.stderr


def test_config_with_a_quick_start_flag_is_a_usage_error(tmp_path: Path):
    write_config(tmp_path, scripted({"solo": ["An answer."]}))
    result = massgen("--config", "config.yaml", "--model", "gpt-4o", "Q?")
    assert result.exit_code == 2
    assert "--model builds a config from the command line and does not combine with --config" in result.stderr
    result = massgen("-c", "config.yaml", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "Q?")
    assert result.exit_code == 2
    assert "--backend, --base-url build a config" in result.stderr


def test_list_backends_names_every_type_and_its_key_variable():
    result = massgen("--list-backends")
    assert result.exit_code == 0, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[1:]}
    assert set(rows) == set(PROVIDERS) | set(PROGRAM_BACKENDS)
    for name, provider in PROVIDERS.items():
        assert (provider.api_key_env or "none") in rows[name]
    assert rows["claude_code"].split()[1] == "ANTHROPIC_API_KEY"
    assert "runs as claude" in rows["claude_code"]
    assert "embedded model" in rows["local"]


def test_h_is_help_for_the_question_and_the_subcommands():
    for arguments in (["-h"], ["sessions", "-h"], ["memory", "search", "-h"]):
        result = massgen(*arguments)
        assert result.exit_code == 0, result.stderr
        assert result.stdout.startswith("Usage: massgen"), arguments
    assert "--model NAME" in massgen("-h").stdout


def test_help_loads_no_provider_sdk_or_pydantic_model():
    """``massgen --help`` stays fast: the quick start's and automation's modules import nothing heavy."""
    import subprocess
    import sys

    probe = (
        "import sys; from massgen_cli.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = ('openai', 'anthropic', 'pydantic', 'massgen_cli.config.loader', 'massgen_cli.app')\n"
        "print([m for m in heavy if m in sys.modules], file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=dict(os.environ))
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_the_quick_start_flags_take_their_values_whatever_they_say():
    for flag in ("--backend", "--model", "--system-message", "--base-url", "--session-id", "--output-file"):
        assert route([flag, "sessions", "Q?"]) == (run_app, [flag, "sessions", "Q?"]), flag


def test_massgens_example_names_resolve_to_their_counterpart_or_point_to_the_list():
    validated = massgen("--validate", "@examples/basic/multi/three_agents_default")
    assert validated.exit_code == 0, validated.stderr
    said = validated.stdout + validated.stderr
    assert "is MassGen's example config; its counterpart here is @examples/default" in said
    assert f"{EXAMPLES_DIR / 'default.yaml'} is valid" in said
    for name in ("basic/multi/gemini_gpt5_claude", "tools/mcp/claude_mcp_example"):
        refused = massgen("-c", f"@examples/{name}", "Q?")
        assert refused.exit_code == 2
        assert f"@examples/{name} is one of MassGen's example configs, which massgen-cli does not ship" in (
            refused.stderr
        )
        assert "`massgen --list-examples` lists the shipped ones" in refused.stderr
    typo = massgen("-c", "@examples/basic/scripted_singel", "Q?")
    assert typo.exit_code == 2 and "(did you mean 'basic/scripted_single'?)" in typo.stderr
    real = massgen("-c", "@examples/basic/single/single_gpt5nano", "Q?")
    assert "is one of MassGen's example configs" in real.stderr and "scripted" not in real.stderr, (
        "a fake config is no suggestion for a real model's"
    )
    shipped = {str(p.relative_to(EXAMPLES_DIR).with_suffix("")) for p in shipped_configs()}
    assert not shipped & set(MASSGEN_EXAMPLES), "a MassGen name never hides a shipped config"
    assert set(MASSGEN_EXAMPLES.values()) <= shipped
