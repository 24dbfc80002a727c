"""``massgen --validate`` reads a config's custom tool file and runs none of it: a file that writes a
marker when imported leaves none, and what a start would fail on (no file, a syntax error, no such
function, an argument the function does not take, a module that cannot be found) is still an error
naming the YAML path. A run still imports the file and calls its function."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from massgen_cli.tools.custom import CustomToolLoadError
from massgen_cli.tools.custom_check import check_tool_file, module_found
from tests.conftest import run_cli, write_config
from tests.scripted import scripted

MARKING_TOOL = """
from pathlib import Path
import json

Path(__file__).with_name("imported.marker").write_text("ran")


def greet(name: str, greeting: str = "Hello") -> str:
    \"\"\"Greet someone.\"\"\"
    return f"{greeting}, {name}!"
"""


def tool_config(folder: Path, source: str, function: str = "greet", **entry: object) -> Path:
    (folder / "tools.py").write_text(textwrap.dedent(source), encoding="utf-8")
    call = {"calls": [{"tool": "custom_tool__greet", "args": {"name": "Ada"}}]}
    tool = {"name": "greet", "function": function, "path": "tools.py", **entry}
    return write_config(folder, scripted({"a": [call, "done"]}, backends={"a": {"custom_tools": [tool]}}))


def validated(config: Path) -> dict[str, Any]:
    return json.loads(run_cli("--validate", str(config), "--json").stdout)


def test_validate_runs_nothing_of_a_tool_file_and_a_run_still_imports_it(tmp_path: Path):
    config = tool_config(tmp_path, MARKING_TOOL)
    report = validated(config)
    assert report["valid"] and report["errors"] == [], report
    assert not (tmp_path / "imported.marker").exists(), "validating ran the tool file"
    ran = run_cli("--config", str(config), "Greet Ada.")
    assert ran.returncode == 0 and ran.stdout == "done\n", ran.stderr
    assert (tmp_path / "imported.marker").read_text() == "ran", "a run imports the file as before"
    records = (tmp_path / "state").rglob("requests/a_002.json")
    assert "Hello, Ada!" in next(records).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("source", "function", "entry", "said"),
    [
        (MARKING_TOOL, "wave", {}, "tools.py defines no function 'wave'"),
        (MARKING_TOOL + "\ndef broken(:\n", "greet", {}, "tools.py failed to load: SyntaxError:"),
        (
            MARKING_TOOL,
            "greet",
            {"preset_args": {"mood": "glad"}},
            "'greet' takes no argument 'mood' (given in preset_args)",
        ),
        (
            "import no_such_module_here.inner\n" + MARKING_TOOL,
            "greet",
            {},
            "No module named 'no_such_module_here' (the tool needs the package that provides "
            "'no_such_module_here': install it",
        ),
        ("from . import sibling\n" + MARKING_TOOL, "greet", {}, "attempted relative import"),
    ],
)
def test_validate_says_what_a_start_would_fail_on(
    tmp_path: Path, source: str, function: str, entry: dict[str, object], said: str
):
    report = validated(tool_config(tmp_path, source, function, **entry))
    assert not report["valid"]
    (error,) = [line for line in report["errors"] if "custom_tools" in line]
    assert error.startswith("agents[0].backend.custom_tools[0]: ") and said in error, error
    assert not (tmp_path / "imported.marker").exists()


def test_a_start_refuses_what_validate_refused(tmp_path: Path):
    """The same file, run: the preset argument the function does not take stops the start, as
    ``--validate`` said (it used to fail at each call instead)."""
    config = tool_config(tmp_path, MARKING_TOOL, preset_args={"mood": "glad"})
    ran = run_cli("--config", str(config), "Greet Ada.")
    assert ran.returncode == 2 and "'greet' takes no argument 'mood'" in ran.stderr, ran.stderr


def test_what_a_file_may_guard_or_bind_otherwise_is_no_error(tmp_path: Path):
    source = """
    try:
        import no_such_module_here
    except ImportError:
        no_such_module_here = None
    if False:
        import another_missing_module
    from os import path as greet
    from json import *
    import os.path, xml.dom.minidom
    """
    (tmp_path / "guarded.py").write_text(textwrap.dedent(source))
    check_tool_file(str(tmp_path / "guarded.py"), "greet", {})
    with pytest.raises(CustomToolLoadError, match="defines no function 'missing'"):
        check_tool_file(str(tmp_path / "guarded.py"), "missing", {})
    with pytest.raises(CustomToolLoadError, match="does not exist"):
        check_tool_file(str(tmp_path / "absent.py"), "greet", {})
    with pytest.raises(CustomToolLoadError, match="takes no argument 'x'"):
        (tmp_path / "strict.py").write_text("def f(*args, y=1):\n    pass\n")
        check_tool_file(str(tmp_path / "strict.py"), "f", {"x": 1})
    (tmp_path / "loose.py").write_text("def f(**extra):\n    pass\n")
    check_tool_file(str(tmp_path / "loose.py"), "f", {"x": 1})


def test_a_package_is_looked_into_without_being_imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    package = tmp_path / "sent_package"
    package.mkdir()
    (package / "__init__.py").write_text("open(__file__ + '.marker', 'w').write('ran')\n")
    (package / "inner.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert module_found("sent_package.inner") and not module_found("sent_package.absent")
    assert module_found("json.decoder") and not module_found("json.no_such_part")
    assert not list(tmp_path.rglob("*.marker")), "finding a submodule imported its package"
