"""Who the user is beyond name and work, in English and Chinese: conditions that change how the
assistant should show things (colour blindness, dyslexia …) and the user's accounts ("my GitHub
username is …").

A condition is stated of the user ("I'm colorblind (deuteranopia)", "我是色弱") — not asked
about, not someone else's. An account is one per site (`subject` "account:<site>"), so a new
username replaces the old one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memd.core.models import ExtractedMemory
from memd.extraction.rules.common import IMP_FAMILY, IMP_NAME, Ctx

_CONDITIONS = (
    r"colou?r[\s-]?blind|dyslexic|deaf|hard\s+of\s+hearing|(?:legally\s+)?blind|visually\s+impaired"
    r"|partially\s+sighted|autistic|left[\s-]handed|dyspraxic"
)
_EN_CONDITION_RE = re.compile(
    r"\bI(?:'m|\s+am)\s+(?:(?:also|a\s+bit|slightly|partially|mildly|completely)\s+)?"
    r"(?P<what>" + _CONDITIONS + r")\b(?P<more>\s*\([^)]{1,30}\))?"
    r"|\bI\s+(?:have|'ve\s+got|have\s+got)\s+(?P<has>ADHD|dyslexia|RSI|low\s+vision|colou?r\s+blindness"
    r"|tinnitus|dyscalculia|a\s+visual\s+impairment|a\s+hearing\s+impairment)\b",
    re.I,
)
_ZH_CONDITION_RE = re.compile(
    r"我(?:是|有|有点|有些|天生)?(?P<what>色盲|色弱|红绿色盲|阅读障碍|听障|弱视|多动症|ADHD|左撇子)"
)


def en_condition(sentence: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """ "I'm colorblind (deuteranopia), so …", "I have ADHD"."""
    m = _EN_CONDITION_RE.search(sentence)
    if m is None:
        return
    if m.group("has"):
        yield ctx.mem(f"User has {m.group('has')}", "personal", IMP_FAMILY)
        return
    more = (m.group("more") or "").strip()
    yield ctx.mem(f"User is {m.group('what').lower()}{' ' + more if more else ''}", "personal",
                  IMP_FAMILY)  # fmt: skip


def zh_condition(clause: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """ "我是色弱", "我有点阅读障碍"."""
    m = _ZH_CONDITION_RE.search(clause)
    if m is not None:
        yield ctx.mem(f"用户有{m.group('what')}", "personal", IMP_FAMILY)


_SITES = (
    r"GitHub|GitLab|Bitbucket|Twitter|X|npm|PyPI|Discord|Slack|Mastodon|Bluesky|LinkedIn"
    r"|Hugging\s*Face|Docker\s*Hub|Stack\s+Overflow|LeetCode|Kaggle|微信|QQ|飞书|钉钉|Gitee"
)
_HANDLE = r"@?(?P<handle>[A-Za-z0-9][\w.\-]{1,38})"
_EN_ACCOUNT_RE = re.compile(
    r"\bmy\s+(?P<site>" + _SITES + r")\s+(?:username|user\s*name|handle|account|id|login|user)"
    r"\s+is\s+"
    + _HANDLE
    + r"|\bI'm\s+"
    + _HANDLE.replace("handle", "handle2")
    + r"\s+on\s+(?P<site2>"
    + _SITES
    + r")\b",
    re.I,
)
_ZH_ACCOUNT_RE = re.compile(
    r"我的?\s*(?P<site>" + _SITES + r")\s*(?:的)?\s*(?:用户名|账号|帐号|ID|id|昵称|handle|名字)\s*"
    r"(?:是|叫|[:：])\s*" + _HANDLE,
    re.I,
)


def account(text: str, ctx: Ctx) -> Iterator[ExtractedMemory]:
    """ "My GitHub username is octo-dev", "我的 GitHub 用户名是 xiaoyu-dev"."""
    m = _EN_ACCOUNT_RE.search(text) or _ZH_ACCOUNT_RE.search(text)
    if m is None:
        return
    groups = m.groupdict()
    site = " ".join((groups.get("site") or groups.get("site2") or "").split())
    handle = (groups.get("handle") or groups.get("handle2") or "").rstrip(".-")
    if site and handle:
        yield ctx.mem(f"User's {site} username is {handle}", "personal", IMP_NAME - 2,
                      subject=f"account:{site.lower()}")  # fmt: skip
