"""Vector-store plumbing that can be tested honestly here: no Qdrant server can run on these machines
(none installs without Docker), so server mode is checked up to the network; the compose file is
checked as data. The lock script is tested against a real lock."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.store.vector_stores import (
    close_clients,
    qdrant_client,
    qdrant_path,
    server_url,
    vector_store_config,
)

ROOT = Path(__file__).resolve().parents[3]


def settings(**persistent):  # type: ignore[no-untyped-def]
    return PersistentMemoryConfig.model_validate({"enabled": True, **persistent})


def test_server_mode_address_and_unreachable_server_error(tmp_path):
    config = settings(qdrant={"mode": "server", "host": "127.0.0.1", "port": 9})
    assert server_url(config) == "http://127.0.0.1:9"
    assert (
        server_url(settings(qdrant={"mode": "server", "url": "https://q.example:6333"}))
        == "https://q.example:6333"
    )
    with pytest.raises(
        MemoryStoreError, match=r"cannot reach the Qdrant server at http://127.0.0.1:9 .*docker compose"
    ):
        qdrant_client(config, tmp_path)


def test_local_paths(tmp_path):
    assert qdrant_path(settings(), tmp_path) == tmp_path / "qdrant"
    assert qdrant_path(settings(path=str(tmp_path / "a")), tmp_path) == tmp_path / "a"
    assert qdrant_path(settings(qdrant={"path": str(tmp_path / "b")}), tmp_path) == tmp_path / "b"


def test_one_local_client_per_folder_per_process(tmp_path):
    try:
        assert qdrant_client(settings(), tmp_path) is qdrant_client(settings(), tmp_path)
        config = vector_store_config(settings(), tmp_path, 384)
        assert config["provider"] == "qdrant" and config["config"]["embedding_model_dims"] == 384
    finally:
        close_clients()


def test_compose_file_is_pinned_keeps_data_under_state_dir_and_checks_health_without_curl():
    compose = yaml.safe_load((ROOT / "docker-compose.qdrant.yml").read_text())
    service = compose["services"]["qdrant"]
    image, tag = service["image"].split(":")
    assert image == "qdrant/qdrant" and tag.startswith("v") and tag != "latest"
    assert service["volumes"] == ["./.massgen/qdrant_server:/qdrant/storage"]
    check = " ".join(service["healthcheck"]["test"])
    assert "/dev/tcp/127.0.0.1/6333" in check and "curl" not in check and "wget" not in check
    assert all(port.startswith("127.0.0.1:") for port in service["ports"])


def test_lock_script_refuses_while_held_and_cleans_when_stale(tmp_path):
    store = tmp_path / "qdrant"
    script = ROOT / "scripts" / "cleanup_qdrant_lock.sh"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from qdrant_client import QdrantClient; c = QdrantClient(path={str(store)!r}); "
            "print('ready', flush=True); import sys; sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        refused = subprocess.run(
            ["bash", str(script), str(store)], capture_output=True, text=True, check=False
        )
        assert refused.returncode == 1 and "refusing: a process still holds" in refused.stderr
        assert (store / ".lock").exists()
    finally:
        holder.kill()
        holder.wait(10)
    cleaned = subprocess.run(["bash", str(script), str(store)], capture_output=True, text=True, check=False)
    assert cleaned.returncode == 0 and "removed stale lock" in cleaned.stdout
    assert not (store / ".lock").exists()
    again = subprocess.run(["bash", str(script), str(store)], capture_output=True, text=True, check=False)
    assert again.returncode == 0 and "nothing to clean" in again.stdout
