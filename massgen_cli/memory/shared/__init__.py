"""The orchestrator's shared memory: scoped entries and slots, the shared block put before each step,
what persists and rolls back with a session's turns; it builds on
``context`` (conversation memory) and ``longterm`` (the store, the recorder, visibility)."""
