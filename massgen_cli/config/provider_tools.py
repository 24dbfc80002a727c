"""The provider's own tools a backend may ask for, under MassGen's key names: web search, code execution,
xAI's X search, and the options of OpenRouter's web plugin. Which API gives which is the backends' part
(``features`` says, at load, what a backend's API cannot give)."""

from __future__ import annotations

from typing import Literal

from massgen_cli.config.base import AtLeastOne, Section


class ProviderToolSettings(Section):
    """The provider-side tool keys of ``backend:``: the provider runs these tools itself."""

    enable_web_search: bool = False
    """The provider's own web search: OpenAI's web_search tool (Responses API), Anthropic's web search tool
    (claude), xAI's web_search tool (grok, Responses API), Gemini's Google Search grounding (gemini, its
    own API), OpenRouter's web plugin (openrouter).
    """
    enable_code_interpreter: bool = False
    """The provider's own code execution: OpenAI's code_interpreter (Responses API), Anthropic's code
    execution tool (claude), xAI's code_interpreter (grok, Responses API), Gemini's code_execution (gemini,
    its own API).
    """
    enable_code_execution: bool = False
    """MassGen's name of enable_code_interpreter for claude, gemini and grok."""
    enable_x_search: bool = False
    """grok only: xAI's X search tool (x_search), beside enable_web_search."""
    engine: Literal["native", "exa"] | None = None
    """OpenRouter's web plugin: the search engine; null lets OpenRouter choose (the model provider's own
    search where it has one, else Exa).
    """
    max_results: AtLeastOne | None = None
    """OpenRouter's web plugin: results per search; null: OpenRouter's 5."""
    search_prompt: str | None = None
    """OpenRouter's web plugin: the text that introduces the results."""
    search_context_size: Literal["low", "medium", "high"] | None = None
    """OpenRouter's web search: how much of each result the model sees (web_search_options)."""

    @property
    def code_execution(self) -> bool:
        return self.enable_code_interpreter or self.enable_code_execution
