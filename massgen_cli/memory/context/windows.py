"""Context windows of current models, by name prefix; a per-agent ``context_window:`` wins."""

from __future__ import annotations

DEFAULT_CONTEXT_WINDOW = 32_768
"""Used for models not in the table: small enough to be safe on most servers."""

# Longest matching prefix wins, so specific names come before their families.
_WINDOWS: list[tuple[str, int]] = [
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4-32k", 32_768),
    ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385),
    ("gpt-oss", 131_072),
    ("chatgpt-4o", 128_000),
    ("o1-mini", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("claude-", 200_000),
    ("gemini-1.5-pro", 2_097_152),
    ("gemini-", 1_048_576),
    ("grok-4", 256_000),
    ("grok-code", 256_000),
    ("grok-3", 131_072),
    ("grok-", 131_072),
    ("llama-3", 131_072),
    ("llama3", 131_072),
    ("qwen", 32_768),
    ("mistral", 32_768),
    ("deepseek", 128_000),
    ("glm-4.5", 128_000),
    ("kimi-k2", 131_072),
    ("smollm2", 8_192),
]


def known_context_window(model: str | None) -> int | None:
    """The window of a model in the table, or None."""
    lowered = (model or "").lower().split("/")[-1]
    matches = [(prefix, size) for prefix, size in _WINDOWS if lowered.startswith(prefix)]
    return max(matches, key=lambda match: len(match[0]))[1] if matches else None


def context_window(model: str | None, override: int | None = None) -> int:
    """``override`` if set, else the table, else DEFAULT_CONTEXT_WINDOW."""
    return override or known_context_window(model) or DEFAULT_CONTEXT_WINDOW
