"""`massgen serve` on the app served in the test's process: the limits (turns at once, the requests that
may wait, the next getting 429; one turn at a time per session), and a hang-up that reaches the model."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
import pytest

from tests.cli.test_batch import paced_server
from tests.conftest import wait_until
from tests.serve.serving import (
    SLOW_AGENT,
    ServedInThread,
    echo_agent,
    gated_agent,
    session_events,
    session_summary,
    write_configs,
)


def state() -> Path:
    return Path(os.environ["MASSGEN_HOME"])


def waiting(server: ServedInThread) -> int:
    health = httpx.get(server.url.removesuffix("/v1") + "/health", timeout=10).json()
    return int(health["turns"]["waiting"])


def ask(client: openai.OpenAI, model: str, question: str, session: str):  # type: ignore[no-untyped-def]
    messages = [{"role": "user", "content": question}]
    return client.chat.completions.create(model=model, messages=messages, extra_body={"session": session})


def test_past_the_limit_a_request_waits_and_past_the_line_it_gets_429(tmp_path: Path):
    configs = write_configs(tmp_path, {"slow": SLOW_AGENT, "echo": echo_agent()})
    server = ServedInThread(state(), configs, max_concurrent=1, max_waiting=1)
    client = openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)
    try:
        stream = client.chat.completions.create(
            model="massgen/slow", messages=[{"role": "user", "content": "Slowly."}], stream=True,
            extra_body={"session": "limit-a"},
        )  # fmt: skip
        next(chunk for chunk in stream if chunk.choices and chunk.choices[0].delta.content)
        with ThreadPoolExecutor(1) as pool:
            waiter = pool.submit(ask, client, "massgen/echo", "codeword-waiting", "limit-b")
            wait_until(lambda: waiting(server) == 1)
            try:
                ask(client, "massgen/echo", "codeword-refused", "limit-c")
                raise AssertionError("a request past the waiting line was taken")
            except openai.RateLimitError as busy:
                assert busy.body["type"] == "rate_limit_error" and busy.body["code"] == "server_busy"  # type: ignore[index]
            stream.close()  # the running turn is cancelled: the waiting one takes its place
            assert waiter.result().choices[0].message.content == "You said codeword-waiting."
        ended = session_events(state(), "limit-a")[-1]["time"]
        began = session_events(state(), "limit-b")[0]["time"]
        assert ended <= began, "the waiting turn began only once the running one had ended"
        assert session_summary(state(), "limit-a")["end_reason"].startswith("cancelled")  # type: ignore[index]
        assert session_summary(state(), "limit-c") is None
    finally:
        server.stop()


def test_a_session_answers_one_turn_at_a_time(tmp_path: Path):
    gate = tmp_path / "gate"
    configs = write_configs(tmp_path, {"gated": gated_agent(gate), "echo": echo_agent()})
    server = ServedInThread(state(), configs, max_concurrent=4, max_waiting=4)
    client = openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)
    try:
        with ThreadPoolExecutor(2) as pool:
            first = pool.submit(ask, client, "massgen/gated", "Remember codeword-delta.", "one-at-a-time")
            events = lambda: session_events(state(), "one-at-a-time")  # noqa: E731
            wait_until(lambda: any(e["type"] == "ToolStarted" for e in events()))
            second = pool.submit(ask, client, "massgen/echo", "Which one?", "one-at-a-time")
            wait_until(lambda: waiting(server) == 1)  # slots are free: it waits for its session
            gate.write_text("open")
            replies = [first.result(), second.result()]
        assert [r.choices[0].message.content for r in replies] == ["You said codeword-delta."] * 2
        assert [r.model_extra["massgen_metadata"]["turn"] for r in replies] == [1, 2]  # type: ignore[index]
    finally:
        server.stop()


def test_a_session_another_app_holds_is_a_conflict(tmp_path: Path, in_process):
    holder = in_process(echo_agent(), session_id="held-elsewhere")
    server = ServedInThread(state(), write_configs(tmp_path, {"echo": echo_agent()}))
    client = openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)
    try:
        with pytest.raises(openai.ConflictError) as refused:
            ask(client, "massgen/echo", "codeword-x", "held-elsewhere")
        error = refused.value.body
        assert error["code"] == "session_in_use" and error["param"] == "session"  # type: ignore[index]
        holder.app.close()
        reply = ask(client, "massgen/echo", "codeword-x", "held-elsewhere")
        assert reply.model_extra["massgen_metadata"]["turn"] == 1  # type: ignore[index]
    finally:
        server.stop()


def test_a_client_that_hangs_up_closes_the_agents_requests_to_the_model(tmp_path: Path):
    with paced_server.PacedServer(latency_s=600) as model:
        backend = f'{{type: openai, model: gpt-4o, api_key: sk-test-serve, base_url: "{model.base_url}"}}'
        configs = write_configs(tmp_path, {"real": f"agent: {{id: solo, backend: {backend}}}\n"})
        server = ServedInThread(state(), configs)
        client = openai.OpenAI(base_url=server.url, api_key="none", max_retries=0, timeout=120)
        try:
            messages = [{"role": "user", "content": "What is 6 x 7?"}]
            stream = client.chat.completions.create(model="massgen", messages=messages, stream=True)
            wait_until(lambda: len(model.served) == 1)  # the model has the request, and will take long
            stream.close()
            wait_until(lambda: model.served[0].ended > 0)
            assert not model.served[0].completed, "the model saw the request's connection close"
            session = stream.response.headers["x-massgen-session"]
            wait_until(lambda: session_summary(state(), session) is not None)
            assert session_summary(state(), session)["end_reason"].startswith("cancelled")  # type: ignore[index]
        finally:
            server.stop()
