"""Relative dates resolved against the day a record was said; a memory's own date, a query's dates and
a date filter's bounds."""

from __future__ import annotations

from datetime import date

import pytest

from massgen_cli.memory.longterm.record.dates import (
    date_bound,
    dates_of,
    memory_day,
    own_date,
    query_dates,
    query_span,
    resolved_dates,
    said_on,
)
from massgen_cli.memory.longterm.record.memories import indexed_text
from massgen_cli.memory.longterm.store.index.terms import memory_terms, query_terms, terms

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


def test_a_memory_is_dated_by_its_timestamp_else_the_day_it_was_stored():
    text = "I went to a pottery class."
    stored = "2026-11-20T10:00:00+00:00"
    assert memory_day(indexed_text(text, "Ann", "1:56 pm on 8 May, 2023"), text, stored) == MONDAY
    assert memory_day(text, text, stored) == date(2026, 11, 20), "bare text: the day it was stored"
    assert memory_day(indexed_text(text, "Ann", "spring"), text, stored) is None, "a date not read is none"


def test_a_memory_holds_its_own_date_in_words_whatever_form_it_was_written_in():
    text = "We met."
    iso, said = indexed_text(text, "Ann", "2023-05-08"), indexed_text(text, "Ann", "8 May, 2023")
    assert own_date(iso, text) == own_date(said, text) == "8 May 2023"
    assert {"8", "mai", "2023"} <= set(memory_terms(iso, text))
    assert memory_terms(said, text) == terms(said), "words it already holds are not added twice"


def test_a_query_names_its_dates_as_memories_are_indexed():
    assert query_dates("What did I do yesterday, and on 2023-04-30?", MONDAY) == [
        "7 May 2023",
        "30 April 2023",
    ]
    assert query_dates("Who went to a pottery class in May 2023?", MONDAY) == [], "already in words"
    found = query_terms("What did Ann do last month?", MONDAY)
    assert found[: found.index("month") + 1] == ["ann", "last", "month"] and {"april", "2023"} <= set(found)


@pytest.mark.parametrize(
    ("text", "first", "last"),
    [
        ("2023-05-08", MONDAY, MONDAY),
        ("8 May 2023", MONDAY, MONDAY),
        ("May 2023", date(2023, 5, 1), date(2023, 5, 31)),
        ("2024-02", date(2024, 2, 1), date(2024, 2, 29)),
        ("2023", date(2023, 1, 1), date(2023, 12, 31)),
        ("yesterday", date(2023, 5, 7), date(2023, 5, 7)),
        ("last month", date(2023, 4, 1), date(2023, 4, 30)),
        ("two  weeks ago", date(2023, 4, 24), date(2023, 4, 24)),
    ],
)
def test_a_filter_bound_is_the_first_or_last_day_a_date_month_year_or_relative_date_names(text, first, last):
    assert (date_bound(text, MONDAY, end=False), date_bound(text, MONDAY, end=True)) == (first, last)


@pytest.mark.parametrize("text", ["soon", "2023-13", "0000", "May", "yesterday and today"])
def test_a_bound_that_names_no_one_date_is_none(text):
    assert date_bound(text, MONDAY, end=False) is None


@pytest.mark.parametrize(
    ("question", "first", "last"),
    [
        ("What did Tim say about his injury on 16 November, 2023?", date(2023, 11, 16), date(2023, 11, 16)),
        ("What did Melanie paint on October 13, 2023?", date(2023, 10, 13), date(2023, 10, 13)),
        ("What did we decide on 2023-05-08?", MONDAY, MONDAY),
        ("What did Joanna achieve in January 2022?", date(2022, 1, 1), date(2022, 1, 31)),
        ("What changed in 2023-05?", date(2023, 5, 1), date(2023, 5, 31)),
        ("Where did they travel in 2022?", date(2022, 1, 1), date(2022, 12, 31)),
        ("What did we do yesterday?", date(2023, 5, 7), date(2023, 5, 7)),
        ("What happened last month?", date(2023, 4, 1), date(2023, 4, 30)),
    ],
)
def test_a_question_asks_about_the_days_its_date_names(question, first, last):
    assert query_span(question, MONDAY) == (first, last)


@pytest.mark.parametrize(
    "question",
    ["What did Caroline research?", "May I ask what you did?", "It cost 150 dollars", "last week, last year"],
)
def test_a_question_that_names_no_one_date_asks_about_no_days(question):
    assert query_span(question, MONDAY) is None
