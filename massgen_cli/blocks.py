"""The headers of the context blocks that features put after the system prompt: one place, light to
import, so a feature can name its blocks' markers without loading the code that fills them."""

RELEVANT_MEMORIES = "Relevant memories:"
SHARED_CONVERSATION = "=== SHARED CONVERSATION MEMORY ==="
SHARED_PERSISTENT = "=== SHARED PERSISTENT MEMORY ==="
SHARED_ENTRIES = "=== SHARED ENTRIES ==="
SESSION_SLOTS = "=== SESSION SLOTS ==="
SHARED_BLOCKS = (SHARED_CONVERSATION, SHARED_PERSISTENT, SHARED_ENTRIES, SESSION_SLOTS)
TASK_PLANS = "=== TASK PLANS ==="
SUBAGENTS = "=== YOUR SUBAGENTS ==="
