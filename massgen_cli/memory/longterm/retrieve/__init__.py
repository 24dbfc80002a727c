"""Retrieval: what a search may rank (scopes and turn-aware visibility as SQL), how two rankings fuse,
learned values, and the ``Relevant memories:`` block an agent step gets."""
