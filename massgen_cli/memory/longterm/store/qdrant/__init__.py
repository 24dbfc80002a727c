"""The memory index on a Qdrant server: the whole truth of long-term memory with ``vector_store: qdrant``
and ``qdrant.mode: server``, shared by every process and machine that points at the server.

Two collections beside mem0's own (``<collection>``):

- ``<collection>_index``: one point per memory, its id derived from the memory's key (uuid5), so the
  same content written by two processes lands on the same point. It is written with Qdrant's
  ``insert_only`` mode: the first writer's point stays and the second reads back another memory id
  (``KeyTaken``), which is what PostgreSQL's unique key gives. The point carries a dense vector
  (``dense``), the BM25 terms as a sparse vector with Qdrant's IDF modifier (``terms``), the memory's
  fields, its stale flag, and a copy of its sources (with a ``won`` flag) that searches filter on.
- ``<collection>_records``: payload-only points, one kind each (``source``, ``winner``, ``value``,
  ``stale``, ``meta``, ``pending``), ids derived from what makes them unique. Sources are points of
  their own rather than an array on the memory, because Qdrant cannot append to an array atomically:
  two processes adding a source at once would each write the array without the other's. The memory's
  copy of its sources is rebuilt from these points after every change and checked after the write
  (``sources.SourceView``), which converges when several processes change one memory at once.

Qdrant joins nothing, so turn-aware visibility (a winner's sources) is a flag on each copied source,
set when a winner is recorded and when a source is added (whichever comes second sees the other).
Ranking runs in Qdrant's Query API: a dense and a sparse prefetch under the search's filter, fused by
the server (``search``)."""
