"""Which provider features a backend's config asks for that the API it calls cannot give: the provider's
own web search and code execution, OpenAI's reasoning and verbosity. Each is said at load in one warning
naming the provider and the key; the run goes on without it."""

from __future__ import annotations

from massgen_cli.config.backend import BackendConfig

NEEDS_RESPONSES = "it needs the Responses API (api: responses, where the server offers it)"


def feature_warnings(backend: BackendConfig, path: str) -> list[str]:
    """One line per feature ``backend`` asks for that its API does not offer, at YAML ``path``."""
    missing = {key: why for key, why in _missing(backend).items() if _asked(backend, key)}
    provider = backend.type or "this backend"
    return [f"{path}.{key}: {provider} {why}; it is ignored" for key, why in missing.items()]


def _asked(backend: BackendConfig, key: str) -> bool:
    if key == "reasoning.summary":
        return backend.reasoning is not None and backend.reasoning.summary is not None
    if key == "reasoning":
        return backend.reasoning is not None and backend.reasoning.effort is not None
    if key == "text":
        return backend.text is not None and backend.text.verbosity is not None
    if key == "enable_code_interpreter":
        return backend.code_execution
    return bool(getattr(backend, key))


def _missing(backend: BackendConfig) -> dict[str, str]:
    """What the backend's API does not offer, and why."""
    protocol = backend.protocol
    if protocol == "anthropic":
        return {
            "reasoning": "takes extended thinking through extra_body (thinking), not reasoning",
            "text": "has no verbosity setting",
        }
    if protocol != "openai":
        keys = ("reasoning", "text", "enable_web_search", "enable_code_interpreter")
        return dict.fromkeys(keys, "offers no such feature")
    if backend.api_mode == "responses":
        if backend.type == "azure_openai":
            return {"enable_web_search": "offers no web_search tool through Azure's Responses API"}
        return {}
    missing = {
        "reasoning.summary": f"gives no reasoning summary through Chat Completions: {NEEDS_RESPONSES}",
        "enable_web_search": f"offers no built-in web search through Chat Completions: {NEEDS_RESPONSES}",
        "enable_code_interpreter": f"offers no code interpreter through Chat Completions: {NEEDS_RESPONSES}",
    }
    if backend.type == "gemini":
        native = "only through Gemini's own API, which is not called here (its OpenAI-compatible API is)"
        missing["enable_web_search"] = f"offers its search (google_search) {native}"
        missing["enable_code_interpreter"] = f"offers code execution {native}"
    if backend.type not in ("openai", "azure_openai"):
        missing["text"] = "has no verbosity setting through its OpenAI-compatible API"
    return missing
