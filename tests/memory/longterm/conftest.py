"""Fixtures for the memory tests: a real PostgreSQL + pgvector server, started once per test run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers.postgres import start_postgres


@pytest.fixture(scope="session")
def pgvector_url() -> Iterator[str]:
    """Connection string of a database with the vector extension; the server stops after the run."""
    server = start_postgres()
    try:
        yield server.url
    finally:
        server.stop()
