"""The config's hooks (``hooks:``, and an agent's ``backend.hooks``): before and after each tool call of
every agent (the run's hooks, then the agent's own, or the agent's instead with ``override``), and at each
turn's start (before its first step) and end. Each hook's decision is an event (``HookDecided``); a hook
that fails or times out lets the run go on (logged as ``failed``), unless it is a before-tool hook with
``fail_closed``, which denies. Running one hook (a command, a callable) is ``tools.hooks``'s."""

from __future__ import annotations

import asyncio
import fnmatch
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar

from massgen_cli.attempts import AttemptAt, TurnOutcome
from massgen_cli.coordination.extension import StepAt, StepExtension
from massgen_cli.events import EventSink, ToolCall
from massgen_cli.feature_events import HookDecided, HookVerdict
from massgen_cli.features.declaration import Feature, Opened, Opening
from massgen_cli.tools.base import RESULT_CHARS, bounded
from massgen_cli.tools.toolbox import ToolResult

if TYPE_CHECKING:
    from massgen_cli.config.hooks import HookConfig, HookPoint, ToolHooksConfig
    from massgen_cli.config.schema import MassGenConfig
    from massgen_cli.tools.hooks import HookEvent, HookReply

MASSGEN_NAMES: Mapping[HookPoint, str] = {
    "before_tool": "PreToolUse",
    "after_tool": "PostToolUse",
    "turn_start": "turn_start",
    "turn_end": "turn_end",
}
HookTable = Mapping["HookPoint", Sequence["HookConfig"]]


@dataclass(frozen=True)
class _Asked:
    """A hook's reply (None: it failed, and the run goes on), how long it took, and the reason logged."""

    reply: HookReply | None
    seconds: float
    reason: str = ""

    @property
    def verdict(self) -> HookVerdict:
        return "allow" if self.reply is not None else "failed"


def matches(hook: HookConfig, tool: str) -> bool:
    """Whether ``hook``'s matcher (glob patterns joined with '|') takes the tool named ``tool``."""
    return any(fnmatch.fnmatchcase(tool, pattern.strip()) for pattern in hook.matcher.split("|"))


class HookPoints(StepExtension):
    """The hooks of the run (``run_hooks``) and of each agent (``agent_hooks``: each agent's table
    already merged with the run's), told to ``emit``."""

    name: ClassVar[str] = "hooks"
    part_name: ClassVar[str] = "the hooks"

    def __init__(
        self, session_id: str, run_hooks: HookTable, agent_hooks: Mapping[str, HookTable], emit: EventSink
    ):
        self.session_id = session_id
        self.run_hooks = run_hooks
        self.agent_hooks = agent_hooks
        self.emit = emit
        self.turn = 0
        self._started: dict[int, asyncio.Task[None]] = {}
        self._ending: list[asyncio.Task[None]] = []

    def _tool_hooks(self, agent_id: str, point: HookPoint, tool: str) -> list[HookConfig]:
        table = self.agent_hooks.get(agent_id, self.run_hooks)
        return [hook for hook in table.get(point, ()) if matches(hook, tool)]

    async def before_tool(self, agent_id: str, call: ToolCall) -> ToolCall | ToolResult:
        for hook in self._tool_hooks(agent_id, "before_tool", call.name):
            asked = await self._ask(hook, self._tool_event("before_tool", agent_id, call))
            reply, verdict, reason = asked.reply, asked.verdict, asked.reason
            if reply is not None and reply.denied:
                reason = reason or "no reason given"
                self._decided(hook, "before_tool", "deny", call, agent_id, asked.seconds, reason)
                return ToolResult(
                    f"Error: not run: denied by the hook {hook.name!r}: {reason}", False, asked.seconds
                )
            if reply is not None and reply.updated_input not in (None, call.arguments):
                call = replace(call, arguments=dict(reply.updated_input or {}))
                verdict, reason = "rewrite", reason or json.dumps(call.arguments, ensure_ascii=False)
            self._decided(hook, "before_tool", verdict, call, agent_id, asked.seconds, reason)
        return call

    async def after_tool(self, agent_id: str, call: ToolCall, result: ToolResult) -> ToolResult:
        for hook in self._tool_hooks(agent_id, "after_tool", call.name):
            event = replace(self._tool_event("after_tool", agent_id, call), tool_output=result.text)
            asked = await self._ask(hook, event)
            reply, verdict = asked.reply, asked.verdict
            if reply is not None and reply.replaced is not None:
                result, verdict = replace(result, text=bounded(reply.replaced, RESULT_CHARS)), "replace"
            if reply is not None and reply.added:
                text = bounded(f"{result.text}\n\n{reply.added}", RESULT_CHARS)
                result, verdict = replace(result, text=text), "add" if verdict == "allow" else verdict
            self._decided(hook, "after_tool", verdict, call, agent_id, asked.seconds, asked.reason)
        return result

    def _tool_event(self, point: HookPoint, agent_id: str, call: ToolCall) -> HookEvent:
        from massgen_cli.tools.hooks import HookEvent

        return HookEvent(
            MASSGEN_NAMES[point], self.session_id, agent_id, self.turn, call.name, dict(call.arguments)
        )

    async def _ask(self, hook: HookConfig, event: HookEvent) -> _Asked:
        """What the hook replied, how long it took, and the reason to log (its failure, when it failed:
        a denial when it fails closed before a tool, else no reply)."""
        from massgen_cli.tools.hooks import HookFailed, HookReply, run_hook

        started = time.monotonic()
        try:
            reply = await run_hook(hook, event)
        except HookFailed as error:
            seconds = round(time.monotonic() - started, 3)
            if hook.fail_closed and event.hook_type == MASSGEN_NAMES["before_tool"]:
                return _Asked(HookReply(denied=True), seconds, f"the hook failed ({error})")
            return _Asked(None, seconds, str(error))
        return _Asked(reply, round(time.monotonic() - started, 3), reply.reason)

    def _decided(
        self,
        hook: HookConfig,
        point: HookPoint,
        verdict: HookVerdict,
        call: ToolCall,
        agent_id: str,
        seconds: float,
        reason: str,
    ) -> None:
        self.emit(HookDecided(point, hook.name, verdict, reason, agent_id, call.name, call.id, seconds))

    # The turn's hooks: heard once as the turn's first step begins, and as the turn ends.

    def begin(self, at: AttemptAt) -> None:
        self.turn = at.turn

    async def system_note(self, at: StepAt, *, with_peers: bool) -> str:
        if at.turn not in self._started:  # the first step of the turn: set before any await, so once
            event = self._turn_event("turn_start", turn=at.turn, question=at.question)
            ended, self._ending = self._ending, []
            self._started[at.turn] = asyncio.ensure_future(self._hear("turn_start", event, after=ended))
        await asyncio.shield(self._started[at.turn])  # every agent's first step waits for them
        return ""

    async def commit(self, outcome: TurnOutcome) -> list[str]:
        status = "answered" if outcome.answered else "failed"
        await self._turn_ended(outcome.at.turn, status, outcome.final_answer, outcome.winner)
        return []

    def roll_back(self, at: AttemptAt, *, whole_turn: bool) -> None:
        if whole_turn:  # the turn failed or was cancelled: heard as it ends, waited for at the next start
            ending = self._turn_ended(at.turn, "cancelled or failed", None, None)
            self._ending.append(asyncio.ensure_future(ending))

    async def _turn_ended(self, turn: int, status: str, answer: str | None, winner: str | None) -> None:
        started = self._started.pop(turn, None)
        if started is not None:
            await asyncio.gather(started, return_exceptions=True)
        event = self._turn_event("turn_end", turn=turn, answer=answer, winner=winner, status=status)
        await self._hear("turn_end", event)

    def _turn_event(self, point: HookPoint, **fields: Any) -> HookEvent:
        from massgen_cli.tools.hooks import HookEvent

        return HookEvent(MASSGEN_NAMES[point], self.session_id, **fields)

    async def _hear(
        self, point: HookPoint, event: HookEvent, after: Sequence[asyncio.Task[None]] = ()
    ) -> None:
        """The hooks of ``point`` hear ``event``, once the hooks of the turns ``after`` were heard."""
        await asyncio.gather(*after, return_exceptions=True)
        for hook in self.run_hooks.get(point, ()):
            asked = await self._ask(hook, event)
            verdict: HookVerdict = "heard" if asked.reply is not None else "failed"
            self.emit(HookDecided(point, hook.name, verdict, asked.reason, seconds=asked.seconds))

    async def close(self) -> None:
        """The hooks of turns that ended cut off, still running, are waited for."""
        pending = [*self._started.values(), *self._ending]
        self._started, self._ending = {}, []
        await asyncio.gather(*pending, return_exceptions=True)


def _wanted(opening: Opening) -> bool:
    config = opening.config
    return config.hooks is not None or any(agent.backend.hooks is not None for agent in config.agents)


def _open(opening: Opening) -> Opened:
    from massgen_cli.config.hooks import TOOL_POINTS, TURN_POINTS
    from massgen_cli.tools.hooks import load_callable

    config = opening.config
    run_hooks = _table(config.hooks, (*TOOL_POINTS, *TURN_POINTS))
    agent_hooks: dict[str, HookTable] = {
        agent.id or "": _merged(run_hooks, agent.backend.hooks)
        for agent in config.agents
        if agent.backend.hooks is not None
    }
    for hook in _every_hook(config):
        if hook.handler is not None:
            load_callable(hook.handler)  # a handler that cannot be imported stops the run before it starts
    points = HookPoints(opening.place.session.id, run_hooks, agent_hooks, opening.emit)
    return Opened(points, points, close=points.close)


def _table(hooks: ToolHooksConfig | None, points: tuple[HookPoint, ...]) -> dict[HookPoint, list[HookConfig]]:
    if hooks is None:
        return {}
    return {point: hooks.entries(point)[0] for point in points if hooks.entries(point)[0]}


def _merged(
    run_hooks: dict[HookPoint, list[HookConfig]], own: ToolHooksConfig | None
) -> dict[HookPoint, list[HookConfig]]:
    """An agent's tool hooks: the run's then its own, or its own alone where it overrides."""
    from massgen_cli.config.hooks import TOOL_POINTS

    merged = dict(run_hooks)
    for point in TOOL_POINTS:
        entries, override = own.entries(point) if own is not None else ([], False)
        merged[point] = entries if override else [*run_hooks.get(point, []), *entries]
    return merged


def _every_hook(config: MassGenConfig) -> list[HookConfig]:
    from massgen_cli.config.hooks import TOOL_POINTS, TURN_POINTS

    tables = [config.hooks, *(agent.backend.hooks for agent in config.agents)]
    points = (*TOOL_POINTS, *TURN_POINTS)
    return [
        hook for hooks in tables if hooks is not None for point in points for hook in hooks.entries(point)[0]
    ]


FEATURE = Feature("hooks", wanted=_wanted, open=_open)
