"""Which provider an agent's calls reach, as its rate limit and circuit breaker share it: the backend
type, the server address and the key (kept as a short digest, never the key itself)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from urllib.parse import urlparse

from massgen_cli.backends.registry import resolve_api_key, resolve_base_url
from massgen_cli.config.backend import BackendConfig
from massgen_cli.errors import MassGenError


@dataclass(frozen=True)
class ProviderIdentity:
    """Agents with equal identities call the same provider with the same key."""

    backend_type: str
    base_url: str
    key_digest: str

    @property
    def label(self) -> str:
        """How events name it: ``openai (api.openai.com)``; the type alone when it has no address."""
        host = urlparse(self.base_url).netloc
        return f"{self.backend_type} ({host})" if host else self.backend_type


def provider_identity(backend: BackendConfig) -> ProviderIdentity:
    """``backend``'s provider identity, its key and address resolved as its backend resolves them."""
    try:
        key, url = resolve_api_key(backend) or "", resolve_base_url(backend) or ""
    except MassGenError:  # a missing key is said where the backend is built
        key, url = "", backend.base_url or ""
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16] if key else ""
    return ProviderIdentity(backend.type or "", url, digest)
