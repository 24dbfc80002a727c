"""The local default vector store: Qdrant's own engine in process (``qdrant-edge-py``), one shard per
collection in the local folder, behind a mem0 vector store. Its vectors and payloads stay on disk, so a
process holds about the same memory whatever the store holds (qdrant-client's local mode kept every
point in Python objects, about 10 KB each, and loaded them all at every open)."""
