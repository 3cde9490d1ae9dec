"""Small charts drawn on the server as inline SVG: the session timeline and the tier bars.

SVG attributes, not inline styles, carry sizes and colours, so the page's content security
policy can forbid inline styles and scripts.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from markupsafe import Markup

from memd.api.messages import ContextResult, RecalledSession, or_default

PALETTE = ("#2f6fd0", "#d9822b", "#2e9e6a", "#9a4fd1", "#d1496b", "#6b7280", "#b8860b")
TIER_LABELS = {"user": "user", "project": "project", "conversation": "conversation"}


@dataclass(frozen=True, slots=True)
class Legend:
    source: str
    color: str
    count: int


@dataclass(frozen=True, slots=True)
class Timeline:
    """Sessions per day and source over a window of days ending today."""

    svg: Markup
    legend: tuple[Legend, ...]
    start: dt.date
    end: dt.date
    shown: int
    outside: int


def session_day(s: RecalledSession) -> dt.date | None:
    """The day a session is listed under: its date, else when it started or was last updated."""
    try:
        return dt.date.fromisoformat(s.date[:10])
    except ValueError:
        ts = s.started_at or s.updated_at
        return dt.datetime.fromtimestamp(ts).date() if ts else None


def session_timeline(sessions: Sequence[RecalledSession], *, days: int, today: dt.date) -> Timeline:
    """A stacked bar per day (one colour per source) for the `days` days up to `today`."""
    days = max(1, days)
    start = today - dt.timedelta(days=days - 1)
    counts: dict[dt.date, dict[str, int]] = {}
    sources: dict[str, int] = {}
    outside = 0
    for s in sessions:
        day = session_day(s)
        if day is None or not start <= day <= today:
            outside += 1
            continue
        src = s.source or "unknown"
        counts.setdefault(day, {}).setdefault(src, 0)
        counts[day][src] += 1
        sources[src] = sources.get(src, 0) + 1
    order = sorted(sources, key=lambda k: (-sources[k], k))
    colors = {src: PALETTE[i % len(PALETTE)] for i, src in enumerate(order)}
    width, height, left, bottom, top = 600, 150, 26, 18, 6
    plot_w, plot_h = width - left - 2, height - bottom - top
    peak = max((sum(c.values()) for c in counts.values()), default=0) or 1
    step = plot_w / days
    bar = max(1.0, step * 0.8)
    parts = [
        f'<svg class="timeline" viewBox="0 0 {width} {height}" role="img"'
        f' aria-label="sessions per day from {start} to {today}" xmlns="http://www.w3.org/2000/svg">',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{width - 2}" y2="{top + plot_h}" stroke="#999" stroke-width="1"/>',
        f'<text x="{left - 4}" y="{top + 8}" text-anchor="end" font-size="10" fill="#666">{peak}</text>',
        f'<text x="{left - 4}" y="{top + plot_h}" text-anchor="end" font-size="10" fill="#666">0</text>',
    ]
    for i in range(days):
        day = start + dt.timedelta(days=i)
        x = left + i * step + (step - bar) / 2
        y = float(top + plot_h)
        for src in order:
            n = counts.get(day, {}).get(src, 0)
            if not n:
                continue
            h = plot_h * n / peak
            y -= h
            label = f"{day.isoformat()}: {n} session{'s' if n != 1 else ''} from {src}"
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}"'
                f' fill="{colors[src]}"><title>{escape(label)}</title></rect>'
            )
    for i in sorted({0, days // 2, days - 1}):
        day = start + dt.timedelta(days=i)
        x = left + i * step + step / 2
        anchor = "start" if i == 0 else ("end" if i == days - 1 else "middle")
        parts.append(
            f'<text x="{x:.1f}" y="{height - 4}" text-anchor="{anchor}" font-size="10"'
            f' fill="#666">{day.strftime("%b %d")}</text>'
        )
    parts.append("</svg>")
    legend = tuple(Legend(src, colors[src], sources[src]) for src in order)
    return Timeline(Markup("".join(parts)), legend, start, today, sum(sources.values()), outside)


@dataclass(frozen=True, slots=True)
class TierBar:
    """One tier of a `context` answer: tokens used against the tier's quota.

    `quota` is the daemon's own number (`quotas` of the answer); None from a daemon that does
    not report quotas, and the bar then shows what was used only.
    """

    tier: str
    used: int
    quota: int | None
    sections: int
    dropped: int

    @property
    def over(self) -> bool:
        """Used more than its own quota (budget another tier left unused flowed on)."""
        return self.quota is not None and self.used > self.quota

    def svg(self) -> Markup:
        scale = max(self.used, self.quota or 0, 1)
        fill = "#d9822b" if self.over else "#2f6fd0"
        label = f"{self.used} tokens"
        marker = ""
        if self.quota is not None:
            label = f"{self.used} of {self.quota} tokens"
            x = max(0.0, 100 * self.quota / scale - 0.6)
            marker = f'<rect x="{x:.2f}" y="0" width="0.6" height="10" fill="#222"/>'
        return Markup(
            '<svg class="bar" viewBox="0 0 100 10" preserveAspectRatio="none"'
            f' role="img" aria-label="{label}" xmlns="http://www.w3.org/2000/svg">'
            '<rect x="0" y="0" width="100" height="10" fill="#e6e9ef"/>'
            f'<rect x="0" y="0" width="{100 * self.used / scale:.2f}" height="10" fill="{fill}"/>'
            f"{marker}</svg>"
        )


def tier_bars(result: ContextResult) -> list[TierBar]:
    """Bars for the three tiers of a `context` result, against the quotas the daemon reported."""
    quotas = or_default(result.quotas, None)
    bars = []
    for tier in TIER_LABELS:
        chosen = [s for s in result.sections if s.tier == tier]
        dropped = [s for s in result.dropped if s.tier == tier]
        used = sum(s.tokens for s in chosen)
        quota: int | None = getattr(quotas, tier) if quotas is not None else None
        bars.append(TierBar(tier, used, quota, len(chosen), len(dropped)))
    return bars
