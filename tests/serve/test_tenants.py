"""`massgen serve --keys FILE`: each token a tenant with its own sessions, run logs, runs, reports,
steering and stopping (another tenant's run is a 404); a keys file others may read, or that lists no
tenant, is refused, as is a config whose long-term memory tenants would share."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import httpx
import openai

from massgen_cli.serve.tenants import TENANTS_FOLDER, Tenants
from tests.cli.in_process_cli import massgen
from tests.conftest import wait_until
from tests.serve.serving import ServedInThread, echo_agent, gated_agent, session_summary, write_configs

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef"


def keys_file(folder: Path, text: str, mode: int = 0o600) -> Path:
    path = folder / "keys"
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def test_a_keys_file_others_may_read_or_that_lists_no_tenant_is_refused(tmp_path: Path):
    config = str(write_configs(tmp_path, {"echo": echo_agent()})[0])
    loose = massgen("serve", "-c", config, "--keys", str(keys_file(tmp_path, f"alice {ALICE}\n", 0o640)))
    assert loose.exit_code == 2 and "chmod 600" in loose.stderr
    for text, why in [
        ("# nobody\n", "no tenant"),
        (f"alice {ALICE} extra\n", "NAME TOKEN"),
        ("alice short\n", "16 to 512"),
        (f"alice {ALICE}\nalice {BOB}\n", "repeats"),
        (f"alice {ALICE}\nbob {ALICE}\n", "repeats"),
    ]:
        refused = massgen("serve", "-c", config, "--keys", str(keys_file(tmp_path, text)))
        assert refused.exit_code == 2 and why in refused.stderr, (text, refused.stderr)
    keys = str(keys_file(tmp_path, f"alice {ALICE}\n"))
    both = massgen("serve", "-c", config, "--keys", keys, "--token", "x" * 20)
    assert both.exit_code == 2 and "one way" in both.stderr


def test_a_config_whose_memory_the_tenants_would_share_is_refused(tmp_path: Path):
    shared = (
        '{"agents": [{"id": "echo", "backend": {"type": "scripted", "responses": ["Hi."]}}], "memory": '
        '{"enabled": true, "persistent_memory": {"enabled": true, "path": "one-store"}}}'
    )
    config = str(write_configs(tmp_path, {"shared": shared})[0])
    refused = massgen("serve", "-c", config, "--keys", str(keys_file(tmp_path, f"alice {ALICE}\n")))
    assert refused.exit_code == 2 and "tenants would share" in refused.stderr, refused.stderr


def ask(client: openai.OpenAI, model: str, question: str, session: str):  # type: ignore[no-untyped-def]
    messages = [{"role": "user", "content": question}]
    return client.chat.completions.create(model=model, messages=messages, extra_body={"session": session})


def test_each_tenant_has_its_own_sessions_runs_reports_steering_and_stopping(tmp_path: Path):
    state, gate = Path(os.environ["MASSGEN_HOME"]), tmp_path / "gate"
    configs = write_configs(tmp_path, {"echo": echo_agent(), "gated": gated_agent(gate)})
    tenants = Tenants.load(keys_file(tmp_path, f"alice {ALICE}\n# a comment\nbob {BOB}\n"), state)
    server = ServedInThread(state, configs, tenants=tenants)
    alice, bob = (
        openai.OpenAI(base_url=server.url, api_key=key, max_retries=0, timeout=120) for key in (ALICE, BOB)
    )
    as_alice, as_bob = ({"authorization": f"Bearer {key}"} for key in (ALICE, BOB))
    asking = threading.Thread(
        target=ask, args=(alice, "massgen/gated", "Remember codeword-alpha.", "project")
    )
    try:
        asking.start()
        wait_until(lambda: httpx.get(f"{server.root}/runs", headers=as_alice, timeout=10).json()["live"])
        run = httpx.get(f"{server.root}/runs", headers=as_alice, timeout=10).json()["live"][0]["id"]
        listed = httpx.get(f"{server.root}/runs", headers=as_bob, timeout=10).json()
        assert (listed["live"], listed["finished"], listed["past"]) == ([], [], [])
        theirs = ask(bob, "massgen/echo", "Which one?", "project")  # while alice's turn of it waits
        assert theirs.choices[0].message.content == "You said (not found in what I was sent)."
        assert theirs.model_extra["massgen_metadata"]["turn"] == 1  # type: ignore[index]
        for path, method in ((f"/runs/{run}/events", "GET"), (f"/runs/{run}/steer", "POST"),
                             (f"/runs/{run}/stop", "POST")):  # fmt: skip
            response = httpx.request(method, f"{server.root}{path}", headers=as_bob, json={"message": "x"})
            assert response.status_code == 404 and response.json()["error"]["type"] == "invalid_request_error"
        opened = httpx.get(f"{server.root}/", params={"token": BOB}, timeout=10)
        assert opened.status_code == 303 and BOB in opened.headers["set-cookie"], "the page keeps bob's token"
        assert httpx.get(f"{server.root}/runs", cookies=opened.cookies, timeout=10).json()["live"] == []
        steered = httpx.post(f"{server.root}/runs/{run}/steer", headers=as_alice, json={"message": "hi"})
        assert steered.status_code == 200, "alice steers her own"
        gate.write_text("open")
        asking.join(timeout=120)
        again = ask(alice, "massgen/echo", "Which one?", "project")
        assert again.choices[0].message.content == "You said codeword-alpha."
        assert again.model_extra["massgen_metadata"]["turn"] == 2  # type: ignore[index]
        past = httpx.get(f"{server.root}/runs", headers=as_alice, timeout=10).json()["past"]
        assert len(past) == 2 and all(run["session_id"] == "project" for run in past)
        assert len(httpx.get(f"{server.root}/runs", headers=as_bob, timeout=10).json()["past"]) == 1
        kept = httpx.get(f"{server.root}/runs", headers=as_alice, timeout=10).json()["finished"]
        assert [run["answer"] for run in kept] == ["You said codeword-alpha.", "You said codeword-alpha."]
        [bobs] = httpx.get(f"{server.root}/runs", headers=as_bob, timeout=10).json()["finished"]
        assert bobs["question"] == "Which one?", "each tenant's finished runs are its own"
        told = httpx.get(f"{server.root}/runs/{kept[0]['id']}/events", headers=as_bob, timeout=10)
        assert told.status_code == 404, "another tenant's finished run is none of bob's"
        asked = {"model": "massgen/echo", "question": "Which one?", "session": "project"}
        by_page = httpx.post(f"{server.root}/runs", headers=as_bob, json=asked, timeout=10)
        assert by_page.status_code == 202, "bob asks from the page as himself"
        wait_until(
            lambda: len(httpx.get(f"{server.root}/runs", headers=as_bob, timeout=10).json()["finished"]) == 2
        )
        first = past[-1]["name"]
        report = httpx.get(f"{server.root}/runs/past/{first}", headers=as_alice, timeout=30)
        assert report.status_code == 200 and "codeword-alpha" in report.text
        assert httpx.get(f"{server.root}/runs/past/{first}", headers=as_bob, timeout=30).status_code == 404
    finally:
        gate.write_text("open")
        if asking.is_alive():
            asking.join(timeout=120)
        server.stop()
    folders = {name: state / TENANTS_FOLDER / name for name in ("alice", "bob")}
    assert session_summary(folders["alice"], "project", turn=2) is not None
    assert session_summary(folders["bob"], "project") is not None
    assert session_summary(folders["bob"], "project", turn=2) is not None, "the page's question, in bob's"
    assert session_summary(folders["alice"], "project", turn=3) is None
    assert not (state / "sessions" / "project").exists(), "nothing of a tenant's in the server's own folder"
