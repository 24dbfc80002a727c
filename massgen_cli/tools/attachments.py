"""Reading the images and files that go to a model with a question, as every file access reads: a file
is opened without following a link on its way, only if it is a regular file, and never past its limit.

Three sources, in this order: MassGen's ``upload_files`` and the context paths that are images or PDFs
(read at start: an upload that cannot be sent stops the start, naming its YAML path), then the images and
PDFs a question names (each turn). A path in a question is used only inside the folders it may name (the
current folder and the agent's workspace and context paths, never the state folder), as ``Roots.confine``
decides for the file tools: a question cannot make the runner read a file outside them. Whatever is not
sent (outside those folders, too large for the provider, a model that reads text only) is said in one
line, and the turn goes on with the text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from massgen_cli.attachments import (
    MASSGEN_MAX_BYTES,
    MEDIA_SUFFIXES,
    TEXT_SUFFIXES,
    Attachment,
    Kind,
    kind_of,
    limit_for,
    size_text,
    sniff,
)
from massgen_cli.file_kinds import BINARY_SNIFF_BYTES
from massgen_cli.redaction import redact
from massgen_cli.state import known_state_folders
from massgen_cli.tools.base import ToolError
from massgen_cli.tools.file_access import open_regular
from massgen_cli.tools.paths import Root, Roots

OUTSIDE = "the current folder, the agent's workspace and context paths"
MAX_NAMED = 20
"""The most files one question sends (a longer list is cut, and the cut said)."""
_QUOTED = re.compile(r"\"([^\"\n]+)\"|'([^'\n]+)'|`([^`\n]+)`")
_EDGES = "([{<\"'`"
_ENDS = ".,;:!?)]}>\"'`"


@dataclass(frozen=True)
class Attached:
    """What a question sends to one agent, and the lines saying what it does not send and why."""

    attachments: tuple[Attachment, ...] = ()
    notes: tuple[str, ...] = ()


def question_roots(agent_roots: Roots | None, state_folder: Path | None = None) -> Roots:
    """Where a question may name files: the current folder (where relative paths start) and the agent's
    own roots; never the state folder, nor any other the user has used."""
    current = Path.cwd().resolve()
    if agent_roots is not None:
        return Roots(current, (Root.of(current, False), *agent_roots.roots), private=agent_roots.private)
    own = (state_folder.expanduser().resolve(),) if state_folder is not None else ()
    return Roots(current, (Root.of(current, False),), private=(*own, *known_state_folders()))


def named_paths(question: str) -> list[tuple[str, bool]]:
    """The images and PDFs a question names, in order, each once: ``(path, explicit)``, explicit for
    MassGen's ``@path`` form (whose file must exist) rather than a word that ends like a file name. A
    quoted path may hold spaces; a web address is not a path."""
    words = [next(group for group in match.groups() if group) for match in _QUOTED.finditer(question)]
    words += _QUOTED.sub(" ", question).split()
    found: dict[str, bool] = {}
    for word in words:
        explicit = word.lstrip(_EDGES).startswith("@")
        path = word.lstrip(_EDGES).lstrip("@").rstrip(_ENDS).removesuffix(":w").rstrip(_ENDS)
        if "://" not in path and PurePosixPath(path.lower()).suffix in MEDIA_SUFFIXES:
            found[path] = found.get(path, False) or explicit
    return list(found.items())


def read_attachment(path: Path, *, text_ok: bool = False, max_bytes: int = MASSGEN_MAX_BYTES) -> Attachment:
    """The image or PDF at ``path`` (resolved), or with ``text_ok`` a text file; a ``ToolError`` saying why
    not (missing, not a regular file, another kind of file, larger than ``max_bytes``). The kind is what
    the file's first bytes show, whatever its name says."""
    with open_regular(path) as file:
        size = os.fstat(file.fileno()).st_size
        head = file.read(BINARY_SNIFF_BYTES)
        media_type = sniff(head) or _text_type(path, head, text_ok)
        limit = min(max_bytes, limit_for("", kind_of(media_type)))
        if size > limit:
            raise ToolError(f"{path.name} is {size_text(size)}, over the {size_text(limit)} sent here")
        data = head + file.read(limit + 1 - len(head))
    if len(data) > limit:  # it grew while it was read
        raise ToolError(f"{path.name} is over the {size_text(limit)} sent here")
    if media_type == "text/plain":  # secrets by value, as in whatever else a file gives the model
        data = redact(data.decode("utf-8", errors="replace")).encode("utf-8")
    return Attachment(path.name, media_type, data)


def _text_type(path: Path, head: bytes, text_ok: bool) -> str:
    if text_ok and path.suffix.lower() in TEXT_SUFFIXES and b"\0" not in head:
        return "text/plain"
    wanted = "an image (png, jpeg, gif, webp), a PDF or a text file" if text_ok else "an image or a PDF"
    raise ToolError(f"{path.name} is not {wanted} (by its content)")


def over_limit(attachment: Attachment, protocol: str, provider: str) -> str:
    """Why ``attachment`` is too large for a backend of ``protocol`` (named ``provider``), or ""."""
    limit = limit_for(protocol, attachment.kind)
    if attachment.url or attachment.size <= limit:
        return ""
    return (
        f"{attachment.name} is {size_text(attachment.size)}; {provider} takes {_plural(attachment.kind)} up "
        f"to {size_text(limit)}"
    )


def _plural(kind: Kind) -> str:
    return {"image": "images", "pdf": "PDFs", "text": "text files"}[kind]


@dataclass
class AgentMedia:
    """One agent's attachments: the config's (``fixed``, read at start) and those its questions name,
    found inside ``roots``; ``accepts`` is what its backend takes, ``protocol`` whose limits apply."""

    agent_id: str
    provider: str
    protocol: str
    accepts: frozenset[Kind]
    roots: Roots
    fixed: tuple[Attachment, ...] = ()
    refused: bool = False
    """The backend's server refused images and files: it gets the text only from then on."""
    _last: tuple[str, Attached] | None = field(default=None, repr=False)

    def for_question(self, question: str) -> Attached:
        """The attachments of a step on ``question``: the fixed ones, then the files it names (read once
        per question: a restarted attempt sends the same)."""
        if self._last is None or self._last[0] != question:
            self._last = (question, self._named(question))
        named = self._last[1]
        return Attached((*self.fixed, *named.attachments), named.notes)

    def _named(self, question: str) -> Attached:
        sent: list[Attachment] = []
        notes: list[str] = []
        unread: list[str] = []
        seen: set[Path] = set()
        named = named_paths(question)
        if len(named) > MAX_NAMED:
            said = f"the question names {len(named)} files; the first {MAX_NAMED} are sent"
            notes.append(f"{self.agent_id}: {said}")
        for raw, explicit in named[:MAX_NAMED]:
            if not explicit and not self._names_a_file(raw):
                continue  # a word that only looks like a file name
            kind = kind_of(MEDIA_SUFFIXES[PurePosixPath(raw.lower()).suffix])
            if kind not in self.accepts or self.refused:
                unread.append(raw)
                continue
            attachment, problem = self._read(raw, seen)
            if attachment is not None:
                sent.append(attachment)
            elif problem:
                notes.append(f"{self.agent_id}: {problem}; not sent")
        if unread:
            notes.append(self.text_only_note(unread))
        return Attached(tuple(sent), tuple(notes))

    def _read(self, raw: str, seen: set[Path]) -> tuple[Attachment | None, str]:
        """The file a question names, or why it is not sent ("" for a file ``seen`` already under another
        name)."""
        try:
            resolved = self.roots.confine(raw)
        except ToolError:
            return None, f"{raw} is outside the folders a question may name ({OUTSIDE})"
        if resolved in seen:
            return None, ""
        seen.add(resolved)
        try:
            attachment = read_attachment(resolved)
        except ToolError as error:
            return None, str(error)
        problem = over_limit(attachment, self.protocol, self.provider)
        return (None, problem) if problem else (attachment, "")

    def _names_a_file(self, raw: str) -> bool:
        path = Path(raw).expanduser()
        return (path if path.is_absolute() else self.roots.base / path).is_file()

    def text_only_note(self, names: Sequence[str]) -> str:
        """The one line for files this agent's model cannot read."""
        return (
            f"{self.agent_id}: {self.provider} reads text only: {', '.join(names)} not sent to it; it "
            "answers from the text"
        )
