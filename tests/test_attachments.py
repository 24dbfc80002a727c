"""Attachments as data: what a file is by its content, how records name it (never its bytes), what it
costs in the context window, and the typed parts a message carries them in."""

from __future__ import annotations

import base64
import json

from massgen_cli.attachments import Attachment, limit_for, noted, size_text, sniff
from massgen_cli.messages import (
    attachments_in,
    content_text,
    inline_text,
    recordable,
    with_attachments,
)
from massgen_cli.tokens import count_one_message, estimate_one_message
from tests.media import pdf_bytes, png_bytes

PNG = png_bytes(7, padding=12_000)
PHOTO = Attachment("photo.png", "image/png", PNG)
REPORT = Attachment("report.pdf", "application/pdf", pdf_bytes(3))
NOTES = Attachment("notes.md", "text/plain", b"The meeting moved to Thursday.")


def test_a_file_is_what_its_first_bytes_show():
    assert sniff(PNG) == "image/png"
    assert sniff(b"\xff\xd8\xff\xe0rest") == "image/jpeg"
    assert sniff(b"GIF89a...") == "image/gif"
    assert sniff(b"RIFF\x10\x00\x00\x00WEBPVP8 ") == "image/webp"
    assert sniff(pdf_bytes()) == "application/pdf"
    assert sniff(b"just text, named photo.png") is None


def test_records_name_an_attachment_by_its_placeholder_never_its_bytes():
    assert PHOTO.placeholder == f"[image: photo.png, {size_text(len(PNG))}]"
    assert REPORT.placeholder.startswith("[pdf: report.pdf, ")
    assert NOTES.placeholder == "[file: notes.md, 1 KB]"
    assert Attachment("cat.jpg", "image/jpeg", url="https://example.org/cat.jpg").placeholder == (
        "[image: https://example.org/cat.jpg]"
    )
    assert repr(PHOTO) == str(PHOTO) == PHOTO.placeholder  # a stray print or log shows no bytes either
    assert noted("Describe it.", [PHOTO.placeholder]) == f"Describe it.\n{PHOTO.placeholder}"
    assert size_text(12 * 1024) == "12 KB" and size_text(int(3.4 * 1024 * 1024)) == "3.4 MB"


def test_a_message_carries_attachments_as_typed_parts_and_is_recorded_with_placeholders():
    message = with_attachments({"role": "user", "content": "Describe both."}, [PHOTO, NOTES])
    assert message["content"] == [
        {"type": "text", "text": "Describe both."},
        {"type": "attachment", "attachment": PHOTO},
        {"type": "attachment", "attachment": NOTES},
    ]
    assert attachments_in(message["content"]) == [PHOTO, NOTES]
    kept = recordable(message)
    assert kept == {"role": "user", "content": f"Describe both.\n{PHOTO.placeholder}\n{NOTES.placeholder}"}
    assert base64.b64encode(PNG).decode()[40:80] not in json.dumps(kept)
    assert inline_text(message)["content"] == "\n".join(["Describe both.", PHOTO.placeholder, NOTES.text()])
    assert NOTES.text() == '<file name="notes.md">\nThe meeting moved to Thursday.\n</file>'
    assert with_attachments({"role": "user", "content": "plain"}, []) == {"role": "user", "content": "plain"}
    assert content_text("plain") == "plain" and recordable({"role": "user", "content": "x"}) == {
        "role": "user",
        "content": "x",
    }


def test_attachments_count_in_the_context_window_by_estimate():
    plain = {"role": "user", "content": "Describe both."}
    carrying = with_attachments(plain, [PHOTO, REPORT])
    added = PHOTO.tokens() + REPORT.tokens()
    assert REPORT.tokens() == 3 * 2_000, "two thousand tokens a page"
    assert count_one_message(carrying) == count_one_message(plain) + added
    assert estimate_one_message(carrying) == estimate_one_message(plain) + added


def test_limits_are_the_providers_and_never_past_massgens():
    assert limit_for("anthropic", "image") == 3_932_160  # 5 MB once base64-encoded
    assert limit_for("openai", "image") == 20 * 1024 * 1024
    assert limit_for("openai", "pdf") == 32 * 1024 * 1024
    assert limit_for("scripted", "image") == 64 * 1024 * 1024, "MassGen's own limit"
    assert limit_for("anthropic", "text") == 1024 * 1024
