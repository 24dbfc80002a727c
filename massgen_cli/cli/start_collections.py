"""The garbage collector during a question's start. A start builds some 400k objects that live as long
as the process (the SDKs', the config's and our own classes, models and dataclasses) and makes almost no
cyclic garbage, yet the collector walked them again and again as they came: about 0.1 s of CPU before
the first model request, a tenth of the start. ``hold_collections`` pauses it from the command line's
reading until the run is built; ``resume_collections`` then freezes what the start made out of later
collections (it stays for the process's life anyway) and turns the collector back on."""

from __future__ import annotations

import gc

_held = False


def hold_collections() -> None:
    """No cyclic collections until ``resume_collections`` (nothing changes when they are off already)."""
    global _held
    if gc.isenabled() and not _held:
        gc.disable()
        _held = True


def resume_collections() -> None:
    """Collections as usual from here, over the objects made from now on; a no-op unless held."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()
