"""The key table's JSON copy (read instead of parsing the YAML at every start) says what the YAML says,
and a table whose copy is missing or spoiled is parsed from the YAML again."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

from massgen_cli.config import massgen_keys

TABLE = Path(massgen_keys.__file__).with_name("massgen_keys.yaml")


def _copies() -> list[Path]:
    return sorted(TABLE.with_name("__pycache__").glob("massgen_keys.*.json"))


def test_the_copy_reads_as_the_yaml(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    parsed = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    assert massgen_keys._load() == parsed
    assert _copies(), "the first load keeps its copy"
    assert massgen_keys._load() == parsed


def test_a_spoiled_copy_is_parsed_again(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    massgen_keys._load()
    for copy in _copies():
        copy.write_text('{"release": ', encoding="utf-8")  # cut short, as by a full disk
    assert massgen_keys._load()["release"] == massgen_keys.MASSGEN_RELEASE
    assert massgen_keys._load() == yaml.safe_load(TABLE.read_text(encoding="utf-8"))
