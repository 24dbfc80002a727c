"""Every key of MassGen's current release that this project knows, in one place (``massgen_keys.yaml``):
implemented here (and how), ignored (loaded with one warning that says what is ignored), or refused (with
the reason and the fix). Unknown keys stay errors, so typos are still caught. ``docs/config.md`` renders
the table, and a test holds it against the release's own key sets.

Sections are named by ``Section.massgen_section``; a value rule (a backend type, a display type) is keyed
by ``(section, key, value)``.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

Status = Literal["implemented", "ignored", "refused", "substituted"]
"""A key is implemented, ignored or refused; a value may also be substituted (run another way, which a
warning says)."""

NOT_YET = "not implemented yet"


@dataclass(frozen=True)
class MassGenKey:
    status: Status
    why: str = ""
    """How it is implemented, what is ignored, or why it is refused and what to do instead."""


def _rules(table: dict[str, Any]) -> dict[str, MassGenKey]:
    """``{key: {status: why}}`` as rules."""
    return {key: MassGenKey(*next(iter(entry.items()))) for key, entry in table.items()}


def _load() -> dict[str, Any]:
    """The table. Parsing the YAML takes milliseconds of every start, so its JSON copy is kept beside
    the compiled modules, named by the YAML's digest (an edited table is parsed afresh), and read
    instead (a tenth of a millisecond); not written where Python writes no bytecode either."""
    text = Path(__file__).with_name("massgen_keys.yaml").read_text(encoding="utf-8")
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()
    copy = Path(__file__).with_name("__pycache__") / f"massgen_keys.{digest}.json"
    with contextlib.suppress(OSError, ValueError):
        return cast(dict[str, Any], json.loads(copy.read_text(encoding="utf-8")))
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser where PyYAML has it: 10x faster
    table = cast(dict[str, Any], yaml.load(text, Loader=loader))
    if not sys.dont_write_bytecode:
        with contextlib.suppress(OSError):
            copy.parent.mkdir(exist_ok=True)
            written = copy.with_name(f"{copy.name}.{os.getpid()}")
            written.write_text(json.dumps(table), encoding="utf-8")
            written.replace(copy)  # whole or not at all, for a process reading it now
    return table


_TABLE = _load()
MASSGEN_RELEASE: str = _TABLE["release"]
"""The MassGen release whose configs load here (its 276 example configs are checked by the tests)."""
KEYS: dict[str, dict[str, MassGenKey]] = {name: _rules(keys) for name, keys in _TABLE["sections"].items()}
PROGRAM_BACKENDS: dict[str, str] = _TABLE["program_backends"]
"""MassGen backends that drive a local agent program, and the API backend each runs as here."""
PROGRAM_MODELS: dict[str, str] = _TABLE["program_models"]
"""The model each agent program uses when the config names none, as in MassGen."""
PROGRAM_KEYS: dict[str, MassGenKey] = _rules(_TABLE["program_keys"])
"""Backend keys that mean something else to an agent program, ignored when the backend names one."""
VALUES: dict[tuple[str, str, str], MassGenKey] = {
    (where.split(".")[0], where.split(".")[1].split("=")[0], where.split("=", 1)[1]): known
    for where, known in _rules(_TABLE["values"]).items()
}


def rule(section: str | None, key: str, *, program: bool = False) -> MassGenKey | None:
    """What is known of MassGen key ``key`` in ``section`` (None: not a MassGen key we know of);
    ``program``: the backend names an agent program."""
    if program and section == "backend" and key in PROGRAM_KEYS:
        return PROGRAM_KEYS[key]
    return KEYS.get(section or "", {}).get(key)


def value_rule(section: str | None, key: str, value: object) -> MassGenKey | None:
    return VALUES.get((section or "", key, str(value))) if isinstance(value, str) else None


def refused_backend_types() -> dict[str, str]:
    """MassGen backend types refused here, with the reason and what to use instead."""
    return {
        value: known.why
        for (section, key, value), known in VALUES.items()
        if (section, key) == ("backend", "type") and known.status == "refused"
    }


STAND_IN = "massgen-cli's stand-in"
"""How the stand-in of MassGen's tool types (``tools/massgen_compat.py``) names its modules."""


def massgen_installed() -> bool:
    """Whether MassGen itself can be imported (the stand-in of its tool types does not count)."""
    present = sys.modules.get("massgen")
    if present is not None:
        return not (present.__doc__ or "").startswith(STAND_IN)
    return importlib.util.find_spec("massgen") is not None
