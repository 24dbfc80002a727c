"""Custom tools: Python functions loaded from a file and offered as ``custom_tool__<name>``. The
arguments' JSON schema comes from the signature and type hints through a pydantic model; the
description from the docstring (its ``Args:`` lines describe the parameters). Sync functions run in a
thread, async ones directly. Preset arguments (and ``agent_cwd``, for a function that takes it) are
passed without the model seeing them, as in MassGen."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
import inspect
import json
import pkgutil
import re
import sys
from collections.abc import Callable
from pathlib import Path, PurePath
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from massgen_cli.backends.base import ToolSpec
from massgen_cli.tools.base import Tool, ToolError

PREFIX = "custom_tool__"
WORKSPACE_ARGUMENT = "agent_cwd"


class CustomToolLoadError(Exception):
    """A custom tool's file or function could not be loaded; the message says which and why."""


def load_function(path: str, function: str) -> Callable[..., Any]:
    """The function ``function`` defined in the Python file ``path``."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise CustomToolLoadError(f"file {path} does not exist")
    module_name = "massgen_custom_tools." + re.sub(r"\W", "_", str(file.resolve()))
    module = sys.modules.get(module_name)
    if module is None:
        stand_in = massgen_stand_in_for(file)
        # A file of MassGen's tree is named as MassGen names it, so its relative imports of MassGen's tool
        # types (``from .._result import …``) reach the stand-in; it is kept under our own name.
        spec_name = (massgen_module_name(file.resolve()) if stand_in else None) or module_name
        spec = importlib.util.spec_from_file_location(spec_name, file)
        if spec is None or spec.loader is None:
            raise CustomToolLoadError(f"{path} is not a Python file")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as error:
            hint = missing_module_hint(error, stand_in or "massgen" in file.parts)
            raise CustomToolLoadError(
                f"{path} failed to load: {type(error).__name__}: {error}{hint}"
            ) from None
        sys.modules[module_name] = module
    found = getattr(module, function, None)
    if not callable(found):
        raise CustomToolLoadError(f"{path} defines no function '{function}'")
    return found


def massgen_stand_in_for(file: Path) -> bool:
    """A tool file that imports MassGen gets its stand-in when MassGen is not installed; whether it did."""
    from massgen_cli.tools import massgen_compat

    try:
        imports_massgen = "massgen" in file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    in_its_tree = (
        massgen_module_name(file.resolve()) is not None
    )  # its imports may be relative (from .._result)
    return (imports_massgen or in_its_tree) and massgen_compat.provide()


def massgen_module_name(path: PurePath) -> str | None:
    """``massgen.tool.<…>.<stem>`` for a file under a ``massgen/tool/`` folder of MassGen's tree, as its
    path reads."""
    parts = path.with_suffix("").parts
    starts = [i for i in range(len(parts) - 2) if parts[i : i + 2] == ("massgen", "tool")]
    return ".".join(parts[starts[-1] :]) if starts else None


def missing_module_hint(error: Exception, massgen_tool: bool) -> str:
    """What to install for a tool file that imports a module this environment lacks: MassGen itself for
    a MassGen tool that needs more of it than the stand-in of its tool types, else the package."""
    if not isinstance(error, ImportError):
        return ""
    missing = error.name or ""
    relative = "attempted relative import" in str(error)  # a module of MassGen's package, by path
    if massgen_tool and (missing.startswith("massgen") or relative):
        what = f"MassGen's {missing}" if missing else "its own package"
        stand_in = "is not part of the stand-in for MassGen's tool types"
        return f" ({what} {stand_in}: `pip install massgen` provides it)"
    if isinstance(error, ModuleNotFoundError) and missing:
        needs = f"the tool needs the package that provides '{missing}'"
        return f" ({needs}: install it, e.g. `pip install {missing}`)"
    return ""


MASSGEN_TOOL_MODULES = (
    "_basic",
    "_code_executors",
    "_file_handlers",
    "_multimedia_processors",
    "workflow_toolkits",
)
"""Where MassGen looks for one of its own tools first (then in ``massgen.tool`` and its other modules)."""


def load_massgen_function(module: str | None, function: str) -> Callable[..., Any]:
    """MassGen's own tool ``function``, found as MassGen finds it: in ``massgen.tool.<module>`` when a
    module is named, else in its tool modules, the ``massgen.tool`` package, then its other modules."""
    names = (
        [f"massgen.tool.{module}", f"massgen.tool._{module}"]
        if module
        else [
            *(f"massgen.tool.{name}" for name in MASSGEN_TOOL_MODULES),
            "massgen.tool",
        ]
    )
    for name in [*names, *_other_massgen_modules(names)]:
        try:
            found = getattr(importlib.import_module(name), function, None)
        except ImportError:
            continue
        if callable(found):
            return found
    where = f"massgen.tool.{module}" if module else "MassGen's tools"
    raise CustomToolLoadError(f"{where} define no function '{function}'")


def _other_massgen_modules(tried: list[str]) -> list[str]:
    package = importlib.util.find_spec("massgen.tool")
    if package is None or not package.submodule_search_locations:
        return []
    found = pkgutil.iter_modules(package.submodule_search_locations, "massgen.tool.")
    return [info.name for info in found if info.name not in tried]


def custom_tool(
    name: str,
    function: Callable[..., Any],
    description: str | None,
    preset: dict[str, Any],
    workspace: Path | None,
) -> Tool:
    """``function`` as the tool ``custom_tool__<name>``."""
    hidden = dict(preset)
    parameters = inspect.signature(function).parameters
    takes_any = any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    if not takes_any and (unknown := sorted(set(preset) - set(parameters))):
        raise CustomToolLoadError(preset_refused(getattr(function, "__name__", name), unknown))
    if workspace is not None and WORKSPACE_ARGUMENT in parameters:
        hidden.setdefault(WORKSPACE_ARGUMENT, str(workspace))
    model = arguments_model(name, function, set(hidden))

    async def run(arguments: dict[str, Any]) -> str:
        try:
            values = model.model_validate(arguments)
        except ValidationError as error:
            raise ToolError(f"invalid arguments: {_validation_text(error)}") from None
        call_with = {**dict(values), **hidden}
        if inspect.iscoroutinefunction(function):
            result = await function(**call_with)
        else:
            result = await asyncio.to_thread(function, **call_with)
        return result_text(result)

    schema = model.model_json_schema()
    schema.pop("title", None)
    text = description or _summary(inspect.getdoc(function) or "") or f"The function {function.__name__}."
    return Tool(ToolSpec(PREFIX + name, text, schema), run)


def preset_refused(function: str, unknown: list[str]) -> str:
    return f"'{function}' takes no argument {', '.join(map(repr, unknown))} (given in preset_args)"


def arguments_model(name: str, function: Callable[..., Any], hidden: set[str]) -> type[BaseModel]:
    """A pydantic model of ``function``'s parameters but ``hidden``, described from its docstring."""
    hints = get_type_hints(function)
    described = _parameter_docs(inspect.getdoc(function) or "")
    fields: dict[str, Any] = {}
    for parameter in inspect.signature(function).parameters.values():
        if parameter.name in hidden or parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        default = ... if parameter.default is parameter.empty else parameter.default
        field = Field(default, description=described.get(parameter.name))
        fields[parameter.name] = (hints.get(parameter.name, Any), field)
    return create_model(f"{name}_arguments", __config__=ConfigDict(extra="forbid"), **fields)


def result_text(result: Any) -> str:
    """A function's return value as the text the model reads (MassGen's result object as its text)."""
    if isinstance(result, str):
        return result
    blocks = getattr(result, "output_blocks", None)
    if isinstance(blocks, list):
        return "\n".join(_block_text(block) for block in blocks)
    if isinstance(result, BaseModel):
        return result.model_dump_json()
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        result = dataclasses.asdict(result)
    try:
        return json.dumps(result, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(result)


def _block_text(block: Any) -> str:
    """A MassGen output block: its text, or what kind of content it holds."""
    kind, data = getattr(block, "block_type", "text"), getattr(block, "data", block)
    return str(data) if kind == "text" else f"[{kind}: {len(str(data))} characters]"


def _summary(doc: str) -> str:
    return doc.split("\n\n", 1)[0].strip()


def _parameter_docs(doc: str) -> dict[str, str]:
    """``name: text`` lines of a Google-style ``Args:`` section."""
    section = re.search(r"^(?:Args|Arguments|Parameters):\s*\n((?:[ \t]+.*\n?)+)", doc, re.MULTILINE)
    if section is None:
        return {}
    found = re.findall(r"^[ \t]+(\w+)(?:\s*\([^)]*\))?:\s*(.+)$", section.group(1), re.MULTILINE)
    return dict(found)


def _validation_text(error: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in error.errors())
