"""The command-line front end, lowest first: ``batch`` (many questions at once) and ``batch_ray`` (as Ray
tasks), ``commands``, ``memory_commands`` and ``validate`` (what the commands do, without Typer),
``batch_command`` (the batch command's front end) and ``main`` (the thin Typer layer and the entry
point)."""
