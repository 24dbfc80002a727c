"""A real OTLP/HTTP trace collector on 127.0.0.1: it takes ``POST /v1/traces`` exports as an
OpenTelemetry Collector does (protobuf, gzip or not), decodes them with the OpenTelemetry proto classes
and keeps every span, its attributes as plain values."""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

POLL_SECONDS = 0.02


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    span_id: bytes
    parent_span_id: bytes
    trace_id: bytes
    kind: int
    attributes: dict[str, Any]
    status_code: int
    events: tuple[str, ...]
    resource: dict[str, Any] = field(default_factory=dict)


def plain(value: AnyValue) -> Any:
    """An attribute's value as Python holds it."""
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [plain(item) for item in value.array_value.values]
    return getattr(value, kind) if kind else None


class OtlpCollector:
    """Collects the spans exported to ``endpoint`` (see the module docstring)."""

    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(POLL_SECONDS,), daemon=True)

    @property
    def endpoint(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> OtlpCollector:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def received(self) -> list[ReceivedSpan]:
        with self._lock:
            return list(self.spans)

    def take(self, path: str, body: bytes) -> None:
        exported = ExportTraceServiceRequest.FromString(body)
        spans = []
        for resource_spans in exported.resource_spans:
            resource = {a.key: plain(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                spans += [_received(span, resource) for span in scope_spans.spans]
        with self._lock:
            self.paths.append(path)
            self.spans += spans


def _received(span: Any, resource: dict[str, Any]) -> ReceivedSpan:
    return ReceivedSpan(
        name=span.name,
        span_id=span.span_id,
        parent_span_id=span.parent_span_id,
        trace_id=span.trace_id,
        kind=span.kind,
        attributes={a.key: plain(a.value) for a in span.attributes},
        status_code=span.status.code,
        events=tuple(event.name for event in span.events),
        resource=resource,
    )


def _handler_for(collector: OtlpCollector) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            collector.take(self.path, body)
            reply = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the test reads what was received."""

    return Handler
