"""Dates in tasks: English and Chinese absolute and relative dates resolved against a day."""

from __future__ import annotations

import calendar
import re
from datetime import date, timedelta

_MONTHS = {
    name: number
    for number, names in enumerate(
        "jan january|feb february|mar march|apr april|may|jun june|jul july|aug august"
        "|sep sept september|oct october|nov november|dec december".split("|"),
        start=1,
    )
    for name in names.split()
}
_WEEKDAYS_EN = {
    name: i
    for i, name in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())
}
_WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_CN_DIGITS = {ch: i for i, ch in enumerate("零一二三四五六七八九")} | {"两": 2}
_EN_NUMBERS = {"a": 1, "an": 1} | {
    name: i for i, name in enumerate("one two three four five six seven eight nine ten".split(), 1)
}

_MONTH_RX = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_CN_NUM_RX = r"(?:\d{1,2}|[一二两三四五六七八九十]{1,3})"
_DATE_RE = re.compile(
    r"(?P<prep>\b(?:by|before|on|until|till|due|no later than)\s+(?P<the>the\s+)?)?"
    r"(?:(?P<iso>\b\d{4}-\d{1,2}-\d{1,2}\b)"
    r"|(?P<ymd>\b\d{4}/\d{1,2}/\d{1,2}\b)"
    r"|(?P<cn_ymd>\d{4}年\d{1,2}月\d{1,2}[日号])"
    r"|(?P<md>\b" + _MONTH_RX + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?\b(?:,?\s+\d{4}\b)?)"
    r"|(?P<dm>\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH_RX + r"\b(?:,?\s+\d{4}\b)?)"
    # "by the 30th": a day of this month (or the next, once it is past), after a preposition.
    r"|(?P<en_d>(?<=the\s)(?P<en_dn>\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:of\s+)?[a-z]{3}))"
    r"|(?P<dayafter>\b(?:the\s+)?day\s+after\s+tomorrow\b)"
    r"|(?P<today>\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b)"
    r"|(?P<tomorrow>\b(?:tomorrow|tmrw|tmr)\b)"
    r"|(?P<wd>\b(?:(?P<wd_mod>this|next|coming)\s+)?(?P<wd_name>monday|tuesday|wednesday"
    r"|thursday|friday|saturday|sunday)\b)"
    r"|(?P<nextweek>\bnext\s+week\b)"
    r"|(?P<endweek>\b(?:the\s+)?end\s+of\s+(?:the|this)\s+week\b|\bthis\s+weekend\b)"
    r"|(?P<nextmonth>\bnext\s+month\b)"
    r"|(?P<endmonth>\b(?:the\s+)?end\s+of\s+(?:the|this)\s+month\b)"
    r"|(?P<in_n>\bin\s+(?P<n>\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
    r"(?P<unit>days?|weeks?|months?)\b)"
    # "4月17号", and as typed with spaces between digits and characters: "4 月 17 号".
    r"|(?P<cn_md>" + _CN_NUM_RX + r"\s?月\s?" + _CN_NUM_RX + r"\s?[日号])"
    r"|(?P<cn_dayafter2>大后天)|(?P<cn_dayafter>后天)"
    r"|(?P<cn_today>今天|今晚|今早|今日)"
    r"|(?P<cn_tomorrow>明天|明早|明晚|明日)"
    r"|(?P<cn_wd>(?P<cn_wd_mod>下下个?|下个?|这个?|本)?(?:周|星期|礼拜)(?P<cn_wd_name>[一二三四五六日天]))"
    r"|(?P<cn_weekend>(?:这个?|本)?周末)"
    r"|(?P<cn_nextweek>下个?(?:周|星期|礼拜))"
    r"|(?P<cn_endmonth>(?:这个?月|本月)?月底)"
    r"|(?P<cn_nextmonth_d>下个?月\s*(?P<cn_nm_day>" + _CN_NUM_RX + r")\s*[日号])"
    r"|(?P<cn_nextmonth>下个?月)"
    r"|(?P<cn_in_n>" + _CN_NUM_RX + r"(?P<cn_unit>天|周|个星期|个月)(?:后|之后|以后))"
    r"|(?P<cn_d>" + _CN_NUM_RX + r"[日号](?![线楼]))"
    r")"
    r"(?P<cn_before>\s*(?:之前|以前|前))?",
    re.I,
)


def cn_number(text: str) -> int:
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_CN_DIGITS.get(tens, 1) if tens else 1) * 10 + (_CN_DIGITS.get(ones, 0))
    return _CN_DIGITS.get(text, 0)


def _add_months(day: date, months: int) -> date:
    year, month = divmod(day.month - 1 + months, 12)
    year += day.year
    month += 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def _next_dated(today: date, month: int, day: int, year: int | None) -> date | None:
    try:
        if year is not None:
            return date(year, month, day)
        candidate = date(today.year, month, day)
        return candidate if candidate >= today else date(today.year + 1, month, day)
    except ValueError:
        return None


def _resolve_date(m: re.Match[str], today: date) -> date | None:
    """Turn one `_DATE_RE` match into a calendar date, relative to `today`."""
    g = m.groupdict()
    monday = today - timedelta(days=today.weekday())
    try:
        if g["iso"] or g["ymd"] or g["cn_ymd"]:
            y, mo, d = (int(x) for x in re.findall(r"\d+", g["iso"] or g["ymd"] or g["cn_ymd"]))
            return date(y, mo, d)
    except ValueError:
        return None
    if g["md"] or g["dm"]:
        raw = (g["md"] or g["dm"]).lower()
        name = re.search(r"[a-z]{3,}", raw.replace("of ", ""))
        nums = re.findall(r"\d+", raw)
        if name is None or name.group(0)[:3] not in _MONTHS:
            return None
        month = _MONTHS[name.group(0)[:4] if name.group(0)[:4] == "sept" else name.group(0)[:3]]
        year = int(nums[1]) if len(nums) > 1 else None
        return _next_dated(today, month, int(nums[0]), year)
    if g["dayafter"] or g["cn_dayafter"]:
        return today + timedelta(days=2)
    if g["cn_dayafter2"]:
        return today + timedelta(days=3)
    if g["today"] or g["cn_today"]:
        return today
    if g["tomorrow"] or g["cn_tomorrow"]:
        return today + timedelta(days=1)
    if g["wd"] or g["cn_wd"]:
        if g["wd"]:
            target = _WEEKDAYS_EN[g["wd_name"].lower()]
            mod = (g["wd_mod"] or "").lower()
            is_next, is_this = mod == "next", mod == "this"
        else:
            target = _WEEKDAYS_ZH[g["cn_wd_name"]]
            mod = g["cn_wd_mod"] or ""
            if mod.startswith("下下"):
                return monday + timedelta(days=14 + target)
            is_next, is_this = mod.startswith("下"), mod.startswith(("这", "本"))
        if is_next:
            return monday + timedelta(days=7 + target)
        if is_this:
            return monday + timedelta(days=target)
        # A bare weekday means the next one, today included.
        return today + timedelta(days=(target - today.weekday()) % 7)
    if g["nextweek"] or g["cn_nextweek"]:
        return monday + timedelta(days=7)
    if g["endweek"]:
        return monday + timedelta(days=4 if "end" in g["endweek"].lower() else 5)
    if g["cn_weekend"]:
        return monday + timedelta(days=5)
    if g["cn_nextmonth_d"]:
        first = _add_months(today.replace(day=1), 1)
        last = calendar.monthrange(first.year, first.month)[1]
        return first.replace(day=min(max(1, cn_number(g["cn_nm_day"])), last))
    if g["nextmonth"] or g["cn_nextmonth"]:
        return _add_months(today.replace(day=1), 1)
    if g["endmonth"] or g["cn_endmonth"]:
        return today.replace(day=calendar.monthrange(today.year, today.month)[1])
    if g["in_n"] or g["cn_in_n"]:
        if g["in_n"]:
            raw_n = g["n"].lower()
            n = int(raw_n) if raw_n.isdigit() else _EN_NUMBERS[raw_n]
            unit = g["unit"].lower()
        else:
            count = re.match(_CN_NUM_RX, g["cn_in_n"])
            n = cn_number(count.group(0)) if count else 1
            unit = {"天": "day", "周": "week", "个星期": "week", "个月": "month"}[g["cn_unit"]]
        if unit.startswith("day"):
            return today + timedelta(days=n)
        if unit.startswith("week"):
            return today + timedelta(weeks=n)
        return _add_months(today, n)
    if g["cn_md"]:
        month_txt, _, day_txt = g["cn_md"][:-1].replace(" ", "").partition("月")
        return _next_dated(today, cn_number(month_txt), cn_number(day_txt), None)
    if g["en_d"] and not g["the"]:
        return None  # "the 3rd test": no preposition of time before it
    if g["cn_d"] or g["en_d"]:
        day_num = int(g["en_dn"]) if g["en_d"] else cn_number(g["cn_d"][:-1])
        try:
            candidate = today.replace(day=day_num)
        except ValueError:
            return None
        return candidate if candidate >= today else _add_months(candidate, 1)
    return None


def find_date(text: str, today: date) -> tuple[date, tuple[int, int]] | None:
    for m in _DATE_RE.finditer(text):
        resolved = _resolve_date(m, today)
        if resolved is not None:
            return resolved, m.span()
    return None


_WEEKDAY_NAMES_EN = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
_WEEKDAY_NAMES_ZH = "一二三四五六日"
# Not calendar.month_name: that follows the process locale.
_MONTH_NAMES_EN = (
    "January February March April May June July August September October November December".split()
)


def due_en(day: date) -> str:
    """A due date that still reads right later: "Friday March 6, 2026-03-06"."""
    month = _MONTH_NAMES_EN[day.month - 1]
    return f"{_WEEKDAY_NAMES_EN[day.weekday()]} {month} {day.day}, {day.isoformat()}"


def due_zh(day: date) -> str:
    """A due date that still reads right later: "3月6日周五，2026-03-06"."""
    return f"{day.month}月{day.day}日周{_WEEKDAY_NAMES_ZH[day.weekday()]}，{day.isoformat()}"
