"""Secrets by value: what must never reach a model, a log, a thread or a command's environment.

A secret is known by where it came from, not only by its name: every value a ``.env`` file set, every
``api_key`` of the config, and the value of any variable whose name looks like a credential (``*KEY*``,
``*TOKEN*``, ``*SECRET*``, ``*PASSWORD*``, ``*CREDENTIAL*``, ``*PAT*``, ``*WEBHOOK*``, ``*_URL`` that
carries a password); together with the shapes of well-known keys (``sk-…``, ``Bearer …``). ``redact``
replaces each with a marker wherever text is sent or written. Commands get an allow-list environment
(``command_environment``), so a secret is not theirs to read either.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

REDACTED = "[REDACTED]"
SECRET_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|(^|_)PAT($|_)|WEBHOOK|COOKIE", re.IGNORECASE
)
SHORTEST = 8
"""Shorter values are too likely to be ordinary words to be replaced everywhere."""
_SHAPES = [
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"sk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-]{16,}"),
]
COMMAND_VARIABLES = frozenset(
    {"PATH", "HOME", "LANG", "LANGUAGE", "TERM", "TZ", "USER", "LOGNAME", "SHELL", "TMPDIR", "PWD"}
)
"""What a command's environment keeps (and ``LC_*``): nothing that could carry a credential."""

_known: set[str] = set()


def remember(values: Iterable[str | None]) -> None:
    """Treat ``values`` (a ``.env`` file's, the config's keys) as secrets from now on."""
    _known.update(value for value in values if value and len(value) >= SHORTEST)


def secret_values(environ: Mapping[str, str] | None = None) -> list[str]:
    """Every secret value known now, longest first (so a key is replaced before a part of it)."""
    environ = os.environ if environ is None else environ
    found = set(_known)
    for name, value in environ.items():
        if SECRET_NAME.search(name) and len(value) >= SHORTEST:
            found.add(value)
        password = _url_password(value)
        if password:
            found.add(password)
    return sorted(found, key=len, reverse=True)


def redact(value: Any) -> Any:
    """``value`` (text, or lists and mappings of it) with every secret replaced by ``[REDACTED]``."""
    return _redacted(value, secret_values())


def redactor() -> Callable[[Any], Any]:
    """``redact`` with the secrets known now, for many values in a row (the pieces of a stream): finding
    the secrets reads the whole environment, which each call of ``redact`` does again."""
    secrets = secret_values()
    return lambda value: _redacted(value, secrets)


def _redacted(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, dict):
        return {key: _redacted(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item, secrets) for item in value]
    if not isinstance(value, str):
        return value
    for secret in secrets:
        value = value.replace(secret, REDACTED)
    for shape in _SHAPES:
        value = shape.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, value)
    return value


def command_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a command runs with: the allow-list alone."""
    environ = os.environ if environ is None else environ
    return {
        name: value for name, value in environ.items() if name in COMMAND_VARIABLES or name.startswith("LC_")
    }


def _url_password(value: str) -> str:
    """The password a URL value carries (``postgresql://user:password@host/db``), or ""."""
    if "://" not in value or "@" not in value:
        return ""
    try:
        password = urlsplit(value.strip()).password
    except ValueError:
        return ""
    return password if password and len(password) >= SHORTEST else ""
