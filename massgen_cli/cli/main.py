"""The ``massgen`` command: a thin layer that parses, loads the config, calls the library, renders,
and maps errors to exit codes (0 ok, 1 runtime failure, 2 usage or config error). A question goes to
``run_app`` here; a subcommand to ``admin.admin_app``, imported only then."""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from massgen_cli.cli.argv import first_positional, options_after_command, ray_value
from massgen_cli.cli.guard import (
    end_read_only,
    leave_without_waiting,
    reader_gone,
    spare_the_last_collections,
    stdout_file,
    watch_stdout,
)
from massgen_cli.cli.guard import guarded as _guarded
from massgen_cli.cli.mode_flags import single_agent_argv
from massgen_cli.cli.options import ConfigOption, DebugOption, StateDirOption
from massgen_cli.cli.run_flags import (
    AutomationOption,
    BackendOption,
    BaseUrlOption,
    ContinueOption,
    DeepOption,
    DomainOption,
    ListBackendsOption,
    ListExamplesOption,
    ListSessionsOption,
    MaxCostOption,
    ModelOption,
    OutputFileOption,
    QuickModeOption,
    QuietOption,
    SessionOption,
    SingleAgentOption,
    StreamEventsOption,
    StrictOption,
    SystemMessageOption,
    TaskTypeOption,
    ValidateJsonOption,
    ValidateOption,
    VersionOption,
    WebOption,
)

if TYPE_CHECKING:
    from massgen_cli.cli.automation import Outputs
    from massgen_cli.cli.commands import RunOptions

SUBCOMMANDS = ("sessions", "memory", "batch", "logs", "serve")
READ_ONLY_COMMANDS = frozenset(
    {
        ("memory", "search"),
        ("memory", "list"),
        ("memory", "values"),
        ("sessions", "list"),
        ("sessions", "show"),
        ("logs", "list"),
        ("logs", "show"),
        ("logs", "path"),
    }
)
"""Commands that only read: once their output is out, the process ends without the interpreter's
teardown of what they imported (numpy, onnxruntime, pydantic…), about 0.2 s of a memory search."""

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
) -> None:
    from massgen_cli.cli.automation import Outputs
    from massgen_cli.cli.commands import RunOptions
    from massgen_cli.cli.mode_flags import ModeFlags
    from massgen_cli.cli.quickstart import QuickStart

    if list_examples or list_backends or list_sessions:
        _list(debug, state_dir, examples=list_examples, sessions=list_sessions)
    elif validate is not None:
        from massgen_cli.cli.validate import validate_command

        _guarded(debug, lambda: validate_command(validate, strict=strict, as_json=as_json, deep=deep))
    elif web:
        _watch_web_view(
            debug, question, config, state_dir, session, Outputs(automation, stream_events, output_file)
        )
    else:
        options = RunOptions(
            question, config, state_dir, session, quiet, debug, domain, task_type, max_cost=max_cost
        )
        quick = QuickStart(backend, tuple(model or ()), system_message, base_url)
        outputs = Outputs(automation, stream_events, output_file)
        modes = ModeFlags(single_agent, quick_mode)
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
    from massgen_cli.errors import UsageError
    from massgen_cli.serve.one_run import WebRun, run_with_web_view

    def serve_one_run() -> int:
        if not question:
            raise UsageError('--web runs one question: massgen --web "your question"')
        options = WebRun(question, config, state_dir, session, outputs=outputs)
        return watched(outputs, lambda watch: run_with_web_view(options, watch))

    with automation_exit_codes() if outputs.automated else contextlib.nullcontext():
        _guarded(debug, serve_one_run)


def _refuse_massgen_words(args: list[str]) -> None:
    """MassGen's command words end here, with a usage error saying what does their job."""
    from massgen_cli.cli.massgen_words import massgen_word_refusal

    refusal = massgen_word_refusal(args)
    if refusal is not None:
        from massgen_cli.cli.guard import print_error
        from massgen_cli.errors import UsageError

        print_error(UsageError(refusal))
        raise SystemExit(UsageError.exit_code)


def route(args: list[str]) -> tuple[typer.Typer, list[str]]:
    """The app that takes a command line, and the arguments as it reads them: a subcommand goes to the
    admin app (the options before its name moved after it), anything else is a question."""
    first = first_positional(args)
    if first not in SUBCOMMANDS:
        return run_app, args
    from massgen_cli.cli.admin import admin_app

    args = options_after_command(args, {group.name or "" for group in admin_app.registered_groups})
    return admin_app, ray_value(args) if first == "batch" else args


def main(argv: list[str] | None = None) -> None:
    """Entry point: subcommands go to the admin app, everything else is a question."""
    args = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("MEM0_TELEMETRY", "False")
    from massgen_cli.cli.signals import end_on_signals
    from massgen_cli.state import keep_files_private

    end_on_signals()  # from the start: loading a config or starting a server can take a while
    keep_files_private()
    _refuse_massgen_words(args)
    app, args = route(single_agent_argv(args))
    stdout_at_start = stdout_file()
    watch_stdout()
    try:
        app(args=args, prog_name="massgen")
    except SystemExit as ended:
        ending = SystemExit(0) if reader_gone(stdout_at_start) else ended
        leave_without_waiting(ending)
        if _command_words(args) in READ_ONLY_COMMANDS:
            end_read_only(ending)
        spare_the_last_collections()
        raise ending from None


def _command_words(args: list[str]) -> tuple[str | None, str | None]:
    """A subcommand's group and command names (``("memory", "search")``), as written."""
    group = first_positional(args)
    rest = args[args.index(group) + 1 :] if group is not None else []
    return group, first_positional(rest)
