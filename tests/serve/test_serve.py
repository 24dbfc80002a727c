"""`massgen serve`: scripted agents behind the OpenAI-compatible API, driven by the official `openai` SDK
(and raw HTTP where the SDK hides what is checked): whole and streamed answers, the agents' work as
reasoning, sessions that remember, several at once, a client that hangs up, errors, the token."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
import pytest

from tests.cli.in_process_cli import massgen
from tests.conftest import wait_until
from tests.serve.serving import (
    BROKEN_AGENT,
    SLOW_AGENT,
    TOKEN_VARIABLE,
    ServedProcess,
    echo_agent,
    gated_agent,
    sent_to,
    session_events,
    session_summary,
    write_configs,
)
from tests.servers.answer_schema import answer_problems, stream_problems

TOKEN = "serve-test-token-0123456789"
SECRET = "codeword-notforclients"
"""A secret by its variable's name (``*_API_KEY``), which the echo agent is made to say."""
THREE_FINAL = "The capital of France is Paris, its largest city."


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedProcess]:
    """One server for the module: the shipped three scripted agents, the echo agent, the echo agent
    behind a gate (``served.gate``), the slow agent and the broken one; a bearer token required."""
    folder = tmp_path_factory.mktemp("serve")
    gate = folder / "gate"
    agents = {"echo": echo_agent(), "gated": gated_agent(gate), "slow": SLOW_AGENT, "broken": BROKEN_AGENT}
    configs = write_configs(folder, agents)
    arguments = ["-c", "@examples/scripted_three_agents"]
    for path in configs:
        arguments += ["-c", str(path)]
    environment = {TOKEN_VARIABLE: TOKEN, "SERVE_TEST_API_KEY": SECRET}
    server = ServedProcess(folder, *arguments, "--api-key-env", TOKEN_VARIABLE, environment=environment)
    server.gate = gate  # type: ignore[attr-defined]
    yield server
    assert server.stop() == 0, server.stderr()


@pytest.fixture
def client(served: ServedProcess) -> openai.OpenAI:
    return openai.OpenAI(base_url=served.url, api_key=TOKEN, max_retries=0, timeout=120)


def ask(client: openai.OpenAI, model: str, question: str, **options):  # type: ignore[no-untyped-def]
    return client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": question}], **options
    )


def test_each_config_is_a_model_and_the_first_is_also_massgen(client: openai.OpenAI):
    ids = [model.id for model in client.models.list()]
    served = ["scripted_three_agents", "echo", "gated", "slow", "broken"]
    assert ids == ["massgen", *(f"massgen/{name}" for name in served)]
    assert client.models.retrieve("massgen/echo").owned_by == "massgen"
    with pytest.raises(openai.NotFoundError) as missing:
        client.models.retrieve("massgen/nothing")
    assert missing.value.body["code"] == "model_not_found"  # type: ignore[index]


def test_a_whole_answer_is_the_final_answer_with_the_agents_work_as_reasoning(client, served):
    reply = ask(client, "massgen", "What is the capital of France?")
    message = reply.choices[0].message
    assert message.role == "assistant" and message.content == THREE_FINAL
    assert reply.choices[0].finish_reason == "stop" and reply.object == "chat.completion"
    reasoning = message.reasoning_content  # type: ignore[attr-defined]
    for work in (
        "[agent_b] Let me think...",
        "[agent_a] new answer: Paris.",
        "[agent_c] votes for agent_b: clearest",
    ):
        assert work in reasoning
    assert "new answer" not in message.content and "votes for" not in message.content
    usage = reply.usage
    assert usage is not None and usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    facts = reply.model_extra["massgen_metadata"]  # type: ignore[index]
    assert facts["selected_agent"] == "agent_b" and facts["turn"] == 1
    assert facts["session_id"].startswith("temp_")
    summary = session_summary(served.state, facts["session_id"])
    assert summary is not None and summary["final_answer"] == THREE_FINAL
    assert summary["turn_usage"]["input_tokens"] == usage.prompt_tokens


def test_a_streamed_answer_sends_reasoning_then_content_then_usage_and_done(client, served):
    stream = ask(client, "massgen/scripted_three_agents", "What is the capital of France?", stream=True,
                 stream_options={"include_usage": True})  # fmt: skip
    chunks = list(stream)
    assert all(chunk.object == "chat.completion.chunk" for chunk in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    deltas = [chunk.choices[0].delta for chunk in chunks if chunk.choices]
    reasoning = "".join(getattr(delta, "reasoning_content", None) or "" for delta in deltas)
    content = "".join(delta.content or "" for delta in deltas)
    assert content == THREE_FINAL and "[agent_c] votes for agent_b" in reasoning
    assert "votes for" not in content
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == [
        "stop"
    ]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
    session = stream.response.headers["x-massgen-session"]
    assert session_summary(served.state, session)["final_answer"] == THREE_FINAL  # type: ignore[index]
    raw = httpx.post(
        f"{served.url}/chat/completions",
        headers={"authorization": f"Bearer {TOKEN}"},
        json={
            "model": "massgen/echo",
            "stream": True,
            "messages": [{"role": "user", "content": "codeword-raw"}],
        },
        timeout=60,
    )
    assert raw.headers["content-type"].startswith("text/event-stream")
    assert raw.text.endswith("data: [DONE]\n\n") and raw.text.count("data: ") >= 3


def test_the_messages_before_the_question_are_the_conversation_so_far(client):
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Remember codeword-gamma."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": [{"type": "text", "text": "Which codeword did I give?"}]},
    ]
    reply = client.chat.completions.create(model="massgen/echo", messages=messages)  # type: ignore[arg-type]
    assert reply.choices[0].message.content == "You said codeword-gamma."


def test_two_sessions_run_at_once_and_each_remembers_its_own(client, served):
    """Session one's first turn waits at a gate (a tool call) while session two answers two turns; then
    the gate opens. Each session's second turn is asked without the first, and answers from memory."""
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(
            ask, client, "massgen/gated", "Remember codeword-alpha.", extra_body={"session": "serve-one"}
        )
        wait_until(lambda: any(e["type"] == "ToolStarted" for e in session_events(served.state, "serve-one")))
        two = [ask(client, "massgen/echo", q, user="bob@example.com") for q in ("codeword-beta!", "And?")]
        assert not first.done(), "session one is still at its gate"
        served.gate.write_text("open")
        one = [
            first.result(),
            ask(client, "massgen/gated", "Which one?", extra_body={"session": "serve-one"}),
        ]
    assert [reply.choices[0].message.content for reply in one] == ["You said codeword-alpha."] * 2
    assert [reply.choices[0].message.content for reply in two] == ["You said codeword-beta."] * 2
    assert [reply.model_extra["massgen_metadata"]["turn"] for reply in one + two] == [1, 2, 1, 2]  # type: ignore[index]
    bob = two[1].model_extra["massgen_metadata"]["session_id"]  # type: ignore[index]
    assert bob.startswith("user-bob_example.com-")
    assert "codeword-alpha" in sent_to(served.state, "serve-one", "echo", turn=2)
    assert "codeword-alpha" not in sent_to(served.state, bob, "echo", turn=2)


def test_a_client_that_hangs_up_cancels_its_turn(client, served):
    stream = ask(client, "massgen/slow", "Take your time.", stream=True)
    session = stream.response.headers["x-massgen-session"]
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            break  # the agent is at work, its stream open for ten minutes
    stream.close()
    wait_until(lambda: session_summary(served.state, session) is not None)
    summary = session_summary(served.state, session)
    assert summary is not None and summary["end_reason"].startswith("cancelled")
    assert summary["final_answer"] is None
    assert (
        ask(client, "massgen/echo", "codeword-after").choices[0].message.content == "You said codeword-after."
    )


def test_a_client_that_hangs_up_before_a_whole_answer_cancels_its_turn(served):
    body = json.dumps({"model": "massgen/slow", "session": "serve-gone", "messages": [
        {"role": "user", "content": "Take your time."}]}).encode()  # fmt: skip
    host, port = served.url.removeprefix("http://").removesuffix("/v1").split(":")
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection((host, int(port))) as connection:
        connection.sendall(head + body)
        wait_until(lambda: any(e["type"] == "AgentText" for e in session_events(served.state, "serve-gone")))
    wait_until(lambda: session_summary(served.state, "serve-gone") is not None)
    assert session_summary(served.state, "serve-gone")["end_reason"].startswith("cancelled")  # type: ignore[index]


def test_bad_requests_get_openai_error_shapes(client, served):
    def post(body: bytes | dict, path: str = "/chat/completions") -> httpx.Response:  # type: ignore[type-arg]
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json"}
        return httpx.post(f"{served.url}{path}", content=content, headers=headers, timeout=30)

    question = [{"role": "user", "content": "x"}]
    cases = [
        (post(b"{not json"), 400, None, "invalid_json"),
        (post({"model": "massgen"}), 400, "messages", None),
        (post({"model": "massgen", "messages": [{"role": "tool", "content": "x"}]}), 400,
         "messages[0].tool_call_id", None),
        (post({"model": "massgen", "messages": [{"role": "function", "content": "x"}]}), 400,
         "messages[0].role", None),
        (post({"model": "massgen", "n": 2, "messages": question}), 400, "n", None),
        (post({"model": "massgen", "session": "../x", "messages": question}), 400, "session", None),
        (post({"model": "gpt-4o", "messages": question}), 404, "model", "model_not_found"),
        (post({}, "/nowhere"), 404, None, None),
    ]  # fmt: skip
    for response, status, param, code in cases:
        error = response.json()["error"]
        assert (response.status_code, error["param"], error["code"]) == (status, param, code), error
        assert set(error) == {"message", "type", "param", "code"} and error["message"]
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model="massgen", messages=[{"role": "assistant", "content": "Hi"}])
    assert refused.value.body["param"] == "messages"  # type: ignore[index]


def test_parameters_are_checked_as_openai_checks_them_and_the_answer_has_its_schema(served):
    """``temperature: "hot"`` was a 200, unknown fields and ``stream_options`` without ``stream`` were
    ignored, log probabilities silently left out, and a whole answer lacked ``message.refusal``."""

    def post(**fields: object) -> httpx.Response:
        body = {"model": "massgen/echo", "messages": [{"role": "user", "content": "x"}], **fields}
        headers = {"authorization": f"Bearer {TOKEN}"}
        return httpx.post(f"{served.url}/chat/completions", json=body, headers=headers, timeout=60)

    refused = [
        ({"temperature": "hot"}, "temperature"),
        ({"temperature": 2.5}, "temperature"),
        ({"top_p": -0.1}, "top_p"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_completion_tokens": 1.5}, "max_completion_tokens"),
        ({"seed": "7"}, "seed"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
        ({"frobnicate": True}, "frobnicate"),
        ({"stream_options": {"include_usage": True}}, "stream_options"),
        ({"stream": True, "stream_options": {"include_usage": "yes"}}, "stream_options.include_usage"),
        ({"logprobs": True}, "logprobs"),
        ({"modalities": ["text", "audio"]}, "modalities"),
    ]
    for fields, param in refused:
        response = post(**fields)
        error = response.json()["error"]
        assert (response.status_code, error["param"], error["type"]) == (
            400,
            param,
            "invalid_request_error",
        ), fields
    answered = post(temperature=0.2, max_tokens=50, seed=1, stop="END", user="u1")
    assert answered.status_code == 200, answered.text
    body = answered.json()
    assert body["choices"][0]["message"]["refusal"] is None
    facts = body["massgen_metadata"]
    assert facts["parameters_not_applied"] == ["temperature", "max_tokens", "seed", "stop"]
    missing = httpx.get(f"{served.url}/runs/nothing/events", headers={"authorization": f"Bearer {TOKEN}"})
    assert missing.status_code == 404 and missing.json()["error"]["type"] == "invalid_request_error"


def test_a_turn_without_an_answer_is_a_500_saying_why_whole_or_streamed(client):
    with pytest.raises(openai.InternalServerError) as failed:
        ask(client, "massgen/broken", "Anything?")
    assert failed.value.body["code"] == "no_answer"  # type: ignore[index]
    assert "context length exceeded" in failed.value.body["message"]  # type: ignore[index]
    stream = ask(client, "massgen/broken", "Anything?", stream=True)
    with pytest.raises(openai.APIError) as broke:
        list(stream)
    assert broke.value.body["code"] == "no_answer"  # type: ignore[index]


def test_the_token_is_required_and_never_sent_back(served):
    for key in ("wrong-token", ""):
        bare = openai.OpenAI(base_url=served.url, api_key=key or "none", max_retries=0)
        with pytest.raises(openai.AuthenticationError) as refused:
            bare.models.list()
        assert refused.value.body["code"] == "invalid_api_key"  # type: ignore[index]
    assert httpx.get(f"{served.url}/chat/completions").status_code == 401
    health = httpx.get(served.url.removesuffix("/v1") + "/health")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    logs = "".join(path.read_text() for path in served.state.rglob("*.json*"))
    assert TOKEN not in logs and TOKEN not in served.stderr()


def test_a_secret_is_never_sent_whole_or_streamed(client):
    whole = ask(client, "massgen/echo", f"Remember {SECRET}.")
    assert whole.choices[0].message.content == "You said [REDACTED]."
    streamed = ask(client, "massgen/echo", f"Remember {SECRET}.", stream=True)
    text = "".join(str(chunk.model_dump()) for chunk in streamed)
    assert "You said [REDACTED]." in text and SECRET not in text and SECRET not in str(whole.model_dump())


def test_serving_beyond_this_machine_without_a_token_is_refused(tmp_path: Path):
    config = write_configs(tmp_path, {"echo": echo_agent()})[0]
    refused = massgen("serve", "-c", str(config), "--host", "0.0.0.0")
    assert refused.exit_code == 2 and "--api-key-env" in refused.stderr
    unset = massgen("serve", "-c", str(config), "--host", "0.0.0.0", "--api-key-env", "NO_SUCH_VARIABLE_HERE")
    assert unset.exit_code == 2 and "NO_SUCH_VARIABLE_HERE" in unset.stderr


def test_sigterm_cancels_the_running_turn_and_stops_the_server(tmp_path: Path):
    slow = write_configs(tmp_path, {"slow": SLOW_AGENT})[0]
    server = ServedProcess(tmp_path, "-c", str(slow))
    client = openai.OpenAI(base_url=server.url, api_key="none", max_retries=0)
    stream = ask(client, "massgen", "Take your time.", stream=True)
    session = stream.response.headers["x-massgen-session"]
    failed: list[BaseException] = []

    def read() -> None:
        try:
            for _ in stream:
                pass
        except openai.APIError as error:
            failed.append(error)

    reader = threading.Thread(target=read)
    reader.start()
    wait_until(lambda: any(e["type"] == "AgentText" for e in session_events(server.state, session)))
    assert server.stop() == 0
    reader.join(timeout=60)
    assert failed and "server is stopping" in str(failed[0])
    assert session_summary(server.state, session)["end_reason"].startswith("cancelled")  # type: ignore[index]
    assert "stopped" in server.stderr()


def test_every_route_answers_in_the_sdks_response_models(served):
    """Every answer and stream event of every route, validated with the ``openai`` SDK's response models
    (unknown keys refused, the schema's required fields present)."""
    headers = {"authorization": f"Bearer {TOKEN}"}

    def get(path: str) -> httpx.Response:
        return httpx.get(f"{served.url}{path}", headers=headers, timeout=60)

    def post(path: str, **body: object) -> httpx.Response:
        return httpx.post(f"{served.url}{path}", json=body, headers=headers, timeout=120)

    def data_lines(response: httpx.Response) -> list[dict]:  # type: ignore[type-arg]
        lines = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
        return [json.loads(line) for line in lines if line != "[DONE]"]

    assert answer_problems("model.list", get("/models").json()) == []
    assert answer_problems("model", get("/models/massgen/echo").json()) == []
    unauthorized = httpx.get(f"{served.url}/models")
    refusals = [get("/models/nothing"), post("/chat/completions", model="massgen"), get("/nowhere")]
    for refused in (*refusals, unauthorized, post("/responses", model="massgen", input=[])):
        assert refused.status_code >= 400 and answer_problems("error", refused.json()) == [], refused.text
    question = [{"role": "user", "content": "What is the capital of France?"}]
    whole = post("/chat/completions", model="massgen", messages=question).json()
    assert answer_problems("chat.completion", whole) == []
    chunks = data_lines(post("/chat/completions", model="massgen", messages=question, stream=True,
                             stream_options={"include_usage": True}))  # fmt: skip
    assert [p for chunk in chunks for p in answer_problems("chat.completion.chunk", chunk)] == []
    response = post("/responses", model="massgen", input="What is the capital of France?").json()
    assert answer_problems("response", response) == [] and response["output"][-1]["type"] == "message"
    assert response["output"][-1]["content"][0]["text"] == THREE_FINAL
    events = data_lines(post("/responses", model="massgen", input="What is the capital?", stream=True))
    assert stream_problems(events) == []
    broken = data_lines(post("/chat/completions", model="massgen/broken", messages=question, stream=True))
    assert answer_problems("error", broken[-1]) == []
    failed = data_lines(post("/responses", model="massgen/broken", input="Anything?", stream=True))
    assert stream_problems(failed) == [] and failed[-1]["type"] == "response.failed"
