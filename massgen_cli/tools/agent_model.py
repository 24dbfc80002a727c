"""The agent's own model as its tools reach it, for a tool that asks the model something (MassGen's
``understand_image`` has it look at an image). The toolbox is built before the agent's backend, so the
link is bound once the backend exists; a check that builds no backend (``--validate``) leaves it unbound,
and a tool that asks through an unbound link says so."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from massgen_cli.attachments import Attachment, Kind
from massgen_cli.backends.base import TEXT_ONLY, Backend, Completion, Request
from massgen_cli.errors import BackendError
from massgen_cli.messages import Message, with_attachments
from massgen_cli.tools.base import ToolError

Ask = Callable[[Request], Awaitable[Completion]]
"""Sends one request to the agent's backend, unseen on the console, its usage counted as the agent's."""


@dataclass
class AgentModel:
    """The link from an agent's tools to its model; ``protocol`` is its backend's (whose size limits
    apply to what is sent)."""

    protocol: str = "openai"
    ask: Ask | None = None
    provider: str = "the agent's model"
    model: str = ""
    accepts: frozenset[Kind] = TEXT_ONLY

    def bind(self, backend: Backend, ask: Ask) -> None:
        """Link the tools to ``backend``, asked through ``ask``."""
        self.ask, self.model, self.accepts = ask, backend.model, backend.capabilities.attachments
        self.provider = f"{backend.name} ({backend.model})"

    async def look(self, prompt: str, attachments: Sequence[Attachment], system: str = "") -> str:
        """The model's reply to ``prompt`` sent with ``attachments`` as its provider's parts; a
        ``ToolError`` when it cannot read them, fails or answers nothing."""
        if self.ask is None:
            raise ToolError("the agent's model is not reachable from its tools here")
        unread = sorted({attachment.kind for attachment in attachments} - self.accepts)
        if unread:
            kinds = " or ".join("PDFs" if kind == "pdf" else f"{kind}s" for kind in unread)
            raise ToolError(f"{self.provider} reads text only: it cannot look at {kinds}")
        messages: list[Message] = [{"role": "system", "content": system}] if system else []
        messages.append(with_attachments({"role": "user", "content": prompt}, attachments))
        try:
            result = await self.ask(Request(messages))
        except BackendError as error:
            raise ToolError(f"{self.provider} could not answer: {error}") from None
        if not result.text.strip():
            raise ToolError(f"{self.provider} answered with no text")
        return result.text
