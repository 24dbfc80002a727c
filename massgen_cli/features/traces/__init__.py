"""The traces of a run over OpenTelemetry (the telemetry feature's own code, imported only when a config
or ``--otel`` asks for traces): ``exporter`` sets the SDK up, ``spans`` turns the run into spans."""
