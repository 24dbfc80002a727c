"""What a backend call cost, in USD: ``backend.pricing`` when the YAML sets it, else the maintained
price library ``genai-prices`` (loaded on the first priced call, off the event loop); the embedded,
scripted and self-hosted models are free. A model no price is known for costs None (shown as unknown,
never as free)."""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from massgen_cli.config.backend import BackendConfig, PricingConfig
from massgen_cli.events import Usage

# The embedded and scripted models, and servers a user runs on their own machine.
FREE_TYPES = frozenset({"local", "scripted", "lmstudio", "ollama", "vllm", "sglang", "llamacpp"})
PER_MILLION = 1_000_000
# Backend types whose provider the price library names differently (or at all).
PROVIDER_IDS = {
    "openai": "openai",
    "claude": "anthropic",
    "anthropic": "anthropic",
    "azure_openai": "azure",
    "gemini": "google",
    "grok": "x-ai",
    "groq": "groq",
    "together": "together",
    "openrouter": "openrouter",
    "deepseek": "deepseek",
    "mistral": "mistral",
    "fireworks": "fireworks",
    "cerebras": "cerebras",
    "moonshot": "moonshotai",
    "kimi": "moonshotai",
    "zai": "zai",
}


def needs_library(backend: BackendConfig) -> bool:
    return backend.type not in FREE_TYPES and backend.pricing is None and backend.type in PROVIDER_IDS


def library_ready() -> bool:
    """Whether a library lookup is instant now (the library and its price data are loaded)."""
    return _READY.is_set()


_READY = threading.Event()
_LOADING = threading.Lock()


def library_warmer(backend: BackendConfig) -> Callable[[], None] | None:
    """What loads the price library for ``backend``'s calls ahead of the first one's end (None when its
    calls need no library): given to the HTTP client, it runs when a response has begun."""
    return load_library_soon if needs_library(backend) else None


def load_library_soon() -> None:
    """Load the price library and its data in a thread, once: when a response has begun, while the
    process mostly waits for the model, so pricing the first call does not compete with the next step."""
    if _READY.is_set() or not _LOADING.acquire(blocking=False):
        return
    threading.Thread(target=_warm_library, name="price-library", daemon=True).start()


def _warm_library() -> None:
    with contextlib.suppress(Exception):  # a library that cannot load says so when a call is priced
        library_price(Usage(1, 1), "gpt-4o-mini", "openai")  # any lookup reads the price data


def priced(usage: Usage, backend: BackendConfig) -> Usage:
    """``usage`` with ``cost_usd`` set for this backend."""
    if backend.pricing is not None:  # given, it wins: a scripted agent priced to try the spending caps
        return replace(usage, cost_usd=_by_table(usage, backend.pricing))
    if backend.type in FREE_TYPES:
        return replace(usage, cost_usd=0.0)
    provider = PROVIDER_IDS.get(backend.type or "")
    return replace(usage, cost_usd=library_price(usage, backend.model or "", provider))


def cost_of(usage: Usage, backend: BackendConfig) -> float | None:
    """What ``usage`` of ``backend`` cost, in USD (None when no price is known)."""
    return priced(usage, backend).cost_usd


def _by_table(usage: Usage, pricing: PricingConfig) -> float:
    cached_rate = pricing.cached_input_per_million
    cached = usage.cached_tokens if cached_rate is not None else 0
    cost = (usage.input_tokens - cached) * pricing.input_per_million + cached * (cached_rate or 0.0)
    return (cost + usage.output_tokens * pricing.output_per_million) / PER_MILLION


def library_price(usage: Usage, model: str, provider_id: str | None) -> float | None:
    """The price library's cost of ``usage`` on ``model`` at ``provider_id``; None when either is unknown
    (a model name alone could match another provider's price)."""
    if not model or provider_id is None:
        return None
    calc_price, library_usage = _library()
    counted = library_usage(
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cached_tokens,
    )
    try:
        return float(calc_price(counted, model_ref=model, provider_id=provider_id).total_price)
    except Exception:  # not found (LookupError), or data the library cannot price: shown as unknown
        return None
    finally:
        _READY.set()  # the first lookup reads the price data (30 ms); the next ones take microseconds


@functools.cache
def _library() -> tuple[Any, Any]:
    from genai_prices import Usage as LibraryUsage
    from genai_prices import calc_price

    return calc_price, LibraryUsage
