"""Images and files that go to the models with a question (MassGen's ``upload_files``, files named in the
question, context paths that are files): what one is (its bytes and media type, or a web address the
provider fetches itself), how every record names it (a short placeholder, never its bytes), and how large
each provider's API takes it.

Nothing here reads a file: ``tools/attachments.py`` does, confined as every file access is.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["image", "pdf", "text"]
"""An image (png, jpeg, gif, webp), a PDF document, or a text file (sent as text)."""

IMAGE_SUFFIXES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif"}
IMAGE_SUFFIXES[".webp"] = "image/webp"
DOCUMENT_SUFFIXES = {".pdf": "application/pdf"}
MEDIA_SUFFIXES = {**IMAGE_SUFFIXES, **DOCUMENT_SUFFIXES}
"""What a question may name to send it along: images and PDFs (text files are read with the file tools)."""

TEXT_SUFFIXES = frozenset(
    f".{suffix}"
    for suffix in (
        *("txt", "md", "markdown", "rst", "csv", "tsv", "json", "jsonl", "yaml", "yml", "toml", "xml"),
        *("html", "htm", "css", "js", "ts", "py", "rb", "php", "java", "c", "h", "cpp", "hpp", "cs", "go"),
        *("rs", "sh", "tex", "sql", "log"),
    )
)
"""Text files ``upload_files`` may name (MassGen's File Search takes them): sent as text."""

MASSGEN_MAX_BYTES = 64 * 1024 * 1024
"""MassGen's limit on an uploaded image, audio or video file (``MEDIA_MAX_FILE_SIZE_MB``, 64 MB)."""
TEXT_MAX_BYTES = 1024 * 1024
"""The largest text file sent whole with a question (a larger one is for the file tools, read in parts)."""

PROVIDER_LIMITS: dict[tuple[str, Kind], int] = {
    ("anthropic", "image"): 5 * 1024 * 1024 * 3 // 4,
    ("anthropic", "pdf"): 32 * 1024 * 1024 * 3 // 4,
    ("openai", "image"): 20 * 1024 * 1024,
    ("openai", "pdf"): 32 * 1024 * 1024,
    ("gemini", "pdf"): 50 * 1024 * 1024,
}
"""The providers' documented limits, as the size of the file sent: Anthropic takes an image up to 5 MB
and a request up to 32 MB once base64-encoded (a third larger than the file); OpenAI an image up to
20 MB and PDFs up to 32 MB a request; Gemini a PDF up to 50 MB inline, an image up to its 100 MB
request."""

IMAGE_TOKENS = 1_600
"""About what one image costs in the context window (Anthropic: width × height / 750, at most ~1,600
for an image it does not scale down; OpenAI: 765 for a 1024×1024 image in detail)."""
PDF_PAGE_TOKENS = 2_000
"""About what one PDF page costs: its text and an image of the page (both providers send both)."""
_PAGE = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def size_text(size: int) -> str:
    """A file size as people read it: ``12 KB``, ``3.4 MB``."""
    if size < 1024 * 1024:
        return f"{max(1, round(size / 1024))} KB"
    return f"{size / 1024 / 1024:.1f} MB"


def limit_for(protocol: str, kind: Kind) -> int:
    """The most bytes of one file of ``kind`` a backend speaking ``protocol`` is sent."""
    if kind == "text":
        return TEXT_MAX_BYTES
    return min(PROVIDER_LIMITS.get((protocol, kind), MASSGEN_MAX_BYTES), MASSGEN_MAX_BYTES)


def sniff(head: bytes) -> str | None:
    """The media type the first bytes of a file show (png, jpeg, gif, webp, pdf), or None: a file is sent
    as what it is, whatever its name says."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    return None


def kind_of(media_type: str) -> Kind:
    if media_type.startswith("image/"):
        return "image"
    return "pdf" if media_type == "application/pdf" else "text"


@dataclass(frozen=True, repr=False)
class Attachment:
    """One image or file: its name, media type and bytes, or the web address the provider fetches
    (``url``, for MassGen's http(s) entries). Printed or logged it is its placeholder, never its bytes."""

    name: str
    media_type: str
    data: bytes = field(default=b"", compare=False)
    url: str = ""

    @property
    def kind(self) -> Kind:
        return kind_of(self.media_type)

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def placeholder(self) -> str:
        """What records keep of it: ``[image: photo.png, 12 KB]``, ``[pdf: https://…/report.pdf]``."""
        label = "file" if self.kind == "text" else self.kind
        return f"[{label}: {self.url}]" if self.url else f"[{label}: {self.name}, {size_text(self.size)}]"

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        """The bytes as a ``data:`` URL (OpenAI's image and file parts take one), or the web address."""
        return self.url or f"data:{self.media_type};base64,{self.base64()}"

    def text(self) -> str:
        """A text file's content, framed with its name, as it is sent."""
        body = self.data.decode("utf-8", errors="replace")
        return f'<file name="{self.name}">\n{body}\n</file>'

    def tokens(self) -> int:
        """About what it costs in the context window (for compression's budget)."""
        if self.kind == "image":
            return IMAGE_TOKENS
        if self.kind == "pdf":
            return PDF_PAGE_TOKENS * max(1, len(_PAGE.findall(self.data)))
        return -(-len(self.data) // 4)

    def __repr__(self) -> str:
        return self.placeholder

    __str__ = __repr__


def noted(text: str, placeholders: tuple[str, ...] | list[str]) -> str:
    """``text`` as records keep it with what went along: the placeholders on a line after it."""
    return "\n".join([text, " ".join(placeholders)]) if placeholders else text
