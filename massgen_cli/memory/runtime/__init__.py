"""A run's long-term memory by role: opening the store (``opening``), the block each step recalls
(``recall``), recording in the background (``recording``) and the agents' memory tools (``agent_tools``).
A memory failure is shown and logged; it never ends a turn."""
