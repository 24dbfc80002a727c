"""MassGen's multimodal tools, part of the stand-in for MassGen (``massgen_compat.py``): the configs name
them by their file in MassGen's tree (``path: massgen/tool/_multimodal_tools/understand_image.py``), and
those files need MassGen's own backends. Without MassGen installed, these are ours, with MassGen's names,
parameters and JSON results: ``understand_image``, ``understand_file`` and ``understand_video`` ask the
agent's own model (``agent_model.py``), the image, PDF, text or video frames sent as its provider's parts.
Every file they read is confined as the file tools' are (the agent's workspace and context paths, else
the current folder), and read as question attachments are."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from massgen_cli.attachments import DOCUMENT_SUFFIXES, IMAGE_SUFFIXES, Attachment, sniff
from massgen_cli.backends.base import ToolSpec
from massgen_cli.file_kinds import BINARY_SNIFF_BYTES
from massgen_cli.redaction import redact
from massgen_cli.tools.agent_model import AgentModel
from massgen_cli.tools.attachments import over_limit, read_attachment
from massgen_cli.tools.base import Tool, ToolError, argument, schema
from massgen_cli.tools.custom import PREFIX, CustomToolLoadError, massgen_module_name
from massgen_cli.tools.file_access import open_regular, refuse_binary
from massgen_cli.tools.paths import Roots

MULTIMODAL = "massgen.tool._multimodal_tools"
OFFICE_SUFFIXES = (".docx", ".doc", ".xlsx", ".xls", ".pptx", ".ppt")


@dataclass(frozen=True)
class Reach:
    """What an agent's media tools use: the folders they may read, and the agent's model."""

    roots: Roots
    model: AgentModel

    async def image(self, raw: str) -> Attachment:
        """The image at ``raw`` (confined), small enough for the agent's provider."""
        attachment = await self.attachment(raw)
        if attachment.kind != "image":
            raise ToolError(f"{raw} is not an image (PNG, JPEG, GIF or WebP, by its content)")
        return attachment

    async def attachment(self, raw: str) -> Attachment:
        """The image or PDF at ``raw`` (confined), small enough for the agent's provider."""
        attachment = await asyncio.to_thread(read_attachment, self.roots.confine(raw))
        if problem := over_limit(attachment, self.model.protocol, self.model.provider):
            raise ToolError(problem)
        return attachment


Run = Callable[[Reach, dict[str, Any]], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class OwnTool:
    """One of MassGen's tools as ours: what the model is told, its parameters, what it does, and the
    module it needs beyond ours (``needs``: the module, and the package that provides it)."""

    description: str
    properties: dict[str, Any]
    required: tuple[str, ...]
    run: Run
    needs: tuple[str, str] | None = None


def own_tool(path: str, function: str) -> OwnTool | None:
    """Ours for MassGen's ``function`` in the file ``path`` of its tree, or None."""
    module = massgen_module_name(PurePath(path))
    return OWN_TOOLS.get(function) if module == f"{MULTIMODAL}.{function}" else None


def own_massgen_tool(
    own: OwnTool, name: str, description: str | None, preset: dict[str, Any], reach: Reach
) -> Tool:
    """``own`` as the tool ``custom_tool__<name>``; ``preset`` arguments are given without the model
    seeing them, as for every custom tool."""
    if own.needs is not None and importlib.util.find_spec(own.needs[0]) is None:
        module, package = own.needs
        raise CustomToolLoadError(
            f"{name} cannot run here (the tool needs the package that provides '{module}': install it, "
            f"e.g. `pip install {package}`, or all that MassGen's tools need: `pip install "
            "'massgen-cli[massgen-tools]'`)"
        )
    if unknown := sorted(set(preset) - set(own.properties)):
        raise CustomToolLoadError(f"{name} takes no argument {', '.join(map(repr, unknown))} here")
    shown = {key: value for key, value in own.properties.items() if key not in preset}
    required = [key for key in own.required if key in shown]

    async def run(arguments: dict[str, Any]) -> str:
        if unknown := sorted(set(arguments) - set(shown)):
            raise ToolError(f"unknown argument {', '.join(map(repr, unknown))}")
        return json.dumps(await own.run(reach, {**arguments, **preset}), indent=2, ensure_ascii=False)

    return Tool(ToolSpec(PREFIX + name, description or own.description, schema(shown, required)), run)


def optional(arguments: dict[str, Any], name: str, kind: type, default: Any) -> Any:
    """``arguments[name]`` checked against ``kind``, or ``default`` when it is absent or null (as models
    send an optional argument they leave out)."""
    return default if arguments.get(name) is None else argument(arguments, name, kind)


def text_property(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


def result(operation: str, reach: Reach, prompt: str, response: str, **fields: Any) -> dict[str, Any]:
    """A successful call's JSON, as MassGen's tools give it."""
    done = {"success": True, "operation": operation, **fields}
    return {**done, "prompt": prompt, "model": reach.model.model, "response": response}


async def understand_image(reach: Reach, arguments: dict[str, Any]) -> dict[str, Any]:
    """One image (``image_path``) or several together (``images``: name → path), looked at by the agent's
    model with ``prompt``."""
    single = optional(arguments, "image_path", str, "")
    named = optional(arguments, "images", dict, {})
    prompt = optional(arguments, "prompt", str, IMAGE_PROMPT)
    if bool(single) == bool(named):
        raise ToolError("give either 'image_path' (one image) or 'images' (name → path), not both or neither")
    if single:
        image = await reach.image(single)
        response = await reach.model.look(prompt, [image])
        return result(
            "understand_image", reach, prompt, response, image_path=str(reach.roots.confine(single))
        )
    paths = {str(key): str(value) for key, value in named.items()}
    images = [await reach.image(path) for path in paths.values()]
    listed = "\n".join(f"- {key}: {path}" for key, path in paths.items())
    response = await reach.model.look(f"The images, in this order:\n{listed}\n\n{prompt}", images)
    resolved = {key: str(reach.roots.confine(path)) for key, path in paths.items()}
    return result("understand_image", reach, prompt, response, images=resolved)


IMAGE_PROMPT = "Describe this image in detail: what it shows and anything notable in it."
UNDERSTAND_IMAGE = OwnTool(
    "Look at one image, or several together, and answer a question about them (the agent's own model "
    "sees them).",
    {
        "image_path": text_property("The image's path (PNG, JPEG, GIF or WebP), relative to the workspace."),
        "images": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "Several images looked at together, name → path; the prompt may name them.",
        },
        "prompt": text_property("What to find out about the image(s)."),
    },
    (),
    understand_image,
)


async def understand_file(reach: Reach, arguments: dict[str, Any]) -> dict[str, Any]:
    """A text file (its first ``max_chars`` characters) or a PDF, read by the agent's model with
    ``prompt``."""
    raw = argument(arguments, "file_path", str)
    prompt = optional(arguments, "prompt", str, FILE_PROMPT)
    max_chars = optional(arguments, "max_chars", int, 50_000)
    if max_chars < 1:
        raise ToolError("'max_chars' must be at least 1")
    path = reach.roots.confine(raw)
    if path.suffix.lower() in OFFICE_SUFFIXES:
        raise ToolError(f"{path.name}: Office documents are not read here; save it as PDF or text")
    head = await asyncio.to_thread(_head, path)
    kind = sniff(head)
    if kind in IMAGE_SUFFIXES.values():
        raise ToolError(f"{path.name} is an image: use understand_image")
    fields: dict[str, Any] = {"file_path": str(path), "file_name": path.name}
    if kind in DOCUMENT_SUFFIXES.values():
        attachment = await reach.attachment(raw)
        fields |= {"file_type": "pdf", "file_size": attachment.size}
    else:
        text, size, truncated = await asyncio.to_thread(_text, path, max_chars)
        attachment = Attachment(path.name, "text/plain", text.encode("utf-8"))
        fields |= {"file_type": "text", "file_size": size, "chars_read": len(text), "truncated": truncated}
    response = await reach.model.look(prompt, [attachment])
    return result("understand_file", reach, prompt, response, **fields)


def _head(path: Path) -> bytes:
    with open_regular(path) as file:
        return file.read(BINARY_SNIFF_BYTES)


def _text(path: Path, max_chars: int) -> tuple[str, int, bool]:
    """The first ``max_chars`` characters of a text file (cleared of secrets), its size, and whether it
    holds more."""
    with open_regular(path) as file:
        size = os.fstat(file.fileno()).st_size
        refuse_binary(file, path)
        data = file.read(max_chars * 4 + 4)  # at most four bytes a character in UTF-8
    text = data.decode("utf-8", errors="replace")
    truncated = len(text) > max_chars or len(data) < size
    return redact(text[:max_chars]), size, truncated


FILE_PROMPT = "Read this file and explain what it holds, what it is for and how it is organised."
UNDERSTAND_FILE = OwnTool(
    "Have the agent's own model read a text file or a PDF and answer a question about it.",
    {
        "file_path": text_property("The file's path (a text file or a PDF), relative to the workspace."),
        "prompt": text_property("What to find out about the file."),
        "max_chars": {"type": "integer", "description": "The most characters of a text file sent (50000)."},
    },
    ("file_path",),
    understand_file,
)


async def understand_video(reach: Reach, arguments: dict[str, Any]) -> dict[str, Any]:
    """``num_frames`` frames taken evenly over a video, looked at together by the agent's model."""
    raw = argument(arguments, "video_path", str)
    prompt = optional(arguments, "prompt", str, VIDEO_PROMPT)
    count = optional(arguments, "num_frames", int, 8)
    if not 1 <= count <= MAX_FRAMES:
        raise ToolError(f"'num_frames' must be 1 to {MAX_FRAMES}")
    path = reach.roots.confine(raw)
    frames, seconds = await asyncio.to_thread(_frames, path, count)
    shown = (
        f"(The video {path.name} as {len(frames)} frames taken evenly over its {seconds:.1f} seconds, in "
        "order; its sound is not included.)"
    )
    response = await reach.model.look(f"{prompt}\n\n{shown}", frames)
    fields = {"video_path": str(path), "backend": reach.model.provider, "frames_extracted": len(frames)}
    return result("understand_video", reach, prompt, response, **fields, frame_extraction_performed=True)


def _frames(path: Path, count: int) -> tuple[list[Attachment], float]:
    """Up to ``count`` frames spread evenly over the video at ``path``, as JPEG images no larger than
    a provider's vision models read whole, and its length in seconds."""
    import cv2

    if not path.is_file():  # never a device or a pipe, which the decoder would wait on
        raise ToolError(f"{path} is not a regular file")
    capture = cv2.VideoCapture(str(path))
    try:
        total = int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) if capture.isOpened() else 0
        frames = [frame for number in _spread(total, count) if (frame := _frame(cv2, capture, number, path))]
        rate = capture.get(cv2.CAP_PROP_FPS)
    finally:
        capture.release()
    if not frames:
        raise ToolError(f"{path.name} is not a video that can be read here (no frame could be decoded)")
    return frames, total / rate if rate else 0.0


def _spread(total: int, count: int) -> list[int]:
    """``count`` frame numbers of ``total``, each in the middle of its equal share of the video."""
    count = min(count, total)
    return sorted({int((share + 0.5) * total / count) for share in range(count)})


def _frame(cv2: Any, capture: Any, number: int, path: Path) -> Attachment | None:
    capture.set(cv2.CAP_PROP_POS_FRAMES, number)
    read, frame = capture.read()
    if not read:
        return None
    height, width = frame.shape[:2]
    scale = FRAME_SHORT_SIDE / min(height, width)
    if scale < 1:
        frame = cv2.resize(frame, (round(width * scale), round(height * scale)), interpolation=cv2.INTER_AREA)
    encoded, jpeg = cv2.imencode(".jpg", frame)
    return Attachment(f"{path.stem}-frame-{number}.jpg", "image/jpeg", jpeg.tobytes()) if encoded else None


MAX_FRAMES = 30
FRAME_SHORT_SIDE = 768
"""OpenAI's vision models scale an image's short side to 768 pixels; larger frames only cost bytes."""
VIDEO_PROMPT = "Describe what happens in this video, scene by scene, and anything notable in it."
UNDERSTAND_VIDEO = OwnTool(
    "Look at a video (frames taken evenly over it, without its sound) and answer a question about it "
    "(the agent's own model sees them).",
    {
        "video_path": text_property(
            "The video's path (MP4, MOV, AVI, MKV, WebM…), relative to the workspace."
        ),
        "prompt": text_property("What to find out about the video."),
        "num_frames": {
            "type": "integer",
            "description": f"How many frames to look at (8; at most {MAX_FRAMES}).",
        },
    },
    ("video_path",),
    understand_video,
    needs=("cv2", "opencv-python-headless"),
)

OWN_TOOLS = {
    "understand_image": UNDERSTAND_IMAGE,
    "understand_file": UNDERSTAND_FILE,
    "understand_video": UNDERSTAND_VIDEO,
}
"""MassGen's multimodal tools that are ours, by function (each in the file of its name)."""
