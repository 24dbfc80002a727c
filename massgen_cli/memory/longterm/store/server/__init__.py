"""The memory index on a server (PostgreSQL with pgvector): the whole truth of long-term memory when a
server store is configured, shared by every process and machine that points at it."""
