"""``massgen serve``: the agents of one or more configs behind an OpenAI-compatible HTTP API.

A front end like the command line: it reads requests, asks the library (``MassGenApp``, one per request,
in a worker thread of its own) and writes OpenAI's shapes back. ``wire`` holds the shapes, ``trace``
turns a run's events into the reasoning a client sees, ``runs`` runs the turns (limits, sessions,
cancelling), ``replies`` answers one request (streamed or whole), ``api`` is the Starlette app and
``command`` starts it; ``guard`` checks every request's Host, Origin and token, ``bounds`` what its
body may cost, and ``tenants`` keeps ``--keys``' tenants apart. ``web`` serves the live view of the
runs (its page in ``web/``) and takes steering messages and stops (``massgen --web``, the command line's
``cli/web_run.py``, serves one run with that view).
"""
