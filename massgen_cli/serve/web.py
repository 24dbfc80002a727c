"""The live web view, served beside the API: ``/`` is the page (plain HTML, its script and style shipped
in the package, the run report's look); ``/runs`` lists the running turns, what is kept of the runs this
server finished and the state folder's past runs; ``POST /runs`` asks a question (``web_ask``);
``/runs/{id}/events`` streams a running turn's events by SSE (each in its ``events.jsonl`` form, secrets
redacted); ``/runs/{id}/steer`` sends its agents a message for their next step and ``/runs/{id}/stop``
cancels it; ``/runs/past/{name}`` is a past run's report (with a way back to the view).

The token (when the server has one) is checked by ``guard.BearerCheck``: the page is opened once as
``/?token=TOKEN``, which keeps it in an HTTP-only, same-site strict cookie (and leaves the address
without it); ``guard.HostCheck`` refuses other hosts and origins. With tenants, each sees, steers and
stops only its own runs, asks only as itself, and reads only its own past runs."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from massgen_cli.events_json import event_to_dict
from massgen_cli.inbox import MAX_MESSAGE_CHARS, MAX_MESSAGES, InboxFull
from massgen_cli.redaction import redact
from massgen_cli.runlogs.reader import Run, all_runs, run_folder
from massgen_cli.runlogs.report import report_html
from massgen_cli.serve.bounds import read_body, read_json
from massgen_cli.serve.finished import FinishedRun, finished_run
from massgen_cli.serve.guard import cookie_name, is_token, owner_of, state_dir_of
from massgen_cli.serve.runs import Ended, Item, LiveRun, Opened, Runs, Steered
from massgen_cli.serve.web_ask import ask, json_posted
from massgen_cli.serve.web_replay import told_again
from massgen_cli.serve.wire import ApiError, bad_request
from massgen_cli.text import one_line

KEEPALIVE_S = 15.0
MAX_STEER_BYTES = 64 * 1024
"""A steering request's body: room for a message of ``MAX_MESSAGE_CHARS`` characters, each escaped."""
PAST_RUNS_LISTED = 50
ASSETS = {"page.js": "text/javascript", "page.css": "text/css"}


def web_routes() -> list[Route]:
    return [
        Route("/", page),
        Route("/web/{asset}", asset),
        Route("/runs", runs_index, methods=["GET"]),
        Route("/runs", ask, methods=["POST"]),
        Route("/runs/past/{name}", past_report),
        Route("/runs/{run_id}/events", run_events),
        Route("/runs/{run_id}/steer", steer, methods=["POST"]),
        Route("/runs/{run_id}/stop", stop, methods=["POST"]),
    ]


async def page(request: Request) -> Response:
    """The page; opened with ``?token=`` (when the server has one), the token goes to a cookie and the
    address loses it."""
    settings = request.app.state.settings
    given = request.query_params.get("token", "")
    if is_token(given, settings.token, settings.tenants):
        redirect = RedirectResponse("/", 303)
        redirect.set_cookie(cookie_name(request.scope), given, httponly=True, samesite="strict")
        return redirect
    html = _asset_text("page.html").replace("/*REPORT_CSS*/", _report_css())
    return HTMLResponse(html, headers={"cache-control": "no-store"})


async def asset(request: Request) -> Response:
    name = request.path_params["asset"]
    if name not in ASSETS:
        raise ApiError(404, f"no such file: /web/{name}", code="not_found")
    return Response(_asset_text(name), media_type=ASSETS[name])


def _asset_text(name: str) -> str:
    return resources.files("massgen_cli.serve").joinpath("web", name).read_text(encoding="utf-8")


def _report_css() -> str:
    return resources.files("massgen_cli.runlogs").joinpath("report.css").read_text(encoding="utf-8")


async def runs_index(request: Request) -> Response:
    """The running turns, the runs this server finished and the state folder's past runs (each newest
    first); whether the page may ask (``ask``: the models it may ask, or null)."""
    runs: Runs = request.app.state.runs
    owner = owner_of(request)
    own = sorted((run for run in runs.live.values() if run.owner == owner), key=lambda run: run.started)
    live = [_live(run) for run in reversed(own) if run.ended is None]
    closing = [finished_run(run, run.ended) for run in reversed(own) if run.ended is not None]
    kept = [run for run in runs.finished if run.owner == owner][:PAST_RUNS_LISTED]
    finished = [run.fields() for run in [*closing, *kept][:PAST_RUNS_LISTED]]
    past = await asyncio.to_thread(_past_runs, state_dir_of(request))
    running = {run["session_id"] for run in live}
    past = [run for run in past if run["session_id"] not in running]  # a running turn's log is shown live
    models = request.app.state.settings.models.ids
    asking = {"models": models} if request.app.state.settings.questions else None
    return JSONResponse(redact({"live": live, "finished": finished, "past": past, "ask": asking}))


def _live(run: LiveRun) -> dict[str, Any]:
    opened = next((item for item in run.said if isinstance(item, Opened)), None)
    return {
        "id": run.id,
        "model": run.ask.model,
        "question": one_line(run.ask.question, 300),
        "session_id": opened.session_id if opened else run.ask.session_id,
        "started": run.started,
        "agents": run.served.loaded.config.agent_ids,
    }


def _past_runs(state_dir: Any) -> list[dict[str, Any]]:
    listed = sorted(all_runs(state_dir), key=lambda run: run.name, reverse=True)[:PAST_RUNS_LISTED]
    return [_past(run) for run in listed]


def _past(run: Run) -> dict[str, Any]:
    attempts = run.attempts
    last = attempts[-1] if attempts else None
    started = run.started
    return {
        "name": run.name,
        "session_id": run.session_id,
        "started": started.isoformat(sep=" ", timespec="seconds") if started else None,
        "turns": len(run.turns),
        "question": one_line(last.question or "", 200) if last else "",
        "status": last.status if last else "empty",
    }


async def past_report(request: Request) -> Response:
    """A past run's report, as ``massgen logs report`` makes it."""
    name = request.path_params["name"]
    folder = run_folder(state_dir_of(request), name)
    if folder is None:
        raise ApiError(404, f"no run is named {name!r}", code="not_found")
    back = ("/", "← the live view")
    html = await asyncio.to_thread(lambda: report_html([Run(folder)], name, back=back))
    return HTMLResponse(redact(html))


def _running(request: Request) -> LiveRun:
    runs: Runs = request.app.state.runs
    run = runs.live.get(request.path_params["run_id"])
    if run is None or run.owner != owner_of(request):  # another tenant's run is none of this one's
        raise ApiError(404, "that run is not running (it ended, or never was)", code="not_found")
    return run


async def run_events(request: Request) -> Response:
    """The run's events so far, then as they happen, as server-sent events, until it ends; a run this
    server finished, told again from its log."""
    finished = _finished(request)
    if finished is not None:
        said = await asyncio.to_thread(told_again, state_dir_of(request), finished)
        stream: AsyncIterator[str] = _told(said)
    else:
        stream = _event_stream(_running(request))
    return StreamingResponse(stream, media_type="text/event-stream", headers={"cache-control": "no-store"})


def _finished(request: Request) -> FinishedRun | None:
    runs: Runs = request.app.state.runs
    wanted, owner = request.path_params["run_id"], owner_of(request)
    return next((run for run in runs.finished if run.id == wanted and run.owner == owner), None)


async def _told(said: list[dict[str, Any]]) -> AsyncIterator[str]:
    for item in said:
        yield f"data: {json.dumps(redact(item), ensure_ascii=False, default=str)}\n\n"


async def _event_stream(run: LiveRun) -> AsyncIterator[str]:
    queue = run.subscribe(replay=True)
    try:
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), KEEPALIVE_S)
            except TimeoutError:
                yield ": still running\n\n"
                continue
            said = {**item_dict(item), "at": round(run.said_at.get(id(item), time.time()) - run.started, 3)}
            yield f"data: {json.dumps(redact(said), ensure_ascii=False, default=str)}\n\n"
            if isinstance(item, Ended):
                return
    finally:
        run.unsubscribe(queue)


def item_dict(item: Item) -> dict[str, Any]:
    """An item of a run as the page reads it: a run event in its log form, or the run's own news."""
    if isinstance(item, Opened):
        return {"type": "Opened", "session_id": item.session_id}
    if isinstance(item, Steered):
        return {"type": "Steered", "text": item.text}
    if isinstance(item, Ended):
        status = "cancelled" if item.cancelled else "failed" if item.error is not None else "ended"
        error = one_line(str(item.error), 400) if item.error is not None else ""
        return {"type": "Ended", "status": status, "error": error}
    return event_to_dict(item)


async def steer(request: Request) -> Response:
    """``{"message": TEXT}``: the agents read it at their next step; a message over
    ``MAX_MESSAGE_CHARS`` characters is a 413, one past the run's ``MAX_MESSAGES`` a 429."""
    json_posted(request)
    run = _running(request)
    body = read_json(await read_body(request, MAX_STEER_BYTES))
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str):
        raise bad_request('send {"message": "some text"}', "message", "invalid_message")
    if len(message.strip()) > MAX_MESSAGE_CHARS:
        why = f"a steering message holds at most {MAX_MESSAGE_CHARS:,} characters"
        raise ApiError(413, why, param="message", code="message_too_long")
    try:
        text = run.steer(message)
    except InboxFull:
        why = f"this run took {MAX_MESSAGES} steering messages already"
        raise ApiError(429, why, kind="rate_limit_error", code="too_many_messages") from None
    except ValueError:
        raise bad_request('send {"message": "some text"}', "message", "invalid_message") from None
    return JSONResponse({"sent": redact(text)})


async def stop(request: Request) -> Response:
    """Cancel the run, as a client that disconnects does."""
    json_posted(request)
    _running(request).cancel()
    return JSONResponse({"stopping": True})
