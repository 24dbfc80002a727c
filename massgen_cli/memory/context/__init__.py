"""Short-term memory: the conversation, per-agent threads, context windows, the monitor, compression and
the guard that keeps each request inside its model's window; it imports nothing from ``longterm`` or
``shared``."""
