"""Relative dates resolved against the day a record was said."""

from __future__ import annotations

from datetime import date

import pytest

from massgen_cli.memory.longterm.record.dates import dates_of, resolved_dates, said_on
from massgen_cli.memory.longterm.record.memories import indexed_text

MONDAY = date(2023, 5, 8)


FORMS = ["8 May 2023", "8 May, 2023", "1:56 pm on 8 May, 2023", "May 8, 2023", "2023-05-08T10:00:00+00:00"]


@pytest.mark.parametrize("said", FORMS)
def test_the_forms_conversations_are_dated_with_are_read(said):
    assert said_on(said) == MONDAY


def test_a_date_of_another_form_resolves_nothing():
    assert said_on("sometime in spring") is None and said_on("31 February 2023") is None
    assert dates_of(indexed_text("I went yesterday.", "Ann", "spring"), "I went yesterday.") == []


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("I went to a pottery class yesterday.", ["7 May 2023"]),
        ("The day before yesterday, and last night too", ["6 May 2023", "7 May 2023"]),
        ("We adopted a kitten last weekend!", ["6 May 2023"]),
        ("I ran my first 5K on Sunday", ["7 May 2023"]),
        ("Last Monday was long; next Monday too", ["1 May 2023", "15 May 2023"]),
        ("Two weeks ago I quit, 3 days ago I rested.", ["24 April 2023", "5 May 2023"]),
        ("My nephew is moving in next month.", ["June 2023"]),
        ("a couple of months ago, and last year", ["March 2023", "2022"]),
        ("In 3 days we leave.", ["11 May 2023"]),
        ("Nothing relative here, on the 5th floor.", []),
    ],
)
def test_relative_dates_name_the_day_month_or_year_they_mean(text, named):
    assert resolved_dates(text, MONDAY) == named


def test_a_memory_is_dated_by_its_indexed_text():
    text = "I went to a pottery class yesterday."
    assert dates_of(indexed_text(text, "Caroline", "1:56 pm on 8 May, 2023"), text) == ["7 May 2023"]
    assert dates_of(text, text) == [], "a memory indexed as its bare text has no date"
