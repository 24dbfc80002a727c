"""A model behind ``FakeProviderServer`` (Chat Completions) for a team served with the client's tools:
it decides from the request alone, as a model does. Asked to evaluate, it accepts; with an answer in view
(``<agent1>``) and a vote offered, it votes for it; offered the client's tool and holding no result of it,
it calls the tool; holding its result (after the task), it answers with it (``new_answer`` when offered,
else as text); presenting, it says the answer in view."""

from __future__ import annotations

import itertools
import json
import re
import threading
from typing import Any

from tests.servers.fake_providers import RecordedRequest, Reply, openai_stream

SAID = re.compile(r"The client's tool said: [^\\<\"\n]*")


class ClientToolModel:
    """Callable as a ``FakeProviderServer`` responder; ``tool`` is the client's tool it calls with
    ``arguments``."""

    def __init__(self, tool: str, arguments: dict[str, Any]):
        self.tool, self.arguments = tool, arguments
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Reply:
        body = request.body
        offered = {tool["function"]["name"] for tool in body.get("tools") or ()}
        messages = body.get("messages") or []
        asked = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
        results = [str(m.get("content")) for m in messages[asked:] if m.get("role") == "tool"]
        text = json.dumps(messages)
        with self._lock:
            call_id = f"call_model_{next(self._numbers)}"
        if "submit" in offered:
            return openai_stream(tool_calls=[(call_id, "submit", "{}")])
        if "vote" in offered and "<agent1>" in text and "(no answers yet)" not in text:
            vote = {"agent_id": "agent1", "reason": "it answers the question"}
            return openai_stream(tool_calls=[(call_id, "vote", json.dumps(vote))])
        if self.tool in offered and not results:
            return openai_stream(tool_calls=[(call_id, self.tool, json.dumps(self.arguments))])
        answer = f"The client's tool said: {results[-1]}" if results else _in_view(text)
        if "new_answer" in offered:
            return openai_stream(tool_calls=[(call_id, "new_answer", json.dumps({"content": answer}))])
        return openai_stream(answer)


def _in_view(text: str) -> str:
    """The answer in view (a presentation's), or what a model says with nothing to go on."""
    found = SAID.search(text)
    return found.group(0) if found else "I have no result to go on."
