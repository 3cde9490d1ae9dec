"""PURE: a moment a person names (`2026-11-01`, `2 days ago`, `yesterday`) as epoch seconds.

`history --since` and the page's History filter take these forms, and nothing else: a phrase
that only looks like a time (`garbage`, `yesterday-ish`) is an error naming the forms
(`ACCEPTED`), never "no changes" or every change.

- a date, `2026-11-01` (its midnight, local time), or a date and time, `2026-11-01 14:30`,
  `2026-11-01T14:30:00+02:00` (ISO 8601; local time unless it has an offset or `Z`);
- `N UNIT ago` (or `N UNIT`), UNIT one of seconds, minutes, hours, days, weeks, months, years
  (singular too, or s / min / h / d / w); months and years count back on the calendar;
- `today`, `yesterday` (their midnight, local time), `now`.
"""

from __future__ import annotations

import datetime as dt
import re

ACCEPTED = (
    "a date (2026-11-01), a date and time (2026-11-01 14:30, ISO 8601), 'N UNIT ago'"
    " (UNIT: seconds, minutes, hours, days, weeks, months, years), 'today' or 'yesterday'"
)
_RELATIVE = re.compile(r"^(\d{1,6})\s*([a-z]+?)\s*(?:ago)?$")
_SECONDS = {
    "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
    "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
    "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
    "d": 86400, "day": 86400, "days": 86400,
    "w": 604800, "week": 604800, "weeks": 604800,
}  # fmt: skip
_MONTHS = {"month": 1, "months": 1, "year": 12, "years": 12}


class BadMoment(ValueError):
    """Text that is none of the `ACCEPTED` forms."""


def parse_moment(text: str, now: float) -> float:
    """`text` as epoch seconds, relative forms counted back from `now`; `BadMoment` otherwise."""
    said = " ".join(text.strip().lower().split())
    here = dt.datetime.fromtimestamp(now).astimezone()
    if said == "now":
        return now
    if said in ("today", "yesterday"):
        midnight = here.replace(hour=0, minute=0, second=0, microsecond=0)
        return (midnight - dt.timedelta(days=1 if said == "yesterday" else 0)).timestamp()
    m = _RELATIVE.match(said)
    if m:
        n, unit = int(m.group(1)), m.group(2)
        if unit in _SECONDS:
            return now - n * _SECONDS[unit]
        if unit in _MONTHS:
            return _months_back(here, n * _MONTHS[unit]).timestamp()
        raise BadMoment(f"unknown unit {unit!r}")
    return _absolute(text.strip())


def _absolute(text: str) -> float:
    if not re.match(r"^\d{4}-\d{2}-\d{2}", text) or "\x00" in text:
        raise BadMoment("not a date")
    try:
        when = dt.datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError as exc:
        raise BadMoment(str(exc)) from None
    return (when if when.tzinfo else when.astimezone()).timestamp()


def _months_back(when: dt.datetime, months: int) -> dt.datetime:
    """The same day and time `months` calendar months earlier (the month's last day when that
    month is shorter)."""
    import calendar

    index = when.year * 12 + when.month - 1 - months
    year, month = divmod(index, 12)
    if year < 1:
        raise BadMoment("before the year 1")
    day = min(when.day, calendar.monthrange(year, month + 1)[1])
    return when.replace(year=year, month=month + 1, day=day)
