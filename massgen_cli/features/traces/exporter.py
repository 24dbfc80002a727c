"""The OpenTelemetry SDK for one run: a tracer provider of its own (the process's global one is left as
it is) whose batched spans go over OTLP/HTTP to the collector the config or the ``OTEL_*`` variables
name, and are flushed when the run closes."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from massgen_cli import __version__
from massgen_cli.config.telemetry import TelemetryConfig
from massgen_cli.errors import ConfigError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

TRACES_PATH = "/v1/traces"
DEFAULT_SERVICE = "massgen-cli"
INSTALL = "pip install 'massgen-cli[otel]'"


def tracer_provider(settings: TelemetryConfig) -> TracerProvider:
    """A provider exporting to ``settings.endpoint`` (its ``/v1/traces``), else where the standard
    variables say (the exporter reads ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``, ``…_ENDPOINT``,
    ``…_HEADERS``, ``…_TIMEOUT``, ``…_COMPRESSION``); the resource reads ``OTEL_SERVICE_NAME`` and
    ``OTEL_RESOURCE_ATTRIBUTES``."""
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as missing:
        raise ConfigError(
            f"telemetry (--otel) needs the OpenTelemetry SDK, which is not installed ({missing.name}): "
            + INSTALL
        ) from None
    attributes = {"service.version": __version__}
    service = settings.service_name or (None if os.environ.get("OTEL_SERVICE_NAME") else DEFAULT_SERVICE)
    if service is not None:
        attributes["service.name"] = service
    provider = TracerProvider(resource=Resource.create(attributes))
    endpoint = settings.endpoint.rstrip("/") + TRACES_PATH if settings.endpoint else None
    exporter = OTLPSpanExporter(endpoint=endpoint, headers=settings.headers or None)
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider
