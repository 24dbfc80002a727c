"""A feature written outside the package, as a user would: a ``greet`` tool whose greeting is set under
``features.greeting`` in the config, and a request hook that counts each agent's requests. One module;
``register(FEATURE)`` is its one registration."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from massgen_cli.backends.base import Request, ToolSpec
from massgen_cli.coordination.extension import Equipment, StepExtension
from massgen_cli.features.declaration import Feature, Opened, Opening
from massgen_cli.tools.base import Tool, schema


class GreetingSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    greeting: str


class Greeting(StepExtension):
    name: ClassVar[str] = "greeting"

    def __init__(self, settings: GreetingSettings):
        self.settings = settings
        self.requests: Counter[str] = Counter()

    def equip(self, agent_id: str, workspace: Path | None) -> Equipment:
        spec = ToolSpec("greet", "Greet someone by name.", schema({"name": {"type": "string"}}, ["name"]))
        return Equipment([Tool(spec, self._greet)], "Greet with the greet tool.")

    async def _greet(self, arguments: dict[str, Any]) -> str:
        return f"{self.settings.greeting}, {arguments['name']}!"

    async def before_request(self, agent_id: str, request: Request) -> Request:
        self.requests[agent_id] += 1
        return request


OPENED: list[Greeting] = []
"""Every greeting a run opened (for the test to read its counts)."""


def _open(opening: Opening) -> Opened:
    greeting = Greeting(opening.settings)
    OPENED.append(greeting)
    return Opened(greeting)


FEATURE = Feature(
    "greeting", wanted=lambda opening: opening.settings is not None, open=_open, settings=GreetingSettings
)
