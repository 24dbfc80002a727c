"""File tools on real files: every path confined to the agent's roots (``..``, absolute paths, symlinks,
read-only roots), a relative path in the workspace and every result and error naming the absolute path,
failures as tool results, results bounded."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from massgen_cli.config.orchestrator import OrchestratorConfig
from massgen_cli.config.schema import AgentConfig
from massgen_cli.config.tools import ContextPath
from massgen_cli.errors import ConfigError
from massgen_cli.events import ToolCall
from massgen_cli.tool_contract import ToolError
from massgen_cli.tools.files import file_tools
from massgen_cli.tools.paths import Root, Roots
from massgen_cli.tools.toolbox import Toolbox, ToolSources, agent_roots, build_toolbox


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """A workspace, a read-only and a writable context folder, and a secret folder outside them all."""
    places = {name: tmp_path / name for name in ("workspace", "docs", "shared", "secret")}
    for place in places.values():
        place.mkdir()
    (places["docs"] / "guide.md").write_text("line one\nthe port is 8123\nline three\n")
    (places["secret"] / "key.txt").write_text("sk-do-not-read\n")
    return places


def toolbox_for(layout: dict[str, Path]) -> Toolbox:
    agent = AgentConfig.model_validate(
        {
            "id": "a",
            "backend": {
                "type": "scripted",
                "responses": ["x"],
                "cwd": str(layout["workspace"]),
                "context_paths": [{"path": str(layout["shared"]), "permission": "write"}],
            },
        }
    )
    orchestrator = OrchestratorConfig(context_paths=[ContextPath(path=str(layout["docs"]))])
    return build_toolbox(agent, 0, orchestrator)


def call(toolbox: Toolbox, name: str, **arguments: object):  # type: ignore[no-untyped-def]
    return asyncio.run(toolbox.run(ToolCall("c1", name, dict(arguments))))


def test_the_agent_gets_all_file_tools_and_a_workspace_it_did_not_have(tmp_path: Path, layout):
    (layout["workspace"]).rmdir()
    toolbox = toolbox_for(layout)
    assert layout["workspace"].is_dir()
    assert [spec.name for spec in toolbox.specs] == [
        "read_file",
        "list_directory",
        "search_files",
        "write_file",
        "edit_file",
    ]


def test_reads_a_context_path_and_refuses_what_lies_outside(layout):
    toolbox = toolbox_for(layout)
    inside = call(toolbox, "read_file", path=str(layout["docs"] / "guide.md"))
    assert inside.ok and "the port is 8123" in inside.text
    for escape in (
        "../secret/key.txt",
        str(layout["secret"] / "key.txt"),
        "../docs/../secret/key.txt",
        "/etc/passwd",
    ):
        result = call(toolbox, "read_file", path=escape)
        assert not result.ok and "outside the folders this agent may use" in result.text, escape
        assert "sk-do-not-read" not in result.text


def test_a_symlink_out_of_the_workspace_is_refused(layout):
    toolbox = toolbox_for(layout)
    (layout["workspace"] / "link").symlink_to(layout["secret"])
    (layout["workspace"] / "key-link.txt").symlink_to(layout["secret"] / "key.txt")
    assert not call(toolbox, "read_file", path="link/key.txt").ok
    assert not call(toolbox, "read_file", path="key-link.txt").ok
    assert not call(toolbox, "write_file", path="link/new.txt", content="x").ok
    # the entries, after the header line that names the folder (a temporary path, with any digits in it)
    entries = call(toolbox, "list_directory", path=".").text.splitlines()[1:]
    assert "key-link.txt  (a link)" in entries and "link  (a link)" in entries
    size = str(len("sk-do-not-read\n"))
    assert not any(size in entry for entry in entries), "the outside file's size is not shown"
    assert not (layout["secret"] / "new.txt").exists()
    listing = call(toolbox, "search_files", pattern="sk-do-not", path=".")
    assert "sk-do-not-read" not in listing.text


def test_writes_only_where_permitted(layout):
    """The workspace always; a write context path in the final presentation only; a read one never."""
    toolbox = toolbox_for(layout)
    assert call(toolbox, "write_file", path="notes/plan.md", content="step 1\n").ok
    assert (layout["workspace"] / "notes" / "plan.md").read_text() == "step 1\n"
    shared = str(layout["shared"] / "out.txt")
    early = call(toolbox, "write_file", path=shared, content="too early")
    assert not early.ok and "write in the final presentation" in early.text
    assert toolbox.roots is not None
    toolbox.roots.presenting = True
    assert call(toolbox, "write_file", path=shared, content="ok").ok
    refused = call(toolbox, "write_file", path=str(layout["docs"] / "guide.md"), content="overwritten")
    assert not refused.ok and "read-only" in refused.text
    assert "the port is 8123" in (layout["docs"] / "guide.md").read_text()
    edit = call(toolbox, "edit_file", path=str(layout["docs"] / "guide.md"), old="8123", new="1")
    assert not edit.ok and "read-only" in edit.text


def test_a_relative_path_lands_in_the_workspace_and_every_result_names_the_absolute_path(layout):
    toolbox = toolbox_for(layout)
    workspace = layout["workspace"].resolve()
    target = workspace / "proj_src" / "x.py"
    texts = [
        call(toolbox, "write_file", path="proj_src/x.py", content="def f(): ...").text,
        call(toolbox, "write_file", path="proj_src/x.py", content="def g(): ...").text,
        call(toolbox, "edit_file", path="proj_src/x.py", old="g", new="h").text,
        call(toolbox, "read_file", path="proj_src/x.py").text.splitlines()[0],
        call(toolbox, "list_directory", path="proj_src").text,
        call(toolbox, "search_files", pattern="def", path="proj_src").text,
        call(toolbox, "search_files", pattern="absent", path="proj_src").text,
    ]
    assert texts == [
        f"wrote 12 characters to {target} (a new file)",
        f"wrote 12 characters to {target} (the old content replaced)",
        f"edited {target}: replaced 1 characters with 1",
        f"{target}: lines 1-1 of 1",
        f"{workspace / 'proj_src'}: 1 entries\nx.py  12",
        f"{target}:1: def h(): ...",
        f"no match for 'absent' under {workspace / 'proj_src'}",
    ]
    assert target.read_text() == "def h(): ..."


def test_errors_name_the_absolute_path(layout):
    toolbox = toolbox_for(layout)
    workspace, docs = layout["workspace"].resolve(), layout["docs"].resolve()
    secret = layout["secret"].resolve() / "key.txt"
    assert call(toolbox, "read_file", path="gone.py").text == f"Error: {workspace / 'gone.py'} does not exist"
    outside = call(toolbox, "read_file", path="../secret/key.txt").text
    assert outside.startswith(f"Error: ../secret/key.txt (= {secret}) is outside the folders")
    read_only = call(toolbox, "write_file", path=str(docs / "guide.md"), content="x").text
    assert read_only == f"Error: {docs / 'guide.md'} is read-only for this agent now (inside {docs}: read)"
    (workspace / "a.txt").write_text("same same")
    twice = call(toolbox, "edit_file", path="a.txt", old="same", new="other").text
    assert twice == f"Error: `old` occurs 2 times in {workspace / 'a.txt'}; it must occur exactly once"


def test_the_tool_descriptions_say_a_relative_path_is_in_the_workspace(layout):
    workspace = layout["workspace"].resolve()
    for spec in toolbox_for(layout).specs:
        assert f"A relative path starts at your workspace, {workspace}." in spec.description, spec.name
        path = spec.parameters["properties"]["path"]["description"]
        assert path == f"An absolute path, or a path relative to your workspace ({workspace}).", spec.name


def test_the_instructions_give_the_rule_and_the_roots_one_per_line(layout):
    workspace, docs, shared = (layout[name].resolve() for name in ("workspace", "docs", "shared"))
    instructions = toolbox_for(layout).instructions()
    assert f"A relative path starts at your workspace, {workspace}." in instructions
    assert f"`notes/plan.md` means {workspace}/notes/plan.md" in instructions
    assert instructions.endswith(
        f"reach only these places:\n- {workspace} (write)\n- {docs} (read)\n"
        f"- {shared} (write in the final presentation)"
    )


def test_without_a_workspace_relative_paths_start_at_the_current_folder(tmp_path: Path, layout):
    roots = agent_roots(None, [ContextPath(path=str(layout["docs"]))])
    assert roots is not None and not roots.has_workspace
    assert roots.relative_rule() == (
        f"A relative path starts at the current folder, {tmp_path.resolve()} (you have no workspace)."
    )


def test_edit_replaces_exactly_one_occurrence(layout):
    toolbox = toolbox_for(layout)
    (layout["workspace"] / "app.py").write_text("x = 1\ny = 1\n")
    assert not call(toolbox, "edit_file", path="app.py", old="= 1", new="= 2").ok  # twice
    assert call(toolbox, "edit_file", path="app.py", old="y = 1", new="y = 2").ok
    assert (layout["workspace"] / "app.py").read_text() == "x = 1\ny = 2\n"


def test_reads_in_ranges_lists_and_searches(layout):
    toolbox = toolbox_for(layout)
    (layout["workspace"] / "long.txt").write_text("".join(f"row {n}\n" for n in range(1, 1001)))
    part = call(toolbox, "read_file", path="long.txt", offset=10, limit=3)
    assert part.text.splitlines() == [
        f"{layout['workspace'].resolve()}/long.txt: lines 10-12 of 1000 (more: offset=13)",
        "    10\trow 10",
        "    11\trow 11",
        "    12\trow 12",
    ]
    listing = call(toolbox, "list_directory", path=".")
    assert "long.txt  " in listing.text
    found = call(toolbox, "search_files", pattern=r"port is \d+", path=str(layout["docs"]))
    assert found.ok and found.text.endswith("guide.md:2: the port is 8123")


def test_failures_are_results_never_exceptions(layout):
    toolbox = toolbox_for(layout)
    (layout["workspace"] / "blob.bin").write_bytes(b"\0\1\2" * 100)
    cases = {
        "read_file": {"path": "missing.txt"},
        "search_files": {"pattern": "(unclosed"},
        "list_directory": {"path": "blob.bin"},
        "write_file": {"path": "x.txt"},  # no content
        "no_such_tool": {},
    }
    for name, arguments in cases.items():
        result = call(toolbox, name, **arguments)
        assert not result.ok and result.text.startswith("Error: "), (name, result.text)
    assert "binary file" in call(toolbox, "read_file", path="blob.bin").text
    assert "invalid path" in call(toolbox, "read_file", path="a\0b").text


def test_results_are_bounded_with_a_note(layout):
    toolbox = toolbox_for(layout)
    (layout["workspace"] / "wide.txt").write_text(("x" * 5000 + "\n") * 300)
    result = call(toolbox, "read_file", path="wide.txt")
    assert len(result.text) < 21_000
    assert "[cut: " in result.text and "offset and limit" in result.text
    for n in range(300):
        (layout["workspace"] / f"f{n}.txt").write_text("needle\n")
    matches = call(toolbox, "search_files", pattern="needle")
    assert "stopped after 100 matches" in matches.text


def test_innermost_root_decides_permission(tmp_path: Path):
    outer, inner = tmp_path / "project", tmp_path / "project" / "vendor"
    inner.mkdir(parents=True)
    roots = Roots(outer.resolve(), (Root.of(outer, True), Root.of(inner, False)))
    assert roots.confine("main.py", write=True) == (outer / "main.py").resolve()
    with pytest.raises(ToolError, match="read-only"):
        roots.confine("vendor/lib.py", write=True)


def test_no_workspace_and_no_context_paths_means_no_file_tools():
    assert agent_roots(None, []) is None
    agent = AgentConfig.model_validate({"backend": {"type": "scripted", "responses": ["x"]}})
    assert not build_toolbox(agent, 0, OrchestratorConfig())


def test_relative_workspace_resolves_against_the_current_folder(tmp_path: Path):
    roots = agent_roots("ws", [])
    assert roots is not None and roots.base == (Path(os.getcwd()) / "ws").resolve() == (tmp_path / "ws")


def test_a_missing_context_path_is_an_error_at_start_naming_its_yaml_path(tmp_path: Path):
    orchestrator = OrchestratorConfig(context_paths=[ContextPath(path=str(tmp_path / "nowhere"))])
    agent = AgentConfig.model_validate({"backend": {"type": "scripted", "responses": ["x"]}})
    with pytest.raises(
        ConfigError, match=r"orchestrator\.context_paths\[0\]\.path: .*nowhere does not exist"
    ):
        build_toolbox(agent, 0, orchestrator)


def project_with_state(tmp_path: Path) -> tuple[Path, Path]:
    """A project folder used as the workspace (``cwd: "."``), with the runner's state folder inside it."""
    project, state = tmp_path / "project", tmp_path / "project" / ".massgen"
    (state / "sessions" / "other").mkdir(parents=True)
    (state / "sessions" / "other" / "session.json").write_text('{"secret": "another session"}')
    (project / "notes.md").write_text("the session notes\n")
    return project, state


def project_toolbox(project: Path, state: Path | None, **backend: object) -> Toolbox:
    agent = AgentConfig.model_validate(
        {"id": "a", "backend": {"type": "scripted", "responses": ["x"], "cwd": str(project), **backend}}
    )
    return build_toolbox(agent, 0, OrchestratorConfig(), ToolSources(state_folder=state))


def test_the_state_folder_is_out_of_reach_even_inside_the_workspace(tmp_path: Path):
    project, state = project_with_state(tmp_path)
    record = ".massgen/sessions/other/session.json"
    before = project_toolbox(project, None)  # the shape before: the workspace's roots alone
    assert "another session" in call(before, "read_file", path=record).text
    assert ".massgen" in call(before, "list_directory", path=".").text

    box = project_toolbox(project, state)
    read = call(box, "read_file", path=record)
    assert not read.ok and "runner's own state folder" in read.text and "another session" not in read.text
    assert not call(box, "write_file", path=record, content="{}").ok
    assert (state / "sessions" / "other" / "session.json").read_text() == '{"secret": "another session"}'
    listing = call(box, "list_directory", path=".").text
    assert "notes.md" in listing and ".massgen" not in listing
    found = call(box, "search_files", pattern="session").text
    assert "notes.md" in found and "another session" not in found
    linked = project / "state_link"
    linked.symlink_to(state, target_is_directory=True)
    assert not call(box, "read_file", path="state_link/sessions/other/session.json").ok


def test_a_context_path_over_the_state_folder_does_not_reach_it(tmp_path: Path):
    project, state = project_with_state(tmp_path)
    workspace = tmp_path / "ws"
    box = project_toolbox(workspace, state, context_paths=[{"path": str(project), "permission": "write"}])
    assert call(box, "read_file", path=str(project / "notes.md")).ok
    assert not call(box, "read_file", path=str(state / "sessions" / "other" / "session.json")).ok


def _swap_for_a_link_once_checked(monkeypatch, folder: Path, target: Path) -> None:
    """The attacker's move, made exactly between the check and the open: once ``Roots.confine`` has
    resolved and approved a path, ``folder`` is replaced by a link to ``target`` (as an agent's command
    racing the file tools would)."""
    confine = Roots.confine

    def confine_then_swap(self: Roots, raw: str, *, write: bool = False) -> Path:
        checked = confine(self, raw, write=write)
        if folder.is_dir() and not folder.is_symlink():
            folder.rename(folder.with_name(folder.name + ".moved"))
            folder.symlink_to(target)
        return checked

    monkeypatch.setattr(Roots, "confine", confine_then_swap)


@pytest.mark.parametrize("tool", ["read_file", "list_directory", "write_file", "edit_file"])
def test_a_folder_swapped_for_a_link_after_the_check_is_not_followed(layout, monkeypatch, tool):
    """A path is opened as it was checked: each folder on the way is opened with O_NOFOLLOW relative to
    the one before, so a folder swapped for a link to an outside folder in between is refused (the file
    tools used to open the path again by name and follow the new link out of the roots)."""
    toolbox = toolbox_for(layout)
    sub = layout["workspace"] / "sub"
    sub.mkdir()
    (sub / "key.txt").write_text("mine: replace me\n")
    _swap_for_a_link_once_checked(monkeypatch, sub, layout["secret"])
    arguments = {
        "read_file": {"path": "sub/key.txt"},
        "list_directory": {"path": "sub"},
        "write_file": {"path": "sub/key.txt", "content": "overwritten"},
        "edit_file": {"path": "sub/key.txt", "old": "sk-do-not-read", "new": "edited"},
    }[tool]
    result = call(toolbox, tool, **arguments)
    assert not result.ok and "became a link after it was checked" in result.text, result.text
    said = result.text.replace(str(layout["workspace"]), "<workspace>")  # its path may hold any digits
    assert "sk-do-not-read" not in said and str(len("sk-do-not-read\n")) not in said
    assert (layout["secret"] / "key.txt").read_text() == "sk-do-not-read\n", "the outside file is untouched"


def test_reads_racing_a_link_swap_never_reach_outside(layout):
    """Under a real race (a thread swapping a folder and a link to an outside folder as fast as it can),
    no read returns the outside file: each read gives the workspace's file or a refusal."""
    import threading

    toolbox = toolbox_for(layout)
    sub, moved = layout["workspace"] / "sub", layout["workspace"] / "sub.real"
    sub.mkdir()
    (sub / "key.txt").write_text("the workspace's own\n")
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            sub.rename(moved)
            sub.symlink_to(layout["secret"])
            sub.unlink()
            moved.rename(sub)

    swapper = threading.Thread(target=swap)
    swapper.start()
    results = []
    try:  # at least 300 reads, and on until one lands between swaps (a busy machine may need more)
        while len(results) < 300 or not any(result.ok for result in results):
            results.append(call(toolbox, "read_file", path="sub/key.txt"))
            assert len(results) < 100_000, "no read landed between two swaps"
    finally:
        stop.set()
        swapper.join()
    assert not any("sk-do-not-read" in result.text for result in results)
    assert any(result.ok and "the workspace's own" in result.text for result in results)


def test_another_projects_state_folder_is_out_of_reach_too(tmp_path: Path):
    """Every state folder the user has used is kept from the agents, not the run's own alone: a context
    path over a folder of projects used to show another project's sessions to the file tools and to
    commands."""
    from massgen_cli.state import resolve_state_dir
    from massgen_cli.tools.command_policy import CommandPolicy
    from massgen_cli.tools.commands import Confinement, SandboxSettings, command_tool

    other, state = project_with_state(tmp_path / "projects" / "other")[1], tmp_path / "own-state"
    resolve_state_dir(other)  # the other project's runs used it
    record = other / "sessions" / "other" / "session.json"
    box = project_toolbox(tmp_path / "ws", state, context_paths=[{"path": str(tmp_path / "projects")}])
    read = call(box, "read_file", path=str(record))
    assert not read.ok and "another session" not in read.text, read.text
    assert (
        "another session"
        not in call(box, "search_files", pattern="session", path=str(tmp_path / "projects")).text
    )
    roots = agent_roots(
        str(tmp_path / "ws"), [ContextPath(path=str(tmp_path / "projects"))], state_folder=state
    )
    assert roots is not None
    confinement = Confinement(roots, SandboxSettings(roots.private))
    tool = command_tool(confinement, CommandPolicy.of(None, None), 30)
    shown = call(Toolbox({tool.name: tool}, call_timeout_s=35), "execute_command", command=f"cat {record}")
    assert "another session" not in shown.text and "No such file" in shown.text, shown.text


def test_protected_paths_stay_read_only_in_the_final_presentation_too(tmp_path: Path):
    """MassGen's ``protected_paths`` inside a writable context path: the winner's final presentation
    overwrote a protected ``index.html`` (the key was loaded and ignored); now the file tools refuse and a
    sandboxed command sees it read-only, while the rest of the context path stays writable."""
    from massgen_cli.tools.command_policy import CommandPolicy
    from massgen_cli.tools.commands import Confinement, SandboxSettings, command_tool

    site = tmp_path / "site"
    (site / "assets").mkdir(parents=True)
    (site / "index.html").write_text("<h1>keep</h1>\n")
    (site / "assets" / "logo.svg").write_text("<svg/>\n")
    (site / "styles.css").write_text("body {}\n")
    entry = ContextPath(path=str(site), permission="write", protected_paths=["index.html", "assets"])
    roots = agent_roots(str(tmp_path / "ws"), [entry])
    assert roots is not None
    roots.presenting = True
    box = Toolbox({t.spec.name: t for t in file_tools(roots)}, call_timeout_s=30)
    for path in (site / "index.html", site / "assets" / "logo.svg", site / "assets" / "new.svg"):
        refused = call(box, "write_file", path=str(path), content="overwritten")
        assert not refused.ok and "protected by the config" in refused.text, refused.text
    assert call(box, "write_file", path=str(site / "styles.css"), content="body { color: red }\n").ok
    tool = command_tool(Confinement(roots, SandboxSettings()), CommandPolicy.of(None, None), 30)
    commands = Toolbox({tool.name: tool}, call_timeout_s=35)
    shell = call(
        commands, "execute_command", command=f"echo x > {site}/index.html; echo y > {site}/styles.css"
    )
    assert "Read-only file system" in shell.text, shell.text
    assert (site / "index.html").read_text() == "<h1>keep</h1>\n"
    assert (site / "styles.css").read_text() == "y\n"
