"""The store: ``PersistentMemory`` (mem0 over a vector store, with the memory index beside it) and its
parts, one job each (``mem0_store``, ``journal``, ``embedding``, ``writing``, ``searching``, ``learning``,
``housekeeping``), the vector stores it can use, the mem0 configuration, and the offline embedder."""
