"""Tenants of one server (``massgen serve --keys FILE``): each line of the file, ``NAME TOKEN``, is a
tenant whose token is its key to the server. A tenant has a state folder of its own under the server's
(``tenants/NAME/``): its sessions, run logs, reports and long-term memory are there and nowhere else,
and its running turns are seen, steered and stopped by it alone (another's is a 404)."""

from __future__ import annotations

import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from massgen_cli.errors import UsageError
from massgen_cli.serve.models import ServedModels
from massgen_cli.state import resolve_state_dir

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_TOKEN = re.compile(r"[\x21-\x7e]{16,512}")
"""Printable ASCII (a header and a cookie carry it), at least 16 characters."""
TENANTS_FOLDER = "tenants"


@dataclass(frozen=True)
class Tenant:
    """One tenant: its name, its token and its state folder."""

    name: str
    token: str
    state_dir: Path


class Tenants:
    """The tenants of a server, found by token."""

    def __init__(self, tenants: list[Tenant]):
        self.tenants = tenants

    @classmethod
    def load(cls, path: Path, state_dir: Path) -> Tenants:
        """The tenants ``path`` lists, each with its folder under ``state_dir`` (made, only its user's); a
        ``UsageError`` when the file can be read by others than its owner, or a line is no ``NAME TOKEN``
        (or repeats a name or a token)."""
        try:
            mode = path.stat().st_mode
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"--keys {path}: cannot be read ({error})") from None
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise UsageError(
                f"--keys {path}: others than its owner may read it; make it private: chmod 600 {path}"
            )
        tenants = [
            Tenant(name, token, resolve_state_dir(state_dir / TENANTS_FOLDER / name))
            for name, token in _entries(path, text)
        ]
        if not tenants:
            raise UsageError(f"--keys {path}: no tenant in it (one 'NAME TOKEN' per line)")
        return cls(tenants)

    def find(self, given: str) -> Tenant | None:
        """The tenant whose token ``given`` is (each token compared in constant time), or None."""
        found = None
        for tenant in self.tenants:
            if secrets.compare_digest(given.encode(), tenant.token.encode()):
                found = tenant
        return found


def _entries(path: Path, text: str) -> list[tuple[str, str]]:
    entries: list[tuple[str, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        where = f"--keys {path}, line {number}"
        if len(words) != 2 or not _NAME.fullmatch(words[0]):
            raise UsageError(f"{where}: write 'NAME TOKEN' (a name of letters, digits, '_' and '-')")
        if not _TOKEN.fullmatch(words[1]):
            raise UsageError(f"{where}: a token is 16 to 512 printable ASCII characters")
        if any(words[0] == name or words[1] == token for name, token in entries):
            raise UsageError(f"{where}: a tenant's name and token are its own: this one repeats another's")
        entries.append((words[0], words[1]))
    return entries


def refuse_shared_memory(models: ServedModels) -> None:
    """Tenants keep long-term memory apart in their own state folders: a config whose memory is kept
    elsewhere (on a server, or at a path it names) would share it between them, a ``UsageError``."""
    from massgen_cli.config.schema import long_term_wanted
    from massgen_cli.memory.runtime.opening import store_memory_config

    for model in models:
        config = model.loaded.config
        if not long_term_wanted(config):
            continue
        persistent = store_memory_config(config).persistent_memory
        if persistent.keeps_truth_on_server or persistent.path or persistent.qdrant.path:
            raise UsageError(
                f"{model.loaded.path.name}: its long-term memory is kept outside the state folder, where "
                "--keys' tenants would share it; serve it without --keys, or keep its memory in the state "
                "folder (no server, no path)"
            )
