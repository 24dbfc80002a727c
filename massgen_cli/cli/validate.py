"""``massgen --validate FILE [--strict] [--json] [--deep]``: load a config without running it and say what
loading it and starting it would find (``start_check``: keys, endpoints, paths, the sandbox, tool files,
MCP commands; ``--deep`` starts the MCP servers): errors (exit 2), warnings (exit 0, or 2 with
``--strict``) and notes on MassGen values that run another way here."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from rich.console import Console
from rich.markup import escape

from massgen_cli.errors import ConfigError


@dataclass
class Validation:
    path: str
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    strict: bool = False

    @property
    def valid(self) -> bool:
        return not self.errors and not (self.strict and self.warnings)


def validate(source: str, *, strict: bool = False, deep: bool = False) -> Validation:
    """What loading the config at ``source`` (a path or ``@examples/NAME``) finds, and then what its start
    needs (``start_check``; ``deep`` starts its MCP servers too)."""
    from massgen_cli.config import load_config
    from massgen_cli.start_check import check_start

    try:
        loaded = load_config(source)
    except ConfigError as error:
        return Validation(source, error.problems, error.warnings, strict=strict)
    start = check_start(loaded, deep=deep)
    warnings = [*loaded.warnings, *start.warnings]
    return Validation(str(loaded.path), start.errors, warnings, loaded.notes, strict)


def validate_command(source: str, *, strict: bool, as_json: bool, deep: bool = False) -> int:
    """Print the validation (one JSON object with ``as_json``); 0 when valid, 2 when not."""
    result = validate(source, strict=strict, deep=deep)
    if as_json:
        print(json.dumps({**asdict(result), "valid": result.valid}, ensure_ascii=False))
        return 0 if result.valid else 2
    console = Console(highlight=False, soft_wrap=True)
    warning_style = "red" if strict else "yellow"
    for line in result.errors:
        console.print(f"[red]error:[/] {escape(line)}")
    for line in result.warnings:
        console.print(f"[{warning_style}]{'error' if strict else 'warning'}:[/] {escape(line)}")
    for line in result.notes:
        console.print(f"[dim]note: {escape(line)}[/]")
    console.print(_verdict(result))
    return 0 if result.valid else 2


def _verdict(result: Validation) -> str:
    from massgen_cli.config.problems import counted

    counts = f"{counted(result.errors)} error(s), {counted(result.warnings)} warning(s)"
    if result.valid:
        return f"[green]{escape(result.path)} is valid[/] ({counts})"
    why = " (--strict: warnings count as errors)" if result.strict and not result.errors else ""
    return f"[red]{escape(result.path)} is not valid[/]: {counts}{why}"
