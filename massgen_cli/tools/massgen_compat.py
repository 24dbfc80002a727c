"""A stand-in for the public parts of MassGen that its shipped custom tools import, used when the
``massgen`` package is not installed: the tool result types (``ExecutionResult`` and its text, image and
audio blocks), its logger, the ``context_params`` decorator and the tool exceptions. With it, the configs
that name ``massgen/tool/...`` files (from a MassGen checkout) load and run those tools here; a tool that
imports any other part of MassGen still fails to load, and the error says to install MassGen, except
MassGen's multimodal tools that ``massgen_media.py`` implements as ours.

The stand-in is registered under MassGen's module names only while MassGen itself cannot be imported; an
installed MassGen is always what its tools get."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import logging
import sys
import types
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from massgen_cli.config.massgen_keys import STAND_IN, massgen_installed

PACKAGES = ("massgen", "massgen.tool")


@dataclass
class ContentBlock:
    block_type: str
    data: str


class TextContent(ContentBlock):
    def __init__(self, data: str):
        super().__init__("text", data)


class ImageContent(ContentBlock):
    def __init__(self, data: str):
        super().__init__("image", data)


class AudioContent(ContentBlock):
    def __init__(self, data: str):
        super().__init__("audio", data)


@dataclass
class ExecutionResult:
    """What a MassGen tool returns: its output blocks (the model reads their text) and metadata."""

    output_blocks: list[ContentBlock]
    meta_info: dict[str, Any] | None = None
    is_streaming: bool = False
    is_final: bool = True
    is_log: bool = False
    was_interrupted: bool = False
    result_id: str = field(default_factory=lambda: uuid.uuid4().hex)


def context_params(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Marks parameters a MassGen backend fills from its own context (kept on the function)."""

    def mark(function: Callable[..., Any]) -> Callable[..., Any]:
        function.__context_params__ = set(names)  # type: ignore[attr-defined]
        return function

    return mark


class ToolException(Exception):
    pass


class InvalidToolArgumentsException(ToolException):
    pass


class ToolNotFoundException(ToolException):
    pass


class ToolExecutionException(ToolException):
    pass


def _module(name: str, **members: Any) -> types.ModuleType:
    module = types.ModuleType(name, f"{STAND_IN} for MassGen's {name}")
    package = name in PACKAGES
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=package)
    if package:
        module.__path__ = []  # a package: its other submodules are not found, and say which
    module.__dict__.update(members)
    return module


def _stand_ins() -> list[types.ModuleType]:
    results = {"ExecutionResult": ExecutionResult, "TextContent": TextContent, "ImageContent": ImageContent}
    results |= {"AudioContent": AudioContent, "ContentBlock": ContentBlock}
    errors = {
        "ToolException": ToolException,
        "InvalidToolArgumentsException": InvalidToolArgumentsException,
        "ToolNotFoundException": ToolNotFoundException,
        "ToolExecutionException": ToolExecutionException,
    }
    return [
        _module("massgen"),
        _module("massgen.tool", **results, context_params=context_params, **errors),
        _module("massgen.tool._result", **results),
        _module("massgen.tool._decorators", context_params=context_params),
        _module("massgen.tool._exceptions", **errors),
        _module("massgen.logger_config", logger=logging.getLogger("massgen")),
    ]


def provide() -> bool:
    """Register the stand-in unless MassGen is installed (or already registered); whether it is the one
    in use."""
    present = sys.modules.get("massgen")
    if present is not None:
        return not massgen_installed()
    if massgen_installed():
        return False
    for module in _stand_ins():
        sys.modules[module.__name__] = module
    return True
