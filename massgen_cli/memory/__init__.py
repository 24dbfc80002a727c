"""Memory in four parts, wired per run by ``runtime``: ``context`` (short-term: the conversation, per-agent
threads and each request kept inside its model's window), ``longterm`` (mem0 over a vector store, with
keys, turn-aware retrieval and learned values), ``shared`` (what the orchestrator shares between agents),
which builds on the other two, and ``filesystem`` (MassGen's memory files in each agent's workspace,
indexed into ``longterm``)."""
