"""Small display helpers shared by the pages: names, icons, colours, times, snippets, and making
text safe for `st.markdown`: `no_images` (markdown kept, images become links), `md_text` (every
markdown character escaped), `plain_text` (markdown as the words it shows, for table cells),
`ImageFreeStream` (`no_images` for a streamed reply)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date, datetime, time
from typing import Any

from agent.replies import md_literal
from memory import DEMO_TAG, words
from memory.models import EventType

#: Tags the app puts on memories itself, which people did not add: the demo persona's mark
#: (its reset finds the demo's memories by it) and a chat summary's (its kind says it), so
#: screens leave them out
HIDDEN_TAGS = frozenset({DEMO_TAG, "summary"})

#: The memory types' names (memory/data/screen_words.toml, the one table of names in words).
TYPE_LABELS = dict(words.table().memory_types)
#: Names of the other series the metrics recorder uses (charts only).
SERIES_LABELS = {**TYPE_LABELS, "embedding": "Meaning", "all": "All types"}
TYPE_ICONS = {"episodic": "📔", "semantic": "📚", "procedural": "🛠️", "short_term": "💬"}
TYPE_HELP = {
    "episodic": "What happened with you: preferences, goals, events. Private to each user.",
    "semantic": "Impersonal facts the agent knows (built in, or added by users).",
    "procedural": "Which tools worked for which kind of question, with a learned confidence.",
    "short_term": "The recent messages of the current chat.",
}
#: One colour per memory type, used by every chart (calm, colour-blind friendly).
TYPE_COLORS = {
    "episodic": "#4C78A8",
    "semantic": "#59A14F",
    "procedural": "#F28E2B",
    "short_term": "#B07AA1",
    "embedding": "#76B7B2",
    "all": "#E15759",
    "llm": "#9C755F",
    "other": "#BAB0AC",
}
BAND_ICONS = {"high": "🟢", "moderate": "🟡", "low": "⚪"}
#: said under search results when weaker matches were left out (memory.models.shown_hits)
NO_MORE_RELEVANT = "No more relevant memories: weaker matches are not shown."


def band_badge(band: str) -> str:
    """`high` → `🟢 strong match`."""
    return f"{BAND_ICONS.get(band, '')} {words.band_word(band)}".strip()


def memory_text(record: Any) -> str:
    """A memory's words, whichever record it is (episodic, fact, procedure)."""
    r = record if isinstance(record, dict) else {}
    words = r.get("text") or r.get("description") or r.get("fact") or r.get("query_pattern")
    return str(words or "")


def saved_message(text: Any, changes: Iterable[str]) -> str:
    """`Saved “I run on Sundays”: text and kind.` (markdown: the text shown literally)."""
    named = [words.field_word(c) for c in changes]
    listed = ", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else "".join(named)
    return f"Saved “{md_text(snippet(text, 60))}”: {listed}."


#: Display name of an event type (memory/data/screen_words.toml).
event_label = words.kind_word


#: Episodic kinds that are things remembered about the user. A logged exchange (Interaction)
#: is the conversation itself: stored and recalled, but not listed or counted as remembered
#: unless asked ("Show conversations").
REMEMBERED_KINDS = [e.value for e in EventType if e is not EventType.INTERACTION]


def type_label(memory_type: str, with_icon: bool = True) -> str:
    label = TYPE_LABELS.get(memory_type, memory_type)
    return f"{TYPE_ICONS.get(memory_type, '•')} {label}" if with_icon else label


#: The app's one way to write a date: "26 Nov 2026", with a time "26 Nov 2026, 22:54".
#: Text (`fmt_day`), grid columns (Streamlit's moment.js tokens) and chart ticks (d3) agree.
GRID_DAY, GRID_TIME, GRID_SECONDS = "D MMM YYYY", "D MMM YYYY, HH:mm", "D MMM YYYY, HH:mm:ss"
#: Chart ticks by their step: within a day, days within a month (the year is in the hover),
#: then months.
CHART_TIME, CHART_DAY, CHART_MONTH = "%H:%M", "%-d %b", "%b %Y"


def fmt_ms_time(ms: Any) -> str:
    """`21 Nov 2026, 22:54` from ms since epoch or a datetime (local time); '' for empty."""
    when = ms if isinstance(ms, datetime) else to_datetime(ms)
    return f"{fmt_day(when)}, {when:%H:%M}" if when else ""


def fmt_day(ms: Any) -> str:
    """`26 Nov 2026` from ms since epoch or a datetime (local time); '' for empty."""
    when = ms if isinstance(ms, datetime) else to_datetime(ms)
    return f"{when.day} {when:%b %Y}" if when else ""  # %-d is not portable


def to_datetime(ms: Any) -> datetime | None:
    if not ms:
        return None
    try:
        return datetime.fromtimestamp(int(ms) / 1000)
    except (TypeError, ValueError, OSError):
        return None


def own_date_ms(record: dict[str, Any]) -> int:
    """A memory's own date: when it happened or was said (`timestamp`), else when stored."""
    return int(record.get("timestamp") or record.get("created_at") or record.get("last_used") or 0)


def about_words(tokens: int) -> int:
    """A model's measure (tokens) as people count text: about 3 words to 4 tokens in English,
    rounded to tens."""
    return int(round(tokens * 3 / 4, -1))


#: Importance as people say it, from the highest: (lowest score, word)
IMPORTANCE_WORDS = ((0.7, "high"), (0.4, "medium"), (0.0, "low"))


#: The importance a word sets when a person picks it (inside its range; medium: the default)
IMPORTANCE_VALUES = {"low": 0.2, "medium": 0.5, "high": 0.8}
IMPORTANCE_HELP = (
    "How much it matters: more important memories come first in what I know about you and "
    "weigh a little more when I recall."
)


def importance_word(value: Any) -> str:
    """`high` for 0.7 and above, `medium` from 0.4, else `low` ("" for no number)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return ""
    return next((w for least, w in IMPORTANCE_WORDS if v >= least), "low")


def importance_picker(where: Any, key: str, value: Any = None) -> str:
    """A low / medium / high slider for a memory's importance (`value`: its number now), in
    words as the tables show it; `IMPORTANCE_VALUES` turns a changed word into a number."""
    return str(
        where.select_slider(
            "Importance",
            list(IMPORTANCE_VALUES),
            value=importance_word(value) or "medium",
            key=key,
            help=IMPORTANCE_HELP,
        )
    )


def _tags(value: Any) -> list[str]:
    """A record's tags, stored as a list or as text ("a,b" or "a|b")."""
    if not isinstance(value, list | tuple):
        value = str(value or "").replace("|", ",").split(",")
    return [str(t) for t in value if str(t)]


def tag_list(value: Any) -> list[str]:
    """A record's tags without the marks the app adds itself (`HIDDEN_TAGS`)."""
    return [t for t in _tags(value) if t not in HIDDEN_TAGS]


def hidden_tags(value: Any) -> list[str]:
    """The app's own marks among a record's tags: kept by an edit, never shown."""
    return [t for t in _tags(value) if t in HIDDEN_TAGS]


def tags_text(value: Any) -> str:
    """`tags: food, running` for a row's line; '' without tags."""
    tags = tag_list(value)
    return "tags: " + ", ".join(tags) if tags else ""


def day_start_ms(d: date) -> int:
    return int(datetime.combine(d, time.min).timestamp() * 1000)


def day_end_ms(d: date) -> int:
    return int(datetime.combine(d, time.max).timestamp() * 1000)


def fmt_duration(ms: Any) -> str:
    """A time as people say it: `under a tenth of a second`, `0.3 seconds`, `2.4 seconds`,
    `14 seconds` (milliseconds are the charts' unit, for those who measure)."""
    try:
        v = float(ms)
    except (TypeError, ValueError):
        return "–"
    if v < 100:
        return "under a tenth of a second"
    if v >= 9_950:
        return f"{v / 1000:.0f} seconds"
    return f"{v / 1000:.1f} second{'s' if round(v / 100) != 10 else ''}"


def snippet(text: Any, n: int = 80) -> str:
    s = " ".join(str(text or "").split())
    return s if len(s) <= n else s[: n - 1] + "…"


def parse_tags(raw: str) -> list[str]:
    """`"diet, #health  sleep"` → ["diet", "health", "sleep"]."""
    parts = raw.replace(",", " ").split()
    return [p.lstrip("#") for p in parts if p.lstrip("#")]


# An image is `![alt](url)` or `![alt][ref]`: without the `!` it is an ordinary link, which the
# browser only follows when clicked. A run of `!` goes too (`!![x](u)` minus one is an image).
_IMAGE_MARK = re.compile(r"!+(?=\[)")


def no_images(text: Any) -> str:
    """Markdown from untrusted text with its images turned into plain links."""
    return _IMAGE_MARK.sub("", str(text or ""))


def md_text(value: Any) -> str:
    """A user name (or any label) rendered literally inside markdown: no styling, no links."""
    return md_literal(str(value or ""))


# Markdown's markup, for `plain_text`: an escaped character is set aside first (it is text)
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_UNESCAPE = {0xE000 + c: c for c in range(33, 127)}
_LINE_MARKS = re.compile(
    r"^[ \t]*(?:>[ \t]?)*(?:#{1,6}[ \t]+|[-*+][ \t]+|\d{1,9}[.)][ \t]+)?", re.M
)
_LINK = re.compile(  # a link or image (its address may hold parentheses), <url>, :color[text]
    r"!?\[([^\]]*)\]\((?:[^()]|\([^()]*\))*\)|<((?:https?|mailto):[^>\s]*)>|:[a-z-]+\[([^\]]*)\]"
)
# emphasis runs that open before a word or close after one (snake_case and "2 * 3" stay)
_EMPHASIS = re.compile(r"(?<![\w*_~])[*_~]+(?=[^\s*_~])|(?<=[^\s*_~])[*_~]+(?![\w*_~])|`+")


def plain_text(value: Any) -> str:
    """Markdown as the words it shows, for a table cell (a grid shows text, not markdown):
    `> **Health** [plan](u)` → `Health plan`; one line per non-empty line."""
    text = _ESCAPED.sub(lambda m: chr(0xE000 + ord(m[1])), str(value or ""))
    text = _LINK.sub(lambda m: m[1] or m[2] or m[3] or "", _LINE_MARKS.sub("", text))
    text = _EMPHASIS.sub("", text)
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(x for x in lines if x).translate(_UNESCAPE)


class ImageFreeStream:
    """`no_images` for a reply that arrives in pieces: a trailing `!` is held back until the
    next piece shows whether a `[` follows it."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        text = self._held + piece
        body = text.rstrip("!")
        self._held = text[len(body) :]
        return no_images(body)

    def flush(self) -> str:
        held, self._held = self._held, ""
        return held
