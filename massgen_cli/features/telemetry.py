"""Telemetry: the run's traces over OpenTelemetry (``telemetry:`` in the config, ``--otel`` or MassGen's
``--logfire`` on the command line): a span per turn, attempt, agent step, model call and tool call,
with the GenAI semantic conventions' attributes, sent over OTLP/HTTP and flushed when the run closes.
The OpenTelemetry SDK (the ``otel`` extra) is imported only here, when traces are asked for."""

from __future__ import annotations

from massgen_cli.features.declaration import Feature, Opened, Opening


def _open(opening: Opening) -> Opened:
    from massgen_cli.features.traces.run import open_traces

    return open_traces(opening)


FEATURE = Feature("telemetry", wanted=lambda opening: opening.config.telemetry.enabled, open=_open)
"""On when the config's ``telemetry.enabled`` is (``--otel`` sets it)."""
