"""Which backend types exist, what protocol each speaks, and where its key and server are.

Pure data, imported by the config layer; no provider SDK is imported here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlparse

from massgen_cli.attachments import Kind


@dataclass(frozen=True)
class Provider:
    """A backend type: the protocol it speaks, its default server, the variable holding its key (and a
    second one read when it is unset), the variable that moves its server (a proxy in front of it,
    speaking the same API), and whether MassGen calls its server's Responses API (OpenAI's, xAI's) rather
    than Chat Completions."""

    protocol: str  # openai | anthropic | gemini | local | scripted
    base_url: str | None = None
    api_key_env: str | None = None
    needs_key: bool = True
    base_url_env: str | None = None
    responses_api: bool = False
    other_key_env: str | None = None

    @property
    def key_variables(self) -> tuple[str, ...]:
        """The variables its key is read from, in order."""
        return tuple(name for name in (self.api_key_env, self.other_key_env) if name)


_OPENAI_COMPATIBLE_CLOUDS = {
    "openai": ("https://api.openai.com/v1", "OPENAI_API_KEY"),
    "openrouter": ("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "groq": ("https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "together": ("https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "fireworks": ("https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY"),
    "cerebras": ("https://api.cerebras.ai/v1", "CEREBRAS_API_KEY"),
    "nebius": ("https://api.studio.nebius.ai/v1", "NEBIUS_API_KEY"),
    "moonshot": ("https://api.moonshot.ai/v1", "MOONSHOT_API_KEY"),
    "kimi": ("https://api.moonshot.ai/v1", "MOONSHOT_API_KEY"),
    "qwen": ("https://dashscope-intl.aliyuncs.com/compatible-mode/v1", "QWEN_API_KEY"),
    "zai": ("https://api.z.ai/api/paas/v4", "ZAI_API_KEY"),
    "poe": ("https://api.poe.com/v1", "POE_API_KEY"),
    "grok": ("https://api.x.ai/v1", "XAI_API_KEY"),
}

_OPENAI_COMPATIBLE_LOCAL_SERVERS = {
    "lmstudio": "http://localhost:1234/v1",
    "ollama": "http://localhost:11434/v1",
    "vllm": "http://localhost:8000/v1",
    "sglang": "http://localhost:30000/v1",
    "llamacpp": "http://localhost:8080/v1",
}


GEMINI_API_URL = "https://generativelanguage.googleapis.com/"
"""Gemini's own API (the ``google-genai`` SDK adds the version and the model's method)."""
GEMINI_OPENAI_URL = "https://generativelanguage.googleapis.com/v1beta/openai/"
"""Gemini's OpenAI-compatible API (Chat Completions), which a ``gemini`` backend calls only when asked:
its ``base_url`` ends in ``/openai``, or ``api: chat_completions``."""

_RESPONSES_API_CLOUDS = frozenset({"openai", "grok"})
"""Clouds whose own server MassGen calls through the Responses API (their built-in tools live there)."""


def _cloud(name: str, url: str, key_env: str) -> Provider:
    moved_by = key_env.removesuffix("_API_KEY") + "_BASE_URL"  # OPENAI_BASE_URL, XAI_BASE_URL…
    return Provider(
        "openai", url, key_env, base_url_env=moved_by, responses_api=name in _RESPONSES_API_CLOUDS
    )


def _build_table() -> dict[str, Provider]:
    table = {name: _cloud(name, url, env) for name, (url, env) in _OPENAI_COMPATIBLE_CLOUDS.items()}
    table.update(
        {
            name: Provider("openai", url, None, needs_key=False)
            for name, url in _OPENAI_COMPATIBLE_LOCAL_SERVERS.items()
        }
    )
    # Any OpenAI-compatible server: base_url is required, the key is optional.
    table["chatcompletion"] = Provider("openai", None, "OPENAI_API_KEY", needs_key=False)
    table["claude"] = Provider("anthropic", None, "ANTHROPIC_API_KEY", base_url_env="ANTHROPIC_BASE_URL")
    # Gemini's own API (generateContent); GOOGLE_API_KEY is the other variable MassGen and Google's SDK read.
    table["gemini"] = Provider(
        "gemini",
        GEMINI_API_URL,
        "GEMINI_API_KEY",
        base_url_env="GEMINI_BASE_URL",
        other_key_env="GOOGLE_API_KEY",
    )
    table["anthropic"] = table["claude"]
    table["azure_openai"] = Provider("openai", None, "AZURE_OPENAI_API_KEY")
    table["local"] = Provider("local", None, None, needs_key=False)
    table["scripted"] = Provider("scripted", None, None, needs_key=False)
    return table


PROVIDERS: dict[str, Provider] = _build_table()

AZURE_DEFAULT_API_VERSION = "2024-12-01-preview"

_MODEL_PREFIXES: list[tuple[str, str]] = [
    (r"^(gpt-|o\d|chatgpt-|text-davinci)", "openai"),
    (r"^claude-", "claude"),
    (r"^gemini-", "gemini"),
    (r"^grok-", "grok"),
    (r"^glm-", "zai"),
    (r"^(smollm|local)", "local"),
]


def is_openrouter(backend_type: str | None, base_url: str | None) -> bool:
    """Whether a backend calls OpenRouter: its type, or a server address on openrouter.ai (as MassGen
    tells it, for ``chatcompletion`` and others pointed there)."""
    host = urlparse(base_url or "").hostname or ""
    return backend_type == "openrouter" or host == "openrouter.ai" or host.endswith(".openrouter.ai")


OPENAI_API_HOST = "api.openai.com"


def calls_openai_itself(backend_type: str | None, base_url: str | None) -> bool:
    """Whether a backend calls OpenAI's own API, whose schema has the newer fields (``max_completion_tokens``
    rather than ``max_tokens``, which its reasoning models refuse): ``openai`` and ``chatcompletion``
    with no ``base_url`` (OpenAI's address, or the proxy ``OPENAI_BASE_URL`` names) or one on
    api.openai.com, and Azure's OpenAI. Any other server is an OpenAI-compatible one, sent the fields
    such servers know."""
    if backend_type == "azure_openai":
        return True
    if (backend_type or "openai") not in ("openai", "chatcompletion"):
        return False
    return base_url is None or urlparse(base_url).hostname == OPENAI_API_HOST


def calls_gemini_openai_api(base_url: str | None, api: str | None) -> bool:
    """Whether a ``gemini`` backend calls Gemini's OpenAI-compatible API rather than its own: asked for
    with ``api: chat_completions``, or a ``base_url`` whose path ends in ``/openai`` (that API's address,
    or a proxy of it)."""
    path = urlparse(base_url or "").path.rstrip("/")
    return api == "chat_completions" or path.endswith("/openai")


def infer_backend_type(model: str) -> str | None:
    """The backend type a model name implies (``gpt-4o`` → ``openai``), or None if it is not clear."""
    lowered = model.lower()
    for pattern, backend_type in _MODEL_PREFIXES:
        if re.match(pattern, lowered):
            return backend_type
    return None


_TEXT_ONLY_MODELS = re.compile(
    r"(^|/)(gpt-3\.5|gpt-4(-\d{4})?(-32k)?$|gpt-oss|o1-mini|o1-preview|o3-mini|davinci|babbage"
    r"|deepseek-(chat|reasoner|coder|v\d|r\d)|qwq|qwen[\d.]*-(turbo|plus|max|coder)(?!.*vl)"
    r"|(meta-)?llama-?3(\.[13])?-\d+b|llama3(\.[13])?(:|-|$)|mixtral|mistral-(7b|small|medium|large)"
    r"|codestral|kimi-k2|moonshot-v1|glm-4(\.\d)?(?!.*v)|smollm|claude-(2|instant))",
    re.IGNORECASE,
)
"""Models known to take no images or documents: asked about one, they get the text only, with a note."""


def attachment_kinds(backend_type: str | None, model: str | None) -> frozenset[Kind]:
    """What a request to ``model`` through ``backend_type`` may carry: images and PDFs besides text,
    unless the backend or model is known to read text only (the embedded model, the scripted one, the
    models in ``_TEXT_ONLY_MODELS``)."""
    protocol = PROVIDERS[backend_type].protocol if backend_type in PROVIDERS else "openai"
    if protocol in ("local", "scripted") or (model and _TEXT_ONLY_MODELS.search(model)):
        return frozenset({"text"})
    return frozenset({"image", "pdf", "text"})
