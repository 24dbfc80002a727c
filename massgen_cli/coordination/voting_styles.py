"""How agents judge the answers before they vote (MassGen's ``voting_sensitivity``), and how different a new
answer must be (``answer_novelty_requirement``): instructions added to the coordination prompt, and the
word-overlap check that refuses a new answer too like an existing one. The wording is this project's."""

from __future__ import annotations

import re
from collections.abc import Iterable

LENIENT = (
    "Before you act, ask one question: does the best current answer address the original message well? "
    "If it does, vote for it. If not, write a better answer."
)
BALANCED = (
    "Before you act, weigh every current answer: its strengths and weaknesses in accuracy, completeness "
    "and how well it fits the original message. Before you vote, name at least one weakness of the best "
    "answer and ask whether you can fix it or combine the answers into a better one; if you can, submit "
    "that with `new_answer` instead of voting."
)
STRICT = (
    "Before you act, score the best current answer from 0 to 3 on each of: correctness, completeness, and "
    "clarity. Vote only if it scores 3 on all three. If you can give a substantially better answer, you "
    "may not vote: submit it with `new_answer`."
)
ROI = (
    "Rate every current answer from 1 to 10 on correctness, completeness, depth and clarity. The quality "
    "bar is {bar}: if the best answer falls below it on any of them, improve it with `new_answer`; "
    "otherwise vote for it."
)
CHECKLIST = (
    "Judge the best current answer against a checklist of what the original message needs (each item "
    "true or false). Vote when at least {bar} items hold and none of the essential ones fails; otherwise "
    "submit a better answer. You have {cap} answer(s) to spend: spend them where they change the outcome."
)
ADVERSARIAL = (
    "Before you vote, imagine the best answer has failed the user, and find the most likely reason. If you "
    "can name a real way it fails, fix it with `new_answer`; vote only when you cannot."
)
CONSISTENCY = (
    "Before you vote, work out the answer yourself, independently, then compare it with the best current "
    "answer. If they disagree on anything that matters, resolve it with `new_answer`; vote when they agree."
)
DIVERSITY = (
    "Look for what each current answer does best. If two or more answers have strengths the best one "
    "lacks, combine them in a `new_answer`; vote when one answer already holds them all."
)
REFLECTIVE = (
    "Restate what the user really asks for, and three criteria a good answer must meet. Vote for the best "
    "answer if it meets all three; otherwise submit one that does."
)

STYLES = {
    "lenient": LENIENT,
    "balanced": BALANCED,
    "strict": STRICT,
    "adversarial": ADVERSARIAL,
    "consistency": CONSISTENCY,
    "diversity": DIVERSITY,
    "reflective": REFLECTIVE,
    "checklist_gated": BALANCED,  # its checklist tool is not built here
}
ROI_THRESHOLDS = {"roi": 15, "roi_balanced": 15, "roi_conservative": 30, "roi_aggressive": 5}
"""MassGen's default voting_threshold (0 to 100) of each roi style: the lower, the higher the bar."""
SEQUENCE = ("strict", "balanced", "lenient")
"""The ``sequential`` style: strict in an agent's first step, balanced in its second, lenient after."""

NOVELTY = {
    "balanced": "A new answer must differ meaningfully from the existing ones, not rephrase them.",
    "strict": (
        "A new answer must be substantially different from the existing ones (another approach, other "
        "tools); if you cannot give one, vote."
    ),
}
NOVELTY_OVERLAP = {"balanced": 0.70, "strict": 0.50}
"""The word overlap (Jaccard) past which a new answer counts as a repeat."""


def voting_instructions(
    style: str | None, *, threshold: int | None, answer_cap: int | None, step: int
) -> str:
    """The evaluation paragraph of ``style`` for an agent's ``step``-th step (1-based); "" without one."""
    if style is None:
        return ""
    if style == "sequential":
        return STYLES[SEQUENCE[min(step, len(SEQUENCE)) - 1]]
    if style in ROI_THRESHOLDS:
        return ROI.format(bar=quality_bar(threshold if threshold is not None else ROI_THRESHOLDS[style]))
    if style in ("checklist", "checklist_scored"):
        return CHECKLIST.format(bar=threshold or 5, cap=answer_cap or 5)
    return STYLES[style]


def quality_bar(threshold: int) -> float:
    """A voting threshold (0 to 100) as the 1-to-10 quality bar, as MassGen maps it: 5 → 9.8, 30 → 8.5,
    90 → 5.5 (a low threshold asks for more)."""
    return round(max(5.0, min(10.0, 10.0 - threshold / 20)), 1)


def novelty_instructions(requirement: str) -> str:
    return NOVELTY.get(requirement, "")


def too_like(answer: str, existing: Iterable[str], requirement: str) -> bool:
    """Whether ``answer`` repeats an existing one: their word sets overlap past the requirement's limit."""
    limit = NOVELTY_OVERLAP.get(requirement)
    if limit is None:
        return False
    words = _words(answer)
    return any(_overlap(words, _words(other)) > limit for other in existing)


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _overlap(first: set[str], second: set[str]) -> float:
    union = first | second
    return len(first & second) / len(union) if union else 1.0
