"""The question command, ``massgen [OPTIONS] [QUESTION]``, as Typer reads it: ask the agents of a config,
or start an interactive session; list, validate, or show a run live (``--web``)."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from massgen_cli.cli.guard import guarded as _guarded
from massgen_cli.cli.mode_flags import ModeFlags
from massgen_cli.cli.options import ConfigOption, DebugOption, StateDirOption
from massgen_cli.cli.run_flags import (
    AutomationOption,
    BackendOption,
    BaseUrlOption,
    ContinueOption,
    DeepOption,
    DomainOption,
    EvalCriteriaOption,
    FastOption,
    ListBackendsOption,
    ListExamplesOption,
    ListSessionsOption,
    MaxCostOption,
    ModelOption,
    OutputFileOption,
    PersonasOption,
    PlanAndExecuteOption,
    PlanOption,
    QuickModeOption,
    QuietOption,
    SessionOption,
    SingleAgentOption,
    StreamEventsOption,
    StrictOption,
    SystemMessageOption,
    TaskTypeOption,
    TelemetryOption,
    ValidateJsonOption,
    ValidateOption,
    VersionOption,
    WebOption,
)

if TYPE_CHECKING:
    from massgen_cli.cli.automation import Outputs
    from massgen_cli.cli.commands import RunOptions

HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}
run_app = typer.Typer(
    add_completion=False, rich_markup_mode=None, pretty_exceptions_enable=False, context_settings=HELP_OPTIONS
)


@run_app.command(
    help="Ask QUESTION with the agents of a config; with no QUESTION, start an interactive session. "
    "Subcommands: `massgen batch`, `massgen serve`, `massgen sessions list|show|delete|prune`, "
    "`massgen memory search|list|values|clear|import`, `massgen logs list|show|path|report`. "
    "A question starting with a subcommand's name goes after `--`. "
    "A subcommand's options may also stand before its name: `massgen --state-dir DIR sessions list`."
)
def run(
    question: Annotated[
        str | None, typer.Argument(help="The question; omit it for a multi-turn session.")
    ] = None,
    config: ConfigOption = None,
    state_dir: StateDirOption = None,
    session: SessionOption = None,
    quiet: QuietOption = False,
    debug: DebugOption = False,
    domain: DomainOption = None,
    task_type: TaskTypeOption = None,
    max_cost: MaxCostOption = None,
    list_examples: ListExamplesOption = False,
    validate: ValidateOption = None,
    strict: StrictOption = False,
    as_json: ValidateJsonOption = False,
    deep: DeepOption = False,
    version: VersionOption = False,
    backend: BackendOption = None,
    model: ModelOption = None,
    system_message: SystemMessageOption = None,
    base_url: BaseUrlOption = None,
    continue_session: ContinueOption = False,
    list_sessions: ListSessionsOption = False,
    list_backends: ListBackendsOption = False,
    output_file: OutputFileOption = None,
    automation: AutomationOption = False,
    stream_events: StreamEventsOption = False,
    web: WebOption = False,
    single_agent: SingleAgentOption = None,
    quick_mode: QuickModeOption = False,
    personas: PersonasOption = None,
    otel: TelemetryOption = False,
    fast: FastOption = False,
    plan: PlanOption = False,
    plan_and_execute: PlanAndExecuteOption = False,
    eval_criteria: EvalCriteriaOption = None,
) -> None:
    from massgen_cli.cli.automation import Outputs
    from massgen_cli.cli.commands import RunOptions
    from massgen_cli.cli.quickstart import QuickStart

    outputs = Outputs(automation, stream_events, output_file)
    if list_examples or list_backends or list_sessions:
        _list(debug, state_dir, examples=list_examples, sessions=list_sessions)
    elif validate is not None:
        from massgen_cli.cli.validate import validate_command

        _guarded(debug, lambda: validate_command(validate, strict=strict, as_json=as_json, deep=deep))
    elif web:
        _watch_web_view(debug, question, config, state_dir, session, outputs)
    else:
        options = RunOptions(
            question, config, state_dir, session, quiet, debug, domain, task_type, max_cost=max_cost
        )
        quick = QuickStart(backend, tuple(model or ()), system_message, base_url)
        mode = personas.value if personas is not None else None
        modes = ModeFlags(single_agent, quick_mode, mode, otel, fast, plan, plan_and_execute, eval_criteria)
        _ask(replace(options, quick=quick, outputs=outputs, continue_session=continue_session, modes=modes))


def _list(debug: bool, state_dir: Path | None, *, examples: bool, sessions: bool) -> None:
    """``--list-sessions``, ``--list-examples`` or ``--list-backends``."""
    from massgen_cli.cli.commands import print_examples, print_sessions
    from massgen_cli.cli.quickstart import print_backends

    listing = print_examples if examples else print_backends
    _guarded(debug, (lambda: print_sessions(state_dir)) if sessions else listing)


def _ask(options: RunOptions) -> None:
    """A question, or an interactive session, with the exit codes of automation when it asks for them."""
    from massgen_cli.cli.commands import ask_or_chat

    if options.outputs.automated:
        from massgen_cli.cli.automation import automation_exit_codes

        with automation_exit_codes():
            _guarded(options.debug, lambda: ask_or_chat(options))
        return
    _guarded(options.debug, lambda: ask_or_chat(options))


def _watch_web_view(
    debug: bool,
    question: str | None,
    config: str | None,
    state_dir: Path | None,
    session: str | None,
    outputs: Outputs,
) -> None:
    """``--web``: one question, watched in the web view; with the exit codes of automation when it asks
    for them."""
    from massgen_cli.cli.automation import automation_exit_codes, watched
    from massgen_cli.cli.web_run import WebRun, run_with_web_view
    from massgen_cli.errors import UsageError

    def serve_one_run() -> int:
        if not question:
            raise UsageError('--web runs one question: massgen --web "your question"')
        options = WebRun(question, config, state_dir, session, outputs=outputs)
        return watched(outputs, lambda watch: run_with_web_view(options, watch))

    with automation_exit_codes() if outputs.automated else contextlib.nullcontext():
        _guarded(debug, serve_one_run)
