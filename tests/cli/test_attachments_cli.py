"""Images and files through the command line: a question that names an image sends it to a vision model
(here a wire-format Chat Completions server), ``upload_files`` sends its files with every question and
stops the start when one cannot be sent, a model that reads text only answers from the text with one
warning, and no file's bytes reach the logs, the threads, the session or long-term memory."""

from __future__ import annotations

import base64
import json
import zipfile
from pathlib import Path

import pytest

from tests.cli.in_process_cli import massgen
from tests.config.massgen_release import WHEEL
from tests.conftest import first_attempt_folder, state_folder, wait_until, write_config
from tests.media import pdf_bytes, write_png
from tests.servers.fake_providers import FakeProviderServer, openai_error, openai_stream
from tests.servers.fake_responses import responses_stream

VISION = """
agent:
  id: seer
  backend:
    type: chatcompletion
    base_url: "{url}/v1"
    model: gpt-4o
    upload_files:
      - file_path: notes.md
"""


def chunk_of(data: bytes) -> str:
    """A piece of ``data``'s base64 from its middle: found in a file only if the file holds the bytes."""
    encoded = base64.b64encode(data).decode("ascii")
    return encoded[len(encoded) // 2 : len(encoded) // 2 + 48]


def files_holding(text: str, folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and text in p.read_text(errors="replace")]


def test_describe_a_photo_sends_it_to_the_model_and_keeps_only_its_placeholder(tmp_path, monkeypatch):
    photo = write_png(tmp_path / "photo.png", seed=5, side=32)
    monkeypatch.setenv("ALBUM_TOKEN", "tok-4f9c2e7a1b")
    (tmp_path / "notes.md").write_text("The photo was taken in Lisbon. Album key: tok-4f9c2e7a1b")
    fake = FakeProviderServer().start()
    try:
        fake.script(openai_stream("A small square of noise, taken in Lisbon."))
        config = write_config(tmp_path, VISION.replace("{url}", fake.root_url))
        result = massgen("-c", str(config), "Describe ./photo.png")
    finally:
        fake.stop()

    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "A small square of noise, taken in Lisbon."
    [request] = fake.requests
    parts = request.body["messages"][-1]["content"]
    assert parts[0]["type"] == "text" and "Describe ./photo.png" in parts[0]["text"]
    assert parts[1] == {
        "type": "text",
        "text": '<file name="notes.md">\nThe photo was taken in Lisbon. Album key: [REDACTED]\n</file>',
    }
    data_url = parts[2]["image_url"]["url"]
    assert (
        data_url.startswith("data:image/png;base64,") and base64.b64decode(data_url.split(",", 1)[1]) == photo
    )
    placeholder = f"[image: photo.png, {round(len(photo) / 1024) or 1} KB]"
    logged = json.loads((first_attempt_folder() / "requests" / "seer_001.json").read_text())
    assert logged["messages"][-1]["content"].endswith(f"[file: notes.md, 1 KB]\n{placeholder}")
    [session] = (state_folder() / "sessions").iterdir()
    thread = json.loads((session / "threads.json").read_text())["seer"]
    assert thread[0]["message"]["content"] == f"Describe ./photo.png\n[file: notes.md, 1 KB] {placeholder}"
    exchange = json.loads((session / "session.json").read_text())["exchanges"][0]
    assert exchange["question"] == thread[0]["message"]["content"]
    assert files_holding(chunk_of(photo), state_folder()) == []
    assert (
        len(data_url) > 4 * 1024
        and (first_attempt_folder() / "requests" / "seer_001.json").stat().st_size < 4096
    )


def test_a_model_that_reads_text_only_gets_the_text_and_one_warning(tmp_path):
    write_png(tmp_path / "photo.png")
    config = write_config(
        tmp_path, "agent:\n  id: plain\n  backend: {type: scripted, responses: ['I cannot see images.']}\n"
    )
    result = massgen("-c", str(config), "Describe photo.png")

    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "I cannot see images."
    note = "plain: scripted (scripted) reads text only: photo.png not sent to it; it answers from the text"
    assert result.stderr.count(note) == 1
    summary = json.loads((first_attempt_folder() / "summary.json").read_text())
    assert note in summary["warnings"]
    logged = json.loads((first_attempt_folder() / "requests" / "plain_001.json").read_text())
    assert logged["messages"][-1] == {"role": "user", "content": "Describe photo.png"}


def test_an_upload_a_text_only_model_cannot_read_is_said_once_and_stands_in_every_turn(tmp_path):
    write_png(tmp_path / "chart.png")
    config = write_config(
        tmp_path,
        """
        agent:
          id: plain
          backend:
            type: scripted
            responses: ["Up, I am told."]
            upload_files: [{image_path: chart.png}]
        """,
    )
    result = massgen("-c", str(config), stdin="What is the trend?\nAnd next year?\n")

    assert result.exit_code == 0, result.stderr
    note = "plain: scripted (scripted) reads text only: chart.png not sent to it; it answers from the text"
    assert result.stderr.count(note) == 1
    for turn in (1, 2):
        assert note in json.loads((first_attempt_folder(turn) / "summary.json").read_text())["warnings"]
    logged = json.loads((first_attempt_folder(2) / "requests" / "plain_001.json").read_text())
    assert logged["messages"][-1]["content"].endswith("And next year?")


def test_a_server_that_refuses_images_is_asked_again_with_the_text_for_the_rest_of_the_run(tmp_path):
    write_png(tmp_path / "photo.png")
    (tmp_path / "notes.md").write_text("Taken in Porto.")
    fake = FakeProviderServer().start()
    try:
        fake.script(
            openai_error(400, "This model does not support image input."),
            openai_stream("I was sent no picture."),
            openai_stream("Still no picture."),
        )
        config = write_config(tmp_path, VISION.replace("{url}", fake.root_url).replace("gpt-4o", "my-llm"))
        result = massgen("-c", str(config), stdin="Describe photo.png\nAnd now photo.png?\n")
    finally:
        fake.stop()

    assert result.exit_code == 0, result.stderr
    assert result.stdout.split() == ["I", "was", "sent", "no", "picture.", "Still", "no", "picture."]
    refused, again, later = (r.body["messages"][-1]["content"] for r in fake.requests)
    assert refused[-1]["type"] == "image_url"
    assert isinstance(again, str) and again.endswith("[image: photo.png, 1 KB]"), "the text, said in full"
    assert '<file name="notes.md">\nTaken in Porto.\n</file>' in again, "a text file stays"
    assert isinstance(later, str) and "image_url" not in later
    said = "seer: chatcompletion returned HTTP 400: This model does not support image input.; asked again"
    assert said in json.loads((first_attempt_folder() / "summary.json").read_text())["warnings"][0]
    second = json.loads((first_attempt_folder(2) / "summary.json").read_text())["warnings"]
    assert "seer: chatcompletion (my-llm) reads text only: photo.png not sent to it" in " ".join(second)


def test_an_upload_that_cannot_be_sent_stops_the_start_naming_its_yaml_path(tmp_path):
    write_png(tmp_path / "big.png", padding=4 * 1024 * 1024)
    config = write_config(
        tmp_path,
        """
        agents:
          - id: a
            backend:
              type: claude
              model: claude-fake
              api_key: sk-test
              upload_files:
                - image_path: missing.jpg
                - image_path: big.png
                - file_path: https://example.org/paper.pdf
          - id: b
            backend:
              type: chatcompletion
              base_url: http://127.0.0.1:9/v1
              model: gpt-4o
              upload_files:
                - file_path: https://example.org/paper.pdf
                - audio_path: talk.wav
        """,
    )
    run = massgen("-c", str(config), "hello")
    checked = massgen("--validate", str(config))

    assert run.exit_code == 2 and checked.exit_code == 2
    missing = f"agents[0].backend.upload_files[0].image_path: {tmp_path / 'missing.jpg'} does not exist"
    too_large = (
        "agents[0].backend.upload_files[1].image_path: big.png is 4.0 MB; claude takes images up to 3.8 MB"
    )
    assert missing in run.stderr and too_large in run.stderr
    assert "upload_files[2]" not in run.stderr, "claude fetches a PDF's address itself"
    assert missing in checked.stdout + checked.stderr
    chat = "agents[1].backend.upload_files[0].file_path: chatcompletion takes no file addresses through Chat"
    assert chat in checked.stdout + checked.stderr
    assert "upload_files[1].audio_path: audio is not sent to models here" in checked.stdout + checked.stderr
    assert (
        not list((state_folder() / "sessions").glob("*")) if (state_folder() / "sessions").exists() else True
    )


def test_no_bytes_reach_logs_threads_or_memory_while_every_step_carries_the_files(tmp_path, in_process):
    photo = write_png(tmp_path / "photo.png", seed=8, side=24)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "brief.pdf").write_bytes(pdf_bytes(2))
    run = in_process(
        """
        agents:
          - id: a
            backend:
              type: scripted
              scripted_attachments: true
              responses:
                - {tool: new_answer, args: {content: "a grid of coloured squares"}}
                - {tool: vote, args: {agent_id: agent1, reason: "it is right"}}
                - "Final: a grid of coloured squares."
          - id: b
            backend:
              type: scripted
              scripted_attachments: true
              responses:
                - {tool: vote, args: {agent_id: agent1, reason: "agreed"}, delay: 0.3}
        orchestrator:
          context_paths: [{path: docs/brief.pdf}]
        memory:
          enabled: true
          persistent_memory: {enabled: true}
        """
    )
    result = run.app.ask("What does photo.png show?")
    run.app.close()

    assert result.final_answer == "Final: a grid of coloured squares."
    for agent_id in ("a", "b"):
        for request in run.requests(agent_id):
            task = request.messages[-1] if request.purpose != "coordination" else _task(request.messages)
            sent = [part["attachment"] for part in task["content"] if part.get("type") == "attachment"]
            assert [(a.name, a.kind) for a in sent] == [("brief.pdf", "pdf"), ("photo.png", "image")]
            assert sent[1].data == photo
    wait_until(lambda: list(run.app.run_log.directory.rglob("mem0_add_*.json")))
    dumps = list(run.app.run_log.directory.rglob("mem0_add_*.json"))
    recorded = " ".join(path.read_text() for path in dumps)
    assert "[image: photo.png," in recorded and "[pdf: brief.pdf," in recorded
    assert files_holding(chunk_of(photo), state_folder()) == []
    assert files_holding(chunk_of(pdf_bytes(2)), state_folder()) == []


def _task(messages):  # type: ignore[no-untyped-def]
    """The user message of a coordination step (re-asks come after it)."""
    return next(m for m in messages if m["role"] == "user" and isinstance(m["content"], list))


def test_massgens_image_and_file_search_examples_send_what_they_name(tmp_path, monkeypatch):
    """MassGen's own examples, run from a folder laid out like its repository: the image of
    ``single_gpt5nano_image_understanding`` goes as an ``input_image``, the PDF address of
    ``single_gpt5nano_file_search`` as an ``input_file`` the provider fetches."""
    if not WHEEL.is_file():
        pytest.skip(f"MassGen's release wheel is not in {WHEEL.parent}")
    with zipfile.ZipFile(WHEEL) as wheel:
        image_config = wheel.read("massgen/configs/basic/single/single_gpt5nano_image_understanding.yaml")
        search_config = wheel.read("massgen/configs/basic/single/single_gpt5nano_file_search.yaml")
    picture = write_png(tmp_path / "massgen/configs/resources/v0.0.27-example/multimodality.jpg", seed=2)
    (tmp_path / "image.yaml").write_bytes(image_config)
    (tmp_path / "search.yaml").write_bytes(search_config)
    fake = FakeProviderServer().start()
    try:
        fake.script(responses_stream("A diagram of modalities."), responses_stream("The score is 26.6%."))
        monkeypatch.setenv("OPENAI_BASE_URL", f"{fake.root_url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-massgen-examples-0000")
        image = massgen("-c", "image.yaml", "-q", "Please summarize the content in this image.")
        search = massgen("-c", "search.yaml", "-q", "What is humanity's last exam score?")
    finally:
        fake.stop()

    assert (image.exit_code, image.stdout.strip()) == (0, "A diagram of modalities."), image.stderr
    assert (search.exit_code, search.stdout.strip()) == (0, "The score is 26.6%."), search.stderr
    asked = [next(i for i in r.body["input"] if i.get("role") == "user")["content"] for r in fake.requests]
    assert asked[0][1] == {  # named .jpg, sent as what it is
        "type": "input_image",
        "image_url": "data:image/png;base64," + base64.b64encode(picture).decode(),
        "detail": "auto",
    }
    assert asked[1][1] == {
        "type": "input_file",
        "file_url": "https://cdn.openai.com/API/docs/deep_research_blog.pdf",
    }


def test_a_question_cannot_send_a_file_of_the_state_folder(tmp_path, in_process):
    write_png(state_folder() / "shot.png")
    write_png(tmp_path / "shot.png", seed=4)
    run = in_process(
        "agent:\n  id: seer\n  backend: {type: scripted, scripted_attachments: true, responses: ['ok']}\n"
    )
    run.app.ask("Compare state/shot.png with shot.png")

    [request] = run.requests("seer")
    sent = [
        part["attachment"].data for part in request.messages[-1]["content"] if part["type"] == "attachment"
    ]
    assert sent == [(tmp_path / "shot.png").read_bytes()], (
        "the file beside it goes; the state folder's does not"
    )
    summary = json.loads((first_attempt_folder() / "summary.json").read_text())
    assert any(w.startswith("seer: state/shot.png is outside the folders") for w in summary["warnings"])
