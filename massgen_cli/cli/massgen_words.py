"""MassGen's own subcommand words (``massgen viewer``, ``export``, ``shares``…) and its set-up words,
which a MassGen user types out of habit: here they are usage errors that say what does the job, said
before any config is read or model called, rather than a question the whole team is paid to answer.
``massgen -- viewer`` still asks the word as a question."""

from __future__ import annotations

from massgen_cli.cli.argv import first_positional

_REPORT = "a run's report is one HTML file to pass on: `massgen logs report [RUN]`"
_EXAMPLES = "`massgen --list-examples` lists the shipped configs"
MASSGEN_WORDS = {
    "viewer": "the run report is `massgen logs report [RUN]`, and `massgen --web QUESTION` shows a run live",
    "export": f"{_REPORT}; its log folder is `massgen logs path [RUN]`",
    "share": _REPORT,
    "shares": _REPORT,
    "init": f"{_EXAMPLES}; `massgen -c @examples/NAME QUESTION` runs one",
    "setup": f"{_EXAMPLES}, `massgen --list-backends` the providers and each one's key variable",
    "quickstart": f"`massgen --model MODEL QUESTION` asks without a config; {_EXAMPLES}",
    "config": f"{_EXAMPLES}; `massgen -c FILE --validate` checks one",
}
"""Each word, and what does its job here."""


def massgen_word_refusal(args: list[str]) -> str | None:
    """Why ``args`` are refused when their first word is one of MassGen's commands written alone as an
    argument (a question written in quotes is never one word of these), else None."""
    flag = next((token[2:] for token in _before_end_of_options(args) if token[2:] in _MASSGEN_FLAGS), None)
    word = first_positional(args) if flag is None else flag
    if word not in MASSGEN_WORDS:
        return None
    if flag is not None:
        return f"--{flag} is a MassGen option, not one of this command line's: {MASSGEN_WORDS[flag]}"
    return (
        f"'{word}' is a MassGen command, not one of this command line's: {MASSGEN_WORDS[word]}. "
        f"To ask the word itself as a question: massgen -- {word}"
    )


_MASSGEN_FLAGS = ("init", "setup", "quickstart")
"""MassGen's set-up options (``massgen --setup``), refused with the same help as the words."""


def _before_end_of_options(args: list[str]) -> list[str]:
    return args[: args.index("--")] if "--" in args else args
