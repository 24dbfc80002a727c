"""Vector stores for mem0: Qdrant in a local folder (Qdrant's engine in process, ``edge``: one process
per folder), in memory or on a server, and PostgreSQL with pgvector, which several processes share."""

from __future__ import annotations

import contextlib
import shlex
import threading
from pathlib import Path
from typing import Any

from massgen_cli.config.memory import MemoryConfig, PersistentMemoryConfig, PgvectorConfig
from massgen_cli.errors import MemoryStoreError, StoreUnreachable
from massgen_cli.memory.longterm.record.keys import segment
from massgen_cli.memory.longterm.record.spool import SpoolTarget

_CLIENTS: dict[str, Any] = {}
_SERVER = "server:"
_CLIENTS_LOCK = threading.Lock()
_PREPARED: set[tuple[str, str, int]] = set()
_PREPARED_LOCK = threading.Lock()
PGVECTOR_CONNECT_SECONDS = 10
# Without iterative scans an HNSW search yields at most ef_search (40) neighbours and filters those, so
# mem0's searches (a filter, and up to 400 rows) return too few. The setting exists from pgvector 0.8.
PGVECTOR_SESSION_OPTIONS = ("-c hnsw.iterative_scan=relaxed_order",)

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
    """The process's shared qdrant-client for a server store, or for a store kept in memory (a local
    folder is the engine's: ``local_folder``)."""
    from qdrant_client import QdrantClient

    if settings.qdrant.mode == "server":
        return qdrant_server_client(settings)
    return _shared("memory", lambda: QdrantClient(location=":memory:"))


def keeps_local_folder(settings: PersistentMemoryConfig) -> bool:
    """Whether the vector store is Qdrant in a local folder (the default)."""
    return settings.vector_store == "qdrant" and settings.qdrant.mode != "server" and settings.on_disk


def local_folder(settings: PersistentMemoryConfig, state_dir: Path) -> Any:
    """The process's ``EdgeFolder`` for the local store's folder (one process holds a folder)."""
    path = qdrant_path(settings, state_dir)
    return _shared(f"path:{path}", lambda: _open_local(path))


def qdrant_server_client(settings: PersistentMemoryConfig) -> Any:
    """The process's shared client for the configured Qdrant server, checked when first made (an
    unreachable server is one ``MemoryStoreError``)."""
    location = server_url(settings)
    return _shared(f"{_SERVER}{location}", lambda: _open_server(location, settings.qdrant.api_key))


def store_identity(settings: PersistentMemoryConfig, state_dir: Path) -> str:
    """Which vector store a config writes to, in words a user recognises and without secrets:
    ``qdrant at <folder>``, ``qdrant server <url>``, ``pgvector <host>:<port>/<db> table <collection>``."""
    if settings.vector_store == "pgvector":
        pgvector = settings.pgvector
        place = database_place(pgvector.connection_string or "")
        return f"pgvector {place} table {pgvector.collection_name}"
    if settings.qdrant.mode == "server":
        return f"qdrant server {server_url(settings)}"
    if not settings.on_disk:
        return "qdrant in memory"
    path = qdrant_path(settings, state_dir)
    if path.is_relative_to(state_dir):  # the default: still the same store if the state folder moves
        return f"qdrant at <state folder>/{path.relative_to(state_dir)}"
    return f"qdrant at {path}"


def spool_target(memory: MemoryConfig, state_dir: Path) -> SpoolTarget:
    """The store a memory block's records are meant for, as the spool marks them."""
    store = store_identity(memory.persistent_memory, state_dir)
    return SpoolTarget(store, segment(memory.domain), segment(memory.task_type))


def database_place(connection_string: str) -> str:
    """``host:port/dbname`` of a PostgreSQL URL or key=value connection string (never its password)."""
    from urllib.parse import urlsplit

    if "://" in connection_string:
        url = urlsplit(connection_string)
        return f"{url.hostname or 'localhost'}:{url.port or 5432}/{url.path.lstrip('/')}"
    fields = dict(item.split("=", 1) for item in connection_string.split() if "=" in item)
    return f"{fields.get('host', 'localhost')}:{fields.get('port', 5432)}/{fields.get('dbname', '')}"


def server_url(settings: PersistentMemoryConfig) -> str:
    qdrant = settings.qdrant
    return qdrant.url or f"http://{qdrant.host}:{qdrant.port}"


def _open_server(location: str, api_key: str | None) -> Any:
    """A client for a Qdrant server, checked now so an unreachable server is one clear error."""
    from qdrant_client import QdrantClient

    client = QdrantClient(url=location, api_key=api_key, timeout=10, check_compatibility=False)
    try:
        client.get_collections()
    except Exception as error:
        client.close()
        raise MemoryStoreError(
            f"cannot reach the Qdrant server at {location} ({type(error).__name__}); start it with "
            "`docker compose -f docker-compose.qdrant.yml up -d`, or use qdrant mode: local"
        ) from error
    return client


def _open_local(path: Path) -> Any:
    from massgen_cli.memory.longterm.store.edge.folder import EdgeFolder, FolderHeld

    try:
        return EdgeFolder(path, lambda part, error: damaged_store_message(path, part, error))
    except FolderHeld as error:
        raise MemoryStoreError(LOCK_REMEDY.format(path=path)) from error


def damaged_store_message(path: Path, part: str, error: BaseException) -> str:
    """Which ``part`` of the store at ``path`` could not be read, that nothing in it was changed
    (opening stops before it writes), and how to start a new one."""
    detail = str(error).strip().splitlines()[0] if str(error).strip() else "no detail"
    folder = shlex.quote(str(path))
    return (
        f"the local Qdrant store at {path} is damaged: {part} cannot be read "
        f"({type(error).__name__}: {detail}). Nothing in it was changed; to start a new, empty store move "
        f"the folder aside (mv {folder} {shlex.quote(f'{path}.damaged')}), or restore it from a backup"
    )


def share_server_client(settings: PersistentMemoryConfig, client: Any) -> None:
    """Have this process reach the Qdrant server of ``settings`` through ``client``: mem0, the memory
    index and the session mirror then share it (the test suite passes qdrant-client's in-process
    engine, which answers the same API, where no server can run)."""
    with _CLIENTS_LOCK:
        _CLIENTS[f"{_SERVER}{server_url(settings)}"] = client


def _shared(name: str, build: Any) -> Any:
    with _CLIENTS_LOCK:
        if name not in _CLIENTS:
            _CLIENTS[name] = build()
        return _CLIENTS[name]


def close_clients() -> None:
    """Close the shared clients of local stores (when a run's memory closes, and at exit), releasing
    their folders' locks. A Qdrant server's client holds no lock and stays for the process: the
    session mirror still saves the session through it after the run's memory has closed."""
    with _CLIENTS_LOCK:
        local = [name for name in _CLIENTS if not name.startswith(_SERVER)]
        clients = [_CLIENTS.pop(name) for name in local]
    for client in clients:
        with contextlib.suppress(Exception):  # closing at exit must not mask the real outcome
            client.close()


def vector_store_config(settings: PersistentMemoryConfig, state_dir: Path, dimensions: int) -> dict[str, Any]:
    """mem0's ``vector_store`` block for these settings (for a local folder, a placeholder in memory
    that ``local_vector_store`` takes the place of)."""
    if settings.vector_store == "pgvector":
        return pgvector_config(settings.pgvector, dimensions)
    client = qdrant_client(settings, state_dir)
    return {
        "provider": "qdrant",
        "config": {
            "collection_name": settings.qdrant.collection_name,
            "embedding_model_dims": dimensions,
            "client": client,
        },
    }


def local_vector_store(
    settings: PersistentMemoryConfig, state_dir: Path, dimensions: int, suffix: str = ""
) -> Any:
    """mem0's vector store over the local folder's collection (``suffix`` names mem0's entity
    collection beside it)."""
    from massgen_cli.memory.longterm.store.edge.vector_store import EdgeVectorStore

    name = f"{settings.qdrant.collection_name}{suffix}"
    return EdgeVectorStore(local_folder(settings, state_dir), name, dimensions, now=not suffix)


def pgvector_config(pgvector: PgvectorConfig, dimensions: int) -> dict[str, Any]:
    """mem0's ``pgvector`` block; the collection exists (created once, by whoever comes first) on return."""
    if not pgvector.connection_string:
        raise MemoryStoreError(
            "vector_store 'pgvector' needs persistent_memory.pgvector.connection_string, "
            "e.g. postgresql://user:password@localhost:5432/massgen"
        )
    conninfo = pgvector_conninfo(pgvector.connection_string)
    prepared = (conninfo, pgvector.collection_name, dimensions)
    with _PREPARED_LOCK:
        if prepared not in _PREPARED:
            _prepare_collection(*prepared)
            _PREPARED.add(prepared)
    return {
        "provider": "pgvector",
        "config": {
            "connection_string": conninfo,
            "collection_name": pgvector.collection_name,
            "embedding_model_dims": dimensions,
        },
    }


def pgvector_conninfo(connection_string: str) -> str:
    """The connection string with the session settings filtered searches need added to its options."""
    try:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo
    except ImportError as error:
        raise MemoryStoreError(
            "vector_store 'pgvector' needs psycopg: pip install 'massgen-cli[pgvector]'"
        ) from error
    try:
        params = conninfo_to_dict(connection_string)
    except Exception as error:
        raise MemoryStoreError(
            f"persistent_memory.pgvector.connection_string is not a PostgreSQL connection string: {error}"
        ) from error
    options = " ".join(filter(None, [str(params.get("options") or ""), *PGVECTOR_SESSION_OPTIONS]))
    return make_conninfo("", **{**params, "options": options})


def _prepare_collection(conninfo: str, collection: str, dimensions: int) -> None:
    """Create mem0's table and indexes under an advisory lock: several processes starting at once would
    otherwise race in ``CREATE ... IF NOT EXISTS`` and fail on PostgreSQL's catalog constraints."""
    import psycopg
    from mem0.vector_stores.pgvector import PGVector

    try:
        with psycopg.connect(conninfo, autocommit=True, connect_timeout=PGVECTOR_CONNECT_SECONDS) as lock:
            lock.execute("SELECT pg_advisory_lock(hashtext(%s))", (f"massgen:{collection}",))
            existing = _stored_dimensions(lock, collection)
            if existing is None:
                store = PGVector(
                    dbname=None,
                    collection_name=collection,
                    embedding_model_dims=dimensions,
                    user=None,
                    password=None,
                    host=None,
                    port=None,
                    diskann=False,
                    hnsw=True,
                    minconn=1,
                    maxconn=1,
                    connection_string=conninfo,
                )
                try:
                    store.create_col()
                finally:
                    store.connection_pool.close()
    except psycopg.OperationalError as error:
        raise StoreUnreachable(pgvector_problem(conninfo, error)) from error
    except psycopg.Error as error:
        raise MemoryStoreError(pgvector_problem(conninfo, error)) from error
    if existing is not None and existing != dimensions:
        raise MemoryStoreError(
            f"the pgvector collection '{collection}' holds {existing}-dimension vectors but the embedder "
            f"makes {dimensions}; use the embedder it was built with or another "
            "persistent_memory.pgvector.collection_name"
        )


def _stored_dimensions(connection: Any, collection: str) -> int | None:
    """The vector size of an existing collection table, or None when there is no such table."""
    row = connection.execute(
        "SELECT a.atttypmod FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'public' AND c.relname = %s AND a.attname = 'vector' AND NOT a.attisdropped",
        (collection,),
    ).fetchone()
    return int(row[0]) if row else None


def pgvector_problem(conninfo: str, error: Exception) -> str:
    from psycopg.conninfo import conninfo_to_dict

    params = conninfo_to_dict(conninfo)
    where = f"{params.get('host') or 'localhost'}:{params.get('port') or 5432}/{params.get('dbname') or ''}"
    detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    if "vector" in detail and ("extension" in detail or "type" in detail):
        return (
            f"the PostgreSQL database {where} has no pgvector extension ({detail}); "
            "install pgvector there and run CREATE EXTENSION vector as a superuser"
        )
    return (
        f"could not use the PostgreSQL memory store at {where}: {detail}. Check that the server runs and "
        "persistent_memory.pgvector.connection_string (MASSGEN_PGVECTOR_URL in the example) is right"
    )
