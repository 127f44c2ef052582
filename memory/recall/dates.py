"""The dates a query names ("on 9 May 2023", "in March 2024", "yesterday"), as time ranges.

Recall marks a memory dated inside one of them (the `time` part of its score).
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime, timedelta

DAY_MS = 86_400_000

_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_MONTHS["sept"] = 9
_MON = (
    r"(january|february|march|april|may|june|july|august|september|october|november|december"
    r"|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
)
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d{2})"
#: (kind, pattern, group numbers of year, month, day)
_DATES = [
    ("day", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MON},?\s*{_YEAR}\b", re.I), (3, 2, 1)),
    ("day", re.compile(rf"\b{_MON}\s+{_DAY},?\s*{_YEAR}\b", re.I), (3, 1, 2)),
    ("month", re.compile(rf"\b{_MON},?\s+{_YEAR}\b", re.I), (2, 1, 0)),
    ("year", re.compile(rf"\b(?:in|of|during|since|from)\s+{_YEAR}\b", re.I), (1, 0, 0)),
]
#: relative expression -> (days back from today to the window's start, window length in days)
_RELATIVE = {
    "today": (0, 1),
    "yesterday": (1, 2),
    "this week": (7, 8),
    "last week": (14, 15),
    "this month": (31, 32),
    "last month": (62, 63),
    "last year": (730, 731),
}
_RELATIVE_RX = re.compile(r"\b(" + "|".join(_RELATIVE) + r")\b", re.I)


def time_ranges(text: str, now_ms: int) -> list[tuple[int, int]]:
    """The dates a query names, as [start, end) ranges in ms (UTC).

    Absolute: "9 November, 2022", "November 9th 2022" (that day +- 1: "on the 9th" is often
    said of the day before or after), "in November 2022", "in 2023". Relative to `now_ms`:
    today, yesterday, this/last week, month, year (loose windows)."""
    out: list[tuple[int, int]] = []
    taken: list[tuple[int, int]] = []
    for kind, rx, (yi, mi, di) in _DATES:
        for m in rx.finditer(text):
            if any(a <= m.start() < b for a, b in taken):
                continue
            taken.append((m.start(), m.end()))
            try:
                year = int(m[yi])
                if kind == "year":
                    start = datetime(year, 1, 1, tzinfo=UTC)
                    end = datetime(year + 1, 1, 1, tzinfo=UTC)
                else:
                    month = _MONTHS[m[mi].lower().rstrip(".")]
                    if kind == "day":
                        start = datetime(year, month, int(m[di]), tzinfo=UTC) - timedelta(days=1)
                        end = start + timedelta(days=3)
                    else:
                        start = datetime(year, month, 1, tzinfo=UTC)
                        end = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
            except (ValueError, KeyError):
                continue
            out.append((int(start.timestamp() * 1000), int(end.timestamp() * 1000)))
    today = now_ms - now_ms % DAY_MS
    for m in _RELATIVE_RX.finditer(text):
        back, days = _RELATIVE[m[1].lower()]
        out.append((today - back * DAY_MS, today + (days - back) * DAY_MS))
    return out


def without_dates(text: str) -> str:
    """The text with the date expressions `time_ranges` reads taken out. Word coverage is
    computed on it: a date is the `time` signal's to judge (stored memories carry no date
    words, except where a description spells one out), not a word to match."""
    for _kind, rx, _groups in _DATES:
        text = rx.sub(" ", text)
    return _RELATIVE_RX.sub(" ", text)
