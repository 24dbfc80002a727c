"""Memory: conversation memory and per-agent threads, context monitoring and compression."""
