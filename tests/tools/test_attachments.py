"""Which files a question sends, read as every file access reads: only inside the current folder and the
agent's folders (never the state folder, never through a link out), only what is an image or a PDF by
its content, within the provider's limits; what is not sent is said in one line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from massgen_cli.tools.attachments import AgentMedia, named_paths, question_roots
from massgen_cli.tools.paths import Root, Roots
from tests.media import pdf_bytes, write_png

EVERY = frozenset({"image", "pdf", "text"})


def media(roots: Roots, *, protocol: str = "openai", accepts: frozenset[str] = EVERY) -> AgentMedia:
    return AgentMedia("agent_a", f"{protocol} (model-x)", protocol, accepts, roots)  # type: ignore[arg-type]


def test_a_question_names_images_and_pdfs_as_people_write_them():
    question = (
        'Compare ./photo.png with @diagrams/flow.jpeg, "my scan.PDF" and (charts/q3.webp). '
        "Ignore notes.txt, https://example.org/x.png and @src/ but read @logo.gif:w, photo.png again."
    )
    assert named_paths(question) == [
        ("my scan.PDF", False),
        ("./photo.png", False),
        ("diagrams/flow.jpeg", True),
        ("charts/q3.webp", False),
        ("logo.gif", True),
        ("photo.png", False),
    ]


def test_a_named_image_in_the_current_folder_is_sent_and_a_word_that_names_no_file_is_not(tmp_path):
    data = write_png(tmp_path / "photo.png", seed=3)
    (tmp_path / "doc.pdf").write_bytes(pdf_bytes(2))
    attached = media(question_roots(None)).for_question(
        "Describe ./photo.png and doc.pdf; see also ghost.png"
    )
    first = attached.attachments[0]
    assert (first.name, first.media_type, first.data) == (
        "photo.png",
        "image/png",
        data,
    )
    assert [a.name for a in attached.attachments] == ["photo.png", "doc.pdf"]
    assert attached.notes == ()


def test_a_question_cannot_reach_a_file_outside_the_folders_it_may_name(tmp_path, monkeypatch):
    work, outside = tmp_path / "work", tmp_path / "outside"
    write_png(outside / "secret.png", seed=9)
    work.mkdir()
    (work / "link.png").symlink_to(outside / "secret.png")
    monkeypatch.chdir(work)
    question = f"Describe ../outside/secret.png, {outside / 'secret.png'}, ./link.png and @/etc/shadow"

    refused = media(question_roots(None)).for_question(question)

    assert refused.attachments == ()
    assert len(refused.notes) == 3
    assert all("is outside the folders a question may name" in note for note in refused.notes)
    assert "/etc/shadow" not in " ".join(refused.notes), "not an image or a PDF: never looked at"
    # the same file is sent once its folder is one the agent may read (a context path)
    agent_roots = Roots(work, (Root.of(outside, False),))
    reachable = media(question_roots(agent_roots)).for_question(question)
    assert [a.name for a in reachable.attachments] == ["secret.png"], "one file, named three ways, sent once"


def test_the_state_folder_is_out_of_reach_even_inside_the_current_folder(tmp_path):
    write_png(tmp_path / "state" / "massgen_logs" / "shot.png")
    write_png(tmp_path / "shot.png")
    roots = question_roots(None, state_folder=tmp_path / "state")
    attached = media(roots).for_question("Describe state/massgen_logs/shot.png and shot.png")
    assert [a.name for a in attached.attachments] == ["shot.png"]
    assert attached.notes == (
        "agent_a: state/massgen_logs/shot.png is outside the folders a question may name (the current "
        "folder, the agent's workspace and context paths); not sent",
    )


def test_a_file_is_sent_for_what_it_is_and_within_the_providers_limit(tmp_path):
    (tmp_path / "fake.png").write_text("not an image at all")
    write_png(tmp_path / "large.png", padding=4 * 1024 * 1024)
    os.mkfifo(tmp_path / "pipe.png")
    question = "Look at fake.png, large.png and @pipe.png"

    to_anthropic = media(question_roots(None), protocol="anthropic").for_question(question)
    to_openai = media(question_roots(None)).for_question(question)

    assert to_anthropic.attachments == ()
    assert to_anthropic.notes == (
        "agent_a: fake.png is not an image or a PDF (by its content); not sent",
        "agent_a: large.png is 4.0 MB; anthropic (model-x) takes images up to 3.8 MB; not sent",
        f"agent_a: {tmp_path / 'pipe.png'} is a named pipe (FIFO); the file tools use regular files only; "
        "not sent",
    )
    assert [a.name for a in to_openai.attachments] == ["large.png"], "OpenAI takes images up to 20 MB"


def test_a_model_that_reads_text_only_gets_one_line_and_no_file(tmp_path):
    write_png(tmp_path / "photo.png")
    (tmp_path / "doc.pdf").write_bytes(pdf_bytes())
    text_only = media(question_roots(None), protocol="local", accepts=frozenset({"text"}))
    attached = text_only.for_question("Describe photo.png and doc.pdf (not ghost.png, which is not there)")
    assert attached.attachments == ()
    assert attached.notes == (
        "agent_a: local (model-x) reads text only: photo.png, doc.pdf not sent to it; it answers from "
        "the text",
    )


def test_a_question_sends_at_most_twenty_files(tmp_path):
    names = [f"p{n}.png" for n in range(23)]
    for number, name in enumerate(names):
        write_png(tmp_path / name, seed=number)
    attached = media(question_roots(None)).for_question("Describe " + " ".join(names))
    assert len(attached.attachments) == 20
    assert attached.notes == ("agent_a: the question names 23 files; the first 20 are sent",)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
