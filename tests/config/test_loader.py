"""Loading configs through ``load_config``: shipped configs load, and each bad input gets its own line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from massgen_cli.config import load_config, shipped_configs, sources
from massgen_cli.errors import ConfigError

SCRIPTED = "{type: scripted, responses: [hi]}"


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def problems(source: str | Path) -> list[str]:
    with pytest.raises(ConfigError) as raised:
        load_config(source)
    return raised.value.problems


def unset(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Unset ``name`` now and again after the test, even if loading a .env set it meanwhile."""
    monkeypatch.setenv(name, "")
    monkeypatch.delenv(name)


@pytest.mark.parametrize("path", shipped_configs(), ids=lambda p: str(p.relative_to(sources.EXAMPLES_DIR)))
def test_every_shipped_config_loads(path: Path):
    loaded = load_config(path)
    assert loaded.config.agents
    assert loaded.warnings == []


def test_no_source_loads_the_embedded_default():
    assert load_config(None).path == sources.EXAMPLES_DIR / "default.yaml"


# Keys, types and values -----------------------------------------------------------------------------


def test_unknown_key_suggests_the_nearest(tmp_path: Path):
    config = write(
        tmp_path / "c.yaml",
        f"""
        agents:
          - backend: {SCRIPTED}
          - backend: {{model: gpt-4o, temprature: 0.3}}
        """,
    )
    assert problems(config) == [
        "agents[1].backend.temprature: unknown key 'temprature' (did you mean 'temperature'?)"
    ]


def test_wrong_type_names_the_path_and_the_value(tmp_path: Path):
    config = write(tmp_path / "c.yaml", "agents:\n  - backend: {model: gpt-4o, max_tokens: lots}\n")
    (problem,) = problems(config)
    assert problem.startswith("agents[0].backend.max_tokens: input should be a valid integer")
    assert problem.endswith("(got 'lots')")


def test_bad_enum_lists_the_choices(tmp_path: Path):
    config = write(tmp_path / "c.yaml", f"agent: {{backend: {SCRIPTED}}}\nui: {{display_type: simpel}}\n")
    assert problems(config) == [
        "ui.display_type: 'simpel' is not allowed; expected 'rich_terminal', 'textual_terminal', 'simple' "
        "or 'silent' (did you mean 'simple'?)"
    ]


def test_unknown_backend_type_is_reported_at_type(tmp_path: Path):
    config = write(
        tmp_path / "c.yaml",
        f"""
        agents:
          - backend: {SCRIPTED}
          - backend: {{type: opnai, model: gpt-4o}}
        """,
    )
    assert problems(config) == ["agents[1].backend.type: unknown backend 'opnai' (did you mean 'openai'?)"]


def test_unsupported_massgen_backend_says_what_to_use(tmp_path: Path):
    config = write(tmp_path / "c.yaml", "agent: {backend: {type: ag2, model: gpt-4o}}\n")
    assert problems(config) == [
        "agent.backend.type: backend 'ag2' is not supported: AG2 (AutoGen) agents need their own runtime, "
        "which is not built here: use a chat backend"
    ]


def test_a_section_that_is_not_a_mapping(tmp_path: Path):
    config = write(tmp_path / "c.yaml", f"agent: {{backend: {SCRIPTED}}}\norchestrator: 3\n")
    assert problems(config) == ["orchestrator: must be a mapping of keys (got 3)"]


def test_top_level_that_is_not_a_mapping(tmp_path: Path):
    config = write(tmp_path / "c.yaml", "- just\n- a list\n")
    assert problems(config) == ["c.yaml: the top level must be a mapping of keys (agents:, memory:, ...)"]


def test_a_key_and_its_alias_together_are_rejected(tmp_path: Path):
    config = write(
        tmp_path / "c.yaml", "agent: {backend: {model: gpt-4o, timeout: 5, request_timeout_seconds: 6}}\n"
    )
    assert problems(config) == [
        "agent.backend.request_timeout_seconds: "
        "'request_timeout_seconds' and 'timeout' set the same option; keep one"
    ]


def test_massgen_alias_is_accepted(tmp_path: Path):
    config = write(tmp_path / "c.yaml", "agent: {backend: {model: gpt-4o, timeout: 5}}\n")
    assert load_config(config).config.agents[0].backend.request_timeout_seconds == 5


def test_several_problems_are_reported_at_once(tmp_path: Path):
    config = write(
        tmp_path / "c.yaml",
        """
        agents:
          - backend: {type: opnai, model: gpt-4o, temprature: 1}
          - backend: {model: gpt-4o}
            memory: {compression: {target_ratio: 0.9}}
        ui: {display_type: simpel}
        memory: {retreival: {limit: 2}}
        """,
    )
    assert problems(config) == [
        "agents[0].backend.temprature: unknown key 'temprature' (did you mean 'temperature'?)",
        "memory.retreival: unknown key 'retreival' (did you mean 'retrieval'?)",
        "agents[0].backend.type: unknown backend 'opnai' (did you mean 'openai'?)",
        "ui.display_type: 'simpel' is not allowed; expected 'rich_terminal', 'textual_terminal', 'simple' "
        "or 'silent' (did you mean 'simple'?)",
        "agents[1].memory.compression: target_ratio (0.9) must be below trigger_threshold (0.75)",
    ]


# Files ----------------------------------------------------------------------------------------------


def test_missing_file():
    assert problems("nope.yaml") == ["config file 'nope.yaml' not found"]


def test_malformed_yaml_reports_the_line(tmp_path: Path):
    config = write(tmp_path / "bad.yaml", "agents:\n  - backend: {type: scripted\n  foo: [\n")
    (problem,) = problems(config)
    assert problem.startswith("bad.yaml: line 3, column 6: invalid YAML: ")


# Variables and .env ---------------------------------------------------------------------------------


def test_unset_variable_names_the_variable_and_the_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    unset(monkeypatch, "MASSGEN_TEST_KEY")
    config = write(
        tmp_path / "c.yaml", 'agents:\n  - backend: {model: gpt-4o, api_key: "${MASSGEN_TEST_KEY}"}\n'
    )
    assert problems(config) == [
        "agents[0].backend.api_key: "
        "environment variable MASSGEN_TEST_KEY is not set (export it or add it to .env)"
    ]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, "http://fallback/v1"), ("", "http://fallback/v1"), ("http://set/v1", "http://set/v1")],
)
def test_variable_with_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value, expected):
    unset(monkeypatch, "MASSGEN_TEST_URL")
    if value is not None:
        monkeypatch.setenv("MASSGEN_TEST_URL", value)
    config = write(
        tmp_path / "c.yaml",
        'agent: {backend: {type: vllm, base_url: "${MASSGEN_TEST_URL:-http://fallback/v1}"}}\n',
    )
    assert load_config(config).config.agents[0].backend.base_url == expected


def test_dotenv_in_the_current_folder_and_beside_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for name in ("MASSGEN_TEST_KEY", "MASSGEN_TEST_MODEL", "MASSGEN_TEST_BOTH"):
        unset(monkeypatch, name)
    write(tmp_path / ".env", "MASSGEN_TEST_KEY=from-cwd\nMASSGEN_TEST_BOTH=cwd\n")
    write(tmp_path / "configs" / ".env", "MASSGEN_TEST_MODEL=gpt-4o\nMASSGEN_TEST_BOTH=config-folder\n")
    config = write(
        tmp_path / "configs" / "c.yaml",
        """
        agent:
          system_message: "${MASSGEN_TEST_BOTH}"
          backend: {model: "${MASSGEN_TEST_MODEL}", api_key: "${MASSGEN_TEST_KEY}"}
        """,
    )
    agent = load_config(config).config.agents[0]
    assert (agent.backend.model, agent.backend.api_key, agent.system_message) == ("gpt-4o", "from-cwd", "cwd")


def test_environment_wins_over_dotenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MASSGEN_TEST_KEY", "from-environment")
    write(tmp_path / ".env", "MASSGEN_TEST_KEY=from-dotenv\n")
    config = write(tmp_path / "c.yaml", 'agent: {backend: {model: gpt-4o, api_key: "${MASSGEN_TEST_KEY}"}}\n')
    assert load_config(config).config.agents[0].backend.api_key == "from-environment"


def test_variables_in_ignored_massgen_keys_need_not_be_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    unset(monkeypatch, "MASSGEN_TEST_HOOK_KEY")
    config = write(
        tmp_path / "c.yaml",
        """
        agent:
          backend:
            model: gpt-4o
            direct_mcp_servers: [{env: {KEY: "${MASSGEN_TEST_HOOK_KEY}"}}]
        """,
    )
    assert load_config(config).warnings == [
        "agent.backend.direct_mcp_servers: MassGen key 'direct_mcp_servers' is not implemented yet and is "
        "ignored"
    ]


# @examples ------------------------------------------------------------------------------------------


@pytest.fixture
def examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "examples"
    for relative in ("default.yaml", "one/twin.yaml", "two/twin.yaml", "basic/unique.yaml"):
        write(folder / relative, f"agent: {{backend: {SCRIPTED}}}\n")
    monkeypatch.setattr(sources, "EXAMPLES_DIR", folder)
    return folder


def test_examples_by_exact_stem(examples: Path):
    assert load_config("@examples/unique").path == examples / "basic" / "unique.yaml"


@pytest.mark.parametrize("name", ["one/twin", "one/twin.yaml"])
def test_examples_by_relative_path(examples: Path, name: str):
    assert load_config(f"@examples/{name}").path == examples / "one" / "twin.yaml"


def test_ambiguous_example_lists_the_candidates(examples: Path):
    assert problems("@examples/twin") == [
        "@examples/twin is ambiguous; use one of: @examples/one/twin, @examples/two/twin"
    ]


def test_unknown_example_suggests_the_nearest(examples: Path):
    (problem,) = problems("@examples/uniqe")
    assert problem.startswith("no shipped config named 'uniqe' (did you mean 'unique'?)")


# MassGen configs ------------------------------------------------------------------------------------


def test_unimplemented_massgen_keys_load_with_warnings(tmp_path: Path):
    config = write(
        tmp_path / "c.yaml",
        """
        agents:
          - id: researcher
            backend:
              model: gpt-4o
              enable_image_generation: true
              concurrent_tool_execution: true
        orchestrator:
          session_storage: sessions
          coordination:
            enable_planning_mode: true
        """,
    )
    loaded = load_config(config)
    assert loaded.warnings == [
        "agents[0].backend.enable_image_generation: MassGen key 'enable_image_generation' is ignored: image, "
        "audio and video generation tools are not built here",
        "agents[0].backend.concurrent_tool_execution: MassGen key 'concurrent_tool_execution' is not "
        "implemented yet and is ignored",
        "orchestrator.session_storage: MassGen key 'session_storage' is ignored: sessions live under the "
        "state folder here (--state-dir)",
        "orchestrator.coordination.enable_planning_mode: "
        "MassGen key 'enable_planning_mode' is ignored: MassGen's dry-run planning mode (tools held back "
        "until the final presentation) is not built here",
    ]
    assert loaded.config.agents[0].backend.type == "openai"


def test_v1_keys_are_rejected(tmp_path: Path):
    config = write(
        tmp_path / "c.yaml", "models: [gpt-4o]\nnum_agents: 3\nagent: {backend: {model: gpt-4o}}\n"
    )
    v1 = "a MassGen v1 key; v1 configs are not supported, use 'agents:' with backends"
    assert problems(config) == [f"models: {v1}", f"num_agents: {v1}"]


# Memory ---------------------------------------------------------------------------------------------


def test_agent_memory_is_deep_merged_over_the_global_block(tmp_path: Path):
    config = write(
        tmp_path / "c.yaml",
        """
        memory:
          retrieval: {limit: 5, token_budget: 900}
          compression: {trigger_threshold: 0.6, target_ratio: 0.3}
        agents:
          - backend: {model: gpt-4o}
            memory: {retrieval: {limit: 9}}
          - backend: {model: gpt-4o}
        """,
    )
    loaded = load_config(config).config
    first, second = loaded.agents
    assert (first.memory.retrieval.limit, first.memory.retrieval.token_budget) == (9, 900)
    assert (first.memory.compression.trigger_threshold, first.memory.compression.target_ratio) == (0.6, 0.3)
    assert second.memory == loaded.memory
    assert loaded.memory.retrieval.limit == 5


def test_merged_agent_memory_problem_is_reported_at_the_agent(tmp_path: Path):
    config = write(
        tmp_path / "c.yaml",
        """
        memory:
          compression: {trigger_threshold: 0.6, target_ratio: 0.3}
        agents:
          - backend: {model: gpt-4o}
          - backend: {model: gpt-4o}
            memory: {compression: {target_ratio: 0.7}}
        """,
    )
    assert problems(config) == [
        "agents[1].memory.compression: target_ratio (0.7) must be below trigger_threshold (0.6)"
    ]


def test_single_agent_memory_problem_is_reported_at_agent(tmp_path: Path):
    config = write(
        tmp_path / "c.yaml", "agent:\n  backend: {model: gpt-4o}\n  memory: {retrieval: {limit: -1}}\n"
    )
    (problem,) = problems(config)
    assert problem.startswith("agent.memory.retrieval.limit: input should be greater than or equal to 0")


def test_invalid_global_memory_is_reported_once(tmp_path: Path):
    config = write(
        tmp_path / "c.yaml",
        """
        memory: {compression: {trigger_threshold: 0.3}}
        agents:
          - backend: {model: gpt-4o}
            memory: {retrieval: {limit: 2}}
        """,
    )
    assert problems(config) == [
        "memory.compression: target_ratio (0.4) must be below trigger_threshold (0.3)"
    ]


def test_unknown_key_in_agent_memory(tmp_path: Path):
    config = write(
        tmp_path / "c.yaml", "agents:\n  - backend: {model: gpt-4o}\n    memory: {retreival: {}}\n"
    )
    assert problems(config) == [
        "agents[0].memory.retreival: unknown key 'retreival' (did you mean 'retrieval'?)"
    ]


def test_target_ratio_must_be_below_trigger_threshold(tmp_path: Path):
    config = write(
        tmp_path / "c.yaml",
        f"""
        agent: {{backend: {SCRIPTED}}}
        memory: {{compression: {{trigger_threshold: 0.5, target_ratio: 0.5}}}}
        """,
    )
    assert problems(config) == [
        "memory.compression: target_ratio (0.5) must be below trigger_threshold (0.5)"
    ]


def test_unknown_memory_model_provider_suggests_the_nearest(tmp_path: Path):
    config = write(
        tmp_path / "c.yaml",
        f"""
        agent: {{backend: {SCRIPTED}}}
        memory:
          compression: {{summarizer: {{provider: opnai, model: gpt-4.1-nano}}}}
          persistent_memory: {{llm: {{provider: anthropc}}, embedding: {{provider: azure_openai}}}}
        """,
    )
    assert problems(config) == [
        "memory.persistent_memory.llm.provider: unknown provider 'anthropc' (did you mean 'anthropic'?)",
        "memory.compression.summarizer.provider: unknown provider 'opnai' (did you mean 'openai'?)",
    ]


@pytest.mark.parametrize(
    ("summarizer", "problem"),
    [
        (
            "{provider: ag2}",
            "memory.compression.summarizer.provider: backend 'ag2' is not supported: AG2 (AutoGen) "
            "agents need their own runtime, which is not built here: use a chat backend",
        ),
        (
            "{provider: chatcompletion}",
            "memory.compression.summarizer.provider: provider 'chatcompletion' needs 'base_url' "
            "(the server's /v1 address)",
        ),
    ],
)
def test_summarizer_provider_is_a_backend_type(tmp_path: Path, summarizer: str, problem: str):
    config = write(
        tmp_path / "c.yaml",
        f"agent: {{backend: {SCRIPTED}}}\nmemory: {{compression: {{summarizer: {summarizer}}}}}\n",
    )
    assert problems(config) == [problem]


def test_summarizer_defaults_to_the_local_model(tmp_path: Path):
    config = write(
        tmp_path / "c.yaml",
        f"agent: {{backend: {SCRIPTED}}}\nmemory: {{compression: {{summarizer: {{}}}}}}\n",
    )
    assert load_config(config).config.memory.compression.summarizer.provider == "local"


def test_persistent_memory_agent_name_loads_with_a_warning(tmp_path: Path):
    config = write(
        tmp_path / "c.yaml",
        f"agent: {{backend: {SCRIPTED}}}\nmemory: {{persistent_memory: {{agent_name: researcher}}}}\n",
    )
    assert load_config(config).warnings == [
        "memory.persistent_memory.agent_name: MassGen key 'agent_name' is not implemented yet and is ignored"
    ]


# Agents and backends --------------------------------------------------------------------------------


@pytest.mark.parametrize(("model", "backend_type"), [("gpt-4o", "openai"), ("claude-sonnet-4-5", "claude")])
def test_backend_type_is_inferred_from_the_model(tmp_path: Path, model: str, backend_type: str):
    config = write(tmp_path / "c.yaml", f"agents:\n  - backend: {{model: {model}}}\n")
    assert load_config(config).config.agents[0].backend.type == backend_type


def test_model_that_names_no_backend(tmp_path: Path):
    config = write(tmp_path / "c.yaml", "agents:\n  - backend: {model: mystery-1}\n  - backend: {}\n")
    assert problems(config) == [
        "agents[0].backend.model: cannot tell the backend type from model 'mystery-1'; set 'type'",
        "agents[1].backend: set 'type' or 'model' so the backend can be chosen",
    ]


def test_single_agent_form_gets_the_first_id(tmp_path: Path):
    config = write(tmp_path / "c.yaml", f"agent: {{backend: {SCRIPTED}}}\n")
    loaded = load_config(config).config
    assert [agent.id for agent in loaded.agents] == ["agent_a"]
    assert loaded.agent is None


def test_duplicate_agent_ids_are_rejected(tmp_path: Path):
    config = write(
        tmp_path / "c.yaml",
        f"agents:\n  - {{id: x, backend: {SCRIPTED}}}\n  - {{id: x, backend: {SCRIPTED}}}\n",
    )
    assert problems(config) == ["(top level): agent ids must be unique; repeated: x"]


def test_empty_sections_mean_their_defaults(tmp_path):
    path = tmp_path / "empty_sections.yaml"
    path.write_text("agent:\n  backend: {type: scripted, responses: [hi]}\nmemory:\nui:\norchestrator:\n")
    config = load_config(path).config
    assert config.ui.display_type == "rich_terminal"
    assert config.memory.retrieval.limit == 5
