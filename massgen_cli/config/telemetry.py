"""``telemetry:``: traces of the run over OpenTelemetry (OTLP/HTTP), with the GenAI semantic conventions.
The standard ``OTEL_*`` variables are honoured; what is set here wins over them."""

from __future__ import annotations

from pydantic import Field

from massgen_cli.config.base import Section


class TelemetryConfig(Section):
    """Spans of each turn, attempt, agent step, model call and tool call, sent to an OTLP/HTTP collector
    (Jaeger, Langfuse, Phoenix, Logfire, an OpenTelemetry Collector). ``--otel`` (or MassGen's
    ``--logfire``) turns it on."""

    enabled: bool = False
    """Send traces (needs the otel extra: pip install 'massgen-cli[otel]')."""
    endpoint: str | None = None
    """The collector's base address (spans go to its /v1/traces); null reads
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, then OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318.
    """
    headers: dict[str, str] = Field(default_factory=dict)
    """Headers of every export (an API key of a hosted collector); empty reads OTEL_EXPORTER_OTLP_HEADERS."""
    service_name: str | None = None
    """The traces' service.name; null reads OTEL_SERVICE_NAME, else massgen-cli."""
