"""What each config key means is the docstring under its field: read for the reference from the source,
folded into one line, never by a run."""

from __future__ import annotations

import re

from pydantic import Field, create_model

from massgen_cli.config.base import Section, section
from massgen_cli.config.descriptions import description, field_docstrings
from tests.config.test_docs_current import _generator


class Inner(Section):
    depth: int = 1
    """How deep."""


class Base(Section):
    name: str = "x"
    """The name, written over
    two lines."""
    size: int = 0
    """The size."""
    inner: Inner = section(Inner)
    """The nested block."""
    made: str = Field(default="", description="Given when the model is made.")


class Derived(Base):
    size: int = 5
    extra: bool = False
    """Derived's own key."""


def test_the_docstring_under_a_field_is_its_description_in_one_line():
    assert field_docstrings(Base) == {
        "name": "The name, written over two lines.",
        "size": "The size.",
        "inner": "The nested block.",
    }
    assert description(Base, "inner") == "The nested block."
    assert description(Base, "made") == "Given when the model is made."


def test_a_derived_model_keeps_its_bases_docstrings_but_for_a_field_it_writes_again():
    assert description(Derived, "name") == "The name, written over two lines."
    assert description(Derived, "extra") == "Derived's own key."
    assert description(Derived, "size") == ""


def test_a_model_made_at_run_time_has_no_docstrings_to_read():
    made = create_model("Made", __base__=Section, size=(int, 0))
    assert field_docstrings(made) == {} and description(made, "size") == ""


def test_a_run_holds_no_description():
    """Descriptions are read from the source, not kept in the models a run builds."""
    assert Base.model_fields["name"].description is None
    assert not Section.model_config.get("use_attribute_docstrings")


KEY_TABLE = "| Key | Type | Default | Description | MassGen alias |"


def key_rows(reference: str) -> list[list[str]]:
    """The cells of each row of the reference's key tables."""
    rows, in_table = [], False
    for line in reference.splitlines():
        if line == KEY_TABLE:
            in_table = True
        elif not line.startswith("|"):
            in_table = False
        elif in_table and not line.startswith("|---"):
            rows.append([cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def test_every_key_of_the_reference_is_described():
    rows = key_rows(_generator().render())
    assert len(rows) > 200 and all(len(cells) == 5 for cells in rows)
    assert [cells[0] for cells in rows if not cells[3]] == []
