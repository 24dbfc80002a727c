"""The ``memory:`` block: conversation memory, persistent memory (mem0 + a vector store),
compression, retrieval, recording, lifecycle and learned values."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import AliasChoices, Field, NonNegativeInt, PositiveInt, field_validator, model_validator

from massgen_cli.config.base import Fraction, Section, section
from massgen_cli.config.massgen_keys import refused_backend_types
from massgen_cli.config.problems import suggest
from massgen_cli.config.providers import PROVIDERS

# The summariser is built as a backend; mem0's models also take the providers mem0 itself knows.
BACKEND_PROVIDERS = frozenset(PROVIDERS) - {"scripted"}
MEM0_PROVIDERS = BACKEND_PROVIDERS | {"local", "openai", "anthropic", "groq", "together", "azure_openai"}


class ConversationMemoryConfig(Section):
    enabled: bool = True
    """Give agents the earlier turns of the conversation; false sends no earlier turns in their requests."""


class ModelEndpoint(Section):
    """A model that memory calls: ``provider`` + ``model``, with an optional key and server."""

    providers: ClassVar[frozenset[str]] = MEM0_PROVIDERS
    unsupported: ClassVar[dict[str, str]] = {}

    provider: str = "local"
    """Who serves the model: 'local' (the embedded offline default), openai, anthropic, groq, together,
    azure_openai, or another backend type with an OpenAI-compatible base_url.
    """
    model: str | None = None
    """Model name; null uses the provider's default model."""
    api_key: str | None = None
    """API key; null reads the provider's usual variable."""
    base_url: str | None = None
    """Server address; null uses the provider's default."""

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, value: str) -> str:
        if value in cls.unsupported:
            raise ValueError(f"backend '{value}' is not supported: {cls.unsupported[value]}")
        if value not in cls.providers:
            raise ValueError(f"unknown provider '{value}'{suggest(value, sorted(cls.providers))}")
        return value


class SummarizerEndpoint(ModelEndpoint):
    """The compression summariser, built as a backend: ``provider`` is a backend type."""

    providers: ClassVar[frozenset[str]] = BACKEND_PROVIDERS
    unsupported: ClassVar[dict[str, str]] = refused_backend_types()

    provider: str = "local"
    """Backend type that serves the model, as in an agent's backend.type: 'local' (the embedded offline
    model), openai, claude, groq, together, chatcompletion...
    """

    @model_validator(mode="after")
    def _server_for_chatcompletion(self) -> SummarizerEndpoint:
        if self.provider == "chatcompletion" and not self.base_url:
            raise ValueError("provider 'chatcompletion' needs 'base_url' (the server's /v1 address)")
        return self


class EmbeddingConfig(ModelEndpoint):
    dimensions: PositiveInt | None = None
    """Size of the embedding vectors; null takes the model's own size."""


class QdrantConfig(Section):
    mode: Literal["local", "server"] = "local"
    """'local' embeds Qdrant in the process; 'server' connects to a Qdrant server."""
    host: str = "localhost"
    """Qdrant server host (server mode)."""
    port: int = Field(default=6333, gt=0, lt=65536)
    """Qdrant server port (server mode)."""
    url: str | None = None
    """Full Qdrant server URL (server mode); used instead of host and port."""
    api_key: str | None = None
    """API key of a secured Qdrant server."""
    path: str | None = None
    """Folder of the embedded store (Qdrant's engine in process, one process at a time); null puts it under
    the state folder.
    """
    collection_name: str = "massgen_memories"
    """Collection of mem0's points; in server mode the memory index keeps '<name>_index' and '<name>_records'
    beside it, and sessions '<name>_sessions'.
    """


class PgvectorConfig(Section):
    connection_string: str | None = None
    """PostgreSQL connection string, e.g. postgresql://user:pass@host:5432/db."""
    collection_name: str = "massgen_memories"
    """Collection (table) that holds the memories."""


class PersistentMemoryConfig(Section):
    massgen_section: ClassVar[str] = "persistent_memory"

    enabled: bool = False
    """Keep long-term memory (mem0 over a vector store) across turns and runs."""
    on_disk: bool = True
    """Keep the store on disk; false keeps it in memory for this process only."""
    session_name: str | None = None
    """Session to continue across runs (the --session flag wins). Null, written or left out, has retrieval
    search every session (turn-aware: an agent's own memories and those of the winners of earlier turns); a
    name keeps it to the run's session.
    """
    path: str | None = None
    """Folder of the local Qdrant store (wins over qdrant.path); null puts it under the state folder. The
    memory index and mem0's history always stay in the state folder.
    """
    vector_store: Literal["qdrant", "pgvector"] = "qdrant"
    """Vector store under mem0."""
    llm: ModelEndpoint = section(ModelEndpoint)
    """Model mem0 uses to extract facts from recorded messages."""
    embedding: EmbeddingConfig = section(EmbeddingConfig)
    """Model that embeds memories for semantic search."""
    qdrant: QdrantConfig = section(QdrantConfig)
    """Qdrant settings, used when vector_store is 'qdrant'."""
    pgvector: PgvectorConfig = section(PgvectorConfig)
    """PostgreSQL settings, used when vector_store is 'pgvector'."""

    @property
    def keeps_truth_on_server(self) -> bool:
        """Whether a server (PostgreSQL, or Qdrant in server mode) holds the whole of long-term memory,
        shared by every process and machine, rather than the state folder."""
        return self.vector_store == "pgvector" or self.qdrant.mode == "server"


class CompressionConfig(Section):
    enabled: bool = True
    """Compress the messages before a call that would overfill the context window."""
    trigger_threshold: float = Field(default=0.75, gt=0, le=1)
    """Fraction of the context window that, once exceeded, triggers compression."""
    target_ratio: float = Field(default=0.40, gt=0, lt=1)
    """Fraction of the context window kept after compression; must be below trigger_threshold."""
    summarizer: SummarizerEndpoint | None = None
    """Model that summarises the dropped messages; null uses the agent's own backend."""
    on_stream_budget: Literal["warn", "stop"] = "warn"
    """When a streamed reply outgrows the window: 'warn' and go on, or 'stop' the stream."""

    @model_validator(mode="after")
    def _target_below_trigger(self) -> CompressionConfig:
        if self.target_ratio >= self.trigger_threshold:
            raise ValueError(
                f"target_ratio ({self.target_ratio}) must be below "
                f"trigger_threshold ({self.trigger_threshold})"
            )
        return self


class RetrievalConfig(Section):
    limit: NonNegativeInt = 5
    """Most long-term memories retrieved per step; 0 turns retrieval off."""
    exclude_recent: bool = True
    """Skip retrieval while the recent context is still in the window, except at a turn's first step and after
    a compression or an agent restart.
    """
    token_budget: PositiveInt = 1500
    """Most tokens the retrieved memories may add to a request."""
    context_turns: NonNegativeInt = 1
    """Memories recorded just before and just after each retrieved memory in its session (this many on each
    side) that come with it, and with each memory_search result; retrieval leaves them out of a memory
    whose lines would not fit token_budget. 0 brings none.
    """


class RecordingConfig(Section):
    record_reasoning: bool = False
    """Also record the models' reasoning (thinking) output."""
    record_all_tool_calls: bool = Field(
        default=False, validation_alias=AliasChoices("record_all_tool_calls", "record_tool_calls")
    )
    """Record every tool call and its result (never the new_answer/vote workflow calls); MCP calls as
    mcp_summarization says.
    """
    record_file_reads: bool = True
    """Record what read_file read (its path and text, compact) so retrieval can bring it back after
    compression drops it.
    """
    include_mcp_tools: bool = False
    """Record MCP tool calls even when record_all_tool_calls is off."""
    mcp_summarization: Literal["aggregate", "each", "none"] = "aggregate"
    """How recorded MCP calls are kept: 'aggregate', one record per step (tools, counts, result sizes and
    first lines); 'each', a call and a result record per call; 'none', not recorded.
    """
    tool_argument_limit: PositiveInt = 200
    """Characters of a tool call's arguments kept in a record; the rest is cut."""


class LifecycleConfig(Section):
    """Time-to-live of each memory level, in seconds; null keeps forever."""

    working_ttl_seconds: int | None = 30 * 60
    """Lifetime of working memory in seconds; null keeps it forever."""
    session_ttl_seconds: int | None = 2 * 60 * 60
    """Lifetime of session memory in seconds; null keeps it forever."""
    episodic_ttl_seconds: int | None = 7 * 24 * 60 * 60
    """Lifetime of episodic memory in seconds; null keeps it forever."""
    semantic_ttl_seconds: int | None = None
    """Lifetime of semantic memory in seconds; null keeps it forever."""


class ValueLearningConfig(Section):
    enabled: bool = False
    """Learn a value per memory from coordination outcomes (TD(λ)) and use it in ranking."""
    alpha: float = Field(default=0.1, gt=0, le=1)
    """Learning rate of the TD(λ) updates."""
    lambda_: Fraction = Field(default=0.8, alias="lambda")
    """Trace decay λ of the TD(λ) updates."""
    weight: Fraction = 0.2
    """Share of the learned value in a memory's ranking score."""
    goal: str | None = None
    """Goal the values are learned for (null: the task_type); values are kept per goal."""
    reward_winner: Fraction = 1.0
    """Reward for a memory that was in the winning answer's context."""
    reward_rejected: Fraction = 0.0
    """Reward for a memory that was only in the contexts of answers that lost."""


class MemoryConfig(Section):
    """The whole memory block; an agent's ``memory:`` is deep-merged over the global one."""

    enabled: bool = False
    """Turn the memory system on."""
    domain: str = "general"
    """Domain part of memory keys ({domain}:{task_type}:{hash})."""
    task_type: str = "general"
    """Task-type part of memory keys ({domain}:{task_type}:{hash})."""
    conversation_memory: ConversationMemoryConfig = section(ConversationMemoryConfig)
    """Short-term conversation memory."""
    persistent_memory: PersistentMemoryConfig = section(PersistentMemoryConfig)
    """Long-term memory: mem0 over a vector store."""
    compression: CompressionConfig = section(CompressionConfig)
    """Context-window compression."""
    retrieval: RetrievalConfig = section(RetrievalConfig)
    """Retrieval of long-term memories into each request."""
    tools: bool = True
    """Give agents the memory tools (memory_search, memory_save, memory_forget) when long-term memory is on
    for them; an agent's own memory block may turn them off.
    """
    recording: RecordingConfig = section(RecordingConfig)
    """What is recorded into long-term memory."""
    lifecycle: LifecycleConfig = section(LifecycleConfig)
    """How long each memory level lives."""
    value_learning: ValueLearningConfig = section(ValueLearningConfig)
    """Learned memory values, mixed into ranking."""


def persistent_enabled(memory: MemoryConfig | None) -> bool:
    """Whether ``memory`` turns long-term memory on."""
    return bool(memory and memory.enabled and memory.persistent_memory.enabled)
