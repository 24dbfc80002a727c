"""Fast iteration (MassGen's ``--fast`` preset: ``coordination.fast_iteration_mode``,
``max_verifications_per_round``, ``max_internal_fix_loops``, ``skip_redundant_scaffolding``): as in
MassGen, guidance in every agent's system prompt from its first step on, which keeps a step to one working
candidate and leaves polish to the next round. Each knob adds its own rule; a knob left unset adds none."""

from __future__ import annotations

from typing import ClassVar

from massgen_cli.config.quality import QualitySettings
from massgen_cli.coordination.extension import StepAt, StepExtension
from massgen_cli.features.declaration import Feature, Opened, Opening

PRINCIPLE = (
    "Work fast: fix what is broken, defer what is merely imperfect. In one step, produce a working answer "
    "(not a polished one), say briefly what could still be better, and submit it; the next round improves "
    "on it with every agent's answer in view. Broken means it does not work at all (an error, an empty or "
    "unusable result, a failed tool call); imperfect means it works but could be better (wording, style, "
    "an edge case). When in doubt, call it imperfect."
)


def fast_guidance(settings: QualitySettings) -> str:
    """The fast-iteration rules the config's knobs ask for ("" when none is set)."""
    if not settings.fast_knobs_on:
        return ""
    rules = [PRINCIPLE]
    checks = settings.max_verifications_per_round
    if checks is not None:
        rules.append(
            f"Check a candidate at most {checks} time(s) per step: once, at the start, when you build on an "
            "earlier answer; never your own fresh work in the same step."
            if checks
            else "Do not stop to check your own work in a step; the next round checks it."
        )
    loops = settings.max_internal_fix_loops
    if loops == 0:
        rules.append("No verify-and-fix loops: repair a broken candidate once, note the rest, submit.")
    elif loops is not None:
        rules.append(f"At most {loops} verify-and-fix loop(s) per step; then note what is left and submit.")
    if settings.skip_redundant_scaffolding:
        rules.append(
            "Reuse the notes, plans and task lists already in your workspace: add to them, never write "
            "them again from scratch."
        )
    return "\n".join(f"- {rule}" if at else rule for at, rule in enumerate(rules))


class FastIteration(StepExtension):
    name: ClassVar[str] = "fast iteration"

    def __init__(self, guidance: str):
        self.guidance = guidance

    async def system_note(self, at: StepAt, *, with_peers: bool) -> str:
        return self.guidance


def _open(opening: Opening) -> Opened:
    return Opened(FastIteration(fast_guidance(opening.config.orchestrator.coordination)))


FEATURE = Feature(
    "fast iteration",
    wanted=lambda opening: opening.config.orchestrator.coordination.fast_knobs_on,
    open=_open,
)
