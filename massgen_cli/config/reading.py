"""Reading a config file's parts, shared by the whole file's loader and the memory block's alone: the
``.env`` files beside it, its YAML within bounds, ``${VAR}`` expanded, a section validated with each
problem naming its YAML path."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any

import yaml
from dotenv import dotenv_values, load_dotenv
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from massgen_cli.config.problems import CappedLines, describe_error, error_path, join_path
from massgen_cli.config.yaml_reader import ReadDocument, read_yaml
from massgen_cli.errors import ConfigError
from massgen_cli.redaction import SECRET_NAME, remember

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def secret_settings(data: Any) -> list[str]:
    """The values of the config's settings whose names look like credentials (``api_key``, an MCP
    server's ``GITHUB_TOKEN``…), wherever they stand."""
    if isinstance(data, dict):
        named = [v for key, v in data.items() if isinstance(v, str) and SECRET_NAME.search(str(key))]
        return named + [found for value in data.values() for found in secret_settings(value)]
    if isinstance(data, list):
        return [found for item in data for found in secret_settings(item)]
    return []


def load_dotenv_files(config_path: Path) -> None:
    """Each ``.env`` (the current folder's, the config's folder's) sets what the environment lacks; every
    value it holds is a secret from now on, whatever its name."""
    for env_file in (Path.cwd() / ".env", config_path.parent / ".env"):
        if env_file.is_file():
            load_dotenv(env_file, override=False)
            remember(dotenv_values(env_file).values())


MAX_CONFIG_BYTES = 5 * 1024 * 1024
"""Far larger than any real config; the reader's own bounds (``yaml_reader``) hold within it."""


def read_config_yaml(path: Path) -> ReadDocument:
    size = path.stat().st_size
    if size > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"{path.name} is {size / 1024 / 1024:.0f} MB; a config may be at most "
            f"{MAX_CONFIG_BYTES // 1024 // 1024} MB"
        )
    try:
        return read_yaml(path.read_text(encoding="utf-8"))
    except ConfigError as error:
        raise ConfigError(f"{path.name}: {error}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown line"
        problem = str(exc.problem or exc.context)
        if "nesting depth" in problem:  # the C parser's own bound, met before the reader's
            raise ConfigError(f"{path.name}: {where}: the YAML is nested too deeply to read") from None
        raise ConfigError(f"{path.name}: {where}: invalid YAML: {problem}") from exc
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path.name}: invalid YAML: {exc}") from exc


WORKSPACE_VARIABLE = "cwd"


def expand_variables(node: Any, path: str, errors: CappedLines) -> Any:
    """``${VAR}`` and ``${VAR:-default}`` in strings; an unset variable without default is an error."""
    if isinstance(node, dict):
        return {
            key: expand_variables(value, join_path(path, str(key)), errors) for key, value in node.items()
        }
    if isinstance(node, list):
        return [expand_variables(value, join_path(path, index), errors) for index, value in enumerate(node)]
    if not isinstance(node, str):
        return node

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = os.environ.get(name)
        if name == WORKSPACE_VARIABLE and value is None:
            return match.group(0)  # MassGen's placeholder for the agent's workspace, filled where used
        if default is not None and not value:
            return default
        if value is None:
            errors.add(f"{path}: environment variable {name} is not set (export it or add it to .env)")
            return match.group(0)
        return value

    return _VARIABLE.sub(substitute, node)


def validate_section(model: Any, data: Any, prefix: str, errors: CappedLines) -> Any:
    if errors.give_up_if_past_limit():
        return None
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        if errors.full:
            errors.count(exc.error_count())
            return None
        for error in exc.errors(include_url=False):
            errors.add(functools.partial(_problem, data, error, prefix))
        return None


def _problem(data: Any, error: ErrorDetails, prefix: str) -> str:
    return f"{error_path(data, error, prefix)}: {describe_error(error)}"
