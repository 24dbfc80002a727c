"""The live view's question box: ``POST /runs`` with ``{"model", "question", "session"?}`` starts a run
on one of the server's configs, as a chat request with that one user message would, under the same
door (token, tenant, Host, Origin), the same bounds (body size, characters, text that is text) and the
same limits (turns at once, requests waiting); nobody waits for its answer: the page watches it, the
run log keeps it. ``massgen --web`` serves its one run and takes no question here (403)."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from massgen_cli.serve.bounds import read_body, read_json
from massgen_cli.serve.guard import owner_of, state_dir_of
from massgen_cli.serve.runs import LiveRun, Runs
from massgen_cli.serve.wire import ApiError, bad_request, read_chat

MAX_QUESTION_BODY_BYTES = 8 * 1024 * 1024
"""As much as a chat request's body may hold."""
FIELDS = ("model", "question", "session")


async def ask(request: Request) -> Response:
    """Start the run the page asks for; its id (202), or the refusal a chat request would get."""
    settings = request.app.state.settings
    if not settings.questions:
        why = "this view serves one run (massgen --web); ask more with massgen serve"
        raise ApiError(403, why, kind="permission_error", code="questions_not_taken")
    json_posted(request)
    body = read_json(await read_body(request, MAX_QUESTION_BODY_BYTES))
    asked = read_chat(_as_chat(body), settings.limits)
    served = settings.models.find(asked.model)
    if served is None:
        why = f"this server serves no model {asked.model!r}"
        raise ApiError(404, why, param="model", code="model_not_found")
    run = LiveRun(asked, served, state_dir_of(request), owner=owner_of(request))
    runs: Runs = request.app.state.runs
    runs.start_unattended(run)
    return JSONResponse({"id": run.id, "model": asked.model, "session_id": asked.session_id}, 202)


def _as_chat(body: Any) -> dict[str, Any]:
    """The page's question as the chat request that asks it (checked as one)."""
    if not isinstance(body, dict):
        raise bad_request('send {"model": "massgen", "question": "..."}')
    unknown = sorted(set(body) - set(FIELDS))
    if unknown:
        raise bad_request(f"a question takes {', '.join(FIELDS)}; not {unknown[0]}", unknown[0])
    question = body.get("question")
    if not isinstance(question, str) or not question.strip():
        raise bad_request("the question needs some text", "question", "invalid_question")
    chat: dict[str, Any] = {"model": body.get("model"), "messages": [{"role": "user", "content": question}]}
    session = body.get("session")
    if session not in (None, ""):
        chat["session"] = session
    return chat


def json_posted(request: Request) -> None:
    """A page of another site may send a form or plain text here unasked, never JSON without the
    browser asking this server first (which it does not allow): what changes something must be JSON."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise ApiError(415, "send JSON (content-type: application/json)", code="unsupported_media_type")
