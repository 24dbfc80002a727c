"""A command line in its plain form, read without Typer: each option given once as ``--option VALUE``
or as a switch, and one word on its own. The commands run again and again (a question, a memory
search) are read this way; any other form is left to Typer, so what is said about it stays Typer's."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any


def plain_fields(
    args: list[str],
    value_options: dict[str, str],
    switches: dict[str, str],
    word: str,
    reserved: Collection[str] = (),
) -> dict[str, Any] | None:
    """The fields ``args`` set (an option's by ``value_options`` or ``switches``, the word on its own as
    ``word``, which may not be one of ``reserved``); None when ``args`` are not in the plain form."""
    fields: dict[str, Any] = {}
    at = 0
    while at < len(args):
        token = args[at]
        value: str | bool
        if token in switches:
            name, value = switches[token], True
        elif token in value_options and at + 1 < len(args) and not args[at + 1].startswith("-"):
            name, value = value_options[token], args[at + 1]
            at += 1
        elif token and not token.startswith("-") and token not in reserved:
            name, value = word, token
        else:
            return None
        if name in fields:
            return None
        fields[name] = value
        at += 1
    return fields
