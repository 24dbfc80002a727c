"""The store: ``PersistentMemory`` (mem0 over a vector store, with the memory index beside it), the
vector stores it can use, the mem0 configuration, and the offline embedder."""
