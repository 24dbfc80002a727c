"""The scripted backend's ``responses``: one entry per call (text, tool calls, a delay, an injected
fault). Models of their own, built only when a config has a scripted agent."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, NonNegativeFloat

from massgen_cli.config.base import Section


class ScriptedCall(Section):
    """One more tool call in a scripted reply."""

    tool: str
    """Tool to call, sent only if the request offers it."""
    args: dict[str, Any] = Field(default_factory=dict)
    """Arguments of the tool call."""


class ScriptEntry(Section):
    """One scripted response: text, tool calls, a delay, or an injected fault."""

    text: str | None = None
    """Text streamed as the reply (before any tool call)."""
    tool: str | None = None
    """Tool to call (new_answer, vote…), sent only if the request offers it."""
    args: dict[str, Any] = Field(default_factory=dict)
    """Arguments of the tool call."""
    calls: list[ScriptedCall] = Field(default_factory=list)
    """More tool calls in the same reply, after 'tool' (run together)."""
    delay: NonNegativeFloat = 0.0
    """Seconds to wait after the text, before the tool call or the end."""
    error: Literal[429, 500, "timeout", "context_length"] | None = None
    """Fault to inject instead of a reply (after delay)."""
    reasoning: str | None = None
    """Reasoning (thinking) text streamed before the reply."""
    echo: str | None = None
    """A regular expression: its first match in the request (newest message first) replaces '{echo}' in text
    (or is the text), to show what the model saw.
    """
