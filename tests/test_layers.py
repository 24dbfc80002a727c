"""The package's shape: every import points down (or stays inside its own part), never up or sideways;
modules, constructors and the turn's classes stay small."""

from __future__ import annotations

import ast
from pathlib import Path

import massgen_cli

PACKAGE = Path(massgen_cli.__file__).parent

# Lowest first. A part may import its own modules and any part of a lower layer; parts of one layer
# do not import each other.
LAYERS: list[list[str]] = [
    ["massgen_cli"],  # foundations: errors, events, messages, state, text, tokens, tool_contract, file_kinds
    ["config"],
    ["session", "ui"],
    ["runlogs"],  # writes the run logs and reads them back (its cost figures as the ui shows them)
    ["backends"],
    ["tools"],  # uses the backends' ToolSpec
    ["memory.context", "memory.longterm.record", "memory.longterm"],
    ["memory.longterm.retrieve"],
    ["memory.longterm.store"],
    ["memory.shared"],
    ["memory.runtime", "memory"],
    ["agent"],  # an agent's data, its request path, what its calls spend and the run's caps
    ["coordination"],
    ["features"],  # the optional features, as step extensions
    ["agent_builder"],  # agents built from the config, beside the composition root
    ["compose"],  # the composition root: it walks the features' declarations
    ["subteams"],  # nested teams (a subagent's), built as the app builds a run
    ["start_check"],  # what a start needs beyond a loading config (--validate, serve's start)
    ["app"],
    ["plan_phases"],  # plan and execute: a planning turn, then a turn per chunk of its plan
    ["api"],  # the Python API over the app
    ["serve"],  # the OpenAI-compatible server and the live web view, a front end beside the command line
    ["cli"],  # the command line: its modules import each other freely, in no circle (see below)
    ["__main__"],
]
PART_LAYER = {part: layer for layer, parts in enumerate(LAYERS) for part in parts}


def module_name(path: Path) -> str:
    relative = path.relative_to(PACKAGE).with_suffix("")
    parts = [part for part in relative.parts if part != "__init__"]
    return ".".join(parts)


def part_of(module: str) -> str:
    """The longest part that ``module`` (relative to the package) belongs to."""
    pieces = module.split(".") if module else []
    for size in range(len(pieces), 0, -1):
        candidate = ".".join(pieces[:size])
        if candidate in PART_LAYER:
            return candidate
    return "massgen_cli"


def imported_modules(path: Path) -> list[str]:
    """Modules of the package that ``path`` imports (at the top or inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        target
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for target in imported_modules_of(node)
    ]


def _is_module(dotted: str) -> bool:
    relative = Path(*dotted.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").is_file() or (PACKAGE / relative / "__init__.py").is_file()


def upward_imports(path: Path, source: str) -> list[str]:
    """The imports of ``path`` (a module of part ``source``) that point to a part not below it."""
    return [
        f"{source} imports {target} ({part_of(target)})"
        for target in imported_modules(path)
        if part_of(target) != source and PART_LAYER[part_of(target)] >= PART_LAYER[source]
    ]


PUBLIC_ENTRY = ("massgen_cli imports api (api)",)
"""The package itself re-exports the Python API (lazily, on first use): its one import upward."""


def test_every_import_points_down():
    upward = [
        f"{module_name(path)}: {problem}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for problem in upward_imports(path, part_of(module_name(path)))
        if not (path == PACKAGE / "__init__.py" and problem in PUBLIC_ENTRY)
    ]
    assert upward == []


def test_the_rule_reports_an_upward_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from massgen_cli.backends.base import Request\n", encoding="utf-8")
    assert upward_imports(probe, "config") == ["config imports backends.base (backends)"]
    assert upward_imports(probe, "coordination") == []
    assert upward_imports(probe, "memory.context") == [], "memory sits above the backends"
    assert upward_imports(probe, "backends") == [], "a part imports itself freely"


def test_memory_shows_its_four_memories_and_the_runtime():
    entries = {p.name for p in (PACKAGE / "memory").iterdir() if p.name != "__pycache__"}
    assert entries == {"__init__.py", "runtime", "context", "longterm", "shared", "filesystem"}


def test_the_runtime_is_split_by_role():
    roles = {p.stem for p in (PACKAGE / "memory" / "runtime").glob("*.py")}
    assert roles == {"__init__", "opening", "recall", "recording", "agent_tools"}


FEATURE_MODULES = (
    "features",
    "memory.runtime",
    "memory.filesystem",
    "memory.shared",
    "tools.planning",
    "tools.skills",
    "tools.snapshots",
    "tools.memory_tools",
    "tools.context_copies",
    "tools.hooks",
)
"""What only the composition root names: the features and the memory runtime."""


def feature_imports(path: Path) -> list[str]:
    return [
        target
        for target in imported_modules(path)
        if any(target == feature or target.startswith(f"{feature}.") for feature in FEATURE_MODULES)
    ]


def test_the_turn_imports_no_feature():
    named = {
        module_name(path): found
        for path in [*(PACKAGE / "coordination").rglob("*.py"), PACKAGE / "app.py"]
        if (found := feature_imports(path))
    }
    assert named == {}


def test_the_feature_rule_reports_a_feature_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from massgen_cli.tools.planning import PlanBook\nimport massgen_cli.events\n")
    assert feature_imports(probe) == ["tools.planning"]


def test_only_the_composition_root_imports_the_features():
    importers = {
        module_name(path)
        for path in PACKAGE.rglob("*.py")
        if any(target.startswith("features") for target in imported_modules(path))
    }
    assert importers - {module_name(path) for path in (PACKAGE / "features").rglob("*.py")} == {"compose"}


def tools_imports(path: Path) -> list[str]:
    return [target for target in imported_modules(path) if target == "tools" or target.startswith("tools.")]


def test_memory_imports_nothing_of_the_tools():
    """What memory shares with the tools (the memory tools' contract, ``ToolError``, a file's kind) is
    in modules below both (``tool_contract``, ``file_kinds``): memory could sit below the tools."""
    named = {
        module_name(path): found
        for path in (PACKAGE / "memory").rglob("*.py")
        if (found := tools_imports(path))
    }
    assert named == {}


def test_the_tools_rule_reports_a_tools_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from massgen_cli.tools.base import ToolError\nfrom massgen_cli.tool_contract import DATES\n",
        encoding="utf-8",
    )
    assert tools_imports(probe) == ["tools.base"]


def test_long_term_memory_says_store_record_retrieve():
    entries = {p.name for p in (PACKAGE / "memory" / "longterm").iterdir() if p.name != "__pycache__"}
    assert entries == {"__init__.py", "record", "retrieve", "store"}


def test_the_front_end_is_one_package():
    """The command line lives in ``cli/``, whatever its modules are named: only it (and ``__main__``)
    imports Typer, prompt_toolkit or ``cli``."""
    outside = {
        module_name(path): found
        for path in PACKAGE.rglob("*.py")
        if part_of(module_name(path)) not in {"cli", "__main__"}
        if (found := front_end_imports(path))
    }
    assert outside == {}


def front_end_imports(path: Path) -> set[str]:
    """The front end's libraries and modules that ``path`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    libraries = {
        name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])
    }
    ours = {target for target in imported_modules(path) if part_of(target) == "cli"}
    return (libraries & {"typer", "prompt_toolkit"}) | ours


def test_the_front_end_rule_reports_typer_and_the_cli(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import typer\nfrom massgen_cli.cli.automation import Outputs\nimport rich\n")
    assert front_end_imports(probe) == {"typer", "cli.automation"}


def imports_run_on_load(path: Path) -> list[str]:
    """The package's modules ``path`` imports as it loads: at the top, in a ``try`` (its handlers too) or
    an ``if`` there (the ``else`` of ``if TYPE_CHECKING``), not inside a function."""
    found: list[str] = []
    pending = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If):
            checking = "TYPE_CHECKING" in ast.unparse(node.test)
            pending += node.orelse if checking else [*node.body, *node.orelse]
        elif isinstance(node, ast.Try):
            handled = [statement for handler in node.handlers for statement in handler.body]
            pending += [*node.body, *handled, *node.orelse, *node.finalbody]
        elif isinstance(node, ast.Import | ast.ImportFrom):
            found += imported_modules_of(node)
    return found


def imported_modules_of(node: ast.Import | ast.ImportFrom) -> list[str]:
    """Of one import statement, the package's modules it imports (relative to the package)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif node.level == 0 and node.module:
        names = [f"{node.module}.{alias.name}" for alias in node.names]
        names = [n if _is_module(n) else node.module for n in names]
    else:
        return []
    return [n.removeprefix("massgen_cli").lstrip(".") for n in names if n.split(".")[0] == "massgen_cli"]


def import_circles(imports: dict[str, list[str]]) -> list[list[str]]:
    """The circles of modules that import each other as they load (each a strongly connected set of
    two or more, sorted)."""
    order: list[str] = []
    seen: set[str] = set()
    for start in imports:  # the modules by when their depth-first visit ends, iteratively
        stack = [(start, iter(imports.get(start, ())))] if start not in seen else []
        seen.add(start)
        while stack:
            module, targets = stack[-1]
            target = next((t for t in targets if t in imports and t not in seen), None)
            if target is None:
                order.append(stack.pop()[0])
            else:
                seen.add(target)
                stack.append((target, iter(imports[target])))
    importers: dict[str, set[str]] = {module: set() for module in imports}
    for module, targets in imports.items():
        for target in targets:
            if target in importers:
                importers[target].add(module)
    circles, placed = [], set()
    for root in reversed(order):  # each set: what reaches its root against the imports
        if root in placed:
            continue
        group, pending = {root}, [root]
        while pending:
            for importer in importers[pending.pop()] - group - placed:
                group.add(importer)
                pending.append(importer)
        placed |= group
        if len(group) > 1:
            circles.append(sorted(group))
    return sorted(circles)


def test_no_modules_import_each_other_in_a_circle():
    """Inside a part too (the command line's modules, a store's): what loads first can be told."""
    imports = {module_name(path): imports_run_on_load(path) for path in sorted(PACKAGE.rglob("*.py"))}
    assert import_circles(imports) == []


def test_the_circle_rule_finds_a_circle_through_three_modules():
    imports = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": [], "e": ["e", "a"]}
    assert import_circles(imports) == [["a", "b", "c"]]


MAX_MODULE_LINES = 400
MAX_CONSTRUCTOR_ARGUMENTS = 6
MAX_METHODS = 15
"""For every class of the package."""


def _classes(path: Path) -> list[ast.ClassDef]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]


def _methods(node: ast.ClassDef) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [item for item in node.body if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)]


def test_modules_stay_small():
    long = {
        module_name(path): lines
        for path in PACKAGE.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_the_composition_root_stays_a_loop_over_the_features():
    """Features declare themselves; compose walks the declarations, so it does not grow with them."""
    assert len((PACKAGE / "compose.py").read_text(encoding="utf-8").splitlines()) <= 250


def test_no_constructor_takes_more_than_six_arguments():
    wide = {
        f"{module_name(path)}.{node.name}": count
        for path in PACKAGE.rglob("*.py")
        for node in _classes(path)
        for method in _methods(node)
        if method.name == "__init__"
        and (count := len(method.args.args) - 1 + len(method.args.kwonlyargs)) > MAX_CONSTRUCTOR_ARGUMENTS
    }
    assert wide == {}


def test_no_class_has_more_than_fifteen_methods():
    crowded = {
        f"{module_name(path)}.{node.name}": len(_methods(node))
        for path in PACKAGE.rglob("*.py")
        for node in _classes(path)
        if len(_methods(node)) > MAX_METHODS
    }
    assert crowded == {}


MAX_FUNCTION_LINES = 60


def test_no_function_is_longer_than_sixty_lines():
    long = {
        f"{module_name(path)}.{node.name}": lines
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and (lines := (node.end_lineno or node.lineno) - node.lineno + 1) > MAX_FUNCTION_LINES
    }
    assert long == {}


REPEATED_RUN = 6
"""How many code lines in a row make a repeated place."""
MAX_REPEATED_PLACES = 3
"""Pairs of places that share a run of code lines to the letter, at most: today the Python API's run and
arun (one signature, sync and async), the stream events the Gemini and Responses assemblies import, and
the two server-side indexes' warm and without_vectors (the Qdrant and PostgreSQL ones)."""


def _code_lines(path: Path) -> list[tuple[int, str]]:
    """The lines that count for repetition (numbered, white space folded): no blank, comment, import or
    punctuation-only line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    folded = ((number, " ".join(line.split())) for number, line in enumerate(lines, 1))
    return [
        (number, line)
        for number, line in folded
        if line and not line.startswith(("#", "import ", "from ")) and any(c.isalnum() for c in line)
    ]


def repeated_places(
    files: dict[str, list[tuple[int, str]]], run: int = REPEATED_RUN
) -> list[tuple[str, str]]:
    """Each pair of places (``module:line``) that share ``run`` or more code lines in a row, where their
    longest shared stretch starts; two overlapping places in one module are not a pair."""
    places: dict[tuple[str, ...], list[tuple[str, int]]] = {}
    for name, lines in files.items():
        for start in range(len(lines) - run + 1):
            places.setdefault(tuple(line for _, line in lines[start : start + run]), []).append((name, start))
    shared = {
        (first, second)
        for where in places.values()
        for index, first in enumerate(where)
        for second in where[index + 1 :]
        if first[0] != second[0] or abs(first[1] - second[1]) >= run
    }
    starts = [
        (first, second)
        for first, second in shared
        if ((first[0], first[1] - 1), (second[0], second[1] - 1)) not in shared
    ]
    return sorted((f"{a}:{files[a][i][0]}", f"{b}:{files[b][j][0]}") for (a, i), (b, j) in starts)


def test_repetition_stays_bounded():
    files = {module_name(path): _code_lines(path) for path in sorted(PACKAGE.rglob("*.py"))}
    repeated = repeated_places(files)
    assert len(repeated) <= MAX_REPEATED_PLACES, repeated


def test_the_repetition_rule_finds_a_copied_stretch_once():
    body = [f"value_{n} = compute({n})" for n in range(8)]
    texts = {"a": ["x = 1", *body], "b": [*body, "y = 2"], "c": body[:5]}
    files = {name: list(enumerate(lines, 1)) for name, lines in texts.items()}
    assert repeated_places(files) == [("a:2", "b:1")]


FEATURE_SUPPORT = {"__init__", "declaration", "registry", "labels", "workspaces"}
"""The modules of ``features/`` that are no feature: the declaration type, the registry and helpers."""


def test_every_feature_module_declares_itself_and_is_registered():
    from massgen_cli.features import registry

    modules = {p.stem for p in (PACKAGE / "features").glob("*.py")} - FEATURE_SUPPORT
    declared = {
        module.rsplit(".", 1)[-1]
        for feature in registry.BUILT_IN
        for module in [feature.open.__module__]  # type: ignore[attr-defined]
    }
    assert declared == modules


def test_the_composition_root_names_no_feature():
    """It walks the declarations: no feature module, and no feature's own code, is imported by name."""
    named = [
        target
        for target in imported_modules(PACKAGE / "compose.py")
        if target.startswith("features.") and target.split(".")[1] not in FEATURE_SUPPORT
    ]
    assert named == []


COST_AND_CAPS = {"backends.pricing", "agent.pricing", "agent.spending", "agent.cap_admission"}
"""What prices a call and caps what a run spends: the request path's (``agent/``) and the composition
root's, never the turn's."""


def test_the_turn_knows_no_price_or_cap():
    """The turn reads only a ``Halt`` (``coordination.steps``); the spending caps are one that the
    composition root opens."""
    knowing = {
        module_name(path): found
        for path in (PACKAGE / "coordination").rglob("*.py")
        if (found := set(imported_modules(path)) & COST_AND_CAPS)
    }
    assert knowing == {}


def names_imported_from(path: Path, module: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == module
        for alias in node.names
    }


def test_the_turn_ends_an_attempt_on_a_refused_step_not_on_a_cap():
    """A spending cap refuses a step as any request hook may (``agent.data.StepRefused``): the turn
    catches that, and knows no cap's own error."""
    knowing = {
        module_name(path): found
        for path in (PACKAGE / "coordination").rglob("*.py")
        if (found := names_imported_from(path, "massgen_cli.agent.spending") & {"SpendingCapReached"})
    }
    assert knowing == {}
    assert "StepRefused" in names_imported_from(
        PACKAGE / "coordination" / "orchestrator.py", "massgen_cli.agent.data"
    )
