"""MassGen's current release: its example configs load here (or are refused for a reason in the key
table), and every key its own validator accepts is in the table or implemented."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from massgen_cli.config import load_document
from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.base import Section
from massgen_cli.config.extra_tools import CustomToolConfig, McpServerConfig
from massgen_cli.config.massgen_keys import KEYS, PROGRAM_KEYS, VALUES, rule
from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.config.orchestrator import (
    CoordinationConfig,
    OrchestratorConfig,
    PersonaGeneratorConfig,
    TimeoutSettings,
)
from massgen_cli.config.permission_rules import PermissionsConfig
from massgen_cli.config.schema import AgentConfig, MassGenConfig, UIConfig
from massgen_cli.config.tools import ContextPath
from massgen_cli.config.walk import accepted_names
from massgen_cli.errors import ConfigError
from tests.config.massgen_release import example_configs, opened_release, release_key_sets
from tests.scripted import answer, vote

SECTIONS: dict[str, type[Section]] = {
    "config": MassGenConfig,
    "ui": UIConfig,
    "agent": AgentConfig,
    "backend": BackendConfig,
    "custom_tool": CustomToolConfig,
    "mcp_server": McpServerConfig,
    "context_path": ContextPath,
    "orchestrator": OrchestratorConfig,
    "coordination": CoordinationConfig,
    "persona_generator": PersonaGeneratorConfig,
    "timeout_settings": TimeoutSettings,
    "persistent_memory": PersistentMemoryConfig,
    "permissions": PermissionsConfig,
}
NOT_RUN_CONFIGS = ["massgen/configs/rate_limits/rate_limits.yaml"]
"""Files among the release's configs that are not run configs (a table of provider rate limits)."""


@pytest.fixture(scope="module")
def wheel() -> Iterator[zipfile.ZipFile]:
    yield from opened_release()


def test_the_key_table_agrees_with_the_models():
    assert set(KEYS) == set(SECTIONS)
    for section, model in SECTIONS.items():
        assert model.massgen_section == section
        names = accepted_names(model)
        implemented = {key for key, known in KEYS[section].items() if known.status == "implemented"}
        assert implemented <= set(names), f"{section}: implemented keys the model does not accept"
        assert not (set(KEYS[section]) - implemented) & set(names), f"{section}: a field is also ignored"
    assert set(PROGRAM_KEYS) <= set(accepted_names(BackendConfig))
    assert {status for known in VALUES.values() for status in [known.status]} <= {
        "implemented",
        "substituted",
        "refused",
    }


def test_every_key_the_release_accepts_is_known_here(wheel: zipfile.ZipFile):
    sets = release_key_sets(wheel.read("massgen/agent_config.py").decode("utf-8"))
    assert {section: len(keys) for section, keys in sets.items()} == {
        "timeout_settings": 4,
        "coordination": 77,
        "orchestrator": 43,
    }
    unknown = [
        f"{section}.{key}"
        for section, keys in sets.items()
        for key in sorted(keys)
        if key not in accepted_names(SECTIONS[section]) and rule(section, key) is None
    ]
    assert unknown == []


def test_the_release_configs_load_or_are_refused_for_a_reason_in_the_table(
    wheel: zipfile.ZipFile, monkeypatch: pytest.MonkeyPatch
):
    configs = example_configs(wheel)
    assert len(configs) == 276
    loaded, refused, not_run = [], {}, []
    for name, text in configs.items():
        for variable in set(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)", text)):
            monkeypatch.setenv(variable, os.environ.get(variable) or "x")
        document = yaml.safe_load(text)
        if not isinstance(document, dict) or not {"agents", "agent"} & set(document):
            not_run.append(name)
            continue
        try:
            load_document(document, Path(name))
        except ConfigError as error:
            refused[name] = error.problems
        else:
            loaded.append(name)
    assert not_run == NOT_RUN_CONFIGS
    assert len(loaded) >= 262, refused
    reasons = [known.why for known in VALUES.values() if known.status == "refused"]
    reasons += [known.why for keys in KEYS.values() for known in keys.values() if known.status == "refused"]
    unexplained = {
        name: problem
        for name, problems in refused.items()
        for problem in problems
        if not any(problem.endswith(reason) for reason in reasons)
    }
    assert unexplained == {}
    print(f"\nMassGen's example configs: {len(loaded)} of {len(configs)} load; refused: {len(refused)}")


def test_the_release_skills_and_planning_config_runs_with_both(
    wheel: zipfile.ZipFile, in_process, tmp_path: Path
):
    """``configs/skills/skills_basic.yaml`` as shipped, its two backends' provider and model replaced by
    scripted replies and its commands run locally: each agent plans in its workspace, loads a skill,
    answers, and the turn is won."""
    document = yaml.safe_load(wheel.read("massgen/configs/skills/skills_basic.yaml"))
    skill = tmp_path / ".agent" / "skills" / "algorithmic-art"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: algorithmic-art\ndescription: Draw with code.\n---\nUse p5.js.\n"
    )
    plan = {"calls": [{"tool": "create_task_plan", "args": {"tasks": [{"description": "sketch"}]}}]}
    load = {"calls": [{"tool": "load_skill", "args": {"name": "algorithmic-art"}}]}
    replies = {
        "agent_a": [plan, load, answer("A p5.js flow field"), vote("agent1", "mine")],
        "agent_b": [vote("agent1", "good", delay=0.3)],
    }
    for agent in document["agents"]:
        backend = agent["backend"]
        del backend["model"]
        backend.update(type="scripted", responses=replies[agent["id"]])
        backend["command_line_execution_mode"] = "local"  # its comment's choice where Docker is not running
    run = in_process(yaml.safe_dump(document))
    result = run.app.ask("Create cool algorithmic art we can use in GitHub repo")
    assert result.winner == "agent_a" and result.final_answer == "A p5.js flow field"
    assert {"create_task_plan", "load_skill"} <= {tool.name for tool in run.requests("agent_b")[0].tools}
    assert "Use p5.js." in json.dumps(run.requests("agent_a")[2].messages), "the skill was loaded"
    mirrored = json.loads((tmp_path / "workspace1" / "tasks" / "plan.json").read_text())
    assert mirrored["tasks"][0]["description"] == "sketch"


PROVIDER_KEYS = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "XAI_API_KEY",
    "OPENROUTER_API_KEY",
    "GROQ_API_KEY",
    "TOGETHER_API_KEY",
    "CEREBRAS_API_KEY",
    "ZAI_API_KEY",
    "MOONSHOT_API_KEY",
    "KIMI_API_KEY",
    "POE_API_KEY",
    "FIREWORKS_API_KEY",
    "NEBIUS_API_KEY",
    "QWEN_API_KEY",
    "DEEPSEEK_API_KEY",
    "MISTRAL_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_ENDPOINT",
)
WHY_A_RELEASE_CONFIG_CANNOT_START = (
    "is not part of the stand-in for MassGen's tool types: `pip install massgen` provides it",
    "does not exist (context paths must exist",  # folders of MassGen's repository, not in its wheel
    "does not exist (upload files must exist",  # images of MassGen's repository, not in its wheel
    "the tool needs the package that provides",  # AG2, LangGraph, smolagents… for the interop tools
    "is not supported: AG2 (AutoGen) agents need their own runtime",
    "is not supported: use type 'chatcompletion'",
)


def test_the_release_configs_that_validate_are_the_ones_that_start(
    wheel: zipfile.ZipFile, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    """From a checkout of MassGen's tree (its wheel unpacked) with every provider key and variable set,
    ``--validate`` with its start checks passes for 238 of the 276 example configs (236 without the
    packages of the ``massgen-tools`` extra, which the test extra installs), and each one it refuses is
    refused for a reason a start would fail on, said with its remedy (a tool that needs the rest of
    MassGen or a package not installed, a folder or an image of MassGen's repository that is not in its
    wheel, AG2). tool_search_example.yaml starts since its file tool's relative import of MassGen's
    result types (``from .._result import …``) resolves; the configs that name MassGen's
    understand_image (or understand_video, with OpenCV) since those tools are ours."""
    from massgen_cli.cli.validate import validate

    wheel.extractall(tmp_path, [name for name in wheel.namelist() if name.startswith("massgen/")])
    monkeypatch.chdir(tmp_path)
    configs = example_configs(wheel)
    for variable in {
        *PROVIDER_KEYS,
        *re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)", "\n".join(configs.values())),
    }:
        monkeypatch.setenv(variable, os.environ.get(variable) or "test-value-123")
    valid, refused = [], {}
    for name in configs:
        if name in NOT_RUN_CONFIGS:
            continue
        result = validate(name)
        if result.valid:
            valid.append(name)
        else:
            refused[name] = result.errors
    unexplained = {
        name: error
        for name, errors in refused.items()
        for error in errors
        if not any(reason in error for reason in WHY_A_RELEASE_CONFIG_CANNOT_START)
    }
    assert not unexplained, "\n".join(f"{name}: {error}" for name, error in unexplained.items())
    print(f"\nMassGen's example configs that would start here: {len(valid)} of {len(configs)}")
    # 228 when this was written (the aim: 230); 226 once upload_files was read at start (the two image
    # configs name a picture of MassGen's repository that its wheel does not hold); 227 with the relative
    # imports of MassGen's tool files; 236 with our understand_image (9 configs); with OpenCV and aiohttp
    # (the massgen-tools extra) terminal_evaluation.yaml's understand_video and
    # github_issue_market_analysis.yaml's tool load too
    with_tools = all(importlib.util.find_spec(module) for module in ("cv2", "aiohttp"))
    assert len(valid) >= (238 if with_tools else 236), sorted(refused)
