"""The offline embedder's onnxruntime session, over the model as basic graph optimisation leaves it,
kept in the user's cache so later processes load it without optimising it again."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any


def optimized_session(onnxruntime: Any, model: Path) -> Any:
    """A session over the model as basic graph optimisation leaves it, kept in the user's cache
    (``embedder_cache``): loading it takes 0.3 s and peaks at 190 MB here, where optimising the
    model again takes 0.5 s and peaks at 265 MB (the int8 weights become float32 constants). The
    vectors are the same to the bit. Basic optimisations do not depend on the processor, so the
    copy fits any machine with the same onnxruntime. A copy that does not load is made again."""
    cached = embedder_cache(model, onnxruntime.__version__)
    if cached.is_file():
        try:
            return _session(onnxruntime, cached, onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL)
        except Exception:  # a damaged copy: made again below
            cached.unlink(missing_ok=True)
    partial = cached.with_name(f"{cached.name}.{os.getpid()}.{threading.get_ident()}.partial")
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        basic = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        session = _session(onnxruntime, model, basic, saved_to=partial)
        partial.replace(cached)
        return session
    except OSError:  # a cache that cannot be written only costs time
        partial.unlink(missing_ok=True)
        return _session(onnxruntime, model, onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC)


def _session(onnxruntime: Any, model: Path, level: Any, saved_to: Path | None = None) -> Any:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1  # calls run side by side instead (``LocalEmbedder``)
    options.log_severity_level = 3
    # Measured on the int8 model: basic graph optimisation embeds a short query in 4 ms (all: 4.6 ms;
    # none: 17 ms, as the weights are made float32 again at every run).
    options.graph_optimization_level = level
    if saved_to is not None:
        options.optimized_model_filepath = str(saved_to)
    return onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])


def embedder_cache(model: Path, runtime_version: str) -> Path:
    """Where the optimised copy of ``model`` for this onnxruntime is kept: under
    ``$XDG_CACHE_HOME/massgen/embedder`` (``~/.cache``), named after the model file and the version."""
    found = model.stat()
    identity = f"{model.resolve()}|{found.st_size}|{found.st_mtime_ns}|{runtime_version}"
    name = f"{model.stem}-{hashlib.sha256(identity.encode()).hexdigest()[:16]}.onnx"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "massgen" / "embedder" / name
