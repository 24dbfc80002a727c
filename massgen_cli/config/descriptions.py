"""What each config key means, as the reference (``docs/config.md``) tells it: the docstring written
under its field, read from the models' source.

Pydantic can read these itself (``use_attribute_docstrings``), but it does so as each model class is
made, at every start: about 55 ms of a run's start on Python 3.11 for descriptions a run never shows.
Read here, only what documents the config pays for them. A description that a field's ``Field`` gives
(one made at run time) comes first."""

from __future__ import annotations

import ast
import inspect
import textwrap
from functools import cache

from pydantic import BaseModel


def description(model: type[BaseModel], name: str) -> str:
    """What the key ``name`` of ``model`` means, its lines folded into one ("" when none is written)."""
    given = model.model_fields[name].description
    return given or field_docstrings(model).get(name, "")


def field_docstrings(model: type[BaseModel]) -> dict[str, str]:
    """The docstring under each field of ``model`` and of the models it derives from (a field written
    again takes the docstring under it, or none)."""
    found: dict[str, str] = {}
    for klass in reversed(model.__mro__):
        if issubclass(klass, BaseModel) and klass is not BaseModel:
            own, written = _own_docstrings(klass)
            found = {name: text for name, text in found.items() if name not in written} | own
    return found


@cache
def _own_docstrings(klass: type[BaseModel]) -> tuple[dict[str, str], frozenset[str]]:
    """The docstrings under the fields a class writes itself, and the names of all it writes (none for
    a class whose source cannot be read: made at run time, or only compiled)."""
    try:
        body = ast.parse(textwrap.dedent(inspect.getsource(klass))).body[0]
    except (OSError, TypeError, SyntaxError):
        return {}, frozenset()
    assert isinstance(body, ast.ClassDef)
    fields = [node for node in body.body if isinstance(node, ast.AnnAssign)]
    docstrings = {
        node.target.id: " ".join(after.value.value.split())
        for node, after in zip(body.body, body.body[1:], strict=False)
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
        if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
        if isinstance(after.value.value, str)
    }
    return docstrings, frozenset(node.target.id for node in fields if isinstance(node.target, ast.Name))
