"""A custom tool file checked without running it, for ``massgen --validate``: validating a config someone
sent must not execute its tool file. The file is read and parsed (``ast``): it must define the function
(or bind its name at the top level), a function defined there must take the preset arguments, and each
import the file makes unconditionally at its top level must be found (``importlib``'s finders, which
run no module: a package's submodules are looked up in its folders without importing the package).
A run imports the file as before (``custom.load_function``)."""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from massgen_cli.tools.custom import (
    CustomToolLoadError,
    massgen_module_name,
    massgen_stand_in_for,
    missing_module_hint,
    preset_refused,
)

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


def check_tool_file(path: str, function: str, preset: dict[str, Any]) -> None:
    """Raise ``CustomToolLoadError`` for what loading ``function`` from ``path`` would fail on, found
    without executing the file."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise CustomToolLoadError(f"file {path} does not exist")
    try:
        tree = ast.parse(file.read_bytes(), filename=str(file))
    except (SyntaxError, ValueError) as error:
        raise CustomToolLoadError(f"{path} failed to load: {type(error).__name__}: {error}") from None
    _check_imports(tree, file, path)
    bound = _top_level_names(tree.body)
    if function not in bound:
        raise CustomToolLoadError(f"{path} defines no function '{function}'")
    node = bound[function]
    if isinstance(node, FunctionNode) and (unknown := _unknown_presets(node, preset)):
        raise CustomToolLoadError(preset_refused(function, unknown))


def _top_level_names(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """The names the module binds when it runs (a later binding wins), with the statement that binds
    each; branches of ``if``/``try``/``with`` count, function and class bodies do not."""
    bound: dict[str, ast.AST] = {}
    for statement in body:
        if isinstance(statement, FunctionNode | ast.ClassDef):
            bound[statement.name] = statement
        elif isinstance(statement, ast.Import | ast.ImportFrom):
            for alias in statement.names:
                bound[alias.asname or alias.name.split(".")[0]] = statement
        elif isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            bound |= {name.id: statement for target in targets for name in _stored_names(target)}
        else:
            for block in _blocks(statement):
                bound |= _top_level_names(block)
    return bound


def _stored_names(target: ast.AST) -> Iterator[ast.Name]:
    return (node for node in ast.walk(target) if isinstance(node, ast.Name))


def _blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists an ``if``, ``try``, ``with`` or loop at the top level runs."""
    blocks = [getattr(statement, key, []) for key in ("body", "orelse", "finalbody")]
    blocks += [handler.body for handler in getattr(statement, "handlers", [])]
    return [block for block in blocks if isinstance(block, list)]


def _unknown_presets(node: FunctionNode, preset: dict[str, Any]) -> list[str]:
    arguments = node.args
    if arguments.kwarg is not None:
        return []
    names = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
    return sorted(set(preset) - names)


def _check_imports(tree: ast.Module, file: Path, path: str) -> None:
    """Each import statement of the module's own top level (not one under ``try``, ``if`` or in a
    function: the file may guard those) names a module that can be found."""
    stand_in = massgen_stand_in_for(file)  # as a run does: MassGen's tool types, ours, when it is missing
    package = (massgen_module_name(file.resolve()) or "").rpartition(".")[0] if stand_in else None
    for statement in tree.body:
        for module in _imported_modules(statement, package or None, path):
            if missing := first_missing(module):
                error = ModuleNotFoundError(name=missing)
                hint = missing_module_hint(error, stand_in or "massgen" in file.parts)
                raise CustomToolLoadError(
                    f"{path} failed to load: ModuleNotFoundError: No module named '{missing}'{hint}"
                )


def _imported_modules(statement: ast.stmt, package: str | None, path: str) -> list[str]:
    if isinstance(statement, ast.Import):
        return [alias.name for alias in statement.names]
    if not isinstance(statement, ast.ImportFrom):
        return []
    if not statement.level:
        return [statement.module or ""]
    if package is None:
        raise CustomToolLoadError(
            f"{path} failed to load: ImportError: attempted relative import with no known parent package "
            f"(line {statement.lineno}; a tool file is loaded on its own, outside any package)"
        )
    return [importlib.util.resolve_name("." * statement.level + (statement.module or ""), package)]


def first_missing(module: str) -> str:
    """The first of ``module`` and the packages above it that cannot be found, or ""."""
    parts = module.split(".")
    prefixes = [".".join(parts[: end + 1]) for end in range(len(parts))]
    return next((name for name in prefixes if not module_found(name)), "")


def module_found(name: str) -> bool:
    """Whether the module ``name`` can be imported, found without importing it or the packages above
    it (a package not imported yet is looked into through its folders)."""
    parent = name.rpartition(".")[0]
    if name in sys.modules or not parent or parent in sys.modules:
        return _found(name)  # a top-level name, or one whose package is imported: nothing runs
    folders = _folders(parent)
    if folders is None:
        return True  # a module whose submodules appear when it runs (os.path): not decidable unrun
    return importlib.machinery.PathFinder.find_spec(name, folders) is not None


def _folders(package: str) -> list[str] | None:
    """The folders of ``package``, found without importing it: [] when it is missing, None when it is a
    module that is no package."""
    if package in sys.modules:
        folders = getattr(sys.modules[package], "__path__", None)
        return None if folders is None else list(folders)
    parent = package.rpartition(".")[0]
    above = _folders(parent) if parent else []
    if above is None:
        return None
    spec = importlib.machinery.PathFinder.find_spec(package, above) if parent else _spec(package)
    if spec is None:
        return []
    locations = spec.submodule_search_locations
    return None if locations is None else list(locations)


def _found(name: str) -> bool:
    return name in sys.modules or _spec(name) is not None


def _spec(name: str) -> importlib.machinery.ModuleSpec | None:
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
