"""Long-term memory on mem0: stores, the index, the offline embedder, records and their keys, recording
rules and the background recorder, turn-aware retrieval and ranking, lifetimes and learned values; it
imports nothing from ``context`` or ``shared``."""
