"""The memory block read on its own (``massgen memory …``): the same MemoryConfig the whole file's
loader builds, the same problems with their YAML paths, without importing the other sections' models."""

from __future__ import annotations

import subprocess
import sys

import pytest

from massgen_cli.config import load_config, shipped_configs
from massgen_cli.config.memory_loader import load_memory_config
from massgen_cli.errors import ConfigError
from tests.conftest import write_config


@pytest.mark.parametrize("config", shipped_configs(), ids=lambda path: path.stem)
def test_the_memory_block_alone_equals_the_whole_files(config):
    assert load_memory_config(config) == load_config(config).config.memory


def test_a_file_without_memory_gets_the_defaults(tmp_path):
    config = write_config(tmp_path, "agent: {backend: {type: scripted, responses: [x]}}\n")
    assert load_memory_config(config) == load_config(config).config.memory


def test_problems_in_the_block_name_their_yaml_paths(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMORY_TEST_UNSET", raising=False)
    config = write_config(
        tmp_path,
        """
        memory:
          enabled: true
          persistent_memory: {enabled: true, vector_stor: qdrant}
          domain: ${MEMORY_TEST_UNSET}
        """,
    )
    with pytest.raises(ConfigError) as raised:
        load_memory_config(config)
    problem = str(raised.value)
    assert "memory.persistent_memory.vector_stor" in problem and "vector_store" in problem
    assert "memory.domain" in problem and "MEMORY_TEST_UNSET" in problem


def test_variables_in_the_block_are_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMORY_TEST_DOMAIN", "research")
    config = write_config(tmp_path, "memory: {domain: '${MEMORY_TEST_DOMAIN}'}\n")
    assert load_memory_config(config).domain == "research"


def test_a_top_level_that_is_not_a_mapping_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        load_memory_config(write_config(tmp_path, "- memory\n"))


def test_reading_the_block_imports_no_other_sections_models(tmp_path):
    config = write_config(tmp_path, "memory: {enabled: true}\n")
    probe = (
        "import sys\n"
        "from massgen_cli.config.memory_loader import load_memory_config\n"
        f"load_memory_config({str(config)!r})\n"
        "print(sorted(m for m in sys.modules if m.startswith('massgen_cli.config.')))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    for heavy in ("schema", "backend", "orchestrator", "tools", "loader"):
        assert f"'massgen_cli.config.{heavy}'" not in loaded
