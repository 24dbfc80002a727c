"""The package's layers: every import points down (or stays inside its own part), never up or sideways."""

from __future__ import annotations

import ast
from pathlib import Path

import massgen_cli

PACKAGE = Path(massgen_cli.__file__).parent

# Lowest first. A part may import its own modules and any part of a lower layer; parts of one layer
# do not import each other.
LAYERS: list[list[str]] = [
    ["massgen_cli"],  # foundations: errors, events, messages, state, text, tokens
    ["config"],
    ["logs", "session", "ui"],
    ["backends"],
    ["memory.context", "memory.longterm"],
    ["memory.shared"],
    ["memory.runtime", "memory"],
    ["coordination"],
    ["app"],
    ["commands", "memory_commands"],
    ["cli"],
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
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            names = [n if _is_module(n) else node.module for n in names]
        else:
            continue
        ours = [name for name in names if name.split(".")[0] == "massgen_cli"]
        found += [name.removeprefix("massgen_cli").lstrip(".") for name in ours]
    return found


def _is_module(dotted: str) -> bool:
    relative = Path(*dotted.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").is_file() or (PACKAGE / relative / "__init__.py").is_file()


def test_every_import_points_down():
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = part_of(module_name(path))
        for target_module in imported_modules(path):
            target = part_of(target_module)
            if target != source and PART_LAYER[target] >= PART_LAYER[source]:
                upward.append(f"{module_name(path)} ({source}) imports {target_module} ({target})")
    assert upward == []


def test_the_check_sees_an_upward_import(tmp_path):
    """The rule itself: a config module importing a backend would be reported."""
    probe = tmp_path / "probe.py"
    probe.write_text("from massgen_cli.backends.base import Request\n", encoding="utf-8")
    target = part_of(imported_modules(probe)[0])
    assert target == "backends" and PART_LAYER[target] > PART_LAYER["config"]


def test_memory_shows_its_three_memories_and_the_runtime():
    entries = {p.name for p in (PACKAGE / "memory").iterdir() if p.name != "__pycache__"}
    assert entries == {"__init__.py", "runtime.py", "context", "longterm", "shared"}
