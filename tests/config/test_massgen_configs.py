"""MassGen config values that run another way here: agent programs as their API backends, the Textual
UI as the live view, MassGen's own custom tools, appended system prompts; and ``massgen --validate``."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from massgen_cli.config import load_config
from massgen_cli.tools.custom import load_massgen_function, result_text
from tests.conftest import run_cli, write_config
from tests.servers.fake_providers import FakeProviderServer, anthropic_stream

CLAUDE_CODE = """
agent:
  id: coder
  append_system_prompt: Always answer in one sentence.
  backend:
    type: claude_code
    model: claude-sonnet-4-5
    base_url: {url}
    permission_mode: bypassPermissions
    allowed_tools: [Read, Write, Bash]
ui: {{display_type: textual_terminal}}
"""


@pytest.fixture
def fake_server():  # type: ignore[no-untyped-def]
    server = FakeProviderServer().start()
    yield server
    server.stop()


def test_claude_code_runs_as_the_claude_api_with_file_and_command_tools(tmp_path, fake_server, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-000000")
    fake_server.script(anthropic_stream("It is Paris."))
    config = write_config(tmp_path, CLAUDE_CODE.format(url=fake_server.root_url))
    loaded = load_config(config)
    backend = loaded.config.agents[0].backend
    assert (backend.type, backend.program, backend.cwd) == ("claude", "claude_code", "claude_code_workspace")
    assert any("agent program is not run here" in warning for warning in loaded.warnings)
    assert not any("permission_mode" in warning for warning in loaded.warnings), "bypassPermissions: as is"
    assert any("'allowed_tools' is ignored" in warning for warning in loaded.warnings)
    assert loaded.notes == [
        "ui.display_type: 'textual_terminal': MassGen's Textual UI shows here as the Rich live view"
    ]
    result = run_cli("--config", str(config), "What is the capital of France?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "It is Paris.\n"
    assert "note: ui.display_type: 'textual_terminal'" in result.stderr
    (sent,) = fake_server.requests
    assert sent.path == "/v1/messages"
    tools = {tool["name"] for tool in sent.body["tools"]}
    assert {"read_file", "write_file", "execute_command"} <= tools
    assert sent.body["system"].rstrip().endswith("Always answer in one sentence.")


def test_custom_tools_without_a_path_need_massgen_and_say_so(tmp_path):
    config = write_config(
        tmp_path,
        """
        agent:
          backend:
            type: scripted
            responses: ["ok"]
            custom_tools:
              - {name: two_num_tool, function: two_num_tool}
        """,
    )
    (warning,) = load_config(config).warnings
    assert warning.startswith("agent.backend.custom_tools[0]: two_num_tool is one of MassGen's own tools")
    assert "pip install massgen" in warning
    result = run_cli("--config", str(config), "Q?")
    assert result.returncode == 0 and result.stdout == "ok\n", result.stderr
    strict = run_cli("--validate", str(config), "--strict")
    assert strict.returncode == 2 and "two_num_tool" in strict.stdout


def test_massgen_tools_are_found_as_massgen_finds_them_and_read_as_text(tmp_path, monkeypatch):
    basic = tmp_path / "site" / "massgen" / "tool" / "_basic"
    basic.mkdir(parents=True)
    for folder in (basic.parent.parent, basic.parent):
        (folder / "__init__.py").write_text("")
    (basic / "__init__.py").write_text(
        textwrap.dedent(
            """
            from dataclasses import dataclass

            @dataclass
            class TextContent:
                data: str
                block_type: str = "text"

            @dataclass
            class ExecutionResult:
                output_blocks: list

            async def two_num_tool(x: int, y: int) -> ExecutionResult:
                return ExecutionResult([TextContent(f"The sum is {x + y}"), TextContent("img", "image")])
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    for name in [name for name in sys.modules if name == "massgen" or name.startswith("massgen.")]:
        monkeypatch.delitem(sys.modules, name)
    for name in STAND_IN_MODULES:  # the stand-in this test registers goes with it (set, then undone)
        monkeypatch.setitem(sys.modules, name, None)
        monkeypatch.delitem(sys.modules, name)
    function = load_massgen_function(None, "two_num_tool")
    import asyncio

    assert result_text(asyncio.run(function(2, 3))) == "The sum is 5\n[image: 3 characters]"
    assert load_massgen_function("_basic", "two_num_tool") is function


def test_validate_says_what_loading_finds_without_running(tmp_path):
    agent = "agent: {backend: {type: scripted, responses: [ok]}}\n"
    good = write_config(tmp_path, agent + "ui: {type: textual_terminal}\n")
    result = run_cli("--validate", str(good))
    assert result.returncode == 0 and "is valid" in result.stdout
    assert "note: ui.type: 'textual_terminal'" in result.stdout
    warned = write_config(tmp_path, agent + "orchestrator: {dspy: {enabled: true}}\n", "w.yaml")
    assert run_cli("--validate", str(warned)).returncode == 0
    strict = run_cli("--validate", str(warned), "--strict", "--json")
    report = json.loads(strict.stdout)
    assert strict.returncode == 2 and report["valid"] is False and report["errors"] == []
    assert report["warnings"][0].startswith("orchestrator.dspy: MassGen key 'dspy' is ignored")
    bad = write_config(tmp_path, "agent: {backend: {type: ag2}}\n", "bad.yaml")
    refused = run_cli("--validate", str(bad), "--json")
    assert refused.returncode == 2
    assert "AG2 (AutoGen) agents need their own runtime" in json.loads(refused.stdout)["errors"][0]
    assert not (Path(tmp_path) / "state").exists(), "validating runs nothing and keeps nothing"


def test_a_feature_the_api_called_cannot_give_is_named_with_its_provider(tmp_path, monkeypatch):
    """Gemini's search and code execution are on Gemini's own API only, not the OpenAI-compatible one
    asked for here: said, not faked (on its own API only OpenAI's reasoning settings are said); X search
    is xAI's; OpenRouter's plugin options need OpenRouter."""
    monkeypatch.setenv("GEMINI_API_KEY", "x")
    monkeypatch.setenv("XAI_API_KEY", "x")
    config = write_config(
        tmp_path,
        """
        agents:
          - id: g
            backend: {type: gemini, model: gemini-2.5-flash, enable_web_search: true,
                      enable_code_execution: true, api: chat_completions}
          - id: local
            backend: {type: chatcompletion, model: m, base_url: "http://127.0.0.1:9/v1",
                      reasoning: {effort: low, summary: auto}}
          - id: o
            backend: {type: openai, model: gpt-5, enable_web_search: true, reasoning: {summary: auto},
                      enable_x_search: true, engine: exa}
          - id: x
            backend: {type: grok, model: grok-4, enable_x_search: true, text: {verbosity: low}}
          - id: n
            backend: {type: gemini, model: gemini-3-flash-preview, enable_web_search: true,
                      enable_code_execution: true, reasoning: {effort: low}}
        """,
    )
    warnings = load_config(config).warnings
    assert warnings == [
        "agents[0].backend.enable_web_search: gemini offers Google Search grounding (google_search) only "
        "through Gemini's own API (generateContent), not through the OpenAI-compatible API this backend "
        "calls (leave out base_url and api to call Gemini's own); it is ignored",
        "agents[0].backend.enable_code_execution: gemini offers code execution (code_execution) only "
        "through Gemini's own API (generateContent), not through the OpenAI-compatible API this backend "
        "calls (leave out base_url and api to call Gemini's own); it is ignored",
        "agents[1].backend.reasoning.summary: chatcompletion gives no reasoning summary through Chat "
        "Completions: it needs the Responses API (api: responses, where the server offers it); it is ignored",
        "agents[2].backend.engine: openai calls no OpenRouter web plugin, which this key sets (with "
        "enable_web_search on type openrouter); it is ignored",
        "agents[2].backend.enable_x_search: openai offers no X search (xAI's x_search tool, type grok); it "
        "is ignored",
        "agents[3].backend.text: grok has no verbosity setting (OpenAI's text.verbosity); it is ignored",
        "agents[4].backend.reasoning: gemini takes no reasoning settings (Gemini 2.5 and 3 think, their "
        "thoughts shown); it is ignored",
    ]


@pytest.mark.parametrize(
    ("program", "model"),
    [
        ("claude_code", "claude-opus-4-6"),
        ("codex", "gpt-5.4"),
        ("gemini_cli", "gemini-3.1-pro-preview"),
        ("copilot", "gpt-5-mini"),
        ("antigravity_cli", "gemini-3.5-flash"),
    ],
)
def test_an_agent_program_without_a_model_uses_the_programs_default(tmp_path, program, model):
    """MassGen's agent programs start without a model (15 of its configs leave it out): each runs here on
    the model its program uses by default, where it was refused for want of one."""
    config = write_config(tmp_path, f"agent: {{id: coder, backend: {{type: {program}}}}}\n")
    backend = load_config(config).config.agents[0].backend
    assert (backend.program, backend.model) == (program, model)


BROKEN_SERVER_AND_IGNORED_KEY = """
agent:
  id: a
  backend:
    type: scripted
    responses: ["fine"]
    permission_mode: bypassPermissions
    mcp_servers:
      - {name: broken, type: stdio, command: no-such-mcp-command-here}
"""


def test_what_a_run_goes_without_is_recorded_and_said_even_when_quiet(tmp_path):
    """An MCP server that does not start and a key that is ignored were one stderr line each, none with
    -q, and in no summary or event log: now each is in the first attempt's events, in every attempt's
    summary.json warnings, and said with -q (the server's failure in full, the keys as a count)."""
    from tests.cli.in_process_cli import massgen
    from tests.conftest import state_folder

    config = write_config(tmp_path, BROKEN_SERVER_AND_IGNORED_KEY)
    result = massgen("--config", str(config), "-q", "hi")
    assert result.exit_code == 0 and result.stdout == "fine\n", result.stderr
    assert "MCP server 'broken' failed to start" in result.stderr
    assert "1 config setting(s) ignored or run differently here" in result.stderr
    (summary,) = state_folder().rglob("summary.json")
    warnings = json.loads(summary.read_text())["warnings"]
    assert any("MCP server 'broken' failed to start" in warning for warning in warnings), warnings
    assert any("permission_mode: only agent programs" in warning for warning in warnings), warnings
    events = (summary.parent / "events.jsonl").read_text()
    assert (
        "MCP server 'broken' failed to start" in events and "permission_mode: only agent programs" in events
    )


def test_validate_lists_every_warning(tmp_path):
    """``--validate --json`` stopped at 50 warnings; a config with 120 ignored keys lists all 120 (and
    the 120 server commands that are not on the PATH)."""
    from tests.cli.in_process_cli import massgen

    server = "    - {{name: s{}, type: stdio, command: x, defer_loading: true}}\n"
    servers = "".join(server.format(n) for n in range(120))
    backend = "    type: scripted\n    responses: [x]\n    mcp_servers:\n"
    config = write_config(tmp_path, f"agent:\n  id: a\n  backend:\n{backend}{servers}")
    result = massgen("--validate", str(config), "--json")
    report = json.loads(result.stdout)
    assert report["valid"] and len(report["warnings"]) == 240, report["warnings"][-2:]


CANNOT_START = """
agents:
  - id: a
    backend: {{type: openai, model: gpt-4o-mini}}
  - id: b
    backend:
      type: claude
      model: claude-sonnet-4-5
      context_paths: [{{path: {missing}/folder}}]
      custom_tools: [{{name: [t], function: [f], path: {missing}/tools.py}}]
      mcp_servers:
        - {{name: absent, type: stdio, command: no-such-mcp-command-here}}
        - {{name: exits, type: stdio, command: {python}, args: ["-c", "raise SystemExit(3)"]}}
        - {{name: works, type: stdio, command: {python}, args: ["{server}"]}}
"""


def test_validate_says_at_once_everything_a_start_needs(tmp_path, monkeypatch):
    """A config that loads but cannot start was "valid" (121 of MassGen's 268 examples fail at start):
    every missing key, path and tool file is an error with its remedy, in one run; an MCP command that is
    not on the PATH is a warning (the run goes on without it); ``--deep`` starts the servers."""
    from tests.cli.in_process_cli import massgen

    for variable in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    server = Path(__file__).parents[1] / "tools" / "servers" / "mcp_test_server.py"
    text = CANNOT_START.format(missing=tmp_path / "nowhere", python=sys.executable, server=server)
    config = write_config(tmp_path, text)
    report = json.loads(massgen("--validate", str(config), "--json").stdout)
    assert not report["valid"]
    errors = "\n".join(report["errors"])
    assert "agents[0].backend: no API key for backend 'openai': set OPENAI_API_KEY" in errors
    assert "agents[1].backend: no API key for backend 'claude': set ANTHROPIC_API_KEY" in errors
    assert "agents[1].backend.context_paths[0].path:" in errors and "does not exist" in errors
    assert "agents[1].backend.custom_tools[0]:" in errors
    warnings = "\n".join(report["warnings"])
    assert "mcp_servers[0].command: 'no-such-mcp-command-here' is not on the PATH" in warnings
    assert "exits" not in warnings, "a command on the PATH is started only with --deep"
    deep = json.loads(massgen("--validate", str(config), "--json", "--deep").stdout)
    deep_warnings = "\n".join(deep["warnings"])
    assert "--deep: MCP server 'exits' failed to start" in deep_warnings
    assert "'works'" not in deep_warnings, "a server that starts is no warning"


MASSGEN_STYLE_TOOL = '''
from massgen.logger_config import logger
from massgen.tool import context_params
from massgen.tool._result import ExecutionResult, TextContent


@context_params("agent_id")
async def two_num_tool(x: int, y: int, agent_id: str = "") -> ExecutionResult:
    """Add two numbers together."""
    logger.info("adding")
    return ExecutionResult(output_blocks=[TextContent(data=f"The sum of {x} and {y} is {x + y}")])
'''


STAND_IN_MODULES = (
    "massgen",
    "massgen.tool",
    "massgen.tool._result",
    "massgen.tool._decorators",
    "massgen.tool._exceptions",
    "massgen.logger_config",
)


def test_massgens_shipped_tools_load_without_massgen_installed(tmp_path, monkeypatch):
    """58 of MassGen's example configs name tool files from its tree (``massgen/tool/...``), which import
    its result types: without MassGen installed they failed with "No module named 'massgen'". Its public
    tool types now have a stand-in here, so those tools are offered and called; a tool that needs more
    of MassGen says to install it."""
    import asyncio

    from massgen_cli.config.massgen_keys import massgen_installed
    from massgen_cli.config.orchestrator import OrchestratorConfig
    from massgen_cli.events import ToolCall
    from massgen_cli.tools.toolbox import build_toolbox

    # As the CLI runs: the current folder (MassGen's tree, here) is not where modules are imported from,
    # and no MassGen module of an earlier test is loaded.
    monkeypatch.setattr(sys, "path", [entry for entry in sys.path if entry not in ("", str(Path.cwd()))])
    for name in [name for name in sys.modules if name == "massgen" or name.startswith("massgen.")]:
        monkeypatch.delitem(sys.modules, name)
    for name in STAND_IN_MODULES:  # the stand-in this test registers goes with it (set, then undone)
        monkeypatch.setitem(sys.modules, name, None)
        monkeypatch.delitem(sys.modules, name)
    if massgen_installed():
        pytest.skip("MassGen is installed here: its tools get MassGen itself")
    (tmp_path / "massgen" / "tool" / "_basic").mkdir(parents=True)
    (tmp_path / "massgen" / "tool" / "_basic" / "_two_num_tool.py").write_text(MASSGEN_STYLE_TOOL)
    (tmp_path / "massgen" / "tool" / "_needs_more.py").write_text("from massgen.backend import x\n")
    tool = "{name: [two_num_tool], function: [two_num_tool], path: massgen/tool/_basic/_two_num_tool.py}"
    config = write_config(
        tmp_path, f"agent: {{id: a, backend: {{type: scripted, responses: [x], custom_tools: [{tool}]}}}}"
    )
    agent = load_config(config).config.agents[0]
    box = build_toolbox(agent, 0, OrchestratorConfig())
    call = ToolCall("c", "custom_tool__two_num_tool", {"x": 2, "y": 3})
    assert asyncio.run(box.run(call)).text == "The sum of 2 and 3 is 5"
    more = "{name: [x], function: [x], path: massgen/tool/_needs_more.py}"
    refused = write_config(
        tmp_path, f"agent: {{id: a, backend: {{type: scripted, responses: [x], custom_tools: [{more}]}}}}"
    )
    with pytest.raises(Exception, match=r"massgen\.backend.*pip install massgen"):
        build_toolbox(load_config(refused).config.agents[0], 0, OrchestratorConfig())


RELATIVE_TOOL = '''
import os

from .._result import ExecutionResult, TextContent


async def read_file_content(target_path: str) -> ExecutionResult:
    """Read a file."""
    with open(target_path, encoding="utf-8") as file:
        return ExecutionResult(output_blocks=[TextContent(data=file.read())])
'''


def test_a_massgen_tool_that_imports_its_types_relatively_loads_with_the_stand_in(tmp_path, monkeypatch):
    """MassGen's tool_search_example.yaml names ``_file_handlers/_file_operations.py``, which imports the
    result types as ``from .._result import …``: refused before ("attempted relative import beyond
    top-level package"), now loaded as MassGen names it; a relative import of a module the stand-in does
    not hold still says to install MassGen."""
    import asyncio

    from massgen_cli.config.massgen_keys import massgen_installed
    from massgen_cli.config.orchestrator import OrchestratorConfig
    from massgen_cli.events import ToolCall
    from massgen_cli.tools.toolbox import build_toolbox

    monkeypatch.setattr(sys, "path", [entry for entry in sys.path if entry not in ("", str(Path.cwd()))])
    for name in [name for name in sys.modules if name == "massgen" or name.startswith("massgen.")]:
        monkeypatch.delitem(sys.modules, name)
    for name in STAND_IN_MODULES:
        monkeypatch.setitem(sys.modules, name, None)
        monkeypatch.delitem(sys.modules, name)
    if massgen_installed():
        pytest.skip("MassGen is installed here: its tools get MassGen itself")
    handlers = tmp_path / "massgen" / "tool" / "_file_handlers"
    handlers.mkdir(parents=True)
    (handlers / "_file_operations.py").write_text(RELATIVE_TOOL)
    (handlers / "_needs_a_sibling.py").write_text("from ._helpers import read\n")
    (tmp_path / "notes.txt").write_text("kept notes")

    def agent_with(path: str, function: str):  # type: ignore[no-untyped-def]
        tool = f"{{name: [{function}], function: [{function}], path: {path}}}"
        text = f"agent: {{id: a, backend: {{type: scripted, responses: [x], custom_tools: [{tool}]}}}}"
        return load_config(write_config(tmp_path, text)).config.agents[0]

    box = build_toolbox(
        agent_with("massgen/tool/_file_handlers/_file_operations.py", "read_file_content"),
        0,
        OrchestratorConfig(),
    )
    call = ToolCall("c", "custom_tool__read_file_content", {"target_path": str(tmp_path / "notes.txt")})
    assert asyncio.run(box.run(call)).text == "kept notes"
    sibling = agent_with("massgen/tool/_file_handlers/_needs_a_sibling.py", "read")
    with pytest.raises(Exception, match=r"massgen\.tool\._file_handlers.*pip install massgen"):
        build_toolbox(sibling, 0, OrchestratorConfig())
