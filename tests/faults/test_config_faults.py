"""Hostile or unlucky config files: thousands of mistakes fail in a screenful and in seconds, alias bombs
are refused while read, repeated keys are named with their lines, and ordinary anchors keep working."""

from __future__ import annotations

import itertools
import json
import resource
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from massgen_cli.config import load_config, yaml_reader
from massgen_cli.config.problems import MAX_LINES
from massgen_cli.config.reading import MAX_CONFIG_BYTES
from massgen_cli.config.yaml_reader import read_yaml
from massgen_cli.errors import ConfigError
from tests.conftest import run_cli, write_config

HANG_S = 20.0
"""Far more processor time than any of these takes: spending it means something runs away. Processor
time, not the clock's, so that a busy machine does not fail the test."""


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def problems_of(path: Path) -> list[str]:
    started = time.thread_time()
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert time.thread_time() - started < HANG_S
    return raised.value.problems


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """``a: &a [x, x, ...]``, ``b: &b [*a, *a, ...]``, ...: a few lines that stand for width**levels
    values, which PyYAML builds as shared references but any walk over them goes through one by one."""
    names = [chr(ord("a") + level) for level in range(levels)]
    lines = [f"{names[0]}: &{names[0]} [{', '.join(['x'] * width)}]"]
    for below, name in itertools.pairwise(names):
        lines.append(f"{name}: &{name} [{', '.join([f'*{below}'] * width)}]")
    return "\n".join(lines) + "\n"


def test_a_file_of_thousands_of_mistakes_fails_in_a_screenful_and_in_seconds(tmp_path: Path):
    line = "  - {backend: {type: scripted, modle: m%07d}}\n"
    entries = (MAX_CONFIG_BYTES - 200_000) // len(line % 0)
    config = tmp_path / "huge.yaml"
    config.write_text("agents:\n" + "".join(line % index for index in range(entries)), encoding="utf-8")
    assert 0.9 * MAX_CONFIG_BYTES < config.stat().st_size < MAX_CONFIG_BYTES
    started = children_cpu_s()
    result = run_cli("--config", str(config), "hello", timeout=120)
    elapsed = children_cpu_s() - started
    errors = result.stderr.splitlines()
    assert result.returncode == 2, result.stderr[-2000:]
    assert elapsed < HANG_S, f"{elapsed:.1f}s"
    assert len(errors) == MAX_LINES + 1
    assert errors[0] == "error: agents[0].backend.modle: unknown key 'modle' (did you mean 'model'?)"
    assert errors[-1] == f"error: … and at least {entries - MAX_LINES:,} more problems"
    assert result.stdout == ""


def test_validate_counts_the_problems_past_the_limit(tmp_path: Path):
    keys = "".join(f"  wrong_{index}: 1\n" for index in range(MAX_LINES + 7))
    config = write_config(tmp_path, "agent:\n  backend: {type: scripted, responses: [hi]}\n" + keys)
    result = run_cli("--validate", str(config), "--json")
    report = json.loads(result.stdout)
    assert result.returncode == 2
    assert len(report["errors"]) == MAX_LINES + 1
    assert report["errors"][-1] == "… and at least 7 more problems"
    plain = run_cli("--validate", str(config))
    verdict = plain.stdout.splitlines()[-1]
    assert verdict.endswith(f"is not valid: at least {MAX_LINES + 7} error(s), 0 warning(s)")


def test_an_alias_bomb_is_refused_while_read(tmp_path: Path):
    config = write_config(tmp_path, alias_bomb())
    (problem,) = problems_of(config)
    assert problem == (
        "config.yaml: line 7: the YAML expands to over 1,000,000 values through its aliases (*name), "
        "which makes it an alias bomb, so it was not read further"
    )


def test_a_long_string_aliased_many_times_is_refused_while_read(tmp_path: Path):
    aliases = ", ".join(["*long"] * 10_000)
    agent = f"agent: {{backend: {{type: scripted, responses: [{aliases}]}}}}\n"
    text = f'long: &long "{"x" * 1_000_000}"\n{agent}'
    config = write_config(tmp_path, text)
    (problem,) = problems_of(config)
    assert "expands to over 20,000,000 characters of text through its aliases" in problem


def test_validate_reports_an_alias_bomb_the_same_way(tmp_path: Path):
    config = write_config(tmp_path, alias_bomb())
    result = run_cli("--validate", str(config), timeout=60)
    assert result.returncode == 2
    assert "error: config.yaml: line 7: the YAML expands to over 1,000,000 values" in result.stdout
    assert "config.yaml is not valid: 1 error(s)" in result.stdout


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("a: &a [*a]\n", "line 1: the alias *a is inside the value it names: the config has no end"),
        ("a: *b\n", "line 1: the alias *b names no anchor (&b) above it"),
        ("a: &x 1\nb: &x 2\n", "line 2: the anchor &x is set twice (lines 1 and 2); rename one"),
        ("a: " + "[" * 150, "line 1: the YAML is nested too deeply (over 100 levels)"),
        ("a: 1\n---\na: 2\n", "line 2: a config is one YAML document, but a second one starts here (---)"),
        ("a: !!python/tuple [1]\n", "line 1: the tag !!python/tuple has no meaning in a config"),
        ("a: !env HOME\n", "line 1: the tag !env has no meaning in a config; write a plain value"),
    ],
)
def test_yaml_a_config_cannot_use_is_refused_with_its_line(tmp_path: Path, text: str, problem: str):
    (found,) = problems_of(write_config(tmp_path, text))
    assert found.startswith(f"config.yaml: {problem}")


def test_reading_stops_at_its_deadline():
    text = "".join(f"k{index}: [1, 2, 3]\n" for index in range(5000))
    assert len(read_yaml(text).value) == 5000
    with pytest.raises(ConfigError, match=r"^line \d+: reading the YAML took over 0 s, so it was stopped$"):
        read_yaml(text, deadline_s=0)


REPEATED = """\
agents:
  - id: first
    backend:
      model: gpt-4o
      type: scripted
      responses: [hi]
      model: gpt-4o-mini
  - {id: second, backend: {type: scripted, responses: [a], responses: [b]}}
ui: {display_type: simple}
ui: {display_type: silent}
"""


@pytest.mark.parametrize("loader", [yaml_reader.Loader, yaml.SafeLoader], ids=["c", "python"])
def test_repeated_keys_are_errors_naming_the_key_its_path_and_both_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loader: type[yaml.SafeLoader]
):
    monkeypatch.setattr(yaml_reader, "Loader", loader)
    assert problems_of(write_config(tmp_path, REPEATED)) == [
        "agents[0].backend.model: the key 'model' appears twice (lines 4 and 7); keep one",
        "agents[1].backend.responses: the key 'responses' appears twice (lines 8 and 8); keep one",
        "ui: the key 'ui' appears twice (lines 9 and 10); keep one",
    ]


def test_validate_reports_repeated_keys(tmp_path: Path):
    config = write_config(tmp_path, REPEATED)
    result = run_cli("--validate", str(config))
    assert result.returncode == 2
    assert "error: agents[0].backend.model: the key 'model' appears twice (lines 4 and 7); keep one" in (
        result.stdout
    )
    assert result.stdout.splitlines()[-1].endswith("is not valid: 3 error(s), 0 warning(s)")


def test_ordinary_anchors_aliases_and_merges_still_load(tmp_path: Path):
    config = write_config(
        tmp_path,
        """
        agents:
          - id: a
            backend: &scripted {type: scripted, responses: [same]}
          - id: b
            backend: *scripted
          - id: c
            backend:
              <<: *scripted
              responses: [own]
        orchestrator:
          voting_sensitivity: &style lenient
        ui: {display_type: simple}
        """,
    )
    loaded = load_config(config)
    replies = [[entry.text for entry in agent.backend.responses] for agent in loaded.config.agents]
    assert replies == [["same"], ["same"], ["own"]]
    assert loaded.warnings == []


def test_a_repeated_key_inside_a_merge_is_no_repeat(tmp_path: Path):
    text = textwrap.dedent(
        """
        agents:
          - backend:
              <<: {type: scripted, responses: [base]}
              responses: [own]
        """
    )
    loaded = load_config(write_config(tmp_path, text))
    assert [entry.text for entry in loaded.config.agents[0].backend.responses] == ["own"]
