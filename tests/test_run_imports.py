"""A run imports what its config uses: the models of the sections it lacks, and the code of the features
it leaves off, stay unimported, and so do Typer and Rich on a quiet plain question (each is milliseconds
of every start; ``benchmarks/run.py --only startup`` measures the whole)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import write_config
from tests.probe_run import run_probe

DEFERRED_SECTIONS = (
    "config.hooks",
    "config.permission_rules",
    "config.extra_tools",
    "config.subagent_team",
    "config.criteria",
)
"""Section models built only when a config has the section: hooks, permission rules, custom tools and
MCP servers, a subagent team, evaluation criteria."""
FEATURE_CODE = ("tools.mcp", "tools.hooks", "plans", "tools.commands", "tools.sandbox")
"""Code a run imports only when its config turns the feature on: MCP servers, hooks, plan mode, the
command tool and its sandbox."""

PROBE = """
import sys
from massgen_cli.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as ended:
    print("exit", ended.code, file=sys.stderr)
shown = [name for name in sys.modules if name.startswith("massgen_cli.") or name in ("typer", "rich")]
print(" ".join(sorted(shown)), file=sys.stderr)
"""

EVERY_SECTION = """\
agents:
  - id: a
    backend:
      type: scripted
      responses: ["x"]
      hooks: {PreToolUse: [{matcher: "*", command: "true"}]}
      permissions: {role: read-only}
      custom_tools: [{name: shout, function: shout, path: tools.py}]
      mcp_servers: [{name: files, command: "true"}]
hooks: {turn_start: [{command: "true"}]}
orchestrator:
  coordination:
    subagent_orchestrator: {agents: []}
    checklist_criteria_inline: [{text: "the answer is a number"}]
"""


def _imported_by(*args: str) -> tuple[str, set[str]]:
    """How ``massgen ARGS`` ended, and the package's modules it imported (and Typer, Rich), in a process
    of its own."""
    done = run_probe(PROBE, args)
    *_, ended, modules = done.stderr.strip().splitlines()
    return ended, {name.removeprefix("massgen_cli.") for name in modules.split()}


def test_a_config_with_every_section_builds_their_models(tmp_path: Path):
    config = write_config(tmp_path, EVERY_SECTION)
    (tmp_path / "tools.py").write_text("def shout(text: str) -> str:\n    return text.upper()\n")
    ended, imported = _imported_by("--validate", str(config))
    assert ended == "exit 0"
    assert set(DEFERRED_SECTIONS) <= imported


def test_a_plain_run_imports_no_section_or_feature_its_config_lacks(tmp_path: Path):
    config = write_config(tmp_path, "agent: {id: solo, backend: {type: scripted, responses: [hi]}}\n")
    ended, imported = _imported_by("-c", str(config), "-q", "What is 6 x 7?")
    assert ended == "exit 0"
    assert {"app", "compose", "config.schema", "features.registry"} <= imported  # the run was built
    assert imported & {*DEFERRED_SECTIONS, *FEATURE_CODE} == set()
    assert imported & {"typer", "rich"} == set()  # a plain question, and a quiet run with nothing to warn
    assert "config.descriptions" not in imported  # what each key means is the reference's to read
