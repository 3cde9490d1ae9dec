"""The offline extractor: English and Chinese patterns for the facts people state about themselves.

Used when no LLM is configured. It reads only user turns and proposes the same
`ExtractedMemory` values the LLM extractor does: standalone statements ("User's name
is Sam", "用户喜欢简洁的代码") with a type, an importance on the seed-004 scale
(identity 8–10, skills 6–8, preferences 4–6, transient 1–3), the turn they came from,
and a `subject` key for single-valued facts (`name`, `employer`, `city`,
`tool:testing`, …) so a later "I switched to vitest" supersedes "I use jest".

It is deliberately conservative: a sentence that is a question, or an object that is
a pronoun, yields nothing. Missing a fact is cheaper than storing a wrong one.
"""

from __future__ import annotations

import calendar
import functools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo

from memd.conversations.trivial import is_trivial
from memd.core.models import ExtractedMemory, Turn
from memd.core.redact import redact

__all__ = ["extract_rules", "is_trivial"]

_CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")

# Importance on the seed-004 scale.
_IMP_NAME = 9
_IMP_EMPLOYER = 8
_IMP_ROLE = 8
_IMP_CITY = 7
_IMP_AGE = 6
_IMP_HOMETOWN = 6
_IMP_SKILL_MAIN = 7
_IMP_SKILL = 6
_IMP_PROJECT = 7
_IMP_PROJECT_DETAIL = 6
_IMP_SWITCH = 6
_IMP_PREFERENCE = 5
_IMP_TOOL_HABIT = 5
_IMP_TASK = 3

# ---------------------------------------------------------------------------
# Known technologies: category decides the memory type, subject the supersession key.


@dataclass(frozen=True, slots=True)
class _Tech:
    name: str
    category: str
    subject: str = ""


def _techs(category: str, subject: str, names: str) -> dict[str, _Tech]:
    out: dict[str, _Tech] = {}
    for name in names.split("|"):
        out[name.lower()] = _Tech(name, category, subject)
    return out


_TECH: dict[str, _Tech] = {
    **_techs(
        "language",
        "",
        "Python|TypeScript|JavaScript|Go|Golang|Rust|Java|Kotlin|Swift|C|C++|C#|Ruby|PHP|Scala"
        "|Elixir|Erlang|Haskell|Dart|Lua|R|Julia|SQL|Bash|Zig|OCaml|Clojure|F#|Objective-C|Perl"
        "|MATLAB|Solidity|HTML|CSS",
    ),
    **_techs(
        "framework",
        "",
        "React|Vue|Vue.js|Angular|Svelte|SvelteKit|Next.js|NextJS|Nuxt|Remix|Astro|SolidJS"
        "|Django|Flask|FastAPI|Rails|Ruby on Rails|Spring|Spring Boot|Express|NestJS|Laravel"
        "|Tauri|Electron|Flutter|React Native|SwiftUI|PyTorch|TensorFlow|JAX|pandas|NumPy"
        "|LangChain|Tailwind|Tailwind CSS|TailwindCSS|Node|Node.js|NodeJS|Deno|Bun|.NET|Qt"
        "|jQuery|Redux|Zustand|GraphQL|gRPC|Pydantic|SQLAlchemy",
    ),
    **_techs(
        "platform",
        "",
        "PostgreSQL|Postgres|MySQL|SQLite|MongoDB|Redis|Supabase|Firebase|Elasticsearch|DuckDB"
        "|Docker|Kubernetes|K8s|AWS|GCP|Azure|Vercel|Cloudflare|Git|GitHub|GitLab|Terraform",
    ),
    **_techs(
        "editor",
        "editor",
        "VSCode|VS Code|Visual Studio Code|Vim|Neovim|NeoVim|nvim|Emacs|IntelliJ|IntelliJ IDEA"
        "|PyCharm|WebStorm|GoLand|Cursor|Zed|Sublime|Sublime Text|Xcode|Android Studio|Helix"
        "|Windsurf|Visual Studio",
    ),
    **_techs(
        "tool", "tool:testing", "Jest|Vitest|Mocha|Jasmine|pytest|unittest|RSpec|JUnit|TestNG|AVA"
    ),
    **_techs("tool", "tool:e2e-testing", "Cypress|Playwright|Selenium|Puppeteer"),
    **_techs("tool", "tool:package-manager", "npm|Yarn|pnpm"),
    **_techs("tool", "tool:package-manager:python", "pip|Poetry|uv|Pipenv|PDM|Conda|Rye|Hatch"),
    **_techs("tool", "tool:bundler", "Webpack|Vite|Rollup|esbuild|Parcel|Turbopack|Rspack"),
    **_techs("tool", "", "ESLint|Prettier|Biome|Ruff|Black|mypy|Pyright|Flake8|Pylint"),
    **_techs("os", "os", "macOS|Mac|MacOS|Windows|Linux|Ubuntu|Arch|Arch Linux|Fedora|Debian"),
    **_techs("tool", "tool:shell", "zsh|fish|Nushell"),
    **_techs("tool", "tool:terminal", "iTerm|iTerm2|WezTerm|Alacritty|Kitty|Warp|Ghostty|tmux"),
    **_techs("tool", "browser", "Chrome|Firefox|Safari|Arc|Edge|Brave"),
}
_PREFERENCE_CATEGORIES = frozenset({"editor", "os"})

# Preference topics that are single-valued even though no tool is named.
_STYLE_SUBJECTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?:tabs|spaces)\b|缩进|制表符|空格", re.I), "style:indent"),
    (re.compile(r"\b(?:single|double)[ -]quotes?\b|单引号|双引号", re.I), "style:quotes"),
    (re.compile(r"\b(?:dark|light)\s+(?:mode|theme)\b|深色|浅色|暗色|亮色", re.I), "theme"),
)

# ---------------------------------------------------------------------------
# Sentences, questions, pronouns

# "." ends a sentence only before whitespace, so "Next.js" and "3.11" stay whole.
_SENTENCE_RE = re.compile(r"(?:[^.!?。！？；;\n]|\.(?=\S))+[.!?。！？；;]*")
_CLAUSE_SPLIT_RE = re.compile(r"[，,、：:]")
_EN_QUESTION_START_RE = re.compile(
    r"^\s*(?:what|who|whom|whose|where|when|why|how|which|do|does|did|is|are|am|was|were"
    r"|can|could|would|will|should|shall|may|might|have|has)\b",
    re.I,
)
_ZH_QUESTION_RE = re.compile(
    r"[吗呢么嘛][\s。.！!]*$|什么|怎么|为什么|哪|谁|几岁|多少|是否|有没有|是不是|对吗"
)
_PRONOUN_START_RE = re.compile(
    r"^(?:it|its|it's|this|that|these|those|you|your|yours|him|her|them|what|how|why|which|who"
    r"|there|here|one|some|something|anything|everything|nothing)\b",
    re.I,
)
_FIRST_PERSON = {
    "my": "their",
    "me": "them",
    "mine": "theirs",
    "myself": "themselves",
    "i": "they",
    "i'm": "they're",
    "i've": "they've",
    "i'll": "they'll",
    "i'd": "they'd",
    "am": "are",
}
_FIRST_PERSON_RE = re.compile(r"\b(?:my|me|mine|myself|I'm|I've|I'll|I'd|I)\b(?:\s+am\b)?")


def _third_person(text: str) -> str:
    def swap(m: re.Match[str]) -> str:
        words = m.group(0).split()
        return " ".join(_FIRST_PERSON.get(w.lower(), w) for w in words)

    return _FIRST_PERSON_RE.sub(swap, text)


def _is_question(sentence: str) -> bool:
    s = sentence.strip()
    if s.endswith(("?", "？")):
        return True
    if _CJK_RE.search(s):
        return bool(_ZH_QUESTION_RE.search(s))
    return bool(_EN_QUESTION_START_RE.match(s))


def _clean(text: str) -> str:
    return text.strip().strip(" \t\"'“”‘’「」《》()（）.,;:!?。，；：！？、~—-")


def _slug(name: str) -> str:
    slug = re.sub(r"[^\w\u3400-\u9fff]+", "-", name.lower()).strip("-_")
    return slug or "project"


def _join_en(items: Sequence[str]) -> str:
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _join_zh(items: Sequence[str]) -> str:
    if len(items) <= 2:
        return "和".join(items)
    return "、".join(items[:-1]) + "和" + items[-1]


def _article(phrase: str) -> str:
    return "an" if phrase[:1].lower() in "aeiou" else "a"


# ---------------------------------------------------------------------------
# Dates


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
    r"(?P<prep>\b(?:by|before|on|until|till|due|no later than)\s+)?"
    r"(?:(?P<iso>\b\d{4}-\d{1,2}-\d{1,2}\b)"
    r"|(?P<ymd>\b\d{4}/\d{1,2}/\d{1,2}\b)"
    r"|(?P<cn_ymd>\d{4}年\d{1,2}月\d{1,2}[日号])"
    r"|(?P<md>\b" + _MONTH_RX + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?\b(?:,?\s+\d{4}\b)?)"
    r"|(?P<dm>\b\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH_RX + r"\b(?:,?\s+\d{4}\b)?)"
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
    r"|(?P<cn_md>" + _CN_NUM_RX + r"月" + _CN_NUM_RX + r"[日号])"
    r"|(?P<cn_dayafter2>大后天)|(?P<cn_dayafter>后天)"
    r"|(?P<cn_today>今天|今晚|今早|今日)"
    r"|(?P<cn_tomorrow>明天|明早|明晚|明日)"
    r"|(?P<cn_wd>(?P<cn_wd_mod>下下个?|下个?|这个?|本)?(?:周|星期|礼拜)(?P<cn_wd_name>[一二三四五六日天]))"
    r"|(?P<cn_weekend>(?:这个?|本)?周末)"
    r"|(?P<cn_nextweek>下个?(?:周|星期|礼拜))"
    r"|(?P<cn_endmonth>(?:这个?月|本月)?月底)"
    r"|(?P<cn_nextmonth>下个?月)"
    r"|(?P<cn_in_n>" + _CN_NUM_RX + r"(?P<cn_unit>天|周|个星期|个月)(?:后|之后|以后))"
    r"|(?P<cn_d>" + _CN_NUM_RX + r"[日号](?![线楼]))"
    r")"
    r"(?P<cn_before>\s*(?:之前|以前|前))?",
    re.I,
)


def _cn_number(text: str) -> int:
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
            n = _cn_number(count.group(0)) if count else 1
            unit = {"天": "day", "周": "week", "个星期": "week", "个月": "month"}[g["cn_unit"]]
        if unit.startswith("day"):
            return today + timedelta(days=n)
        if unit.startswith("week"):
            return today + timedelta(weeks=n)
        return _add_months(today, n)
    if g["cn_md"]:
        month_txt, _, day_txt = g["cn_md"][:-1].partition("月")
        return _next_dated(today, _cn_number(month_txt), _cn_number(day_txt), None)
    if g["cn_d"]:
        day_num = _cn_number(g["cn_d"][:-1])
        try:
            candidate = today.replace(day=day_num)
        except ValueError:
            return None
        return candidate if candidate >= today else _add_months(candidate, 1)
    return None


def _find_date(text: str, today: date) -> tuple[date, tuple[int, int]] | None:
    for m in _DATE_RE.finditer(text):
        resolved = _resolve_date(m, today)
        if resolved is not None:
            return resolved, m.span()
    return None


# ---------------------------------------------------------------------------
# Extraction context


@dataclass(frozen=True, slots=True)
class _Ctx:
    turn_id: str
    today: date

    def mem(
        self,
        content: str,
        type_: str,
        importance: int,
        *,
        subject: str = "",
        topic: str = "",
        due: str = "",
    ) -> ExtractedMemory:
        return ExtractedMemory(
            content=content,
            type=type_,
            importance=importance,
            source_turn_ids=(self.turn_id,),
            subject=subject,
            topic=topic,
            due=due,
        )


_Rule = Callable[[str, _Ctx], Iterator[ExtractedMemory]]

# ---------------------------------------------------------------------------
# English rules

_NAME_WORD = r"[A-Z\u00c0-\u00de][\w'\-]*"
_NOT_NAMES = frozenset(
    """
    american british english chinese japanese korean german french indian canadian australian
    italian spanish russian brazilian mexican vietnamese thai irish scottish dutch swedish polish
    turkish european asian african taiwanese singaporean malaysian filipino indonesian ukrainian
    sorry fine good great okay ok back done here ready sure not just also so still new happy sad
    tired busy free home late early in at on a an the currently now working using trying looking
    going glad curious confused stuck lost retired single married monday tuesday wednesday
    thursday friday saturday sunday tomorrow today tonight bored hungry sick excited new
    """.split()
)
_EN_NAME_RES = (
    re.compile(
        r"\b(?i:my\s+name\s+is|my\s+name's|name's)\s+(?P<name>"
        + _NAME_WORD
        + r"(?:\s+"
        + _NAME_WORD
        + r"){0,2})"
    ),
    re.compile(
        r"\b(?i:(?:please\s+|just\s+|you\s+can\s+)?call\s+me)\s+(?P<name>" + _NAME_WORD + r")\b"
    ),
    # "I'm Sam" is a name only where an introduction would stand: checked in _en_name.
    re.compile(
        r"\b(?:I'm|I\s+am|Im)\s+(?P<name>" + _NAME_WORD + r")"
        r"(?=\s*(?:[,.!;]|$|\s+(?:and|from|here|by)\b))"
    ),
)
_INTRO_PREFIX_RE = re.compile(r"^(?:(?:hi|hello|hey|yo)(?:\s+there)?\b[\s,!]*)?$|[,;:!.]\s*$", re.I)


def _en_name(sentence: str, ctx: _Ctx) -> Iterator[ExtractedMemory]:
    for rx in _EN_NAME_RES:
        for m in rx.finditer(sentence):
            name = m.group("name").strip()
            if m.group(0).lower().startswith(("i'm", "i ", "im")) and not _INTRO_PREFIX_RE.search(
                sentence[: m.start()].strip()
            ):
                continue
            first = name.split()[0].lower()
            if first in _NOT_NAMES or name.lower() in _TECH:
                continue
            yield ctx.mem(f"User's name is {name}", "personal", _IMP_NAME, subject="name")
            return


_EN_AGE_RES = (
    re.compile(
        r"\b(?:I'm|I\s+am|Im)\s+(?P<age>\d{1,3})"
        r"(?:\s*(?:years?|yrs?)(?:\s+|-)old\b|\s*y/?o\b|(?=\s*(?:[,.!;]|$)))",
        re.I,
    ),
    re.compile(r"\bmy\s+age\s+is\s+(?P<age>\d{1,3})\b", re.I),
    re.compile(r"\b(?:I'm|I\s+am)\s+an?\s+(?P<age>\d{1,3})[- ]years?[- ]old\b", re.I),
)


def _en_age(sentence: str, ctx: _Ctx) -> Iterator[ExtractedMemory]:
    for rx in _EN_AGE_RES:
        m = rx.search(sentence)
        if m and 3 <= int(m.group("age")) <= 120:
            age = int(m.group("age"))
            yield ctx.mem(f"User is {age} years old", "personal", _IMP_AGE, subject="age")
            return


_ORG = r"(?P<org>[A-Z0-9][\w&.'\-]*(?:\s+(?:of\s+)?[A-Z0-9&][\w&.'\-]*){0,4})"
_ROLE_STOP = (
    r"(?=\s*(?:[,.;!()]|$|\s+(?:at|in|for|and|since|with|on|where|but|who|from|based|here"
    r"|there|now|currently|today|which|because|so)\b))"
)
_ROLE = r"(?P<role>[A-Za-z][\w+#/&\-]*(?:\s+[\w+#/&\-]+){0,5}?)" + _ROLE_STOP
_ROLE_NOUNS = (
    r"(?:engineer|developer|dev|programmer|designer|manager|scientist|analyst|architect|lead"
    r"|director|intern|consultant|researcher|student|teacher|professor|founder|co-founder|cto|ceo"
    r"|cfo|coo|vp|head|officer|specialist|administrator|admin|writer|editor|artist|doctor|nurse"
    r"|lawyer|accountant|marketer|product owner|pm|sre|devops|tester|qa|freelancer|contractor"
    r"|owner|entrepreneur|maintainer|technician|journalist|economist|physicist|chemist"
    r"|mathematician|statistician|librarian|musician|photographer|recruiter)s?"
)
_EN_WORK_RE = re.compile(
    r"(?:\bI\s+(?:currently\s+|now\s+|still\s+)?work|\bI(?:'m|\s+am)\s+(?:currently\s+|now\s+)?working"
    r"|\bI(?:'ve|\s+have)\s+been\s+working|(?:^|(?<=,\s)|(?<=\band\s))(?:currently\s+|now\s+)?working)"
    r"\s+(?:at|for)\s+" + _ORG + r"(?:,?\s+as\s+(?:an?\s+|the\s+)?" + _ROLE + r")?"
)
_EN_WORK_AS_RE = re.compile(
    r"\bI(?:\s+(?:currently\s+|now\s+)?work|(?:'m|\s+am)\s+(?:currently\s+)?working)\s+as\s+"
    r"(?:an?\s+|the\s+)?" + _ROLE + r"(?:\s+(?:at|for)\s+" + _ORG + r")?"
)
_EN_ROLE_AT_RE = re.compile(
    r"\bI(?:'m|\s+am)\s+(?:currently\s+|now\s+)?(?:an?|the)\s+(?P<role>(?:[\w+#/&\-]+\s+){0,4}?"
    r"(?i:" + _ROLE_NOUNS + r"))(?:\s+(?:at|for|with)\s+" + _ORG + r")?" + _ROLE_STOP
)
_EN_JOINED_RE = re.compile(
    r"\bI(?:'ve|\s+have)?\s+(?:just\s+|recently\s+)?(?:joined|started\s+at|started\s+working\s+at)\s+"
    + _ORG
    + r"(?:,?\s+as\s+(?:an?\s+|the\s+)?"
    + _ROLE
    + r")?"
)
_EN_EMPLOYED_RE = re.compile(
    r"\b(?:I(?:'m|\s+am)\s+employed\s+(?:at|by)|my\s+(?:current\s+)?employer\s+is)\s+" + _ORG,
    re.I,
)
_EN_ROLE_IS_RE = re.compile(
    r"\bmy\s+(?:job\s+title|title|role|position|job)\s+is\s+(?:an?\s+)?" + _ROLE, re.I
)
_NOT_ORGS = frozenset(
    "i home the a an night nights weekends weekend monday tuesday wednesday thursday friday "
    "saturday sunday it this that my our".split()
)


def _org(raw: str | None) -> str:
    if not raw:
        return ""
    org = re.sub(r"\s+of$", "", raw.strip()).rstrip(".'")
    if org.lower() in _NOT_ORGS or org.lower() in _TECH:
        return ""
    return org


def _role(raw: str | None) -> str:
    if not raw:
        return ""
    role = _clean(raw)
    if not role or _PRONOUN_START_RE.match(role) or len(role.split()) > 6:
        return ""
    return role


def _en_work(sentence: str, ctx: _Ctx) -> Iterator[ExtractedMemory]:
    org = role = ""
    for rx in (_EN_WORK_RE, _EN_WORK_AS_RE, _EN_ROLE_AT_RE, _EN_JOINED_RE, _EN_EMPLOYED_RE):
        m = rx.search(sentence)
        if m is None:
            continue
        groups = m.groupdict()
        org = org or _org(groups.get("org"))
        role = role or _role(groups.get("role"))
    if not role:
        m = _EN_ROLE_IS_RE.search(sentence)
        if m:
            role = _role(m.group("role"))
    if org:
        yield ctx.mem(f"User works at {org}", "personal", _IMP_EMPLOYER, subject="employer")
    if role:
        yield ctx.mem(
            f"User works as {_article(role)} {role}", "personal", _IMP_ROLE, subject="role"
        )


_PLACE = (
    r"(?P<place>[A-Z][\w.'\-]*(?:\s+[A-Z][\w.'\-]*){0,3}"
    r"(?:,\s*[A-Z][\w.'\-]+(?:\s+[A-Z][\w.'\-]+)?)?)"
)
_EN_CITY_RE = re.compile(
    r"\bI(?:\s+(?:currently\s+|now\s+|still\s+)?live|(?:'m|\s+am)\s+(?:currently\s+|now\s+)?"
    r"(?:based|located|living|staying))\s+in\s+" + _PLACE
)
_EN_MOVED_RE = re.compile(
    r"\bI(?:'ve|\s+have)?\s+(?:just\s+|recently\s+)?(?:moved|relocated)\s+to\s+" + _PLACE
)
_EN_HOMETOWN_RE = re.compile(
    r"\b(?:I(?:'m|\s+am)\s+(?:originally\s+)?from|I\s+grew\s+up\s+in|my\s+home\s*town\s+is)\s+"
    + _PLACE
)


def _place(raw: str) -> str:
    place = raw.strip().rstrip(".'")
    first = place.split()[0].lower()
    if first in _NOT_ORGS or place.lower() in _TECH:
        return ""
    return place


def _en_location(sentence: str, ctx: _Ctx) -> Iterator[ExtractedMemory]:
    m = _EN_CITY_RE.search(sentence) or _EN_MOVED_RE.search(sentence)
    if m and (place := _place(m.group("place"))):
        yield ctx.mem(f"User lives in {place}", "personal", _IMP_CITY, subject="city")
    m = _EN_HOMETOWN_RE.search(sentence)
    if m and (place := _place(m.group("place"))):
        yield ctx.mem(f"User is from {place}", "personal", _IMP_HOMETOWN, subject="hometown")


_ADVERBS = (
    r"(?:mainly|mostly|primarily|usually|often|typically|generally|normally|also|now|currently"
    r"|still|always|really|just|daily|regularly|sometimes|mostly)"
)
_USE_VERBS = {
    "use": "uses",
    "work with": "works with",
    "code in": "codes in",
    "program in": "programs in",
    "develop with": "develops with",
    "develop in": "develops in",
    "write in": "writes in",
    "write code in": "writes code in",
    "rely on": "relies on",
    "am using": "uses",
    "'m using": "uses",
    "write": "writes",
    "code": "codes",
}
# Verbs too common to take an unknown proper noun as a tool ("I write Chapter 3").
_KNOWN_ONLY_VERBS = frozenset({"write", "code"})
_EN_USE_RE = re.compile(
    r"(?P<subj>\bI\s+|(?:^|,\s*|\band\s+))(?P<adv>(?:" + _ADVERBS + r"\s+){0,2})"
    r"(?P<verb>use|work\s+with|code\s+in|program\s+in|develop\s+(?:with|in)|write(?:\s+code)?\s+in"
    r"|rely\s+on|am\s+using|'m\s+using|write|code)\s+(?=(?P<items>[^.;!?]+))",
    re.I,
)
_ITEM_STOP_RE = re.compile(
    r"\s+(?:for|to|at|when|because|since|every|in\s+my|on\s+my|as\s+my|as\s+an?|which|but|so"
    r"|while|with\s+my|instead|these\s+days|nowadays|most\s+of|day\s+to\s+day|at\s+work"
    r"|and\s+(?:" + _ADVERBS + r"\s+)*(?:use|work|code|program|develop|write|prefer|like|love"
    r"|hate|live|am|'m|have|need|want|enjoy)\b)\b.*$|,\s*(?:which|but|so|and\s+I)\b.*$",
    re.I,
)
_PURPOSE_RE = re.compile(r"^\s+for\s+(?P<purpose>(?:[\w\-]+\s*){1,4}?)\s*(?:[,.;!]|$)", re.I)
_ITEM_SPLIT_RE = re.compile(
    r"\s*(?:,\s*(?:and\s+|or\s+)?|\s+and\s+|\s+or\s+|\s*&\s*|\s*\+\s*|\s*/\s*)\s*"
)
_ITEM_TRIM_RE = re.compile(
    r"^(?:the|a|an|my|some|mostly|mainly|primarily|both)\s+|\s+(?:a\s+lot|daily|mostly|too"
    r"|as\s+well|every\s*day|now|a\s+bit|heavily|extensively|exclusively)$",
    re.I,
)
_PROPER_ITEM_RE = re.compile(
    r"^(?:[A-Z0-9.][\w.+#\-]*|[\w.\-]*[A-Z0-9+#][\w.+#\-]*)(?:\s+[A-Z0-9][\w.+#\-]*){0,2}$"
)


def _tech(item: str) -> _Tech | None:
    return _TECH.get(item.lower())


def _items(raw: str) -> list[str]:
    """Split "React, TypeScript and Tauri" into names; keep only tools and proper nouns."""
    out: list[str] = []
    for part in _ITEM_SPLIT_RE.split(raw.strip()):
        item = part.strip()
        for _ in range(2):
            item = _ITEM_TRIM_RE.sub("", item).strip()
        item = _clean(item)
        if not item or _PRONOUN_START_RE.match(item):
            continue
        tech = _tech(item)
        if tech is not None:
            out.append(item if item.lower() != item else tech.name)
        elif _PROPER_ITEM_RE.match(item) and item.split()[0].lower() not in _NOT_ORGS:
            out.append(item)
    return list(dict.fromkeys(out))


def _tool_memories(
    items: Sequence[str],
    ctx: _Ctx,
    *,
    render: Callable[[Sequence[str]], str],
    main: bool,
    switch: bool = False,
) -> Iterator[ExtractedMemory]:
    """One memory per single-valued tool (editor, test runner, …), one for the rest."""
    rest: list[str] = []
    for item in items:
        tech = _tech(item)
        if tech is None or not tech.subject:
            rest.append(item)
            continue
        type_ = "preference" if tech.category in _PREFERENCE_CATEGORIES else "skill"
        importance = (
            _IMP_SWITCH if switch else (_IMP_TOOL_HABIT if type_ == "preference" else _IMP_SKILL)
        )
        yield ctx.mem(render([item]), type_, importance, subject=tech.subject)
    if not rest:
        return
    subject = ""
    if main and len(rest) == 1 and (t := _tech(rest[0])) is not None and t.category == "language":
        subject = "language:primary"
    importance = _IMP_SWITCH if switch else (_IMP_SKILL_MAIN if main else _IMP_SKILL)
    yield ctx.mem(render(rest), "skill", importance, subject=subject)


def _render_use(lead: str, purpose: str, names: Sequence[str]) -> str:
    return f"{lead} {_join_en(names)}{purpose}"


def _en_tools(sentence: str, ctx: _Ctx) -> Iterator[ExtractedMemory]:
    for m in _EN_USE_RE.finditer(sentence):
        if not m.group("subj").strip().startswith("I") and not re.search(
            r"\bI\b", sentence[: m.start()]
        ):
            continue  # "Use pytest." is an instruction, not a fact about the user
        raw = m.group("items")
        purpose_m = _PURPOSE_RE.match(raw[len(_ITEM_STOP_RE.sub("", raw)) :])
        items = _items(_ITEM_STOP_RE.sub("", raw))
        verb = " ".join(m.group("verb").lower().split())
        if verb in _KNOWN_ONLY_VERBS:
            items = [i for i in items if _tech(i) is not None]
        if not items:
            continue
        adverbs = m.group("adv").split()
        verb3 = _USE_VERBS.get(verb, "uses")
        adv = " ".join(a.lower() for a in adverbs if a.lower() not in {"also", "really", "just"})
        purpose = f" for {purpose_m.group('purpose').strip()}" if purpose_m else ""
        lead = f"User {adv + ' ' if adv else ''}{verb3}"
        main = any(a.lower() in {"mainly", "mostly", "primarily"} for a in adverbs)
        yield from _tool_memories(
            items,
            ctx,
            render=functools.partial(_render_use, lead, purpose),
            main=main,
            switch=any(a.lower() == "now" for a in adverbs),
        )


_EN_SWITCH_RE = re.compile(
    r"\bI(?:'ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+|now\s+)?"
    r"(?:switched|moved|migrated|changed|converted)\s+"
    r"(?:(?:over\s+)?from\s+(?P<old>[\w.+#\- ]+?)\s+)?(?:over\s+)?to\s+(?P<new>[\w.+#\-]+(?:\s+[A-Z][\w.+#\-]*)?)"
    r"(?:\s+from\s+(?P<old2>[\w.+#\-]+))?",
    re.I,
)


def _en_switch(sentence: str, ctx: _Ctx) -> Iterator[ExtractedMemory]:
    m = _EN_SWITCH_RE.search(sentence)
    if m is None:
        return
    new = _items(m.group("new"))
    if not new:
        return
    if _tech(new[0]) is None and re.match(r"(?i)moved|relocated", m.group(0).split()[1]):
        return  # "I moved to Berlin" is a location, handled there
    old_raw = m.group("old") or m.group("old2") or ""
    old = _items(old_raw) if old_raw else []
    since = f" from {_join_en(old)}" if old else ""
    yield from _tool_memories(
        new,
        ctx,
        render=lambda names: f"User switched to {_join_en(names)}{since}",
        main=True,
        switch=True,
    )


# The first word of a name may be lowercase ("memd"); further words must be capitalised,
# or "memd that indexes notes" would all become the name.
_PNAME = r"[\"“'‘]?(?P<name>[A-Za-z0-9][\w.\-]*(?:\s+[A-Z0-9][\w.\-]*){0,3})[\"”'’]?"
_EN_PROJECT_RES = (
    re.compile(
        r"(?i:\b(?:working\s+on|building|developing|making|writing|creating|maintaining|started)\s+"
        r"(?:a|an|my|our|the|this)\s+(?:[\w\-]+\s+){0,3}?"
        r"(?:project|app|application|tool|library|game|website|site|service|startup|product"
        r"|framework|plugin|extension|bot|cli|package)\s+(?:called|named))\s+" + _PNAME
    ),
    re.compile(
        r"\b(?i:my\s+(?:side\s+|current\s+|main\s+)?project,?\s+(?:is\s+)?(?:called\s+)?)" + _PNAME
    ),
)
_EN_PROJECT_DESC_RE = re.compile(
    r"^,?\s+(?:which|that)\s+(?P<desc>(?:is\s+(?:an?|the)\s+)?[^,.;]+?)"
    r"(?=\s+(?:built|made|written|developed|implemented|powered|using|based)\b|[,.;]|$)",
    re.I,
)
_EN_STACK_RE = re.compile(
    r"\b(?:built|made|written|developed|implemented|powered)\s+(?:with|using|in|on|by)\s+"
    r"(?P<stack>[^.;!?]+)",
    re.I,
)


def _en_project(sentence: str, ctx: _Ctx) -> Iterator[ExtractedMemory]:
    for rx in _EN_PROJECT_RES:
        m = rx.search(sentence)
        if m is None:
            continue
        name = _clean(m.group("name"))
        if not name or name.lower() in _NOT_ORGS:
            continue
        topic = _slug(name)
        rest = sentence[m.end() :]
        desc_m = _EN_PROJECT_DESC_RE.match(rest)
        desc = ""
        if desc_m:
            raw_desc = _third_person(desc_m.group("desc").strip())
            desc = f", {raw_desc[3:]}" if raw_desc.startswith("is ") else f", which {raw_desc}"
        yield ctx.mem(
            f"User is working on a project called {name}{desc}",
            "project",
            _IMP_PROJECT,
            topic=topic,
        )
        stack_m = _EN_STACK_RE.search(rest)
        if stack_m:
            stack = _clean(_ITEM_STOP_RE.sub("", stack_m.group("stack")))
            if stack and _items(stack):
                yield ctx.mem(
                    f"{name} is built with {stack}", "project", _IMP_PROJECT_DETAIL, topic=topic
                )
        return


_PREF_VERBS = {
    "prefer": "prefers",
    "like": "likes",
    "love": "loves",
    "enjoy": "enjoys",
    "dislike": "dislikes",
    "hate": "hates",
    "can't stand": "can't stand",
    "cannot stand": "can't stand",
    "don't like": "doesn't like",
    "do not like": "doesn't like",
    "don't want": "doesn't want",
    "do not want": "doesn't want",
    "avoid": "avoids",
}
_EN_PREF_RE = re.compile(
    r"\bI\s+(?:(?:really|strongly|generally|usually|also|much|do|always|definitely|totally|kind\s+of"
    r"|absolutely|personally)\s+)*"
    r"(?P<verb>prefer|like|love|enjoy|dislike|hate|can't\s+stand|cannot\s+stand|don't\s+like"
    r"|do\s+not\s+like|don't\s+want|do\s+not\s+want|avoid)\s+(?=(?P<obj>[^.;!?]+))",
    re.I,
)
_OBJ_STOP_RE = re.compile(
    r"(?:\s+and\s+(?:I\s+)?(?:" + _ADVERBS + r"\s+)*(?:use|work|code|program|develop|write|live"
    r"|am|'m|have|need|want|enjoy|prefer|like|love|hate)\b|,?\s+(?:but|because|since|although"
    r"|though|so\s+that|whereas)\b|,\s+(?:and\s+)?I\b).*$",
    re.I,
)
_EN_IMPERATIVE_RE = re.compile(
    r"^\s*(?:please\s+)?(?P<neg>don't|do\s+not|never|always|avoid)\s+(?P<act>[^.;!?]+)", re.I
)
_IMPERATIVE_SKIP_RE = re.compile(
    r"^(?:worry|forget|know|mind|care|hesitate|be\s+sorry|stop|bother|panic|rush|get\s+me"
    r"|you|i|we|they|it|that|this)\b",
    re.I,
)
_MAX_OBJECT_WORDS = 15


def _style_subject(obj: str) -> str:
    for rx, subject in _STYLE_SUBJECTS:
        if rx.search(obj):
            return subject
    head = re.split(r"\s+(?:over|to|than|instead)\b", obj, maxsplit=1)[0]
    tech = _tech(_clean(head))
    return tech.subject if tech else ""


_EN_REPLY_LANG_RE = re.compile(
    r"\b(?:answer|reply|respond|talk|write|speak|communicate)\s+(?:to\s+me\s+|with\s+me\s+)?in\s+"
    r"(?P<lang>English|Chinese|Mandarin|Japanese|Korean|French|German|Spanish|Portuguese"
    r"|Russian|Italian|Vietnamese)\b",
    re.I,
)


# "I like the second option" is about this conversation, not a lasting preference.
_CONTEXTUAL_OBJ_RE = re.compile(
    r"^(?:the\s+|your\s+)?(?:first|second|third|fourth|last|other|previous|latter|former|above"
    r"|below|new|old|current|original|same|latest)\b|\b(?:option|suggestion|answer|version"
    r"|proposal|reply|response)s?\b",
    re.I,
)
_OBJ_TRAIL_RE = re.compile(r"\s+(?:better|more|most|a\s+lot|very\s+much|so\s+much|too)$", re.I)


def _en_preference(sentence: str, ctx: _Ctx) -> Iterator[ExtractedMemory]:
    lang_m = _EN_REPLY_LANG_RE.search(sentence)
    if lang_m:
        lang = lang_m.group("lang").capitalize()
        yield ctx.mem(
            f"User wants replies in {lang}", "preference", _IMP_PREFERENCE, subject="reply-language"
        )
        return
    for m in _EN_PREF_RE.finditer(sentence):
        obj = _clean(_OBJ_TRAIL_RE.sub("", _clean(_OBJ_STOP_RE.sub("", m.group("obj")))))
        if not obj or _PRONOUN_START_RE.match(obj) or len(obj.split()) > _MAX_OBJECT_WORDS:
            continue
        if _CONTEXTUAL_OBJ_RE.search(obj):
            continue
        verb = _PREF_VERBS[" ".join(m.group("verb").lower().split())]
        yield ctx.mem(
            f"User {verb} {_third_person(obj)}",
            "preference",
            _IMP_PREFERENCE,
            subject=_style_subject(obj),
        )
    imp = _EN_IMPERATIVE_RE.match(sentence)
    if imp:
        act = _clean(imp.group("act"))
        if act and not _IMPERATIVE_SKIP_RE.match(act) and len(act.split()) <= _MAX_OBJECT_WORDS:
            neg = " ".join(imp.group("neg").lower().split())
            lead = {
                "don't": "not to",
                "do not": "not to",
                "never": "to never",
                "always": "to always",
                "avoid": "to avoid",
            }[neg]
            yield ctx.mem(
                f"User asks {lead} {_third_person(act)}",
                "preference",
                _IMP_PREFERENCE,
                subject=_style_subject(act),
            )


_EN_TASK_RES = (
    (
        "remind",
        re.compile(
            r"\b(?:please\s+)?remind\s+me\s+(?:to\s+|about\s+|that\s+)?(?P<act>[^.;!?]+)", re.I
        ),
    ),
    (
        "remind",
        re.compile(
            r"\b(?:don't|do\s+not)\s+(?:let\s+me\s+)?forget\s+(?:to\s+|about\s+)?(?P<act>[^.;!?]+)",
            re.I,
        ),
    ),
    ("todo", re.compile(r"^\s*(?:TODO|To-?do)\s*:?\s+(?P<act>[^.;!?]+)", re.I)),
    (
        "need",
        re.compile(
            r"\bI(?P<modal>'ll|\s+will|\s+need\s+to|\s+have\s+to|\s+must|\s+should"
            r"|(?:'m|\s+am)\s+going\s+to|\s+plan\s+to|\s+gotta|(?:'ve|\s+have)\s+got\s+to"
            r"|\s+got\s+to|\s+want\s+to)\s+(?P<act>[^.;!?]+)",
            re.I,
        ),
    ),
    (
        "have",
        re.compile(
            r"\bI(?:'ve|\s+have)\s+(?:got\s+)?(?P<act>(?:an?|my|the)\s+(?:[\w\-]+\s+){0,4}?"
            r"(?:meeting|appointment|interview|exam|test|deadline|call|presentation|demo|flight|trip"
            r"|review|standup|release|launch|class|lecture|dinner|party)s?\b[^.;!?]*)",
            re.I,
        ),
    ),
    (
        "due",
        re.compile(
            r"\b(?P<act>(?:my|the|our)\s+(?:[\w\-]+\s+){0,5}?[\w\-]+)\s+(?:is|are)\s+due\b[^.;!?]*",
            re.I,
        ),
    ),
)


def _modal_phrase(modal: str | None) -> str:
    words = " ".join((modal or "").lower().replace("'", " ").split())
    if words in ("ll", "will", "am going to", "m going to"):
        return "will"
    if words == "plan to":
        return "plans to"
    if words == "want to":
        return "wants to"
    if words == "should":
        return "should"
    return "needs to"


_OWNER_RE = re.compile(r"^(?:my|their|the|our)\s+", re.I)


def _strip_span(text: str, span: tuple[int, int]) -> str:
    return re.sub(r"\s{2,}", " ", text[: span[0]] + text[span[1] :])


def _en_task(sentence: str, ctx: _Ctx, question: bool) -> Iterator[ExtractedMemory]:
    for kind, rx in _EN_TASK_RES:
        if question and kind != "remind":
            continue
        m = rx.search(sentence)
        if m is None:
            continue
        found = _find_date(sentence, ctx.today)
        if found is None and kind not in ("remind", "todo"):
            continue
        act = m.group("act")
        due = ""
        if found is not None:
            when, span = found
            due = when.isoformat()
            start = m.start("act")
            if span[0] >= start:
                act = _strip_span(act, (span[0] - start, span[1] - start))
        act = _clean(re.sub(r"\s+(?:please|pls|thanks|thank\s+you)$", "", act.strip(), flags=re.I))
        if not act:
            continue
        act = _third_person(act)
        suffix = f" (due {due})" if due else ""
        if kind == "have":
            content = f"User has {act}{suffix}"
        elif kind == "due":
            thing = _OWNER_RE.sub("", act)
            content = f"User's {thing} is due{suffix}"
        elif kind == "remind":
            content = f"User wants to be reminded to {act}{suffix}"
        else:
            content = f"User {_modal_phrase(m.groupdict().get('modal'))} {act}{suffix}"
        yield ctx.mem(content, "task", _IMP_TASK, due=due)
        return


# ---------------------------------------------------------------------------
# Chinese rules

_ZH_STOP = r"(?=$|[，,。.！!；;、\s])"
_ZH_NAME_RE = re.compile(
    r"(?:我叫|我的名字(?:是|叫)|我名字(?:是|叫)|(?:你)?(?:可以)?叫我|本人(?:名)?叫)\s*"
    r"(?P<name>[A-Za-z][A-Za-z .'\-]{0,30}[A-Za-z]|[A-Za-z]|[\u3400-\u9fff·]{1,8})"
)
_ZH_NAME_CUT_RE = re.compile(
    r"(?:今年|在|是|来自|住|目前|现在|我|的|了|啊|呀|哦|吧|就行|就好|，).*$"
)
_ZH_NOT_NAME_RE = re.compile(r"什么|啥|谁|哪|怎么|名字")


def _zh_name(clause: str, ctx: _Ctx) -> Iterator[ExtractedMemory]:
    m = _ZH_NAME_RE.search(clause)
    if m is None:
        return
    name = m.group("name").strip()
    if _CJK_RE.match(name):
        name = _ZH_NAME_CUT_RE.sub("", name)
        if not 1 <= len(name) <= 4 and "·" not in name:
            return
    if not name or _ZH_NOT_NAME_RE.search(name):
        return
    yield ctx.mem(f"用户的名字是{name}", "personal", _IMP_NAME, subject="name")


_ZH_AGE_RE = re.compile(
    r"(?:我(?:今年)?|今年)\s*(?P<age>\d{1,3}|[一二两三四五六七八九十]{1,3})\s*(?:周)?岁"
)


def _zh_age(clause: str, ctx: _Ctx) -> Iterator[ExtractedMemory]:
    m = _ZH_AGE_RE.search(clause)
    if m is None:
        return
    age = _cn_number(m.group("age"))
    if 3 <= age <= 120:
        yield ctx.mem(f"用户今年{age}岁", "personal", _IMP_AGE, subject="age")


_ZH_CITIES = frozenset(
    "北京 上海 广州 深圳 杭州 成都 南京 武汉 西安 苏州 天津 重庆 长沙 厦门 青岛 大连 宁波 合肥 郑州 "
    "济南 福州 昆明 沈阳 哈尔滨 长春 石家庄 太原 南昌 南宁 贵阳 兰州 乌鲁木齐 珠海 东莞 佛山 无锡 "
    "香港 澳门 台北 新加坡 东京 大阪 首尔 伦敦 巴黎 柏林 纽约 旧金山 洛杉矶 西雅图 硅谷 湾区 多伦多 "
    "温哥华 悉尼 墨尔本 国外 海外 老家".split()
)
_ZH_PLACE_SUFFIX_RE = re.compile(r"[市省县区州镇村]$")
_ROLE_ZH = (
    r"(?:工程师|程序员|开发者|开发|设计师|产品经理|经理|架构师|研究员|学生|研究生|博士生|本科生|老师|教师"
    r"|医生|律师|分析师|科学家|创始人|合伙人|总监|实习生|运营|测试|主管|负责人|专家|顾问|CTO|CEO)"
)
_ZH_WORK_RE = re.compile(
    r"(?:^|我)(?:目前|现在|现|正|一直)?(?:在|于)(?P<org>[^，,。！!；;\s]{2,20}?)"
    r"(?:工作|上班|任职|就职|实习|供职|做(?P<role1>[^，,。！!；;]{0,18}" + _ROLE_ZH + r")"
    r"|担任(?P<role2>[^，,。！!；;]{2,20}))"
)
_ZH_ROLE_RES = (
    re.compile(r"(?:担任|任职为|职位是|职务是|岗位是|我的工作是)(?P<role>[^，,。！!；;]{2,20})"),
    re.compile(r"我是(?:一[名个位])?(?P<role>[^，,。！!；;是]{0,12}?" + _ROLE_ZH + r")" + _ZH_STOP),
)


def _is_zh_place(text: str) -> bool:
    return text in _ZH_CITIES or bool(_ZH_PLACE_SUFFIX_RE.search(text))


def _zh_work(clause: str, ctx: _Ctx) -> Iterator[ExtractedMemory]:
    org = role = ""
    m = _ZH_WORK_RE.search(clause)
    if m:
        candidate = m.group("org")
        if _is_zh_place(candidate):
            yield ctx.mem(f"用户在{candidate}工作", "personal", _IMP_CITY, subject="city")
        elif not re.search(r"家|这|那|公司$", candidate):
            org = candidate
        role = _clean(m.group("role1") or m.group("role2") or "")
    if not role:
        for rx in _ZH_ROLE_RES:
            rm = rx.search(clause)
            if rm:
                role = _clean(rm.group("role"))
                break
    if org:
        yield ctx.mem(f"用户在{org}工作", "personal", _IMP_EMPLOYER, subject="employer")
    if role:
        yield ctx.mem(f"用户担任{role}", "personal", _IMP_ROLE, subject="role")


_ZH_LIVE_RE = re.compile(
    r"我(?:现在|目前|一直)?(?:住在|生活在|定居在|居住在|常驻|搬到了?|搬去了?)(?P<place>[^，,。！!；;\s]{2,15})"
)
_ZH_IN_PLACE_RE = re.compile(
    r"我(?:现在|目前|人)?在(?P<place>[^，,。！!；;\s]{2,6}?)(?:生活|定居)?$"
)
_ZH_FROM_RE = re.compile(r"我(?:是|来自|老家(?:是|在))(?P<place>[^，,。！!；;\s]{2,10}?)(?:人)?$")
_ZH_PLACE_TRIM_RE = re.compile(r"(?:了|的|啦|呀|工作|生活|上班)$")


def _zh_location(clause: str, ctx: _Ctx) -> Iterator[ExtractedMemory]:
    m = _ZH_LIVE_RE.search(clause)
    place = _ZH_PLACE_TRIM_RE.sub("", m.group("place")) if m else ""
    if not place:
        m2 = _ZH_IN_PLACE_RE.search(clause)
        if m2 and _is_zh_place(m2.group("place")):
            place = m2.group("place")
    if place:
        yield ctx.mem(f"用户住在{place}", "personal", _IMP_CITY, subject="city")
    m3 = _ZH_FROM_RE.search(clause)
    if m3 is None:
        return
    said = m3.group(0)
    # "我是成都人" names a hometown; "我是X" alone is usually a role.
    if (
        "来自" in said
        or "老家" in said
        or (said.endswith("人") and _is_zh_place(m3.group("place")))
    ):
        yield ctx.mem(f"用户来自{m3.group('place')}", "personal", _IMP_HOMETOWN, subject="hometown")


_ASCII_NAME = r"[A-Za-z.][A-Za-z0-9_.+#\-]*(?:\s+[A-Z][A-Za-z0-9_.+#\-]*)?"
_ZH_ITEMS = (
    r"(?P<items>"
    + _ASCII_NAME
    + r"(?:\s*(?:[、,，/+]|和|与|跟|及|以及|还有)\s*"
    + _ASCII_NAME
    + r")*)"
)
_ZH_USE_RE = re.compile(
    r"我(?P<adv>(?:主要|平时|一般|通常|经常|日常|现在|目前|一直|基本|都|也|最常|常)*)"
    r"(?:在)?(?P<verb>用的是|使用的是|用|使用|采用|写|会用|会)\s*" + _ZH_ITEMS
)
_ZH_SWITCH_RE = re.compile(
    r"我?(?:已经|最近|刚|现在)*(?:从\s*(?P<old>[A-Za-z][A-Za-z0-9_.+#\-]*)\s*)?"
    r"(?:换成了?|改用了?|换到了?|转到了?|切换到了?|切到了?|迁移到了?|转向了?|换用了?|改成了?)\s*"
    + _ZH_ITEMS
)
_ZH_ITEM_SPLIT_RE = re.compile(r"\s*(?:[、,，/+]|和|与|跟|及|以及|还有)\s*")


def _zh_items(raw: str) -> list[str]:
    return _items(", ".join(p for p in _ZH_ITEM_SPLIT_RE.split(raw) if p.strip()))


def _zh_tools(clause: str, ctx: _Ctx) -> Iterator[ExtractedMemory]:
    m = _ZH_SWITCH_RE.search(clause)
    if m:
        new = _zh_items(m.group("items"))
        old = _zh_items(m.group("old")) if m.group("old") else []
        if new:
            since = f"（之前用{_join_zh(old)}）" if old else ""
            yield from _tool_memories(
                new,
                ctx,
                render=lambda names: f"用户换成了{_join_zh(names)}{since}",
                main=True,
                switch=True,
            )
            return
    m = _ZH_USE_RE.search(clause)
    if m is None:
        return
    items = _zh_items(m.group("items"))
    if not items:
        return
    adv = m.group("adv").replace("都", "").replace("也", "")
    yield from _tool_memories(
        items,
        ctx,
        render=lambda names: f"用户{adv}使用{_join_zh(names)}",
        main=any(a in adv for a in ("主要", "最常", "基本")),
        switch="现在" in adv,
    )


_ZH_PROJECT_RE = re.compile(
    r"(?:我|我们)[^，,。]{0,8}?(?:做|开发|写|搞|维护|负责)(?:一个|个)?(?:叫|名为|叫做|名叫)\s*"
    r"[\"“「《]?(?P<name>[^，,。\"”」》]{1,30}?)[\"”」》]?\s*的(?P<kind>[^，,。]{0,12}?"
    r"(?:项目|应用|工具|产品|网站|App|app|APP|库|平台|系统|插件|游戏))"
)
_ZH_STACK_RE = re.compile(r"(?:用|使用|基于|采用)\s*" + _ZH_ITEMS)


def _zh_project(sentence: str, ctx: _Ctx) -> Iterator[ExtractedMemory]:
    m = _ZH_PROJECT_RE.search(sentence)
    if m is None:
        return
    name = _clean(m.group("name"))
    if not name:
        return
    topic = _slug(name)
    kind = m.group("kind").strip()
    yield ctx.mem(f"用户正在做一个名为{name}的{kind}", "project", _IMP_PROJECT, topic=topic)
    stack_m = _ZH_STACK_RE.search(sentence, m.end())
    stack = _zh_items(stack_m.group("items")) if stack_m else []
    if stack:
        yield ctx.mem(
            f"{name}使用{_join_zh(stack)}构建",
            "project",
            _IMP_PROJECT_DETAIL,
            topic=topic,
        )


_ZH_PREF_RE = re.compile(
    r"我(?P<adv>(?:比较|很|非常|特别|更|最|还是|一般|通常|也|超|挺|真的|一直)*)"
    r"(?P<verb>不太喜欢|不是很喜欢|不喜欢|不太习惯|不习惯|讨厌|反感|受不了|喜欢|偏好|偏爱|倾向于|爱用|习惯)"
    r"(?P<obj>.+)$"
)
_ZH_DONT_RE = re.compile(
    r"^(?:请|你|千万|以后|也|就|都|尽量|记得)*(?P<neg>不要|别|请勿|避免|不用|总是|始终|一定要|务必)(?P<obj>.+)$"
)
_ZH_DONT_SKIP_RE = re.compile(r"^(?:人|的|处|忘|客气|担心|着急|急|了|介意|管|说了)")


_ZH_LANGS = r"(?P<lang>简体中文|繁体中文|中文|英文|英语|日语|日文|韩语|法语|德语)"
_ZH_REPLY_LANG_RES = (
    re.compile(r"(?:用|使用)" + _ZH_LANGS + r"(?:来)?(?:回答|回复|交流|沟通|和我说话|跟我说话|写)"),
    re.compile(r"(?:回答|回复|交流)(?:请|都|时|的时候)*(?:用|使用)" + _ZH_LANGS),
)


def _zh_preference(clause: str, ctx: _Ctx) -> Iterator[ExtractedMemory]:
    for rx in _ZH_REPLY_LANG_RES:
        lang_m = rx.search(clause)
        if lang_m:
            yield ctx.mem(
                f"用户希望用{lang_m.group('lang')}回答",
                "preference",
                _IMP_PREFERENCE,
                subject="reply-language",
            )
            return
    m = _ZH_PREF_RE.search(clause)
    if m:
        obj = _clean(m.group("obj")).replace("我的", "自己的")
        if obj and not re.match(r"^(?:这|那|它|你)", obj):
            adv = "".join(a for a in re.findall(r"更|最|比较|很|非常|特别", m.group("adv")))
            yield ctx.mem(
                f"用户{adv}{m.group('verb')}{obj}",
                "preference",
                _IMP_PREFERENCE,
                subject=_style_subject(obj),
            )
        return
    m = _ZH_DONT_RE.match(clause.strip())
    if m is None:
        return
    obj = _clean(m.group("obj"))
    neg = m.group("neg")
    if not obj or len(obj) < 2 or _ZH_DONT_SKIP_RE.match(obj) or neg == "不用" and len(obj) < 3:
        return
    lead = {"别": "不要", "请勿": "不要", "不用": "不用"}.get(neg, neg)
    yield ctx.mem(
        f"用户希望{lead}{obj}", "preference", _IMP_PREFERENCE, subject=_style_subject(obj)
    )


_ZH_REMIND_RE = re.compile(r"提醒我|别忘了|不要忘了|不要忘记|记得")
# Bare 得/前 are left out on purpose: 觉得, 前端.
_ZH_TASK_TRIGGER_RE = re.compile(
    r"提醒我|别忘了|不要忘了|不要忘记|记得|需要|必须|要|打算|准备|计划|截止|之前|以前"
)
_ZH_TASK_SUBJECT_RE = re.compile(r"^(?:我们|我|还|也|就|一定|在|\s)+|(?:\s|还|也|就|一定)+$")


def _zh_task(sentence: str, ctx: _Ctx) -> Iterator[ExtractedMemory]:
    found = _find_date(sentence, ctx.today)
    remind = _ZH_REMIND_RE.search(sentence)
    if found is None and remind is None:
        return
    text = sentence
    due = ""
    if found is not None:
        when, span = found
        due = when.isoformat()
        text = text[: span[0]] + " " + text[span[1] :]
    trigger = _ZH_TASK_TRIGGER_RE.search(text)
    if trigger is None:
        return
    # "这个bug明天要修好": what precedes the verb is its object ("修好这个bug").
    before = _ZH_TASK_SUBJECT_RE.sub("", text[: trigger.start()].strip(" ，,"))
    after = text[trigger.end() :]
    while (lead := _ZH_TASK_TRIGGER_RE.match(after.strip())) is not None:
        after = after.strip()[lead.end() :]
    act = _clean(_ZH_TASK_SUBJECT_RE.sub("", after.strip(" ，,")))
    if before and not _ZH_QUESTION_RE.search(before):
        act += before
    act = act.replace("我的", "自己的")
    if len(act) < 2:
        return
    suffix = f"（截止 {due}）" if due else ""
    yield ctx.mem(f"用户需要{act}{suffix}", "task", _IMP_TASK, due=due)


# ---------------------------------------------------------------------------
# Driver

_EN_SENTENCE_RULES: tuple[_Rule, ...] = (
    _en_name,
    _en_age,
    _en_work,
    _en_location,
    _en_project,
    _en_switch,
    _en_tools,
    _en_preference,
)
_ZH_CLAUSE_RULES: tuple[_Rule, ...] = (
    _zh_name,
    _zh_age,
    _zh_work,
    _zh_location,
    _zh_tools,
    _zh_preference,
)


_ZH_SUBJECTS = ("我", "你", "他", "她", "它", "这", "那", "帮", "请")


def _extract_sentence(sentence: str, ctx: _Ctx) -> Iterator[ExtractedMemory]:
    question = _is_question(sentence)
    body = sentence.strip().rstrip(".!?。！？；;")
    if _CJK_RE.search(body):
        if not question:
            project = list(_zh_project(body, ctx))
            yield from project
            clauses = [c.strip() for c in _CLAUSE_SPLIT_RE.split(body) if c.strip()]
            # A project's stack clause ("用 Next.js 开发") is not a skill statement.
            user_is_subject = not project and bool(clauses) and clauses[0].startswith("我")
            for i, clause in enumerate(clauses):
                for rule in _ZH_CLAUSE_RULES:
                    yield from rule(clause, ctx)
                # "我在上海工作，用Go写后端": the second clause's subject is still 我.
                if i and user_is_subject and not clause.startswith(_ZH_SUBJECTS):
                    yield from _zh_tools("我" + clause, ctx)
        if not question or "提醒我" in body:
            yield from _zh_task(body, ctx)
        return
    if not question:
        for rule in _EN_SENTENCE_RULES:
            yield from rule(body, ctx)
    yield from _en_task(body, ctx, question)


def extract_rules(turns: Sequence[Turn], *, tz: tzinfo | None = None) -> list[ExtractedMemory]:
    """Extract memories from the user turns of a conversation with patterns only.

    Each memory's `source_turn_ids` is the one turn it came from. Relative dates in
    tasks ("by Friday", "明天") are resolved against the turn's `ts` in `tz` (the
    local zone when None) and returned as an ISO `due`. Text is redacted first, so
    a secret never becomes part of a memory. Identical statements are returned once.
    """
    out: list[ExtractedMemory] = []
    seen: set[str] = set()
    for turn in turns:
        if turn.role != "user" or is_trivial(turn.text):
            continue
        today = datetime.fromtimestamp(turn.ts, tz).date()
        ctx = _Ctx(turn_id=turn.turn_id, today=today)
        for sentence in _SENTENCE_RE.findall(redact(turn.text)):
            if not sentence.strip():
                continue
            for memory in _extract_sentence(sentence, ctx):
                key = memory.content.casefold()
                if key not in seen:
                    seen.add(key)
                    out.append(memory)
    return out
