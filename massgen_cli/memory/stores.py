"""Vector stores for mem0: Qdrant in local mode (one client per folder per process) or server mode."""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Any

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.errors import MemoryStoreError

COLLECTION = "massgen_memories"
_CLIENTS: dict[str, Any] = {}
_CLIENTS_LOCK = threading.Lock()

LOCK_REMEDY = (
    "another massgen process is using this local memory store ({path}). Wait for it to finish, give "
    "this run its own --state-dir, or share memory between processes with a server store "
    "(qdrant mode: server with docker-compose.qdrant.yml, or vector_store: pgvector). If no process "
    "holds it any more, scripts/cleanup_qdrant_lock.sh removes the stale lock"
)


def qdrant_path(settings: PersistentMemoryConfig, state_dir: Path) -> Path:
    """Where local Qdrant keeps its files: ``path`` (MassGen's key) or ``qdrant.path``, else the state dir."""
    configured = settings.path or settings.qdrant.path
    return Path(configured).expanduser().resolve() if configured else state_dir / "qdrant"


def qdrant_client(settings: PersistentMemoryConfig, state_dir: Path) -> Any:
    """The process's shared client for this store: local Qdrant allows one per folder."""
    from qdrant_client import QdrantClient

    qdrant = settings.qdrant
    if qdrant.mode == "server":
        location = qdrant.url or f"http://{qdrant.host}:{qdrant.port}"
        return _shared(
            f"server:{location}", lambda: QdrantClient(url=location, api_key=qdrant.api_key, timeout=30)
        )
    if not settings.on_disk:
        return _shared("memory", lambda: QdrantClient(location=":memory:"))
    path = qdrant_path(settings, state_dir)
    path.mkdir(parents=True, exist_ok=True)
    return _shared(f"path:{path}", lambda: _open_local(path))


def _open_local(path: Path) -> Any:
    from qdrant_client import QdrantClient

    try:
        return QdrantClient(path=str(path))
    except RuntimeError as error:
        if "already accessed" in str(error):
            raise MemoryStoreError(LOCK_REMEDY.format(path=path)) from error
        raise


def _shared(name: str, build: Any) -> Any:
    with _CLIENTS_LOCK:
        if name not in _CLIENTS:
            _CLIENTS[name] = build()
        return _CLIENTS[name]


def close_clients() -> None:
    """Close every shared client (at exit), releasing local locks."""
    with _CLIENTS_LOCK:
        clients = list(_CLIENTS.values())
        _CLIENTS.clear()
    for client in clients:
        with contextlib.suppress(Exception):  # closing at exit must not mask the real outcome
            client.close()


def vector_store_config(settings: PersistentMemoryConfig, state_dir: Path, dimensions: int) -> dict[str, Any]:
    """mem0's ``vector_store`` block for these settings."""
    if settings.vector_store == "pgvector":
        if not settings.pgvector.connection_string:
            raise MemoryStoreError(
                "vector_store 'pgvector' needs persistent_memory.pgvector.connection_string"
            )
        return {
            "provider": "pgvector",
            "config": {
                "connection_string": settings.pgvector.connection_string,
                "collection_name": settings.pgvector.collection_name,
                "embedding_model_dims": dimensions,
            },
        }
    client = qdrant_client(settings, state_dir)
    return {
        "provider": "qdrant",
        "config": {"collection_name": COLLECTION, "embedding_model_dims": dimensions, "client": client},
    }
