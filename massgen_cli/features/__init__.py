"""The optional features, each a step extension (``coordination.extension.StepExtension``): how task
planning, workspace snapshots, skills, memory files, the shared block, long-term memory and its tools take
part in agents' steps. Only the composition root (``compose.py``) imports them, each when the config uses
it."""
