"""The attachments a config gives an agent, read at start: MassGen's ``upload_files`` (an entry that cannot
be sent stops the start, naming its YAML path) and the context paths that are images or PDFs (one that
cannot be sent is said in a warning: the file tools still read it)."""

from __future__ import annotations

import mimetypes
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from massgen_cli.attachments import MEDIA_SUFFIXES, Attachment, Kind
from massgen_cli.backends.base import Backend
from massgen_cli.config.backend import BackendConfig
from massgen_cli.config.orchestrator import OrchestratorConfig
from massgen_cli.config.schema import AgentConfig
from massgen_cli.config.tools import UNSENT_UPLOADS, ContextPath, UploadFile
from massgen_cli.errors import ConfigError
from massgen_cli.tools.attachments import AgentMedia, over_limit, read_attachment
from massgen_cli.tools.base import ToolError
from massgen_cli.tools.file_access import NotText
from massgen_cli.tools.paths import Roots

MISSING_HINT = (
    " (upload files must exist; a relative path starts at the backend's cwd, else the current folder)"
)


@dataclass
class Configured:
    """The attachments of an agent's config that its backend takes, and what is said of the others."""

    attachments: list[Attachment] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    """Names of attachments the backend cannot read (it reads text only)."""


def agent_media(
    agent: AgentConfig, index: int, orchestrator: OrchestratorConfig, backend: Backend, roots: Roots
) -> tuple[AgentMedia, list[str]]:
    """The ``index``-th agent's attachments, talking to ``backend``, with questions naming files inside
    ``roots``; and the warnings of what its config gives that is not sent."""
    where = f"agents[{index}].backend"
    context_paths = [
        *((f"orchestrator.context_paths[{n}].path", e) for n, e in enumerate(orchestrator.context_paths)),
        *((f"{where}.context_paths[{n}].path", e) for n, e in enumerate(agent.backend.context_paths)),
    ]
    accepts = backend.capabilities.attachments
    found = configured_attachments(agent.backend, where, context_paths, accepts)
    provider = f"{backend.name} ({backend.model})"
    media = AgentMedia(
        agent.id or "", provider, agent.backend.protocol, accepts, roots, tuple(found.attachments)
    )
    return media, [*found.warnings, *([media.text_only_note(found.unread)] if found.unread else [])]


def configured_attachments(
    backend: BackendConfig,
    where: str,
    context_paths: Sequence[tuple[str, ContextPath]],
    accepts: frozenset[Kind],
) -> Configured:
    """``backend``'s uploads (at YAML ``where``) and the ``context_paths`` (each with its YAML path) that
    are images or PDFs; an upload that cannot be sent is a ``ConfigError``."""
    found = Configured()
    for number, entry in enumerate(backend.upload_files):
        if entry.key not in UNSENT_UPLOADS:
            _upload(entry, backend, f"{where}.upload_files[{number}].{entry.key}", found)
    for path, context_path in context_paths:
        _context_file(context_path, backend, path, found)
    if found.problems:
        raise ConfigError(found.problems)
    kept = [attachment for attachment in found.attachments if attachment.kind in accepts]
    found.unread = [attachment.name for attachment in found.attachments if attachment.kind not in accepts]
    found.attachments = kept
    return found


def _upload(entry: UploadFile, backend: BackendConfig, path: str, found: Configured) -> None:
    value = entry.value
    if value.startswith(("http://", "https://")):
        problem = _address_problem(entry, backend)
        if problem:
            found.problems.append(f"{path}: {problem}")
            return
        found.attachments.append(_addressed(entry))
        return
    try:
        attachment = read_attachment(_resolved(value, backend), text_ok=entry.key == "file_path")
    except ToolError as error:
        missing = isinstance(error, NotText) and error.kind == "missing"
        found.problems.append(f"{path}: {error}{MISSING_HINT if missing else ''}")
        return
    if entry.key == "image_path" and attachment.kind != "image":
        found.problems.append(f"{path}: {attachment.name} is not an image ; use file_path")
        return
    problem = over_limit(attachment, backend.protocol, backend.type or "")
    if problem:
        found.problems.append(f"{path}: {problem}")
        return
    found.attachments.append(attachment)


def _address_problem(entry: UploadFile, backend: BackendConfig) -> str:
    """Why an http(s) address cannot be sent to ``backend`` (the provider fetches it), or ""."""
    if entry.key == "image_path":
        return ""
    if PurePosixPath(entry.value.split("?")[0]).suffix.lower() != ".pdf":
        return "only a PDF's address can be sent (the provider fetches it); download the file and name it"
    if backend.protocol in ("anthropic", "gemini") or (
        backend.protocol == "openai" and backend.api_mode == "responses"
    ):
        return ""
    return (
        f"{backend.type} takes no file addresses through Chat Completions; download the PDF and name the "
        "file, or use the Responses API (api: responses)"
    )


def _addressed(entry: UploadFile) -> Attachment:
    """An http(s) entry: its name and media type from the address, which the provider fetches."""
    name = PurePosixPath(entry.value.split("?")[0]).name or entry.value
    if entry.key == "file_path":
        return Attachment(name, "application/pdf", url=entry.value)
    guessed = mimetypes.guess_type(name)[0]
    media_type = guessed if guessed and guessed.startswith("image/") else "image/jpeg"
    return Attachment(name, media_type, url=entry.value)


def _resolved(value: str, backend: BackendConfig) -> Path:
    """As MassGen resolves an upload: a relative path against the backend's cwd, else the current folder."""
    path = Path(value).expanduser()
    if not path.is_absolute() and backend.cwd is not None:
        path = Path(backend.cwd).expanduser() / path
    return path.resolve()


def _context_file(entry: ContextPath, backend: BackendConfig, path: str, found: Configured) -> None:
    resolved = Path(entry.path).expanduser().resolve()
    if resolved.suffix.lower() not in MEDIA_SUFFIXES or not resolved.is_file():
        return
    try:
        attachment = read_attachment(resolved)
    except ToolError as error:
        found.warnings.append(f"{path}: {error}; it is not sent with the question (the file tools read it)")
        return
    problem = over_limit(attachment, backend.protocol, backend.type or "")
    if problem:
        found.warnings.append(f"{path}: {problem}; it is not sent with the question (the file tools read it)")
    else:
        found.attachments.append(attachment)
