"""The composition root builds only what a config turns on: a feature that is off is not among the step
extensions or the attempt parts, and its code is never imported (only its light declaration is)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.scripted import answer, scripted, vote

FEATURE_MODULES = (
    "massgen_cli.agent.breaker",
    "massgen_cli.agent.rate_budget",
    "massgen_cli.features.traces",
    "massgen_cli.memory.filesystem",
    "massgen_cli.memory.runtime.agent_tools",
    "massgen_cli.memory.runtime.opening",
    "massgen_cli.memory.runtime.recall",
    "massgen_cli.memory.longterm.store.persistent",
    "massgen_cli.memory.shared.memory",
    "massgen_cli.tools.context_copies",
    "massgen_cli.tools.hooks",
    "massgen_cli.tools.memory_tools",
    "massgen_cli.tools.planning",
    "massgen_cli.tools.skills",
    "massgen_cli.tools.snapshots",
)
"""The features' own code: what a feature's declaration leaves for its ``open`` to import."""

BUILD = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from massgen_cli.app import MassGenApp
    from massgen_cli.config import load_config
    from massgen_cli.ui import ConsoleView
    from rich.console import Console

    loaded = load_config(Path(sys.argv[1]))
    view = ConsoleView(loaded.config.agent_ids, console=Console(stderr=True), quiet=True)
    app = MassGenApp(loaded, listeners=(view,), state_dir=Path(sys.argv[2]))
    try:
        features = app.run.features
        print(json.dumps({
            "extensions": [extension.name for extension in features.extensions],
            "parts": [part.part_name for part in features.parts],
            "imported": sorted(name for name in sys.modules if name.startswith("massgen_cli")),
        }))
    finally:
        app.close()
    """
)


def built(tmp_path: Path, text: str) -> dict[str, list[str]]:
    """What a fresh process builds for the config ``text``: extension and part names, modules imported."""
    config = tmp_path / "c.yaml"
    config.write_text(text, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-c", BUILD, str(config), str(tmp_path / "state")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def test_a_config_without_features_builds_and_imports_none(tmp_path):
    shown = built(tmp_path, scripted({"a": [answer("x")], "b": [vote("a", "ok")]}))
    assert shown["extensions"] == [] and shown["parts"] == []
    assert "massgen_cli.compose" in shown["imported"], "the probe sees the run's imports"
    assert not set(FEATURE_MODULES) & set(shown["imported"])


def test_each_feature_turned_on_is_an_extension_in_the_turn_s_order(tmp_path):
    (tmp_path / "ws_a").mkdir()
    orchestrator = {
        "snapshot_storage": str(tmp_path / "snapshots"),
        "shared_memory": {"conversation": True, "entries": True},
        "coordination": {"enable_agent_task_planning": True, "enable_memory_filesystem_mode": True},
    }
    text = scripted(
        {"a": [answer("x")], "b": [vote("a", "ok")]},
        backends={"a": {"cwd": str(tmp_path / "ws_a")}},
        orchestrator=orchestrator,
        memory={"enabled": True, "persistent_memory": {"enabled": True}},
    )
    shown = built(tmp_path, text)
    assert shown["extensions"] == [
        "workspace snapshots",
        "task plans",
        "shared memory",
        "long-term memory",
        "memory files",
        "memory tools",
    ]
    assert shown["parts"] == [
        "shared memory",
        "workspace snapshots",
        "task plans",
        "memory files",
        "long-term memory",
    ]
    assert "massgen_cli.tools.skills" not in shown["imported"], "skills are off"
