"""Which provider features a backend's config asks for that the API it calls cannot give: the provider's
own web search, X search and code execution, OpenAI's reasoning and verbosity, OpenRouter's web plugin
options; and tool settings that do less than they seem (a permission mode only agent programs read, tool
names that name nothing here). Each is said at load in one warning naming the key; the run goes on."""

from __future__ import annotations

from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.providers import is_openrouter

NEEDS_RESPONSES = "it needs the Responses API (api: responses, where the server offers it)"
ONLY_XAI = "offers no X search (xAI's x_search tool, type grok)"
GEMINI_NATIVE = (
    "only through Gemini's own API (generateContent), not through the OpenAI-compatible API this backend "
    "calls (leave out base_url and api to call Gemini's own)"
)
PLUGIN_OPTIONS = ("engine", "max_results", "search_prompt", "search_context_size")


def feature_warnings(backend: BackendConfig, path: str) -> list[str]:
    """One line per feature ``backend`` asks for that its API does not offer, at YAML ``path``."""
    missing = {key: why for key, why in _missing(backend).items() if _asked(backend, key)}
    provider = backend.type or "this backend"
    return [
        f"{path}.{_written(backend, key)}: {provider} {why}; it is ignored" for key, why in missing.items()
    ]


def _written(backend: BackendConfig, key: str) -> str:
    """The key as the config wrote it (code execution has two names)."""
    if key == "enable_code_interpreter" and not backend.enable_code_interpreter:
        return "enable_code_execution"
    return key


def _asked(backend: BackendConfig, key: str) -> bool:
    if key == "reasoning.summary":
        return backend.reasoning is not None and backend.reasoning.summary is not None
    if key == "reasoning":
        return backend.reasoning is not None and backend.reasoning.effort is not None
    if key == "text":
        return backend.text is not None and backend.text.verbosity is not None
    if key == "enable_code_interpreter":
        return backend.code_execution
    return getattr(backend, key) not in (None, False)


def _missing(backend: BackendConfig) -> dict[str, str]:
    """What the backend's API does not offer, and why."""
    protocol = backend.protocol
    missing = _plugin_options(backend)
    if backend.type != "grok":
        missing["enable_x_search"] = ONLY_XAI
    if protocol == "anthropic":
        missing["reasoning"] = "takes extended thinking through extra_body (thinking), not reasoning"
        missing["text"] = "has no verbosity setting"
        return missing
    if protocol == "gemini":
        missing["reasoning"] = "takes no reasoning settings (Gemini 2.5 and 3 think, their thoughts shown)"
        missing["text"] = "has no verbosity setting"
        return missing
    if protocol != "openai":
        keys = ("reasoning", "text", "enable_web_search", "enable_code_interpreter")
        return {**missing, **dict.fromkeys(keys, "offers no such feature")}
    if backend.api_mode == "responses":
        if backend.type == "azure_openai":
            missing["enable_web_search"] = "offers no web_search tool through Azure's Responses API"
        if backend.type == "grok":
            missing["text"] = "has no verbosity setting (OpenAI's text.verbosity)"
        return missing
    return {**missing, **_missing_in_chat_completions(backend)}


def _missing_in_chat_completions(backend: BackendConfig) -> dict[str, str]:
    missing = {
        "reasoning.summary": f"gives no reasoning summary through Chat Completions: {NEEDS_RESPONSES}",
        "enable_web_search": f"offers no built-in web search through Chat Completions: {NEEDS_RESPONSES}",
        "enable_code_interpreter": f"offers no code interpreter through Chat Completions: {NEEDS_RESPONSES}",
    }
    if is_openrouter(backend.type, backend.base_url):
        del missing["enable_web_search"]  # OpenRouter's web plugin, on any model
        missing["enable_code_interpreter"] = "offers no code execution of its own"
    if backend.type == "gemini":
        missing["enable_web_search"] = f"offers Google Search grounding (google_search) {GEMINI_NATIVE}"
        missing["enable_code_interpreter"] = f"offers code execution (code_execution) {GEMINI_NATIVE}"
    if backend.type == "grok":
        missing["enable_x_search"] = f"offers X search through its Responses API only: {NEEDS_RESPONSES}"
    if backend.type not in ("openai", "azure_openai"):
        missing["text"] = "has no verbosity setting through its OpenAI-compatible API"
    return missing


def _plugin_options(backend: BackendConfig) -> dict[str, str]:
    """OpenRouter's web plugin options on a backend that does not call OpenRouter's web plugin."""
    if is_openrouter(backend.type, backend.base_url) and backend.enable_web_search:
        return {}
    why = "calls no OpenRouter web plugin, which this key sets (with enable_web_search on type openrouter)"
    return dict.fromkeys(PLUGIN_OPTIONS, why)


def tool_warnings(backend: BackendConfig, path: str) -> list[str]:
    """What the tool settings of ``backend`` leave undone, one line each."""
    warnings = []
    if backend.permission_mode is not None and backend.program is None:
        warnings.append(
            f"{path}.permission_mode: only agent programs (claude_code…) read it, as in MassGen; "
            f"{backend.type} ignores it"
        )
    if unknown := backend.unknown_disallowed():
        warnings.append(f"{path}.disallowed_tools: {', '.join(unknown)}: no such tool here; ignored")
    if backend.exclude_file_operation_mcps and not backend.enable_mcp_command_line:
        warnings.append(
            f"{path}.exclude_file_operation_mcps: the agent is offered only write_file and edit_file and no "
            "command tool (enable_mcp_command_line), so it can read none of its files"
        )
    permissions = backend.permissions
    if permissions is not None and not permissions.enabled and permissions.model_fields_set - {"enabled"}:
        warnings.append(f"{path}.permissions: enabled is false, so its other settings are ignored")
    return warnings
