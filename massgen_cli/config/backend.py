"""``backend:`` of an agent: the provider and model, its settings and tools, pricing, and the scripted
backend's responses."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import (
    AliasChoices,
    Field,
    NonNegativeFloat,
    PositiveFloat,
    PositiveInt,
    PrivateAttr,
    field_validator,
    model_validator,
)

from massgen_cli.config.base import Fraction, Section, section
from massgen_cli.config.deferred import deferred
from massgen_cli.config.limits import CircuitBreakerSettings, RateLimitSettings
from massgen_cli.config.massgen_keys import PROGRAM_BACKENDS, PROGRAM_MODELS, value_rule
from massgen_cli.config.permissions import ToolPermissionSettings
from massgen_cli.config.problems import suggest
from massgen_cli.config.provider_tools import ProviderToolSettings
from massgen_cli.config.providers import (
    AZURE_DEFAULT_API_VERSION,
    PROVIDERS,
    calls_gemini_openai_api,
    infer_backend_type,
)
from massgen_cli.config.tools import BackendToolSettings

if TYPE_CHECKING:
    from massgen_cli.config.hooks import ToolHooksConfig
else:
    ToolHooksConfig = deferred("massgen_cli.config.hooks", "ToolHooksConfig")

if TYPE_CHECKING:
    from massgen_cli.config.scripted import ScriptEntry
else:
    ScriptEntry = deferred("massgen_cli.config.scripted", "ScriptEntry")


class PricingConfig(Section):
    input_per_million: NonNegativeFloat
    """USD per million input tokens."""
    output_per_million: NonNegativeFloat
    """USD per million output tokens."""
    cached_input_per_million: NonNegativeFloat | None = None
    """USD per million input tokens read from the prompt cache; null: the input price."""


class ReasoningSettings(Section):
    """OpenAI's reasoning settings (``reasoning:`` of a backend), as MassGen writes them."""

    effort: Literal["none", "minimal", "low", "medium", "high", "xhigh"] | None = None
    """How much the model reasons before it answers; null: the model's default."""
    summary: Literal["auto", "concise", "detailed"] | None = None
    """A summary of the reasoning, shown live and kept (Responses API only); null: none."""


class TextSettings(Section):
    """OpenAI's text settings (``text:`` of a backend)."""

    verbosity: Literal["low", "medium", "high"] | None = None
    """How long the model's replies are; null: the model's default."""


class BackendConfig(BackendToolSettings, ProviderToolSettings, ToolPermissionSettings):
    """``backend:`` of one agent. ``type`` is inferred from ``model`` when omitted."""

    massgen_section: ClassVar[str] = "backend"
    _program: str | None = PrivateAttr(default=None)

    type: str | None = None
    """Backend type (see Backend types); inferred from model when omitted."""
    model: str | None = None
    """Model name sent to the provider."""
    base_url: str | None = None
    """Server address of the API; null uses the backend type's default."""
    api_key: str | None = None
    """API key; null reads the backend type's key variable."""
    temperature: float | None = Field(default=None, ge=0, le=2)
    """Sampling temperature; null uses the provider's default."""
    max_tokens: PositiveInt | None = None
    """Most tokens generated per call; null uses the provider's default. Sent as max_completion_tokens to
    OpenAI's own API (no base_url, or api.openai.com; Azure's OpenAI), as max_tokens to other
    OpenAI-compatible servers, as max_output_tokens on the Responses API.
    """
    top_p: Fraction | None = None
    """Nucleus sampling cutoff; null uses the provider's default."""
    request_timeout_seconds: PositiveFloat = Field(
        default=120.0, validation_alias=AliasChoices("request_timeout_seconds", "timeout")
    )
    """Seconds one request to the provider may take before it fails."""
    max_retries: int = Field(default=3, ge=0, le=10)
    """Retries of a call that failed with a retryable error (429, 5xx, timeout, lost link)."""
    retry_base_delay_seconds: NonNegativeFloat = 1.0
    """First retry's delay scale in seconds; it doubles with each retry (with jitter)."""
    rate_limit: RateLimitSettings | None = None
    """Requests and tokens per minute, shared by every agent of the run on the same provider, key and server
    address; a request over the budget waits. null: no limit.
    """
    circuit_breaker: CircuitBreakerSettings = section(CircuitBreakerSettings)
    """Calls to a provider that keeps failing fail at once for a while, then one trial call tells whether it
    is back.
    """
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Extra fields added to each request body (provider-specific options)."""
    top_k: PositiveInt | None = None
    """Top-k sampling, for servers that support it (vLLM, llama.cpp…)."""
    repetition_penalty: PositiveFloat | None = None
    """Repetition penalty, for servers that support it."""
    chat_template_kwargs: dict[str, Any] | None = None
    """Arguments for the server's chat template (e.g. enable_thinking on vLLM)."""
    pricing: PricingConfig | None = None
    """USD per million tokens for this backend (a private server, or a model the price library does not know);
    null takes the price from genai-prices. The embedded and scripted models are free.
    """
    api_version: str | None = Field(
        default=None,
        description="azure_openai only: the API version; null reads AZURE_OPENAI_API_VERSION, else "
        f"{AZURE_DEFAULT_API_VERSION}.",
    )
    deployment_name: str | None = None
    """azure_openai only: the deployment to call; null uses 'model'."""
    betas: list[str] = Field(default_factory=list)
    """Anthropic only: beta features, sent as the anthropic-beta header."""
    responses: list[ScriptEntry] = Field(default_factory=list)
    """Scripted backend only: one entry per call, in order; the last one repeats."""
    api: Literal["responses", "chat_completions"] | None = None
    """Which OpenAI API to call: null: the Responses API for 'openai' and 'grok' at their own address (as
    MassGen), Chat Completions for every other server and type; 'responses' for a server that speaks both
    (azure_openai, a proxy). For 'gemini', null calls Gemini's own API and 'chat_completions' its
    OpenAI-compatible API.
    """
    reasoning: ReasoningSettings | None = None
    """Reasoning effort and summary (Responses API; Chat Completions sends the effort)."""
    text: TextSettings | None = None
    """Reply verbosity (OpenAI)."""
    hooks: ToolHooksConfig | None = None
    """This agent's tool hooks, run after the run's (or instead of them: override)."""
    scripted_attachments: bool = False
    """Scripted backend only: true plays a model that takes images and PDFs (they reach its requests); false,
    one that reads text only.
    """
    scripted_tool_calls: bool = True
    """Scripted backend only: false plays a model without tool calls, which decides and calls tools through a
    JSON schema (as the embedded model does).
    """

    @field_validator("responses", mode="before")
    @classmethod
    def _text_entries(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"text": item} if isinstance(item, str) else item for item in value]
        return value

    @model_validator(mode="after")
    def _resolve_type(self) -> BackendConfig:
        if self.type is None:
            if self.model is None:
                raise ValueError("set 'type' or 'model' so the backend can be chosen")
            inferred = infer_backend_type(self.model)
            if inferred is None:
                raise ValueError(f"cannot tell the backend type from model '{self.model}'; set 'type'")
            self.type = inferred
        known = value_rule("backend", "type", self.type)
        if known is not None and known.status == "refused":
            raise ValueError(f"backend '{self.type}' is not supported: {known.why}")
        if self.type in PROGRAM_BACKENDS:
            self._as_api_backend(self.type)
        if self.type not in PROVIDERS:
            raise ValueError(f"unknown backend '{self.type}'{suggest(self.type, PROVIDERS)}")
        if self.type == "scripted" and not self.responses:
            raise ValueError("a scripted backend needs at least one entry in 'responses'")
        if self.type == "chatcompletion" and not self.base_url:
            raise ValueError("backend 'chatcompletion' needs 'base_url' (the server's /v1 address)")
        if self.type == "gemini" and self.api == "responses":
            raise ValueError(
                "gemini has no Responses API: leave 'api' out for Gemini's own API, or set "
                "'api: chat_completions' for its OpenAI-compatible API"
            )
        return self

    @model_validator(mode="after")
    def _web_search_disallowed(self) -> BackendConfig:
        """Claude Code's WebSearch among disallowed_tools takes the provider's own search away."""
        if "WebSearch" in self.disallowed_tools:
            self.enable_web_search = False
        return self

    def _as_api_backend(self, program: str) -> None:
        """An agent program (Claude Code, Codex…) runs as its provider's API backend, with the file tools
        on its cwd (a folder of its own by default) and the command tool, as the program would have, and
        the program's own default model when the config names none."""
        self._program, self.type = program, PROGRAM_BACKENDS[program]
        self.model = self.model or PROGRAM_MODELS.get(program)
        self.cwd = self.cwd or f"{program}_workspace"
        self.enable_mcp_command_line = True

    @property
    def program(self) -> str | None:
        """The MassGen agent program (claude_code, codex…) this backend runs in place of, if any."""
        return self._program

    @property
    def protocol(self) -> str:
        """The API this backend speaks: its type's, except a ``gemini`` backend asked to call Gemini's
        OpenAI-compatible API (``api: chat_completions``, or a ``base_url`` ending in ``/openai``)."""
        if self.type == "gemini" and calls_gemini_openai_api(self.base_url, self.api):
            return "openai"
        return PROVIDERS[self.type or ""].protocol

    @property
    def api_mode(self) -> Literal["responses", "chat_completions"]:
        """The OpenAI API this backend calls (meaningful for protocol 'openai')."""
        if self.api is not None:
            return self.api
        provider = PROVIDERS[self.type or ""]
        its_own_server = self.base_url in (None, provider.base_url)
        return "responses" if provider.responses_api and its_own_server else "chat_completions"
