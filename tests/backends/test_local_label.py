"""The embedded model for real: with examples labelled "Q:"/"A:" in its system prompt it starts its
answer with "A: " (the leak, seen on the server's own reply); the local backend's reply does not."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from massgen_cli.backends import local
from massgen_cli.backends.base import Request, complete
from massgen_cli.backends.local_server import LocalServer
from massgen_cli.backends.openai_chat import OpenAIChatBackend
from massgen_cli.backends.registry import create_backend
from massgen_cli.config.backend import BackendConfig
from massgen_cli.messages import Message

pytestmark = pytest.mark.slow

CONFIG = BackendConfig(type="local", model="smollm2-135m", max_tokens=48, temperature=0.0)
FEW_SHOT: list[Message] = [
    {
        "role": "system",
        "content": "Answer the question in one short sentence. Examples:\nQ: What is the capital of Peru?\n"
        "A: The capital of Peru is Lima.\nQ: What is 6 + 1?\nA: 6 + 1 = 7.\nQ: What colour is a lemon?\n"
        "A: A lemon is yellow.",
    },
    {"role": "user", "content": "What is 2+2?"},
]


@pytest.fixture(scope="module")
def server() -> Iterator[LocalServer]:
    """The shared server, held for the whole module so that closing a backend does not stop it."""
    local.SHARED_SERVER.join()
    yield local.SHARED_SERVER.ensure_started()
    local.SHARED_SERVER.shutdown()


async def test_the_label_the_model_copies_from_its_examples_never_reaches_the_answer(server: LocalServer):
    raw = OpenAIChatBackend(CONFIG, api_key=None, base_url=server.base_url, one_request_per_connection=True)
    backend = create_backend(CONFIG)
    try:
        leaked = (await complete(raw, Request(FEW_SHOT))).text
        cleaned = (await complete(backend, Request(FEW_SHOT))).text
    finally:
        await raw.aclose()
        await backend.aclose()
    assert leaked.startswith("A: "), f"the model copies the label: {leaked!r}"
    assert cleaned == leaked.removeprefix("A: ").strip()
    assert "4" in cleaned
