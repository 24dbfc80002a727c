"""The offline embedder's onnxruntime session, over the model as basic graph optimisation leaves it,
kept in the user's cache so later processes load it without optimising it again."""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
from pathlib import Path
from typing import Any

MODEL_FILE = "model.onnx"
WEIGHTS_FILE = "weights.bin"


def optimized_session(onnxruntime: Any, model: Path) -> Any:
    """A session over the model as basic graph optimisation leaves it, kept in the user's cache
    (``embedder_cache``) as a graph and a file of its float32 weights, which onnxruntime maps rather
    than reads: loading it took 0.1 s and 105 MB here, where optimising the model again takes 0.4 s
    and peaks at 265 MB (the int8 weights become float32 constants), and loading the optimised graph
    as one file 0.35 s and 190 MB. The vectors are the same to the bit. Basic optimisations do not
    depend on the processor, so the copy fits any machine with the same onnxruntime. A copy that does
    not load is made again."""
    cached = embedder_cache(model, onnxruntime.__version__)
    if (cached / MODEL_FILE).is_file():
        try:
            return _session(
                onnxruntime, cached / MODEL_FILE, onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
            )
        except Exception:  # a damaged copy: made again below
            shutil.rmtree(cached, ignore_errors=True)
    partial = cached.with_name(f"{cached.name}.{os.getpid()}.{threading.get_ident()}.partial")
    try:
        partial.mkdir(parents=True)
        session = _session(onnxruntime, model, onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC, partial)
        _publish(partial, cached)
        return session
    except OSError:  # a cache that cannot be written only costs time
        shutil.rmtree(partial, ignore_errors=True)
        return _session(onnxruntime, model, onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC)


def _publish(partial: Path, cached: Path) -> None:
    """The copy made in ``partial`` becomes the cache in one step; another process's, made at the same
    time, may have come first (then ours goes)."""
    try:
        partial.rename(cached)
    except OSError:
        shutil.rmtree(partial, ignore_errors=True)
        if not (cached / MODEL_FILE).is_file():
            raise


def _session(onnxruntime: Any, model: Path, level: Any, saved_in: Path | None = None) -> Any:
    options = onnxruntime.SessionOptions()
    # Calls run side by side instead (``LocalEmbedder``); with one thread no idle pool thread spins on
    # a core after a query, which the search that follows would wait for.
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    # Measured on the int8 model: basic graph optimisation embeds a short query in 4 ms (all: 4.6 ms;
    # none: 17 ms, as the weights are made float32 again at every run).
    options.graph_optimization_level = level
    if saved_in is not None:
        options.optimized_model_filepath = str(saved_in / MODEL_FILE)
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_file_name", WEIGHTS_FILE
        )
        options.add_session_config_entry(
            "session.optimized_model_external_initializers_min_size_in_bytes", "1024"
        )
    return onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])


def embedder_cache(model: Path, runtime_version: str) -> Path:
    """The folder the optimised copy of ``model`` for this onnxruntime is kept in: under
    ``$XDG_CACHE_HOME/massgen/embedder`` (``~/.cache``), named after the model file and the version."""
    found = model.stat()
    identity = f"{model.resolve()}|{found.st_size}|{found.st_mtime_ns}|{runtime_version}"
    name = f"{model.stem}-{hashlib.sha256(identity.encode()).hexdigest()[:16]}"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "massgen" / "embedder" / name
