"""``orchestrator:`` and ``timeout_settings:``: how the agents coordinate, share memory, and how long a
turn may take."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, NonNegativeFloat, NonNegativeInt, PositiveFloat, PositiveInt

from massgen_cli.config.base import AtLeastOne, Section, section
from massgen_cli.config.quality import QualitySettings
from massgen_cli.config.subagents import SubagentSettings
from massgen_cli.config.tools import ContextPath


class PersonaGeneratorConfig(Section):
    """MassGen's persona generator: each agent works the question from a persona of its own."""

    massgen_section: ClassVar[str] = "persona_generator"

    enabled: bool = False
    """Before a turn's first step, one request to the first agent's model writes a different persona for every
    agent (a fixed set when it cannot), shown in its system prompt.
    """
    diversity_mode: Literal["perspective", "implementation", "methodology"] = "perspective"
    """How the personas differ: what to optimise for, what kind of solution, or how to work."""
    persona_guidelines: str | None = None
    """More instructions for the personas."""
    persist_across_turns: bool = False
    """Keep the first turn's personas for the session (else new ones each turn)."""
    after_first_answer: Literal["drop", "soften", "keep"] = "drop"
    """After an agent's first answer of a turn its persona is dropped, softened to a preference, or kept."""


class CoordinationConfig(SubagentSettings, QualitySettings):
    massgen_section: ClassVar[str] = "coordination"

    max_orchestration_restarts: int = Field(default=0, ge=0, le=10)
    """Restarts after post-evaluation per turn; each restart is a new attempt."""
    enable_agent_task_planning: bool = False
    """Agents keep a task plan with the planning tools (create_task_plan, add_task, update_task_status,
    add_task_note, get_task_plan); each agent sees its own plan and its peers' before every step; a plan
    lasts the turn (through restarts) and is kept in the log and the session.
    """
    max_tasks_per_plan: AtLeastOne = 10
    """Most tasks in one agent's plan (MassGen reads it, never enforces it)."""
    task_planning_filesystem_mode: bool = False
    """Also keep each agent's plan as tasks/plan.json in its workspace."""
    enable_memory_filesystem_mode: bool = False
    """Each agent with a workspace keeps memory as Markdown files there: memory/short_term/*.md shown in full
    in its system prompt before every step (16,000 bytes at most, the cut said), memory/long_term/*.md
    listed by path and description and read with read_file; its peers' as of their latest answers with
    snapshot_storage. At the end of a turn every agent's memory files are merged into the winner's
    workspace and given to every agent; with long-term memory on they are indexed too (metadata file and
    kind).
    """
    persona_generator: PersonaGeneratorConfig = section(PersonaGeneratorConfig)
    """Personas that make the agents' answers differ (--personas MODE sets it)."""
    use_skills: bool = False
    """Agents are offered skills: folders with a SKILL.md (front matter: name, description), listed in their
    system prompt and loaded with load_skill (or read where they lie).
    """
    skills_directory: str = ".agent/skills"
    """The project's skills; ~/.agent/skills and the skills shipped with massgen-cli follow."""
    massgen_skills: list[str] = Field(default_factory=list)
    """Which shipped skills are offered; empty: all of them."""
    write_mode: Literal["auto", "worktree", "isolated", "legacy"] | None = None
    """How agents change the context paths with permission write. 'isolated' (and 'auto', 'worktree', as plain
    copies: no git worktree or branch is made): each agent with a workspace works on its own copy of each,
    in <workspace>/.worktree/ctx_<N>, which its peers see in its snapshot; after the final answer the
    winner's changes are applied to the originals (drift_conflict_policy), and a failed turn changes
    nothing. 'legacy' and null: the originals are written directly, in the final presentation only
    (MassGen's own default is 'auto').
    """
    drift_conflict_policy: Literal["skip", "prefer_presenter", "fail"] = "skip"
    """With an isolating write_mode, for a file changed in the original since the copy was made: 'skip' keeps
    the original's, 'prefer_presenter' writes the winner's, 'fail' applies nothing.
    """

    @property
    def isolates_writes(self) -> bool:
        """Whether agents change copies of the writable context paths, applied for the winner."""
        return self.write_mode in ("auto", "worktree", "isolated")


class SharedMemoryConfig(Section):
    conversation: bool = False
    """Share the agents' answers and votes (=== SHARED CONVERSATION MEMORY ===)."""
    persistent: bool = False
    """Share long-term memories across agents (=== SHARED PERSISTENT MEMORY ===)."""
    window: PositiveInt = 10
    """Shared conversation entries shown: the last N."""
    entries: bool = False
    """Share scoped entries (scope round or conversation) between agents."""
    token_budget: PositiveInt = 2000
    """Most tokens the shared memory block may add to a request."""


VotingSensitivity = Literal[
    "lenient",
    "balanced",
    "strict",
    "roi",
    "roi_conservative",
    "roi_balanced",
    "roi_aggressive",
    "sequential",
    "adversarial",
    "consistency",
    "diversity",
    "reflective",
    "checklist",
    "checklist_scored",
    "checklist_gated",
]
PeerUpdates = Literal["restart", "inject", "defer", "none"]


class OrchestratorConfig(Section):
    massgen_section: ClassVar[str] = "orchestrator"

    max_new_answers_per_agent: AtLeastOne | None = None
    """Most new answers one agent may submit in an attempt; null means no limit."""
    max_steps_per_agent: AtLeastOne = 8
    """Most steps (backend calls) one agent may take in an attempt; a step cancelled by a peer's new answer
    does not count.
    """
    step_timeout_seconds: PositiveFloat = 300.0
    """Seconds one step may take before it is cancelled."""
    max_tool_calls_per_step: AtLeastOne = 30
    """Most tool calls in one step; past it the tools are withdrawn and the agent must decide."""
    tool_call_timeout_seconds: PositiveFloat = 120.0
    """Seconds one tool call may take; then it is stopped and reported."""
    context_paths: list[ContextPath] = Field(default_factory=list)
    """Folders or files every agent may use through the file tools ({path, permission}); 'write' applies to
    the final presentation only.
    """
    snapshot_storage: str | None = None
    """Folder for workspace snapshots: an agent's workspace is copied there when it answers, and its peers
    read it (relative to the current directory).
    """
    agent_temporary_workspace: str | None = None
    """Folder of each agent's read-only view of its peers' snapshots; null: <snapshot_storage>_views."""
    max_reasks: NonNegativeInt = 1
    """Times an agent is asked again when its reply neither answers nor votes."""
    decide_by: Literal["votes", "agreement"] = "votes"
    """'votes': agents see each other's answers, refine or vote; 'agreement': each agent answers once on its
    own and the answer the others agree with most wins (for small models whose votes are no better than
    chance, as in the embedded default).
    """
    final_presentation: Literal["present", "reuse"] = "present"
    """'present': the winner writes the final answer in one more call; 'reuse': no extra call."""
    coordination: CoordinationConfig = section(CoordinationConfig)
    """Coordination settings."""
    shared_memory: SharedMemoryConfig = section(SharedMemoryConfig)
    """Memory shared across agents, injected after the first system message."""
    voting_sensitivity: VotingSensitivity | None = None
    """How agents judge the answers before they vote, as in MassGen: 'lenient' (vote when the best answer is
    good enough), 'balanced' (name a weakness first, answer anew if you can fix it), 'strict' (vote only
    for an answer that meets every criterion), and MassGen's other styles; null: this project's plain
    instructions. checklist_gated votes as balanced (its checklist tool is not built here).
    """
    voting_threshold: NonNegativeInt | None = None
    """MassGen's threshold of the roi styles (0 to 100: the lower, the higher the quality bar; defaults 15,
    conservative 30, aggressive 5) and of the checklist styles (items that must hold; 5).
    """
    answer_novelty_requirement: Literal["lenient", "balanced", "strict"] = "lenient"
    """How different a new answer must be from the existing ones: 'balanced' refuses one whose words overlap
    an existing answer's by more than 0.70 (Jaccard), 'strict' by more than 0.50.
    """
    max_new_answers_global: AtLeastOne | None = None
    """Most new answers of all agents together in an attempt; null: none."""
    fairness_enabled: bool = False
    """Keep agents in step: one may lead the slowest active peer by at most fairness_lead_cap_answers answers
    (MassGen has it on by default; here it is off unless set).
    """
    fairness_lead_cap_answers: NonNegativeInt = 2
    """With fairness_enabled: the most answers an agent may lead by."""
    defer_voting_until_all_answered: bool = False
    """With max_new_answers_per_agent: an agent at its cap waits until every agent answered."""
    skip_final_presentation: bool = False
    """The winner's answer is the final answer as it is, with no presentation call (unless the winner has
    context paths with permission write).
    """
    final_answer_strategy: Literal["winner_reuse", "winner_present", "synthesize"] | None = None
    """MassGen's choice of final answer: 'winner_reuse' as final_presentation 'reuse', 'winner_present' as
    'present', 'synthesize': the winner presents a synthesis of every answer.
    """
    peer_updates: PeerUpdates | None = None
    """How a peer's new answer reaches an agent still at work: 'restart' (this project's default: its step is
    cancelled and it starts again with the new answer), 'inject' (MassGen's: it goes on, and the new answer
    is added to its next tool result; it starts again only at a safe point), 'defer' (it goes on and sees
    the new answer when it starts again), 'none' (it goes on and is not started again). Null: chosen by
    MassGen's keys below, else 'restart'.
    """
    max_midstream_injections_per_round: AtLeastOne | None = None
    """MassGen's injection cap: new answers added to one step's tool results (with fairness_enabled, as in
    MassGen); past it the agent starts again at its next safe point. Setting it selects peer_updates
    'inject'.
    """
    defer_peer_updates_until_restart: bool = False
    """MassGen's deferral: true selects peer_updates 'defer'."""
    allow_midstream_peer_updates_before_checklist_submit: bool | None = None
    """MassGen's: with deferral, inject updates until the first checklist submission; it matters only with
    voting_sensitivity checklist_gated (whose checklist is not built here).
    """
    disable_injection: bool = False
    """MassGen's: true selects peer_updates 'none'."""
    max_orchestration_restarts: int | None = Field(default=None, ge=0, le=10)
    """Restarts after post-evaluation, as coordination.max_orchestration_restarts (MassGen reads both places;
    this one wins when both are set).
    """
    max_cost_usd: PositiveFloat | None = Field(default=None, allow_inf_nan=False)
    """Most the run (one question, or every turn of an interactive session) may spend, in USD, as its logs and
    report count it; the --max-cost option overrides it. Checked before each step: once spent, no new step
    starts and the turn ends with the best answer so far (no presentation, no post-evaluation). A model
    with no known price counts as free here (said once). MassGen 0.1.97 has no such key; null: no cap.
    """
    max_total_tokens: PositiveInt | None = None
    """Most tokens (input and output, every agent's calls) the run may spend, checked as max_cost_usd is;
    null: no budget.
    """

    @property
    def peer_update_mode(self) -> PeerUpdates:
        """``peer_updates``, else what MassGen's keys select, else ``restart``."""
        if self.peer_updates is not None:
            return self.peer_updates
        if self.disable_injection:
            return "none"
        if self.defer_peer_updates_until_restart:
            return "defer"
        return "inject" if self.max_midstream_injections_per_round is not None else "restart"

    @property
    def restarts(self) -> int:
        """Restarts after post-evaluation per turn."""
        if self.max_orchestration_restarts is not None:
            return self.max_orchestration_restarts
        return self.coordination.max_orchestration_restarts

    @property
    def final_answer_mode(self) -> Literal["reuse", "reuse_unless_writing", "present", "synthesize"]:
        """How the final answer is made: the winning answer as it is; the same unless the winner has
        context paths to write (MassGen's skip_final_presentation and winner_reuse); the winner's
        presentation; or its synthesis of every answer."""
        strategy = self.final_answer_strategy
        if strategy == "synthesize":
            return "synthesize"
        if strategy == "winner_present":
            return "present"
        if strategy == "winner_reuse" or self.skip_final_presentation:
            return "reuse_unless_writing"
        return "reuse" if self.final_presentation == "reuse" else "present"


class TimeoutSettings(Section):
    massgen_section: ClassVar[str] = "timeout_settings"

    orchestrator_timeout_seconds: PositiveFloat = 1800.0
    """Seconds the coordination of one turn may take in all."""
    initial_round_timeout_seconds: PositiveFloat | None = None
    """A step's soft time limit before the agent's first answer: after a tool call past it, the agent is told
    (in that tool's result) to wrap up with new_answer or vote; null: none.
    """
    subsequent_round_timeout_seconds: PositiveFloat | None = None
    """The same soft limit for the steps after the agent's first answer."""
    round_timeout_grace_seconds: NonNegativeFloat = 120.0
    """Seconds after the wrap-up notice before tools other than new_answer and vote are refused; ten refusals
    in a row end the agent's part in the attempt.
    """
