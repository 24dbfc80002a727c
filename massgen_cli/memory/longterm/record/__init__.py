"""Recording: memories as data, their keys and lifetimes, what the recording rules keep of a conversation,
the background recorder and the spool of what could not be written."""
