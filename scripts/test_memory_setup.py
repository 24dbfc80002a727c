#!/usr/bin/env python3
"""Self-test of the memory setup: environment, embedding, memory LLM, vector store, and a full
record-and-retrieve round trip. Offline with the embedded defaults; exit 0 only if every test passes.

    python scripts/test_memory_setup.py [--config FILE] [--state-dir DIR]

Without --state-dir the tests run in a temporary folder, so your own memories are never touched.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import math
import os
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from massgen_cli.config import MemoryConfig, load_config
from massgen_cli.config.memory import PersistentMemoryConfig
from massgen_cli.coordination.decisions import find_json_object

REQUIRED_PACKAGES = ("mem0", "qdrant_client", "tiktoken", "openai", "anthropic", "pydantic", "yaml")
LOCAL_PACKAGES = ("onnxruntime", "tokenizers")


def memory_settings(config: str | None) -> MemoryConfig:
    """The memory block to test: the config's, or the embedded defaults (local embedder and LLM)."""
    if config:
        return load_config(config).config.memory
    return MemoryConfig.model_validate({"enabled": True, "persistent_memory": {"enabled": True}})


def test_environment(memory: MemoryConfig, state_dir: Path) -> str:
    assert sys.version_info >= (3, 11), f"Python 3.11 or newer is needed, this is {sys.version.split()[0]}"
    local = memory.persistent_memory.embedding.provider == "local"
    for name in REQUIRED_PACKAGES + (LOCAL_PACKAGES if local else ()):
        importlib.import_module(name)
    assert os.environ.get("MEM0_TELEMETRY") == "False", "MEM0_TELEMETRY must be False"
    probe = state_dir / "write_probe"
    probe.write_text("ok")
    probe.unlink()
    from massgen_cli.tokens import count_text_tokens

    assert count_text_tokens("hello world", "gpt-4") == 2, "tiktoken's offline encodings are not usable"
    import mem0
    import qdrant_client

    return (
        f"python {sys.version.split()[0]}, mem0 {mem0.__version__}, qdrant-client {_version(qdrant_client)}"
    )


def test_embedding(memory: MemoryConfig) -> str:
    from massgen_cli.memory.longterm.store.mem0_config import plan_embedder

    plan = plan_embedder(memory.persistent_memory.embedding)
    texts = ["The capital of France is Paris.", "Paris is France's capital city.", "Bananas are yellow."]
    vectors = _embed(plan, texts)
    assert all(len(v) == plan.dimensions for v in vectors), f"expected {plan.dimensions} dimensions"
    close, far = _cosine(vectors[0], vectors[1]), _cosine(vectors[0], vectors[2])
    assert close > far, f"similar sentences should be closer ({close:.2f} vs {far:.2f})"
    return f"{plan.name}, {plan.dimensions} dims, similar {close:.2f} vs unrelated {far:.2f}"


def _embed(plan: Any, texts: list[str]) -> list[list[float]]:
    if plan.local:
        from massgen_cli.memory.longterm.store.embedder import shared_local_embedder

        return shared_local_embedder().embed_many(texts)
    from mem0.utils.factory import EmbedderFactory

    embedder = EmbedderFactory.create(plan.mem0_config["provider"], plan.mem0_config["config"], None)
    return [embedder.embed(text, "add") for text in texts]


def test_memory_llm(memory: MemoryConfig) -> str:
    from massgen_cli.memory.longterm.store.mem0_config import plan_llm

    endpoint = memory.persistent_memory.llm
    plan = plan_llm(endpoint)
    if endpoint.provider == "local":
        answer = asyncio.run(_local_json_call())
        return f"local embedded model, JSON-schema call answered {answer} (records are stored verbatim)"
    assert plan.extracts, plan.reason
    from mem0.utils.factory import LlmFactory

    llm = LlmFactory.create(plan.mem0_config["provider"], plan.mem0_config["config"])
    reply = llm.generate_response(
        [{"role": "user", "content": 'Reply with the JSON object {"ok": true} and nothing else.'}],
        response_format={"type": "json_object"},
    )
    payload = find_json_object(reply if isinstance(reply, str) else json.dumps(reply)) or {}
    assert payload.get("ok") is True, f"unexpected reply: {reply!r}"
    return f"{plan.reason} answered in JSON (fact extraction on)"


async def _local_json_call() -> str:
    from massgen_cli.backends.base import Request, complete
    from massgen_cli.backends.local import LocalBackend
    from massgen_cli.config.backend import BackendConfig

    backend = LocalBackend(BackendConfig(type="local", model="smollm2-135m", max_tokens=64, temperature=0))
    schema = {
        "type": "object",
        "properties": {"capital": {"type": "string"}},
        "required": ["capital"],
    }
    try:
        question = [{"role": "user", "content": "What is the capital of France? Answer in JSON."}]
        result = await complete(backend, Request(question, response_schema=schema))
    finally:
        await backend.aclose()
    payload = json.loads(result.text)
    assert isinstance(payload.get("capital"), str), f"not the schema's shape: {result.text!r}"
    return json.dumps(payload)


def test_vector_store(store: Any) -> str:
    vectors = store.mem0.embedding_model.embed_batch(["alpha test point", "beta test point"], "add")
    ids = ["00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"]
    vector_store = store.mem0.vector_store
    vector_store.insert(vectors=vectors, payloads=[{"data": "alpha"}, {"data": "beta"}], ids=ids)
    try:
        found = vector_store.search(query="alpha test point", vectors=vectors[0], top_k=1)
        assert found and str(found[0].id) == ids[0], "the nearest point should be the one inserted"
    finally:
        for point in ids:
            vector_store.delete(point)
    settings = store.settings
    where = (
        settings.vector_store
        if settings.vector_store != "qdrant"
        else f"qdrant ({settings.qdrant.mode} mode)"
    )
    return f"{where}: insert, search and delete work"


def test_round_trip(store: Any) -> str:
    from massgen_cli.memory.longterm.record.memories import RecordContext
    from massgen_cli.memory.longterm.retrieve.filters import SearchFilter
    from massgen_cli.memory.longterm.retrieve.visibility import Viewer

    session = "selftest"
    try:
        winner = [{"role": "assistant", "content": "The lighthouse keeper is called Ada."}]
        loser = [{"role": "assistant", "content": "The lighthouse keeper is called Bo."}]
        store.record(winner, RecordContext("a", session, 1))
        store.record(loser, RecordContext("b", session, 1))
        store.record_winner(session, 1, "a")
        hits = store.search(
            "Who keeps the lighthouse?", limit=5, scope=SearchFilter(viewer=Viewer("c", session, 2))
        )
    finally:
        store.clear(session_id=session)
    texts = [hit.text for hit in hits]
    # With a memory LLM the stored words are extracted facts, so look for the names, not the sentences.
    assert any("Ada" in text for text in texts), f"the winner's memory was not retrieved: {texts}"
    assert not any("Bo" in text.split() or "Bo." in text for text in texts), "a losing agent's memory leaked"
    return (
        f"recorded 2, retrieved the turn-1 winner's memory ({len(hits)} hit(s)), the loser's stayed private"
    )


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def _version(module: Any) -> str:
    from importlib.metadata import version

    try:
        return version(module.__name__.replace("_", "-"))
    except Exception:
        return "?"


def run(name: str, check: Callable[[], str], results: list[bool]) -> None:
    try:
        detail = check()
    except Exception as error:
        print(f"❌ {name}: {error or type(error).__name__}")
        if os.environ.get("MASSGEN_SELFTEST_TRACEBACK"):
            traceback.print_exc()
        results.append(False)
    else:
        print(f"✅ {name}: {detail}")
        results.append(True)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--config", help="a YAML config whose memory block to test (default: embedded defaults)"
    )
    parser.add_argument("--state-dir", type=Path, help="test this state folder instead of a temporary one")
    args = parser.parse_args()
    memory = memory_settings(args.config)
    with tempfile.TemporaryDirectory(prefix="massgen-selftest-") as temporary:
        state_dir = (args.state_dir or Path(temporary)).resolve()
        state_dir.mkdir(parents=True, exist_ok=True)
        results: list[bool] = []
        run("TEST 1 environment", lambda: test_environment(memory, state_dir), results)
        run("TEST 2 embedding", lambda: test_embedding(memory), results)
        run("TEST 3 memory LLM", lambda: test_memory_llm(memory), results)
        store = _open_store(memory.persistent_memory, state_dir, memory, results)
        if store is not None:
            try:
                run("TEST 4 vector store", lambda: test_vector_store(store), results)
                run("TEST 5 record and retrieve", lambda: test_round_trip(store), results)
            finally:
                _close(store)
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) == 5 else 1


def _open_store(
    settings: PersistentMemoryConfig, state_dir: Path, memory: MemoryConfig, results: list[bool]
) -> Any:
    """The store under test, or None (and TESTS 4 and 5 failed) when it cannot be opened."""
    from massgen_cli.memory.longterm.store.persistent import PersistentMemory

    try:
        store = PersistentMemory(settings, state_dir, domain=memory.domain, task_type=memory.task_type)
        store.mem0  # noqa: B018 (builds mem0 and the vector store now, so a failure is reported here)
    except Exception as error:
        for name in ("TEST 4 vector store", "TEST 5 record and retrieve"):
            print(f"❌ {name}: could not open the store: {error}")
            results.append(False)
        return None
    return store


def _close(store: Any) -> None:
    from massgen_cli.memory.longterm.store.vector_stores import close_clients

    store.close()
    close_clients()


if __name__ == "__main__":
    sys.exit(main())
