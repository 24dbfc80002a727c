"""Evaluation criteria (``coordination.checklist_criteria_inline``, MassGen's ``--eval-criteria FILE``):
every agent sees the criteria as E1..EN, and a vote is a judgement against them. With its vote an agent
calls ``submit_checklist`` with a verdict on each criterion for the answer it votes for. A vote without
one, or for an answer that fails a primary or standard criterion, is refused once in that step with the
reason (the agent answers better with ``new_answer``, or votes again: at its answer cap it has to); a
stretch criterion may fail. Each checklist is an event (``ChecklistJudged``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from massgen_cli.backends.base import Completion, ToolSpec
from massgen_cli.coordination.extension import StepAt, StepExtension
from massgen_cli.events import EventSink
from massgen_cli.feature_events import ChecklistJudged
from massgen_cli.features.declaration import Feature, Opened, Opening

if TYPE_CHECKING:
    from massgen_cli.config.criteria import Criterion

SUBMIT_CHECKLIST = "submit_checklist"
REQUIRED = ("primary", "standard")


def criterion_lines(criteria: Sequence[Criterion]) -> list[str]:
    """``E1 [primary] text (verify: …; fails if: …)``, one line per criterion."""
    lines = []
    for number, criterion in enumerate(criteria, 1):
        extra = [f"verify: {criterion.verify_by}"] if criterion.verify_by else []
        if criterion.anti_patterns:
            extra.append(f"fails if: {'; '.join(criterion.anti_patterns)}")
        extra += [f"{score}: {anchor}" for score, anchor in criterion.score_anchors.items()]
        said = f" ({'; '.join(extra)})" if extra else ""
        lines.append(f"E{number} [{criterion.category}] {criterion.text}{said}")
    return lines


class Criteria(StepExtension):
    """The criteria in every step, the checklist beside the vote, and the gate on votes."""

    name: ClassVar[str] = "evaluation criteria"

    def __init__(self, criteria: Sequence[Criterion], emit: EventSink, *, fast: bool = False):
        self.criteria, self.emit, self.fast = list(criteria), emit, fast
        self.ids = [f"E{number}" for number in range(1, len(self.criteria) + 1)]
        self.required = {i for i, c in zip(self.ids, self.criteria, strict=True) if c.category in REQUIRED}
        self.checklists: dict[str, dict[str, bool]] = {}
        self.pushed_back: set[str] = set()

    async def system_note(self, at: StepAt, *, with_peers: bool) -> str:
        listed = "\n".join(criterion_lines(self.criteria))
        if not with_peers:
            return f"Evaluation criteria your answer must meet (stretch ones where you can):\n{listed}"
        how = (
            f"Judge answers against these evaluation criteria. With your vote, call {SUBMIT_CHECKLIST} in "
            "the same reply with a verdict on every criterion for the answer you vote for (true: met). "
            "Vote only for an answer that meets every primary and standard criterion (a stretch one may "
            "fail); if the best answer fails one, give a better answer with new_answer instead."
        )
        if self.fast:
            how += " Judge real gaps, not polish: a criterion fails when it is missed or broken."
        return f"{how}\n{listed}"

    async def task_note(self, at: StepAt) -> str:
        self.pushed_back.discard(at.agent_id)  # a new step: the gate may push back once again
        return ""

    def workflow_tools(self, agent_id: str) -> Sequence[ToolSpec]:
        verdicts = {
            i: {"type": "boolean", "description": text}
            for i, text in zip(self.ids, self._texts(), strict=True)
        }
        parameters = {
            "type": "object",
            "properties": {
                "verdicts": {"type": "object", "properties": verdicts, "required": self.ids},
                "notes": {"type": "string", "description": "What the answer misses, briefly."},
            },
            "required": ["verdicts"],
        }
        said = "Your verdict on each evaluation criterion for the answer you vote for; call it with the vote."
        return (ToolSpec(SUBMIT_CHECKLIST, said, parameters),)

    def replied(self, at: StepAt, completion: Completion) -> None:
        calls = [call for call in completion.tool_calls if call.name == SUBMIT_CHECKLIST]
        if calls:
            self.checklists[at.agent_id] = _verdicts(calls[-1].arguments.get("verdicts"), self.ids)
        else:
            self.checklists.pop(at.agent_id, None)

    def veto(self, at: StepAt, answer: str | None) -> str:
        if answer is not None:
            return ""
        checklist = self.checklists.pop(at.agent_id, None)
        met = tuple(i for i in self.ids if checklist and checklist.get(i))
        unmet = tuple(i for i in self.ids if checklist and checklist.get(i) is False)
        missing = [i for i in self.ids if checklist is None or i not in checklist]
        failing = [i for i in unmet if i in self.required]
        push_back = at.agent_id not in self.pushed_back and bool(missing or failing)
        if checklist is not None:
            self.emit(ChecklistJudged(at.agent_id, met, unmet, refused=push_back and not missing))
        if not push_back:
            return ""
        self.pushed_back.add(at.agent_id)
        if missing:
            return (
                f"With your vote, call {SUBMIT_CHECKLIST} with a verdict on every criterion for the answer "
                f"you vote for (missing: {', '.join(missing)})."
            )
        texts = dict(zip(self.ids, self._texts(), strict=True))
        named = "; ".join(f"{i} ({texts[i]})" for i in failing)
        return (
            f"Your checklist finds the answer you vote for fails {named}. Give a better answer with "
            "new_answer that meets it; vote again only if you cannot."
        )

    def presentation_note(self, agent_id: str) -> str:
        return "The final answer must meet these criteria:\n" + "\n".join(criterion_lines(self.criteria))

    def _texts(self) -> list[str]:
        return [criterion.text for criterion in self.criteria]


def _verdicts(given: Any, ids: Sequence[str]) -> dict[str, bool]:
    """``{E1: true}``, ``{E1: {met: true}}`` or ``[{id: E1, met: true}]`` as ``{E1: True}``."""
    if isinstance(given, list):
        given = {str(item.get("id")): item for item in given if isinstance(item, dict)}
    if not isinstance(given, dict):
        return {}
    verdicts = {}
    for key, value in given.items():
        verdict = value.get("met") if isinstance(value, dict) else value
        if key in ids and isinstance(verdict, bool):
            verdicts[key] = verdict
    return verdicts


def _open(opening: Opening) -> Opened:
    coordination = opening.config.orchestrator.coordination
    criteria = coordination.checklist_criteria_inline or []
    return Opened(Criteria(criteria, opening.emit, fast=coordination.fast_iteration_mode))


FEATURE = Feature(
    "evaluation criteria",
    wanted=lambda opening: bool(opening.config.orchestrator.coordination.checklist_criteria_inline),
    open=_open,
    steps_after=("task plans", "fast iteration"),
)
