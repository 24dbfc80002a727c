"""The question command's options, as Typer reads them (MassGen's names): the run's own, the quick start,
sessions, scripts, listings and config checks."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from massgen_cli import __version__

QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="Print only the answer.")]
DomainOption = Annotated[
    str | None, typer.Option("--domain", help="Memory domain (overrides memory.domain).")
]
TaskTypeOption = Annotated[
    str | None, typer.Option("--task-type", help="Memory task type (overrides memory.task_type).")
]
MaxCostOption = Annotated[
    float | None,
    typer.Option(
        "--max-cost",
        metavar="USD",
        help="Spend at most this many US dollars in this run (overrides orchestrator.max_cost_usd): "
        "once spent, no new step starts and the best answer so far is final.",
    ),
]
ListExamplesOption = Annotated[bool, typer.Option("--list-examples", help="List the shipped configs.")]
ValidateOption = Annotated[
    str | None,
    typer.Option(
        "--validate",
        metavar="FILE",
        help="Load a config (a path or @examples/NAME) without running it and print its errors, "
        "warnings and notes, what its start needs included (keys, paths, tools, MCP commands); "
        "exit 0 if valid, 2 if not.",
    ),
]
StrictOption = Annotated[bool, typer.Option("--strict", help="With --validate: warnings are errors.")]
ValidateJsonOption = Annotated[bool, typer.Option("--json", help="With --validate: one JSON object.")]
DeepOption = Annotated[
    bool, typer.Option("--deep", help="With --validate: start each MCP server and list its tools.")
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"massgen-cli {__version__}")
        raise typer.Exit()


VersionOption = Annotated[
    bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
]
BackendOption = Annotated[
    str | None,
    typer.Option(
        "--backend",
        metavar="TYPE",
        help="Quick start, no config file: the backend of the agents (default: the one the model's name "
        "implies; see --list-backends).",
    ),
]
ModelOption = Annotated[
    list[str] | None,
    typer.Option(
        "--model", metavar="NAME", help="Quick start: an agent on this model; repeat for one agent per model."
    ),
]
SystemMessageOption = Annotated[
    str | None,
    typer.Option("--system-message", metavar="TEXT", help="Quick start: the agents' system message."),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option(
        "--base-url", metavar="URL", help="Quick start: the server's address (an OpenAI-compatible /v1)."
    ),
]
SessionOption = Annotated[
    str | None, typer.Option("--session", "--session-id", help="Continue (or create) this session.")
]
SingleAgentOption = Annotated[
    str | None,
    typer.Option(
        "--single-agent",
        metavar="[ID]",
        help="Run one agent of the config: ID, or the first when none is given (MassGen's single-agent).",
    ),
]
QuickModeOption = Annotated[
    bool,
    typer.Option(
        "--quick",
        help="One answer per agent, no refinement: a lone agent's answer is final; several answer on their "
        "own, vote once all have answered, and the winner presents a synthesis (MassGen's --quick).",
    ),
]


class PersonaMode(StrEnum):
    off = "off"
    perspective = "perspective"
    implementation = "implementation"
    methodology = "methodology"


PersonasOption = Annotated[
    PersonaMode | None,
    typer.Option(
        "--personas",
        help="A persona per agent, written before each turn by the first agent's model, differing by "
        "perspective, implementation or methodology; off turns the config's personas off (MassGen's "
        "--personas).",
    ),
]
FastOption = Annotated[
    bool,
    typer.Option(
        "--fast",
        help="MassGen's fast preset: agents submit a working answer each round and leave polish to the "
        "next (fast_iteration_mode, one check and no fix loops per step, no rebuilt notes); the config's "
        "own values of these keys win.",
    ),
]
PlanOption = Annotated[
    bool,
    typer.Option(
        "--plan",
        help="Plan, do not do: the agents answer with a task plan (JSON: tasks with ids, chunks, "
        "dependencies, checks), vote on it, and the chosen plan is printed and kept under "
        "<state>/plans/ (plan_depth, plan_target_steps, plan_target_chunks size it; MassGen's --plan).",
    ),
]
PlanAndExecuteOption = Annotated[
    bool,
    typer.Option(
        "--plan-and-execute",
        help="As --plan, then execute the plan: one turn per chunk, the planning tools on and each "
        "agent's task plan seeded with the chunk's tasks; stdout gets the execution's final answer "
        "(MassGen's --plan-and-execute).",
    ),
]
EvalCriteriaOption = Annotated[
    Path | None,
    typer.Option(
        "--eval-criteria",
        metavar="FILE",
        help="A JSON file of evaluation criteria ([{text, category: primary|standard|stretch, verify_by?, "
        'anti_patterns?}] or {"criteria": [...]}): every agent sees them, votes with a verdict on each '
        "(submit_checklist), and a vote for an answer failing a primary or standard one is refused once "
        "(sets coordination.checklist_criteria_inline; MassGen's --eval-criteria).",
    ),
]
TelemetryOption = Annotated[
    bool,
    typer.Option(
        "--otel",
        "--logfire",
        help="Send the run's traces over OpenTelemetry (OTLP/HTTP, to OTEL_EXPORTER_OTLP_ENDPOINT, else "
        "localhost:4318): a span per turn, attempt, agent step, model call and tool call, with the GenAI "
        "conventions' attributes (sets telemetry.enabled; needs the otel extra). --logfire is MassGen's "
        "name for it.",
    ),
]
ContinueOption = Annotated[
    bool, typer.Option("--continue", help="Continue the most recent session (of the state folder).")
]
ListSessionsOption = Annotated[
    bool, typer.Option("--list-sessions", help="List the sessions (as `massgen sessions list`).")
]
ListBackendsOption = Annotated[
    bool, typer.Option("--list-backends", help="List the backend types and the variable of each one's key.")
]
OutputFileOption = Annotated[
    Path | None, typer.Option("--output-file", metavar="FILE", help="Also write the final answer to FILE.")
]
AutomationOption = Annotated[
    bool,
    typer.Option(
        "--automation",
        help="For scripts: no progress; LOG_DIR and STATUS on the first lines of stdout, then the answer; "
        "status.json kept current in the log folder; exit 0 answered, 1 config error, 2 failed, 3 timeout, "
        "4 interrupted.",
    ),
]
StreamEventsOption = Annotated[
    bool,
    typer.Option(
        "--stream-events",
        help="Every event as one JSON line on stdout (as events.jsonl holds it), the final answer last; "
        "implies --automation (its LOG_DIR and STATUS lines go to stderr).",
    ),
]
WebOption = Annotated[
    bool,
    typer.Option(
        "--web",
        help="Watch and steer the run in the live web view, served on 127.0.0.1 behind a token while it "
        "runs (its address, token included, on stderr); the answer goes to stdout and the view stops when "
        "the run ends.",
    ),
]
