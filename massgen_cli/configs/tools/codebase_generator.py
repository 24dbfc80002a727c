"""A custom tool for the codebase_analysis example: it writes a small inventory service (58 files)
into the agent's workspace, so the example needs nothing but this package."""

from __future__ import annotations

from pathlib import Path

AREAS = ["orders", "stock", "suppliers", "shipping", "billing", "returns", "reports"]
KINDS = ["models", "handlers", "queries", "validators", "events", "jobs", "cache", "serializers"]

SETTINGS = '''"""Settings of the inventory service, read once at start-up.

Every value can be overridden by an environment variable of the same name, prefixed INVENTORY_.
The defaults below are what a developer machine runs with; production overrides most of them.
"""

import os

SERVICE_NAME = "inventory"
LOG_LEVEL = os.environ.get("INVENTORY_LOG_LEVEL", "info")
DATABASE_URL = os.environ.get("INVENTORY_DATABASE_URL", "sqlite:///inventory.db")
CACHE_SECONDS = int(os.environ.get("INVENTORY_CACHE_SECONDS", "30"))
MAX_PAGE_SIZE = 200
RETRY_ATTEMPTS = 4

# The HTTP port the service listens on by default, when INVENTORY_PORT is not set.
DEFAULT_PORT = 8123
PORT = int(os.environ.get("INVENTORY_PORT", DEFAULT_PORT))
'''

README = """# inventory_service

A small service that tracks orders, stock, suppliers, shipping, billing, returns and reports.
Each area has models, handlers, queries, validators, events, jobs, a cache and serializers.
Settings live in settings.py.
"""


def module_text(area: str, kind: str) -> str:
    """A plausible module of ``kind`` for ``area``: a docstring, a class and three functions."""
    title = f"{area.title()}{kind.title().rstrip('s')}"
    return f'''"""{kind.title()} of the {area} area: what the rest of the service uses to work with {area}.

The functions here are small on purpose; each one does one thing and says what it returns.
"""

from dataclasses import dataclass, field


@dataclass
class {title}:
    """One {area} record as the {kind} layer sees it."""

    identifier: str
    status: str = "new"
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        return f"{{self.identifier}} ({{self.status}}): {{len(self.notes)}} notes"


def create_{area}_{kind}(identifier: str) -> {title}:
    """A new record with no notes."""
    return {title}(identifier)


def close_{area}_{kind}(record: {title}) -> {title}:
    """The record marked closed; closing twice changes nothing."""
    record.status = "closed"
    return record


def annotate_{area}_{kind}(record: {title}, note: str) -> int:
    """Adds ``note``; returns how many notes the record has now."""
    record.notes.append(note)
    return len(record.notes)
'''


def codebase_files() -> dict[str, str]:
    """Relative path → text of every file of the service, in reading order."""
    files = {"inventory_service/README.md": README, "inventory_service/settings.py": SETTINGS}
    for area in AREAS:
        for kind in KINDS:
            files[f"inventory_service/{area}/{kind}.py"] = module_text(area, kind)
    return files


def generate_codebase(agent_cwd: str) -> str:
    """Write the inventory service's source files into your workspace (under inventory_service/).

    Returns the list of files written.
    """
    files = codebase_files()
    for relative, text in files.items():
        path = Path(agent_cwd, relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return f"wrote {len(files)} files:\n" + "\n".join(files)
