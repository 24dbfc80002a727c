"""MassGen's multimodal tools named by their file in MassGen's tree (no MassGen installed, no checkout
needed) run as ours through the command line: the agent's own provider, a real OpenAI-compatible server
on 127.0.0.1, is sent the images, the PDF, the text or the video's frames as its own parts, and the
model reads the JSON result MassGen's tools give; what the look spends is the agent's. Paths are confined
as the file tools' are, and a model that reads text only is never sent an image."""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.in_process_cli import massgen
from tests.conftest import state_folder, write_config
from tests.media import pdf_bytes, write_png
from tests.servers.fake_providers import FakeProviderServer, RecordedRequest, openai_stream
from tests.servers.playing_model import FINAL_TEXT, PlayingModel

TOOLS = "massgen/tool/_multimodal_tools"
LOOK_USAGE = (4321, 17)


@pytest.fixture
def server() -> Iterator[FakeProviderServer]:
    """A provider that first replies as a test scripts, then plays along (answers, votes, presents)."""
    started = FakeProviderServer(PlayingModel()).start()
    yield started
    started.stop()


def config(server: FakeProviderServer, tool: str, model: str = "gpt-4o") -> Path:
    return write_config(
        Path.cwd(),
        f"""
        agent:
          id: looker
          backend:
            type: chatcompletion
            model: {model}
            base_url: {server.root_url}/v1
            api_key: test-key-0000
            cwd: workspace
            custom_tools:
              - name: ["{tool}"]
                path: "{TOOLS}/{tool}.py"
                function: ["{tool}"]
        """,
    )


def call(name: str, **arguments: Any) -> Any:
    return openai_stream("", tool_calls=[("call_1", f"custom_tool__{name}", json.dumps(arguments))])


def run(server: FakeProviderServer, tool: str, *replies: Any, model: str = "gpt-4o") -> dict[str, Any]:
    server.script(*replies)
    result = massgen("--config", str(config(server, tool, model)), f"Use {tool}.")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == FINAL_TEXT
    [summary] = [json.loads(path.read_text()) for path in state_folder().rglob("summary.json")]
    return summary


def tool_result(request: RecordedRequest) -> str:
    [message] = [m for m in request.body["messages"] if m["role"] == "tool"]
    return message["content"]


def finished(name: str) -> dict[str, Any]:
    events = [
        json.loads(line) for line in next(state_folder().rglob("events.jsonl")).read_text().splitlines()
    ]
    [done] = [e for e in events if e["type"] == "ToolFinished" and e["name"] == f"custom_tool__{name}"]
    return done


def data_url(kind: str, data: bytes) -> str:
    return f"data:{kind};base64,{base64.b64encode(data).decode()}"


def test_understand_image_shows_the_agent_s_model_the_images_and_counts_the_look(server: FakeProviderServer):
    before = write_png(Path("workspace/before.png"), seed=1)
    after = write_png(Path("workspace/after.png"), seed=2)
    images = {"before": "before.png", "after": "after.png"}
    look = openai_stream("The square turned blue.", usage=LOOK_USAGE)
    summary = run(
        server, "understand_image", call("understand_image", images=images, prompt="What changed?"), look
    )
    sent = server.requests[1].body
    assert "tools" not in sent, "the look offers no tool"
    [message] = sent["messages"]
    assert [part["type"] for part in message["content"]] == ["text", "image_url", "image_url"]
    assert [part["image_url"]["url"] for part in message["content"][1:]] == [
        data_url("image/png", before),
        data_url("image/png", after),
    ]
    assert (
        "- before: before.png" in message["content"][0]["text"]
        and "What changed?" in message["content"][0]["text"]
    )
    read = json.loads(tool_result(server.requests[2]))
    workspace = Path("workspace").resolve()
    assert read == {
        "success": True,
        "operation": "understand_image",
        "images": {"before": str(workspace / "before.png"), "after": str(workspace / "after.png")},
        "prompt": "What changed?",
        "model": "gpt-4o",
        "response": "The square turned blue.",
    }
    assert summary["usage"]["looker"]["input_tokens"] >= LOOK_USAGE[0], "the look is the agent's spending"


def test_understand_file_sends_a_pdf_as_a_file_and_a_text_file_cut_at_max_chars(server: FakeProviderServer):
    document = pdf_bytes(pages=2)
    Path("workspace").mkdir()
    Path("workspace/report.pdf").write_bytes(document)
    Path("workspace/notes.md").write_text("alpha beta gamma delta\n" * 10)
    run(
        server,
        "understand_file",
        call("understand_file", file_path="report.pdf", prompt="Summarise it."),
        openai_stream("Two empty pages."),
        call("understand_file", file_path="notes.md", max_chars=30),
        openai_stream("Greek letters."),
    )
    [pdf_look] = server.requests[1].body["messages"]
    assert pdf_look["content"][1] == {
        "type": "file",
        "file": {"filename": "report.pdf", "file_data": data_url("application/pdf", document)},
    }
    pdf_read = json.loads(tool_result(server.requests[2]))
    assert pdf_read["file_type"] == "pdf" and pdf_read["file_size"] == len(document)
    assert pdf_read["response"] == "Two empty pages."
    [text_look] = server.requests[3].body["messages"]
    text = text_look["content"][1]["text"]
    assert text == '<file name="notes.md">\nalpha beta gamma delta\nalpha b\n</file>'
    text_read = json.loads(server.requests[4].body["messages"][-1]["content"])
    assert (text_read["chars_read"], text_read["truncated"], text_read["file_size"]) == (30, True, 230)


def test_a_path_outside_the_agent_s_folders_is_refused_before_any_look(
    server: FakeProviderServer, tmp_path: Path
):
    write_png(tmp_path.parent / f"{tmp_path.name}-outside.png")
    outside = str(tmp_path.parent / f"{tmp_path.name}-outside.png")
    run(server, "understand_image", call("understand_image", image_path=outside))
    assert all("tools" in request.body for request in server.requests), "no look was sent"
    done = finished("understand_image")
    assert not done["ok"] and "outside the folders this agent may use" in done["summary"]


def test_a_model_that_reads_text_only_is_never_sent_the_image(server: FakeProviderServer):
    write_png(Path("workspace/shot.png"))
    run(
        server,
        "understand_image",
        call("understand_image", image_path="shot.png", prompt=None),
        model="deepseek-chat",
    )
    assert all("tools" in request.body for request in server.requests), "no look was sent"
    done = finished("understand_image")
    assert not done["ok"] and "reads text only: it cannot look at images" in done["summary"]


def test_understand_video_shows_frames_taken_evenly_over_the_video(server: FakeProviderServer):
    cv2 = pytest.importorskip("cv2")
    numpy = pytest.importorskip("numpy")
    Path("workspace").mkdir()
    writer = cv2.VideoWriter("workspace/clip.mp4", cv2.VideoWriter_fourcc(*"mp4v"), 10, (64, 48))
    for number in range(20):  # two seconds: red, then blue
        writer.write(numpy.full((48, 64, 3), (0, 0, 255) if number < 10 else (255, 0, 0), numpy.uint8))
    writer.release()
    run(
        server,
        "understand_video",
        call("understand_video", video_path="clip.mp4", num_frames=4),
        openai_stream("Red, then blue."),
    )
    [message] = server.requests[1].body["messages"]
    frames = [part["image_url"]["url"] for part in message["content"][1:]]
    assert len(frames) == 4 and all(url.startswith("data:image/jpeg;base64,") for url in frames)
    colours = [
        cv2.imdecode(numpy.frombuffer(base64.b64decode(url.split(",")[1]), numpy.uint8), 1) for url in frames
    ]
    assert [int(frame[24, 32].argmax()) for frame in colours] == [2, 2, 0, 0], "red twice, then blue twice"
    assert "4 frames taken evenly over its 2.0 seconds" in message["content"][0]["text"]
    read = json.loads(tool_result(server.requests[2]))
    assert (read["frames_extracted"], read["response"]) == (4, "Red, then blue.")


def test_validate_says_what_understand_video_needs_where_opencv_is_missing(
    server: FakeProviderServer, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setitem(sys.modules, "cv2", None)  # how Python marks a module that cannot be imported
    result = massgen("--validate", str(config(server, "understand_video")))
    assert result.exit_code == 2
    assert "agent.backend.custom_tools[0]: understand_video cannot run here (the tool needs the package" in (
        result.stdout + result.stderr
    )
    assert "pip install opencv-python-headless" in result.stdout + result.stderr
