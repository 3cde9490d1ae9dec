"""The time windows a question names ("in May 2023", "上周", "2024-03-01"), for turn search."""

from __future__ import annotations

import datetime as dt
import re

_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_MONTH = "|".join(_MONTHS)
_EN_DATE = re.compile(
    rf"\b(?:(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?)?({_MONTH})(?:\s+(\d{{1,2}})(?:st|nd|rd|th)?)?"
    rf"(?:,?\s+(\d{{4}}))?\b|\b((?:19|20)\d\d)\b",
    re.I,
)
_ZH_DATE = re.compile(r"(?:(\d{4})\s*年)?\s*(\d{1,2})\s*月(?:\s*(\d{1,2})\s*[日号])?|(\d{4})\s*年")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_RELATIVE = {
    "today": (0, 1), "yesterday": (1, 1), "last week": (7, 7), "last month": (31, 31),
    "今天": (0, 1), "昨天": (1, 1), "上周": (7, 7), "上个月": (31, 31), "上星期": (7, 7),
}  # fmt: skip
# A month or a day named in a question also covers the days after it, when it was talked about.
DAY_SLACK = (2, 3)
MONTH_SLACK_DAYS = 21


def date_windows(query: str, *, now: float) -> list[tuple[float, float]]:
    """Time windows (epoch seconds) a query names: "in May 2023", "on 3 June", "2023年5月",
    "2024-03-01", "yesterday", "上周". A month without a year stands for that month in each
    of the last ten years."""
    today = dt.datetime.fromtimestamp(now)
    years = list(range(today.year - 9, today.year + 1))
    out: list[tuple[float, float]] = []

    def add(year: int | None, month: int | None, day: int | None) -> None:
        for y in [year] if year else years:
            try:
                if month and day:
                    d = dt.datetime(y, month, day)
                    out.append(
                        (d.timestamp() - DAY_SLACK[0] * 86400, d.timestamp() + DAY_SLACK[1] * 86400)
                    )
                elif month:
                    a = dt.datetime(y, month, 1)
                    b = dt.datetime(y + month // 12, month % 12 + 1, 1) + dt.timedelta(
                        days=MONTH_SLACK_DAYS
                    )
                    out.append((a.timestamp(), b.timestamp()))
                else:
                    out.append(
                        (dt.datetime(y, 1, 1).timestamp(), dt.datetime(y + 1, 1, 31).timestamp())
                    )
            except ValueError:
                continue

    for m in _ISO_DATE.finditer(query):
        add(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    query = _ISO_DATE.sub(" ", query)
    for m in _EN_DATE.finditer(query):
        if m.group(5):
            add(int(m.group(5)), None, None)
        else:
            day = m.group(1) or m.group(3)
            add(
                int(m.group(4)) if m.group(4) else None,
                _MONTHS.index(m.group(2).lower()) + 1,
                int(day) if day else None,
            )
    for m in _ZH_DATE.finditer(query):
        if m.group(4):
            add(int(m.group(4)), None, None)
        else:
            add(
                int(m.group(1)) if m.group(1) else None,
                int(m.group(2)),
                int(m.group(3)) if m.group(3) else None,
            )
    low = query.lower()
    start_of_day = today.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()
    for word, (back, span) in _RELATIVE.items():
        if word in low:
            a = start_of_day - back * 86400
            out.append((a, a + span * 86400 + (86400 if back == 0 else 0)))
    return out


# A question that asks when something happened, in English or Chinese.
_ASKS_WHEN = re.compile(
    r"^\s*when\b|\bwhen (?:did|was|is|will|does|do|were|are|has|had)\b|\bwhat (?:date|day|time|"
    r"month|year)\b|\bhow long ago\b|什么时候|何时|哪天|哪一天|哪年|哪一年|几月|几号|多久以前",
    re.I,
)
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|mon|tue|tues|wed|thu|thurs|fri|sat|sun"
_SAYS_WHEN = re.compile(
    rf"\b(?:yesterday|today|tonight|tomorrow|the other day"
    rf"|(?:last|this|next|this past) (?:week|weekend|month|year|night|summer|winter|spring|fall"
    rf"|autumn|morning|{_WEEKDAY})"
    rf"|on (?:{_WEEKDAY})"
    rf"|(?:\d+|a|an|one|two|three|four|five|six|a few|few|a couple of|couple of|several)"
    rf" (?:days?|weeks?|months?|years?) ago"
    rf"|in (?:{_MONTH})|(?:19|20)\d\d)\b"
    r"|昨天|前天|今天|上周|上星期|上个月|去年|前年|周末|[几两三四五六七八九十\d]+(?:天|周|个月|年)前|\d+\s*[年月]",
    re.I,
)


def asks_when(query: str) -> bool:
    """Whether a question asks when something happened ("When did …", "…是什么时候…")."""
    return _ASKS_WHEN.search(query) is not None


def says_when(text: str) -> bool:
    """Whether a text places what it tells in time: "yesterday", "last Friday", "two weeks
    ago", "in May", "2023", "上周", "三天前" — what a question asking when wants of a turn
    (its date is its session's; the words say how far from it)."""
    return _SAYS_WHEN.search(text) is not None
