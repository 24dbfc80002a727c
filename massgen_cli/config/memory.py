"""The ``memory:`` block: conversation memory, persistent memory (mem0 + a vector store),
compression, retrieval, recording, lifecycle and learned values."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field, model_validator

from massgen_cli.config.base import Section


class ConversationMemoryConfig(Section):
    enabled: bool = True


class ModelEndpoint(Section):
    """A model that memory calls: ``provider`` + ``model``, with an optional key and server."""

    provider: str = "local"
    model: str | None = None
    api_key: str | None = None
    base_url: str | None = None


class EmbeddingConfig(ModelEndpoint):
    dimensions: int | None = Field(default=None, gt=0)


class QdrantConfig(Section):
    mode: Literal["local", "server"] = "local"
    host: str = "localhost"
    port: int = Field(default=6333, gt=0, lt=65536)
    url: str | None = None
    api_key: str | None = None
    path: str | None = None


class PgvectorConfig(Section):
    connection_string: str | None = None
    collection_name: str = "massgen_memories"


class PersistentMemoryConfig(Section):
    enabled: bool = False
    on_disk: bool = True
    session_name: str | None = None
    agent_name: str | None = None
    path: str | None = None
    vector_store: Literal["qdrant", "pgvector"] = "qdrant"
    llm: ModelEndpoint = Field(default_factory=ModelEndpoint)
    embedding: EmbeddingConfig = Field(default_factory=EmbeddingConfig)
    qdrant: QdrantConfig = Field(default_factory=QdrantConfig)
    pgvector: PgvectorConfig = Field(default_factory=PgvectorConfig)


class CompressionConfig(Section):
    enabled: bool = True
    trigger_threshold: float = Field(default=0.75, gt=0, le=1)
    target_ratio: float = Field(default=0.40, gt=0, lt=1)
    summarizer: ModelEndpoint | None = None
    on_stream_budget: Literal["warn", "stop"] = "warn"

    @model_validator(mode="after")
    def _target_below_trigger(self) -> CompressionConfig:
        if self.target_ratio >= self.trigger_threshold:
            raise ValueError(
                f"target_ratio ({self.target_ratio}) must be below trigger_threshold ({self.trigger_threshold})"
            )
        return self


class RetrievalConfig(Section):
    limit: int = Field(default=5, ge=0)
    exclude_recent: bool = True
    token_budget: int = Field(default=1500, gt=0)


class RecordingConfig(Section):
    record_reasoning: bool = False
    record_all_tool_calls: bool = Field(
        default=False, validation_alias=AliasChoices("record_all_tool_calls", "record_tool_calls")
    )
    include_mcp_tools: bool = False
    mcp_summarization: Literal["aggregate", "each", "none"] = "aggregate"
    tool_argument_limit: int = Field(default=200, gt=0)


class LifecycleConfig(Section):
    """Time-to-live of each memory level, in seconds; null keeps forever."""

    working_ttl_seconds: int | None = 30 * 60
    session_ttl_seconds: int | None = 2 * 60 * 60
    episodic_ttl_seconds: int | None = 7 * 24 * 60 * 60
    semantic_ttl_seconds: int | None = None


class ValueLearningConfig(Section):
    enabled: bool = False
    alpha: float = Field(default=0.1, gt=0, le=1)
    lambda_: float = Field(default=0.8, ge=0, le=1, alias="lambda")
    weight: float = Field(default=0.2, ge=0, le=1)
    goal: str | None = None


class MemoryConfig(Section):
    """The whole memory block; an agent's ``memory:`` is deep-merged over the global one."""

    enabled: bool = False
    domain: str = "general"
    task_type: str = "general"
    conversation_memory: ConversationMemoryConfig = Field(default_factory=ConversationMemoryConfig)
    persistent_memory: PersistentMemoryConfig = Field(default_factory=PersistentMemoryConfig)
    compression: CompressionConfig = Field(default_factory=CompressionConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    recording: RecordingConfig = Field(default_factory=RecordingConfig)
    lifecycle: LifecycleConfig = Field(default_factory=LifecycleConfig)
    value_learning: ValueLearningConfig = Field(default_factory=ValueLearningConfig)
