"""How the YAML ``persistent_memory.llm`` / ``embedding`` reach mem0, in mem0's real config shape.

Groq, Together and any server with ``base_url`` go through mem0's OpenAI provider pointed at their
OpenAI-compatible endpoint, so no extra SDK is needed; Anthropic and Azure OpenAI use mem0's own
providers. ``local`` means the offline embedder and, for the LLM, verbatim records (no extraction).
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from dataclasses import dataclass, replace
from typing import Any

from massgen_cli.config.memory import EmbeddingConfig, ModelEndpoint
from massgen_cli.config.providers import GEMINI_OPENAI_URL, PROVIDERS, calls_openai_itself
from massgen_cli.errors import MemoryStoreError
from massgen_cli.memory.longterm.store.embedder import (
    LOCAL_EMBEDDING_DIMS,
    LOCAL_EMBEDDING_MODEL,
    shared_local_embedder,
)

PLACEHOLDER_KEY = "not-used"

_OPENAI_COMPATIBLE = {
    "openai": (None, "OPENAI_API_KEY"),
    "groq": ("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "together": ("https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "gemini": (GEMINI_OPENAI_URL, "GEMINI_API_KEY"),
}
_DEFAULT_LLM_MODELS = {"openai": "gpt-4.1-nano-2025-04-14", "anthropic": "claude-3-5-haiku-latest"}
_KNOWN_EMBEDDING_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    "togethercomputer/m2-bert-80M-8k-retrieval": 768,
}


@dataclass(frozen=True)
class MemoryLLMPlan:
    """The mem0 LLM config, and whether it is usable for fact extraction (else: verbatim records)."""

    mem0_config: dict[str, Any]
    extracts: bool
    reason: str
    openai_itself: bool = False
    """It calls OpenAI's own API (mem0's ``openai`` provider at OpenAI's address), which takes
    ``max_completion_tokens`` where compatible servers take ``max_tokens``."""


@dataclass(frozen=True)
class EmbedderPlan:
    """The mem0 embedder config (or the offline embedder) with its name and dimensions."""

    mem0_config: dict[str, Any]
    local: bool
    name: str
    dimensions: int


def _openai_compatible(provider: str) -> tuple[str | None, str | None]:
    """Default server and key variable of an OpenAI-compatible provider (a backend type's, if it is one)."""
    if provider in _OPENAI_COMPATIBLE:
        return _OPENAI_COMPATIBLE[provider]
    known = PROVIDERS.get(provider)
    return (known.base_url, known.api_key_env) if known is not None else (None, "OPENAI_API_KEY")


def _key(endpoint: ModelEndpoint, variable: str | None) -> str | None:
    return endpoint.api_key or (os.environ.get(variable) if variable else None)


def plan_llm(endpoint: ModelEndpoint) -> MemoryLLMPlan:
    """mem0's LLM config for ``endpoint``; unusable (no key, or the local model) means verbatim records."""
    provider = endpoint.provider
    placeholder = {"provider": "openai", "config": {"api_key": PLACEHOLDER_KEY, "model": "unused"}}
    if provider == "local":
        return MemoryLLMPlan(
            placeholder, False, "the local model records verbatim (its context is too small)"
        )
    model = endpoint.model or _DEFAULT_LLM_MODELS.get(provider, "gpt-4.1-nano-2025-04-14")
    if provider in ("anthropic", "claude"):
        key = _key(endpoint, "ANTHROPIC_API_KEY")
        config: dict[str, Any] = {"model": model, "api_key": key, "enable_sampling_parameters": False}
        return _usable(placeholder, "anthropic", config, key, "ANTHROPIC_API_KEY")
    if provider == "azure_openai":
        key = _key(endpoint, "AZURE_OPENAI_API_KEY")
        azure = {
            "api_key": key,
            "azure_endpoint": endpoint.base_url or os.environ.get("AZURE_OPENAI_ENDPOINT"),
        }
        config = {"model": model, "azure_kwargs": azure}
        return _usable(placeholder, "azure_openai", config, key, "AZURE_OPENAI_API_KEY")
    default_url, variable = _openai_compatible(provider)
    key = _key(endpoint, variable) or (PLACEHOLDER_KEY if endpoint.base_url else None)
    config = {"model": model, "api_key": key}
    if endpoint.base_url or default_url:
        config["openai_base_url"] = endpoint.base_url or default_url
    plan = _usable(placeholder, "openai", config, key, variable or "the provider's API key variable")
    itself = plan.extracts and calls_openai_itself(provider, config.get("openai_base_url"))
    return replace(plan, openai_itself=itself)


def _usable(
    placeholder: dict[str, Any], provider: str, config: dict[str, Any], key: str | None, variable: str
) -> MemoryLLMPlan:
    if not key:
        return MemoryLLMPlan(
            placeholder, False, f"no key for the memory LLM ({variable} unset): recording verbatim"
        )
    return MemoryLLMPlan({"provider": provider, "config": config}, True, f"{provider}:{config['model']}")


def warm_embedder(plan: EmbedderPlan) -> threading.Thread | None:
    """Start loading the offline embedder in the background when ``plan`` uses it (a search needs it
    once the index is read); the thread to join, or None. Call it before importing the store, whose
    modules then load while the embedder does."""
    return shared_local_embedder().warm() if plan.local else None


def plan_embedder(endpoint: EmbeddingConfig) -> EmbedderPlan:
    """mem0's embedder config for ``endpoint``; ``local`` is the offline MiniLM embedder."""
    if endpoint.provider == "local":
        dummy = {"provider": "openai", "config": {"api_key": PLACEHOLDER_KEY, "model": LOCAL_EMBEDDING_MODEL}}
        return EmbedderPlan(dummy, True, f"local:{LOCAL_EMBEDDING_MODEL}", LOCAL_EMBEDDING_DIMS)
    model = endpoint.model or "text-embedding-3-small"
    dims = endpoint.dimensions or _KNOWN_EMBEDDING_DIMS.get(model, 1536)
    if endpoint.provider == "azure_openai":
        azure = {
            "api_key": _key(endpoint, "AZURE_OPENAI_API_KEY"),
            "azure_endpoint": endpoint.base_url or os.environ.get("AZURE_OPENAI_ENDPOINT"),
        }
        config = {"model": model, "embedding_dims": dims, "azure_kwargs": azure}
        return EmbedderPlan(
            {"provider": "azure_openai", "config": config}, False, f"azure_openai:{model}", dims
        )
    default_url, variable = _openai_compatible(endpoint.provider)
    key = _key(endpoint, variable)
    if not key and not endpoint.base_url:
        raise MemoryStoreError(
            f"the memory embedding provider '{endpoint.provider}' needs a key: set {variable} or "
            "'persistent_memory.embedding.api_key', or use provider 'local' (offline)"
        )
    config = {"model": model, "embedding_dims": dims, "api_key": key or PLACEHOLDER_KEY}
    if endpoint.base_url or default_url:
        config["openai_base_url"] = endpoint.base_url or default_url
    return EmbedderPlan({"provider": "openai", "config": config}, False, f"{endpoint.provider}:{model}", dims)


def quiet_libraries() -> None:
    """mem0 and Qdrant log optional-feature notices at WARNING on every start; they are not ours to show."""
    for name in ("mem0", "mem0.vector_stores.qdrant", "qdrant_client"):
        logging.getLogger(name).setLevel(logging.ERROR)
    # Its errors are raised as well, and said once by the recorder with what happens next.
    logging.getLogger("mem0.memory.main").setLevel(logging.CRITICAL)
    warnings.filterwarnings("ignore", message="Payload indexes have no effect in the local Qdrant")
