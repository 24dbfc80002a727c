"""The context guard of one agent: measures every request, compresses before it overflows, shrinks
after a context-length error, and watches a response's budget as it streams."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from massgen_cli.backends.base import Backend, Request, complete
from massgen_cli.config.memory import CompressionConfig
from massgen_cli.events import ContextStatus, Notice, RunEvent, Usage
from massgen_cli.memory.context.compression import CompressionResult, Summarizer, compress
from massgen_cli.memory.context.monitor import ContextMonitor, ContextUsage
from massgen_cli.memory.context.windows import context_window
from massgen_cli.messages import Message, content_text, recordable
from massgen_cli.tokens import (
    ESTIMATED,
    count_text_tokens,
    encoding_ready,
    estimate_message_tokens,
    estimate_text_tokens,
)

STREAM_WARNING_FRACTION = 0.9
CONTEXT_LINE_FRACTION = 0.25
"""From this share of its window, an agent's first request of a turn says its use on the console
(``📊 [agent] Context Window (Turn N): …``); below it, the line is a debug line (``--debug``; ``/context``
shows it any time)."""
EXACT_COUNT_FROM = 0.5
"""Requests whose byte bound passes this fraction of the trigger are counted exactly (loading the token
encoding while the model works, before a count can decide a compression); smaller ones are estimated."""
OVERFLOW_TARGET_FACTOR = 0.5

DroppedListener = Callable[[list[Message]], Awaitable[None]]


@dataclass(frozen=True)
class DropHandling:
    """What compression does with the span it drops: summarise it (with ``summarizer``, else an extractive
    summary) and hand it to ``on_dropped`` (long-term memory, so retrieval can bring it back)."""

    summarizer: Summarizer | None = None
    on_dropped: DroppedListener | None = None


@dataclass
class StreamBudget:
    """Output tokens a response may use, and how many it has used so far (counted while streaming)."""

    count_limit: Callable[[], int]
    limit_floor: Callable[[], int]
    """At most ``count_limit()``, known without the token encoding."""
    used: int = 0
    warned: bool = False
    _limit: int | None = None
    _floor: int | None = None
    _uncounted: str = ""
    _uncounted_bytes: int = 0

    @property
    def limit(self) -> int:
        if self._limit is None:
            self._limit = self.count_limit()
        return self._limit

    def add(self, text: str, model: str | None) -> None:
        """Count the text as it streams. Without the token encoding loaded, text is counted only once
        the response could be near its budget (a token is at least one byte, so its bytes bound the
        count): most responses never need the encoding, and the first ones of a run never wait for it."""
        self._uncounted += text
        self._uncounted_bytes += len(text.encode())
        if not encoding_ready(model) and not self._could_be_near():
            return
        self.used += count_text_tokens(self._uncounted, model)
        self._uncounted, self._uncounted_bytes = "", 0

    def _could_be_near(self) -> bool:
        if self._floor is None:
            self._floor = self.limit_floor()
        return self.used + self._uncounted_bytes >= self._floor * STREAM_WARNING_FRACTION

    @property
    def near(self) -> bool:
        return self.used > 0 and not self._uncounted and self.used >= self.limit * STREAM_WARNING_FRACTION


class ContextGuard:
    """Keeps one agent's requests inside its model's context window."""

    def __init__(
        self,
        agent_id: str,
        monitor: ContextMonitor,
        settings: CompressionConfig,
        *,
        emit: Callable[[RunEvent], None],
        dropped: DropHandling | None = None,
        max_output_tokens: int | None = None,
    ):
        self.agent_id = agent_id
        self.monitor = monitor
        self.settings = settings
        self.emit = emit
        summarizer = dropped.summarizer if dropped is not None else None
        self.summarizer = _said_once_on_failure(summarizer, agent_id, emit) if summarizer else None
        self.on_dropped = dropped.on_dropped if dropped is not None else None
        self.max_output_tokens = max_output_tokens
        self.turn = 0
        self._reported_turn = -1
        self._counting: set[asyncio.Task[None]] = set()
        self._sent = asyncio.Event()

    def begin_turn(self, turn: int) -> None:
        self.turn = turn

    async def fit(self, request: Request) -> Request:
        """The request as it should be sent: compressed first when it passes the trigger. A request that
        cannot be over the trigger (by a bound known without the token encoding) goes at once; its exact
        count is reported while the model works, so the first request never waits for the encoding."""
        monitor = self.monitor
        bound = monitor.upper_bound(request.messages, request.tools, request.response_schema)
        if bound <= monitor.trigger_tokens or not self.settings.enabled:
            self._sent = sent = asyncio.Event()
            report = self._report_counted(request, sent, bound)
            task = asyncio.create_task(report, name=f"count:{self.agent_id}")
            self._counting.add(task)
            task.add_done_callback(self._counting.discard)
            return request
        ready = encoding_ready(monitor.model)  # else it loads in a thread, not on the loop
        usage = self._usage(request) if ready else await self._usage_in_thread(request)
        self._report(usage)
        if not self.settings.enabled or not self.monitor.over_trigger(usage):
            return request
        self.emit(
            Notice(
                "warning",
                f"⚠️  [{self.agent_id}] Context window {usage.fraction:.0%} full, over the "
                f"{self.settings.trigger_threshold:.0%} trigger",
            )
        )
        return await self._compress(request, usage, self.monitor.target_tokens)

    async def shrink(self, request: Request) -> Request:
        """After a context-length error: compress to half of what was sent, at most half the target, whatever
        the count said (the provider's window is smaller than the one configured)."""
        usage = self._usage(request)
        target = int(min(self.monitor.target_tokens, usage.tokens) * OVERFLOW_TARGET_FACTOR)
        self.emit(Notice("warning", f"⚠️  [{self.agent_id}] The provider reported a context overflow"))
        return await self._compress(request, usage, target)

    async def _report_counted(self, request: Request, sent: asyncio.Event, bound: int) -> None:
        """Report the request's usage once it is out (counting competes for the interpreter): exactly
        when the encoding is loaded or the request is past ``EXACT_COUNT_FROM`` of the trigger, else
        estimated, so a run that stays far from its windows never loads the encoding (~70 MB)."""
        await sent.wait()
        monitor = self.monitor
        if encoding_ready(monitor.model) or bound > monitor.trigger_tokens * EXACT_COUNT_FROM:
            self._report(await self._usage_in_thread(request))
        else:
            self._report(monitor.estimate(request.messages, request.tools, request.response_schema))

    async def _usage_in_thread(self, request: Request) -> ContextUsage:
        return await asyncio.to_thread(self._usage, request)

    def sent(self) -> None:
        """The request fitted last is out (its response has begun, or it ended): it may be counted now."""
        self._sent.set()

    async def counted(self) -> None:
        """Every request's count reported; called once the agent's steps are over (what was fitted went
        out, or never will), so a turn's context lines come before its end."""
        self._sent.set()
        while self._counting:
            await asyncio.gather(*self._counting, return_exceptions=True)

    def stream_budget(self, request: Request) -> StreamBudget:
        """Counted when the response's first text arrives (after the request went out)."""

        def limit(tokens: int) -> int:
            room = self.monitor.window - tokens
            return max(1, min(room, self.max_output_tokens) if self.max_output_tokens else room)

        def floor() -> int:
            return limit(self.monitor.upper_bound(request.messages, request.tools, request.response_schema))

        return StreamBudget(lambda: limit(self._usage(request).tokens), floor)

    def check_stream(self, budget: StreamBudget) -> bool:
        """False when the stream should stop (``on_stream_budget: stop`` and the budget is nearly spent)."""
        if not budget.near:
            return True
        if not budget.warned:
            budget.warned = True
            action = "stopping the response" if self.settings.on_stream_budget == "stop" else "continuing"
            self.emit(
                Notice(
                    "warning",
                    f"⚠️  [{self.agent_id}] Response near its budget "
                    f"({budget.used:,}/{budget.limit:,} tokens); {action}",
                )
            )
        return self.settings.on_stream_budget != "stop"

    def _usage(self, request: Request) -> ContextUsage:
        return self.monitor.usage(request.messages, request.tools, request.response_schema)

    def _report(self, usage: ContextUsage) -> None:
        while ESTIMATED:  # said once per process, by the first agent that counts
            self.emit(Notice("degraded", ESTIMATED.pop(0)))
        self.emit(ContextStatus(self.agent_id, self.turn, usage.tokens, usage.window, usage.estimated))
        if self._reported_turn != self.turn:
            self._reported_turn = self.turn
            about = "~" if usage.estimated else ""
            self.emit(
                Notice(
                    "info" if usage.fraction >= CONTEXT_LINE_FRACTION else "debug",
                    f"📊 [{self.agent_id}] Context Window (Turn {self.turn}): {about}{usage.tokens:,} / "
                    f"{usage.window:,} tokens ({usage.fraction:.0%}){_tools_part(usage)}",
                )
            )

    async def _compress(self, request: Request, usage: ContextUsage, target: int) -> Request:
        overhead = usage.tokens - self.monitor.messages_tokens(request.messages)
        self.emit(
            Notice(
                "info",
                f"🔄 [{self.agent_id}] Attempting compression ({usage.tokens:,} → {target:,} tokens)"
                + _tools_part(usage),
            )
        )
        result = await compress(
            request.messages,
            self.monitor,
            target_tokens=target,
            overhead_tokens=overhead,
            summarize=self.summarizer,
        )
        self._report_compression(result)
        if (result.dropped or result.shortened) and self.on_dropped is not None:
            await self.on_dropped([recordable(m) for m in (*result.shortened, *result.dropped)])
        return replace(request, messages=result.messages)

    def _report_compression(self, result: CompressionResult) -> None:
        if result.note:
            self.emit(Notice("warning", f"⚠️  [{self.agent_id}] {result.note}"))
        removed = result.tokens_before - result.tokens_after
        self.emit(
            Notice(
                "info",
                f"📦 [{self.agent_id}] Context compressed: Removed {len(result.dropped)} messages"
                + (f", shortened {len(result.shortened)} tool results" if result.shortened else "")
                + f" ({max(removed, 0):,} tokens). Kept {result.kept_count} recent messages "
                f"({result.tokens_after:,} tokens).",
            )
        )


def _tools_part(usage: ContextUsage) -> str:
    return f"; tools: {usage.tool_tokens:,} tokens" if usage.tool_tokens else ""


def _said_once_on_failure(
    summarizer: Summarizer, agent_id: str, emit: Callable[[RunEvent], None]
) -> Summarizer:
    """``summarizer``, whose first failure is said (compression then uses an extractive summary)."""
    said: list[bool] = []

    async def summarize(dropped: list[Message], previous: str, budget: int) -> str:
        try:
            return await summarizer(dropped, previous, budget)
        except Exception as error:
            if not said:
                said.append(True)
                emit(
                    Notice(
                        "degraded",
                        f"[{agent_id}] the summariser failed ({error}); compression uses an extractive "
                        "summary (the first words of each dropped message) instead",
                    )
                )
            raise

    return summarize


def backend_summarizer(backend: Backend, on_usage: Callable[[Usage], None] | None = None) -> Summarizer:
    """A summariser that asks ``backend``; compression falls back to extraction if it fails.
    ``on_usage`` hears what each call spent (the provider's figures, else an estimate), so a summary is
    counted in the agent's tokens and cost like any other call."""

    async def summarize(dropped: list[Message], previous: str, budget: int) -> str:
        transcript = "\n".join(f"{m.get('role')}: {content_text(m.get('content'))}" for m in dropped)
        prompt = (
            f"Summarise this earlier part of a conversation in under {max(budget * 3 // 4, 16)} words. Keep "
            "facts, names, numbers, decisions and open questions; no preamble.\n\n"
            + (f"Summary of what came before it:\n{previous}\n\n" if previous else "")
            + f"Conversation:\n{transcript}"
        )
        request = Request([{"role": "user", "content": prompt}], purpose="summary")
        completion = await complete(backend, request)
        if on_usage is not None:
            spent = completion.usage
            if not spent.tokens:
                model = backend.model
                spent = Usage(
                    estimate_message_tokens(request.messages, model),
                    estimate_text_tokens(completion.text, model),
                    estimated=True,
                )
            on_usage(spent)
        return completion.text

    return summarize


def build_guard(
    agent_id: str,
    model: str | None,
    window_override: int | None,
    settings: CompressionConfig,
    *,
    emit: Callable[[RunEvent], None],
    dropped: DropHandling,
    max_output_tokens: int | None,
) -> ContextGuard:
    window = context_window(model, window_override)
    monitor = ContextMonitor(
        model, window, trigger_threshold=settings.trigger_threshold, target_ratio=settings.target_ratio
    )
    return ContextGuard(
        agent_id, monitor, settings, emit=emit, dropped=dropped, max_output_tokens=max_output_tokens
    )
