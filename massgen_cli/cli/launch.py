"""The question command's usage checks, and ``--continue``: which session it continues, with which
config."""

from __future__ import annotations

from pathlib import Path

from massgen_cli.errors import UsageError


def check_question(question: str | None) -> None:
    """A question given must say something: an empty one would run a turn on nothing."""
    if question is not None and not question.strip():
        raise UsageError(
            'the question is empty: give it as an argument (massgen "..."), or none for an interactive '
            "session"
        )


def check_session(session: str | None) -> None:
    """``--session ""`` names no session (it would quietly start a temporary one)."""
    if session is not None and not session.strip():
        raise UsageError("--session needs a session id (`massgen --list-sessions` lists them)")


def continued(
    state_dir: Path | None, session: str | None, config: str | None, *, flags_build_config: bool
) -> tuple[str, str | None]:
    """The session ``--continue`` continues: the state folder's most recently used one with an
    answered turn, as MassGen skips empty sessions. Its config too, when the command line gives none
    (as in MassGen): the file the session last ran with."""
    from massgen_cli.cli.quickstart import ORIGIN
    from massgen_cli.session import BUILT_CONFIG_FILE, list_sessions, sessions_root
    from massgen_cli.state import resolve_state_dir

    if session is not None:
        raise UsageError("--continue takes the most recent session; it does not combine with --session")
    folder = resolve_state_dir(state_dir)
    latest = next((record for record in list_sessions(folder) if record.turns_completed), None)
    if latest is None:
        raise UsageError(
            f"no session to continue in {folder}: none has an answered turn yet "
            "(ask a question first; `massgen --list-sessions` lists the sessions)"
        )
    if config is not None or flags_build_config or latest.config_path is None:
        return latest.session_id, config
    kept = Path(latest.config_path)
    if kept.name == ORIGIN:
        built = sessions_root(folder) / latest.session_id / BUILT_CONFIG_FILE
        if built.is_file():  # the agents the command line gave, kept with the session
            return latest.session_id, str(built)
        raise UsageError(
            f"session {latest.session_id} ran on agents given on the command line: give them again "
            '(massgen --continue --model NAME "...")'
        )
    if not kept.is_file():
        raise UsageError(
            f"session {latest.session_id} ran with {kept}, which is gone: pass --config FILE to continue it"
        )
    return latest.session_id, str(kept)
