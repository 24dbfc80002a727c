"""When the words of a memory happened: relative dates ("yesterday", "last Saturday", "two weeks ago",
"next month") resolved against the record's own date (an imported ``timestamp``, else the day it was
recorded), so a question about "7 May 2023" finds "I went yesterday" said on 8 May 2023 (pure
functions). The text keeps what was said; the index adds the dates it resolves to
(``store.index.terms.memory_terms``).

A record's date is read from the forms conversations are dated with: ``2023-05-08`` (and ISO times),
``8 May 2023``, ``8 May, 2023``, ``1:56 pm on 8 May, 2023``, ``May 8, 2023``. A date that is none of
these resolves nothing.

A memory's own date (``memory_day``) is what date filters compare; a query's dates (``query_dates``:
its relative dates resolved against today, its ISO dates) are written as the index writes a memory's,
so "What did I do yesterday?" finds what was said on that day or about it. A filter's bound
(``date_bound``) is a date, a month, a year or a relative date, in any of these forms.
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, date, datetime, timedelta

from massgen_cli.memory.longterm.record.memories import header_of

MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name} | {
    name.lower(): number for number, name in enumerate(calendar.month_abbr) if name
}
WEEKDAYS = {name.lower(): number for number, name in enumerate(calendar.day_name)}
COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
          "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3}  # fmt: skip
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})")
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]+)\.?,?\s+(\d{4})\b")
_MONTH_DAY = re.compile(r"\b([A-Za-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b")
_MONTH_YEAR = re.compile(r"^([A-Za-z]+)\.?,?\s+(\d{4})$")
_ISO_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_YEAR = re.compile(r"^\d{4}$")
_NAMED_MONTH = re.compile(r"\b[A-Za-z]+\.?,?\s+\d{4}\b")
_ISO_MONTH_IN = re.compile(r"\b\d{4}-\d{2}\b(?!-)")
_YEAR_IN = re.compile(r"\b(?:1[89]|20)\d{2}\b")
_COUNT = r"(\d+|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
_UNIT = r"(day|week|month|year)s?"
_DAYS = {
    "the day before yesterday": -2,
    "yesterday": -1,
    "last night": -1,
    "today": 0,
    "tonight": 0,
    "this morning": 0,
    "this afternoon": 0,
    "this evening": 0,
    "tomorrow": 1,
}
_RELATIVE = re.compile(
    "|".join(
        [
            rf"(?P<ago>{_COUNT}\s+{_UNIT}\s+ago)",
            rf"(?P<ahead>\bin\s+{_COUNT}\s+{_UNIT})",
            r"(?P<last>\b(?:last|next)\s+(?:week(?:end)?|month|year|" + "|".join(WEEKDAYS) + r"))",
            r"(?P<on>\bon\s+(?:" + "|".join(WEEKDAYS) + r"))",
            r"(?P<day>" + "|".join(sorted(_DAYS, key=len, reverse=True)) + ")",
        ]
    ),
    re.IGNORECASE,
)


def said_on(said: str) -> date | None:
    """The date a record's date field names, or None."""
    found = _ISO.search(said)
    if found:
        return _date(int(found[1]), int(found[2]), int(found[3]))
    found = _DAY_MONTH.search(said)
    if found and found[2].lower() in MONTHS:
        return _date(int(found[3]), MONTHS[found[2].lower()], int(found[1]))
    found = _MONTH_DAY.search(said)
    if found and found[1].lower() in MONTHS:
        return _date(int(found[3]), MONTHS[found[1].lower()], int(found[2]))
    return None


def _date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def resolved_dates(text: str, on: date) -> list[str]:
    """The dates that the relative dates of ``text`` name, said on ``on``: a day (``7 May 2023``), a
    month (``April 2023``) or a year (``2022``), each once, in the order they are said."""
    found: dict[str, None] = {}
    for match in _RELATIVE.finditer(text):
        phrase = match.group(0).lower()
        kind = match.lastgroup or ""
        named = _resolve(kind, " ".join(phrase.split()), on)
        if named:
            found[named] = None
    return list(found)


def _resolve(kind: str, phrase: str, on: date) -> str | None:
    if kind == "day":
        return _day(on + timedelta(days=_DAYS[phrase]))
    if kind == "on":
        return _day(_weekday_before(on, WEEKDAYS[phrase.split()[-1]]))
    if kind in ("ago", "ahead"):
        words = phrase.removeprefix("in ").removesuffix(" ago").split()
        count, unit = words[:-1], words[-1].rstrip("s")
        amount = int(count[0]) if count[0].isdigit() else COUNTS.get(" ".join(count), 0)
        return _moved(on, unit, -amount if kind == "ago" else amount)
    direction, unit = phrase.split()
    step = -1 if direction == "last" else 1
    if unit in WEEKDAYS:
        weekday = WEEKDAYS[unit]
        return _day(_weekday_before(on, weekday) if step < 0 else _weekday_after(on, weekday))
    if unit == "weekend":
        saturday = _weekday_before(on, 5) if step < 0 else _weekday_after(on, 5)
        return _day(saturday)
    return _moved(on, unit, step)


def _moved(on: date, unit: str, amount: int) -> str:
    """``on`` moved by ``amount`` units, named as finely as the unit: a day, a month or a year."""
    if unit in ("day", "week"):
        return _day(on + timedelta(days=amount * (7 if unit == "week" else 1)))
    if unit == "month":
        index = on.year * 12 + on.month - 1 + amount
        return f"{calendar.month_name[index % 12 + 1]} {index // 12}"
    return str(on.year + amount)


def _weekday_before(on: date, weekday: int) -> date:
    return on - timedelta(days=(on.weekday() - weekday - 1) % 7 + 1)


def _weekday_after(on: date, weekday: int) -> date:
    return on + timedelta(days=(weekday - on.weekday() - 1) % 7 + 1)


def _day(day: date) -> str:
    return f"{day.day} {calendar.month_name[day.month]} {day.year}"


def dates_of(indexed: str, text: str) -> list[str]:
    """The dates the relative dates of ``text`` name, said on the date its ``indexed`` text gives it
    (none when that date is not one ``said_on`` reads)."""
    header = header_of(indexed, text)
    said = said_on(header[0]) if header else None
    return resolved_dates(text, said) if said else []


def today() -> date:
    """Today as memories are dated when recorded (``record.memories.date_of``): in UTC."""
    return datetime.now(UTC).date()


def says_when(text: str) -> bool:
    """Whether ``text`` holds a relative date ("last week", "yesterday", "two days ago")."""
    return _RELATIVE.search(text) is not None


def memory_day(indexed: str, text: str, created_at: str) -> date | None:
    """A memory's own date, what date filters compare: the one its indexed text gives it (an imported
    ``timestamp``, else the day it was recorded); the day it was stored (``created_at``, ISO) for a
    memory indexed as its bare text; None for a timestamp of a form ``said_on`` does not read."""
    header = header_of(indexed, text)
    return said_on(header[0]) if header else said_on(created_at[:10])


def own_date(indexed: str, text: str) -> str:
    """The memory's own date in the words relative dates resolve to (``8 May 2023``), so a question
    about a day finds what was said on it whatever form its date was written in; empty when the indexed
    text gives none that ``said_on`` reads."""
    header = header_of(indexed, text)
    said = said_on(header[0]) if header else None
    return _day(said) if said else ""


def query_dates(query: str, on: date) -> list[str]:
    """The dates a query names, written as the index writes a memory's: its relative dates resolved
    against ``on`` (today), and its ISO dates in words; each once."""
    found = dict.fromkeys(resolved_dates(query, on))
    for match in _ISO.finditer(query):
        day = _date(int(match[1]), int(match[2]), int(match[3]))
        if day:
            found[_day(day)] = None
    return list(found)


def query_span(query: str, on: date) -> tuple[date, date] | None:
    """The days a query asks about: the first date it writes out (``16 November, 2023``,
    ``November 16, 2023``, ``2023-11-16``: that day; ``January 2022``, ``2022-01``: that month; a year
    such as ``2022``: that year), else the one relative date it says (``yesterday``, ``last month``),
    resolved against ``on``; None when it names none, or several relative ones."""
    for pattern in (_DAY_MONTH, _MONTH_DAY, _ISO, _NAMED_MONTH, _ISO_MONTH_IN, _YEAR_IN):
        for found in pattern.finditer(query):
            named = " ".join(found.group(0).replace(",", " ").split())
            first, last = date_bound(named, on, end=False), date_bound(named, on, end=True)
            if first and last:
                return first, last
    relative = resolved_dates(query, on)
    if len(relative) != 1:
        return None
    first, last = date_bound(relative[0], on, end=False), date_bound(relative[0], on, end=True)
    return (first, last) if first and last else None


def date_bound(text: str, on: date, *, end: bool) -> date | None:
    """The first (or with ``end`` the last) day that ``text`` names: a date (any form ``said_on``
    reads), a month (``May 2023``, ``2023-05``), a year (``2023``) or a relative date resolved against
    ``on`` (``yesterday``, ``last month``, ``two weeks ago``); None when it names none."""
    text = " ".join(text.split())
    named = said_on(text) or _span(text, end)
    if named is None:
        relative = resolved_dates(text, on)
        named = (said_on(relative[0]) or _span(relative[0], end)) if len(relative) == 1 else None
    return named


def _span(text: str, end: bool) -> date | None:
    """The first or last day of the month or year ``text`` names."""
    if _YEAR.match(text):
        return _date(int(text), 12, 31) if end else _date(int(text), 1, 1)
    month, iso = _MONTH_YEAR.match(text), _ISO_MONTH.match(text)
    if month and month[1].lower() in MONTHS:
        year, number = int(month[2]), MONTHS[month[1].lower()]
    elif iso and 1 <= int(iso[2]) <= 12:
        year, number = int(iso[1]), int(iso[2])
    else:
        return None
    if year < 1:
        return None
    return date(year, number, calendar.monthrange(year, number)[1] if end else 1)
