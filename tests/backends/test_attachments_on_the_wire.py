"""Images and files reach each provider as its own content parts, through the real SDKs and real HTTP to
the wire-format servers on 127.0.0.1: Chat Completions' ``image_url`` and ``file``, the Responses API's
``input_image`` and ``input_file``, Anthropic's ``image`` and ``document`` blocks; the bytes the server
receives are the file's."""

from __future__ import annotations

import base64

from massgen_cli.attachments import Attachment
from massgen_cli.backends.base import Request, complete
from massgen_cli.backends.registry import create_backend
from massgen_cli.config.backend import BackendConfig
from massgen_cli.messages import with_attachments
from tests.media import pdf_bytes, png_bytes
from tests.servers.fake_providers import FakeProviderServer, anthropic_stream, openai_stream
from tests.servers.fake_responses import responses_stream

PNG, PDF = png_bytes(11), pdf_bytes(2)
PHOTO = Attachment("photo.png", "image/png", PNG)
REPORT = Attachment("report.pdf", "application/pdf", PDF)
NOTES = Attachment("notes.md", "text/plain", b"Launch on March 3.")
ASKED = with_attachments({"role": "user", "content": "What do these show?"}, [PHOTO, REPORT, NOTES])
REQUEST = Request([{"role": "system", "content": "Be brief."}, ASKED])
NOTES_TEXT = '<file name="notes.md">\nLaunch on March 3.\n</file>'


def encoded(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


async def test_chat_completions_gets_an_image_url_part_a_file_part_and_text(fake_server, make_openai):
    fake_server.script(openai_stream("A square and a two-page report."))
    backend = make_openai(model="gpt-4o")
    assert backend.capabilities.attachments == {"image", "pdf", "text"}

    result = await complete(backend, REQUEST)

    assert result.text == "A square and a two-page report."
    system, user = fake_server.requests[0].body["messages"]
    assert system == {"role": "system", "content": "Be brief."}
    assert user["content"] == [
        {"type": "text", "text": "What do these show?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{encoded(PNG)}"}},
        {
            "type": "file",
            "file": {"filename": "report.pdf", "file_data": f"data:application/pdf;base64,{encoded(PDF)}"},
        },
        {"type": "text", "text": NOTES_TEXT},
    ]


async def test_the_responses_api_gets_input_image_input_file_and_input_text():
    fake = FakeProviderServer().start()
    try:
        fake.script(responses_stream("A square and a report."))
        config = BackendConfig(
            type="openai",
            model="gpt-5",
            api_key="sk-test-0000",
            base_url=f"{fake.root_url}/v1",
            api="responses",
        )
        backend = create_backend(config)
        try:
            result = await complete(backend, REQUEST)
        finally:
            await backend.aclose()
    finally:
        fake.stop()
    assert result.text == "A square and a report."
    user = next(item for item in fake.requests[0].body["input"] if item.get("role") == "user")
    assert user["content"] == [
        {"type": "input_text", "text": "What do these show?"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{encoded(PNG)}", "detail": "auto"},
        {
            "type": "input_file",
            "filename": "report.pdf",
            "file_data": f"data:application/pdf;base64,{encoded(PDF)}",
        },
        {"type": "input_text", "text": NOTES_TEXT},
    ]


async def test_anthropic_gets_image_and_document_blocks_with_base64_sources(fake_server, make_anthropic):
    fake_server.script(anthropic_stream("A square and a report."))
    result = await complete(make_anthropic(), REQUEST)

    assert result.text == "A square and a report."
    body = fake_server.requests[0].body
    assert body["system"] == "Be brief."
    [user] = body["messages"]
    assert user["content"] == [
        {"type": "text", "text": "What do these show?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": encoded(PNG)}},
        {
            "type": "document",
            "source": {"type": "base64", "media_type": "application/pdf", "data": encoded(PDF)},
            "title": "report.pdf",
        },
        {"type": "text", "text": NOTES_TEXT},
    ]
    assert base64.b64decode(user["content"][1]["source"]["data"]) == PNG


async def test_web_addresses_go_as_addresses_for_the_provider_to_fetch(
    fake_server, make_anthropic, make_openai
):
    picture = Attachment("cat.jpg", "image/jpeg", url="https://example.org/cat.jpg")
    paper = Attachment("paper.pdf", "application/pdf", url="https://example.org/paper.pdf")
    asked = Request([with_attachments({"role": "user", "content": "Compare."}, [picture, paper])])
    fake_server.script(anthropic_stream("ok"), openai_stream("ok"))

    await complete(make_anthropic(), asked)
    await complete(
        make_openai(model="gpt-4o"),
        Request([with_attachments({"role": "user", "content": "See."}, [picture])]),
    )

    blocks = fake_server.requests[0].body["messages"][0]["content"]
    assert blocks[1] == {"type": "image", "source": {"type": "url", "url": "https://example.org/cat.jpg"}}
    assert blocks[2]["source"] == {"type": "url", "url": "https://example.org/paper.pdf"}
    parts = fake_server.requests[1].body["messages"][0]["content"]
    assert parts[1] == {"type": "image_url", "image_url": {"url": "https://example.org/cat.jpg"}}


async def test_backends_known_to_read_text_only_say_so_in_their_capabilities():
    async def kinds(**settings: object) -> frozenset[str]:
        backend = create_backend(BackendConfig.model_validate({"api_key": "sk-x", **settings}))
        await backend.aclose()
        return backend.capabilities.attachments

    assert await kinds(type="openai", model="gpt-4o") == {"image", "pdf", "text"}
    assert await kinds(type="claude", model="claude-sonnet-4-5") == {"image", "pdf", "text"}
    assert await kinds(type="openai", model="gpt-3.5-turbo") == {"text"}
    assert await kinds(type="groq", model="llama-3.3-70b-versatile") == {"text"}
    assert await kinds(type="local") == {"text"}
    assert await kinds(type="scripted", responses=["hi"]) == {"text"}
    assert await kinds(type="scripted", responses=["hi"], scripted_attachments=True) == {
        "image",
        "pdf",
        "text",
    }
