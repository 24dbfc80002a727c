"""Attachments as each provider's own content parts: Chat Completions' ``image_url`` and ``file`` parts,
the Responses API's ``input_image`` and ``input_file``, Anthropic's ``image`` and ``document`` blocks
(the bytes base64-encoded, or the web address the provider fetches), Gemini's ``inline_data`` (the bytes)
and ``file_data`` (a web address) parts. A text file is a text part everywhere. A server that refuses
them (a model without vision behind a compatible API) is asked again with the text only."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, cast

from massgen_cli.attachments import Attachment
from massgen_cli.backends.base import Request
from massgen_cli.errors import BackendError
from massgen_cli.messages import Message, attachments_in, inline_text, is_attachment_part


def chat_part(attachment: Attachment) -> dict[str, Any]:
    if attachment.kind == "image":
        return {"type": "image_url", "image_url": {"url": attachment.data_url()}}
    if attachment.kind == "pdf":
        return {"type": "file", "file": {"filename": attachment.name, "file_data": attachment.data_url()}}
    return {"type": "text", "text": attachment.text()}


def responses_part(attachment: Attachment) -> dict[str, Any]:
    if attachment.kind == "image":
        return {"type": "input_image", "image_url": attachment.data_url(), "detail": "auto"}
    if attachment.kind == "pdf" and attachment.url:
        return {"type": "input_file", "file_url": attachment.url}
    if attachment.kind == "pdf":
        return {"type": "input_file", "filename": attachment.name, "file_data": attachment.data_url()}
    return {"type": "input_text", "text": attachment.text()}


def anthropic_block(attachment: Attachment) -> dict[str, Any]:
    if attachment.kind == "text":
        return {"type": "text", "text": attachment.text()}
    source = (
        {"type": "url", "url": attachment.url}
        if attachment.url
        else {"type": "base64", "media_type": attachment.media_type, "data": attachment.base64()}
    )
    if attachment.kind == "image":
        return {"type": "image", "source": source}
    return {"type": "document", "source": source, "title": attachment.name}


def gemini_part(attachment: Attachment) -> dict[str, Any]:
    """Gemini's part: the bytes inline (its SDK encodes them), or the address Gemini fetches."""
    if attachment.kind == "text":
        return {"text": attachment.text()}
    if attachment.url:
        return {"file_data": {"file_uri": attachment.url, "mime_type": attachment.media_type}}
    return {"inline_data": {"mime_type": attachment.media_type, "data": attachment.data}}


def with_chat_parts(message: Message) -> Message:
    """``message`` with its attachment parts as Chat Completions parts (other parts as they are)."""
    content = message.get("content")
    if not isinstance(content, list):
        return message
    parts = [chat_part(part["attachment"]) if is_attachment_part(part) else part for part in content]
    return cast(Message, {**message, "content": parts})


REFUSAL_STATUSES = frozenset({400, 413, 415, 422})
_REFUSAL_WORDS = re.compile(
    r"image|vision|multi-?modal|pdf|document|file|attachment|media|content[ _]?(type|part)", re.IGNORECASE
)


def refuses_attachments(error: BackendError, request: Request) -> bool:
    """Whether ``error`` is a server's refusal of the images or files ``request`` carries (a model
    without vision on a compatible server, a body over the server's size): a request error that names
    them, for a request that has some."""
    carries = any(attachments_in(message.get("content")) for message in request.messages)
    named = _REFUSAL_WORDS.search(str(error)) is not None
    return carries and error.status in REFUSAL_STATUSES and (named or error.status == 413)


def text_only(request: Request) -> Request:
    """``request`` without its images and documents (their placeholders stand in; text files stay)."""
    return replace(request, messages=[inline_text(message) for message in request.messages])
