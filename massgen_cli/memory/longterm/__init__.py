"""Long-term memory on mem0, in three parts, lowest first: ``record`` (memories as data, keys, lifetimes,
the recording rules, the background recorder and the spool), ``retrieve`` (filters, turn-aware
visibility, ranking, learned values, the injected block) and ``store`` (PersistentMemory, the memory
index, vector stores, the offline embedder). It imports nothing from ``context`` or ``shared``."""
