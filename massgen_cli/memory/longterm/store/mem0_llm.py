"""The memory LLM's requests within the schema of the server they go to.

mem0's OpenAI LLM sends ``max_tokens`` on every fact extraction to any model but the GPT-5 family:
OpenAI's own API has deprecated that field for ``max_completion_tokens`` (its reasoning models refuse
it), while OpenAI-compatible servers (Groq, Together, vLLM…) know ``max_tokens``. mem0 builds its LLM
from its own provider table, so the store puts this one in its place once mem0 is built, as it does the
offline embedder. Imported only then: it imports mem0.
"""

from __future__ import annotations

from typing import Any

from mem0.llms.openai import OpenAILLM


class OpenAIItselfLLM(OpenAILLM):
    """mem0's OpenAI LLM calling OpenAI's own API: the output bound goes as ``max_completion_tokens``."""

    def _get_common_params(self, **kwargs: Any) -> dict[str, Any]:
        params: dict[str, Any] = super()._get_common_params(**kwargs)
        if "max_tokens" in params:
            params["max_completion_tokens"] = params.pop("max_tokens")
        return params


def within_schema(llm: Any) -> Any:
    """``llm`` (mem0's, calling OpenAI's own API) as one that sends OpenAI's current fields."""
    return OpenAIItselfLLM(llm.config)
