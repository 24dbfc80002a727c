"""Hierarchical memory keys: ``{domain}:{task_type}:{content_hash16}``, same content, same key."""

from __future__ import annotations

import hashlib
import re

GENERAL = "general"
_SPACES = re.compile(r"\s+")
_SEGMENT = re.compile(r"[^a-z0-9_.-]+")


def normalize_content(text: str) -> str:
    """Content as keys see it: spacing and case do not make a new memory."""
    return _SPACES.sub(" ", text).strip().casefold()


def segment(value: str | None) -> str:
    """A key segment: lower case, no colons or spaces; empty means ``general``."""
    cleaned = _SEGMENT.sub("_", (value or "").strip().lower()).strip("_")
    return cleaned or GENERAL


def memory_key(text: str, domain: str | None = None, task_type: str | None = None) -> str:
    digest = hashlib.sha256(normalize_content(text).encode("utf-8")).hexdigest()[:16]
    return f"{segment(domain)}:{segment(task_type)}:{digest}"
