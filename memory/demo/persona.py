"""The demo persona: Maya, a teacher training for a half marathon after a sprained ankle. Her
conversations, procedures and questions are data (`memory/data/demo_persona.toml`);
`build_persona(today)` dates them and fills in her week from `memory.demo.training`."""

from __future__ import annotations

import re
from datetime import date, timedelta
from string import Template
from typing import Annotated, Literal, TypeVar

from pydantic import Field, field_validator, model_validator

from memory.data_files import DataModel, load_data_file
from memory.demo.training import RACE, RACE_NAME, at_ms, long_date, on, runs_between
from memory.models import EventType

#: A learned procedure: the question, then each run as (tool sequence, success score, ms).
Procedure = tuple[str, tuple[tuple[tuple[str, ...], float, float], ...]]


# --- the data file's shape ---------------------------------------------------------------

#: The placeholders a text may use (the file's header says what each one is).
PLACEHOLDERS = frozenset(
    "race_name race date yesterday runs_7d km_7d longest_7d runs_7d_before km_7d_before "
    "more_than_7d_before runs_14d km_14d km_28d km_28d_before long_run long_run_before".split()
)
_HH_MM = re.compile(r"^([01]\d|2[0-3]):[0-5]\d$")


class _Text(DataModel):
    """A part of the file whose string fields may hold placeholders."""

    @model_validator(mode="after")
    def _known_placeholders(self) -> _Text:
        for name, value in self:
            if isinstance(value, str):
                template = Template(value)
                if not template.is_valid():
                    raise ValueError(f"{name} has a $ that starts no placeholder")
                if unknown := set(template.get_identifiers()) - PLACEHOLDERS:
                    raise ValueError(f"{name} uses unknown placeholders {sorted(unknown)}")
        return self


class _Moment(DataModel):
    day: tuple[int, Annotated[int, Field(ge=0, le=6)]]  # (week, weekday) from this Monday
    time: str

    @field_validator("time")
    @classmethod
    def _is_hh_mm(cls, value: str) -> str:
        if not _HH_MM.match(value):
            raise ValueError("a time is written HH:MM")
        return value

    def ms(self, today: date) -> int:
        hour, minute = self.time.split(":")
        return at_ms(on(today, *self.day), int(hour), int(minute))


class Exchange(_Text):
    user: str
    assistant: str
    tools: tuple[str, ...] = ()


class Remembered(_Text):
    text: str
    kind: EventType
    tags: tuple[str, ...]
    importance: float = Field(ge=0.0, le=1.0)
    exchange: int = Field(0, ge=0)
    when: _Moment | None = None
    key: str = ""  # names it, for supersession
    how: Literal["llm", "trigger"] = "llm"  # what wrote it in the chat


class Fact(_Text):
    text: str
    category: str
    fact_type: str = "guideline"


class Conversation(_Moment, _Text):
    summary: str
    exchanges: tuple[Exchange, ...] = Field(min_length=1)
    memories: tuple[Remembered, ...] = ()
    facts: tuple[Fact, ...] = ()
    #: the short-term messages are still there (a recent session)
    keeps_messages: bool = False

    def times_ms(self, today: date) -> list[int]:
        """The time of each message: a user message, its answer a minute later, the next
        exchange three minutes after that."""
        start, n = self.ms(today), len(self.exchanges)
        return [start + (4 * i + j) * 60_000 for i in range(n) for j in (0, 1)]

    @model_validator(mode="after")
    def _exchanges_exist(self) -> Conversation:
        for m in self.memories:
            if m.exchange >= len(self.exchanges):
                raise ValueError(f"memory {m.text[:40]!r} names exchange {m.exchange}")
        return self


class _Run(DataModel):
    tools: tuple[str, ...] = Field(min_length=1)
    score: float = Field(ge=0.0, le=1.0)
    ms: float = Field(gt=0)
    times: int = Field(1, ge=1)


class _Procedure(DataModel):
    question: str
    runs: tuple[_Run, ...] = Field(min_length=1)


class Persona(DataModel):
    name: str
    questions: tuple[str, ...] = Field(min_length=1)
    #: (old key, new key): the memory named `new` replaced the one named `old`
    superseded: tuple[tuple[str, str], ...] = ()
    procedures: tuple[_Procedure, ...] = ()
    conversations: tuple[Conversation, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _superseded_keys_exist(self) -> Persona:
        keys = {m.key for c in self.conversations for m in c.memories if m.key}
        for pair in self.superseded:
            if missing := set(pair) - keys:
                raise ValueError(f"superseded names keys no memory has: {sorted(missing)}")
        return self


_FILE = load_data_file("demo_persona.toml", Persona)

#: Questions that show what the persona's memory gives (docs/demo.md's script, and the chat
#: page's first screen once the persona is loaded).
DEMO_QUESTIONS: tuple[str, ...] = _FILE.questions
#: (question, runs of (tool sequence, success score, ms)): sequences tried, best last.
PROCEDURES: tuple[Procedure, ...] = tuple(
    (p.question, tuple((r.tools, r.score, r.ms) for r in p.runs for _ in range(r.times)))
    for p in _FILE.procedures
)


# --- dating it ---------------------------------------------------------------------------


def _km(value: float) -> str:
    return f"{value:g}"


def _runs(today: date, last: date, days: int) -> tuple[int, float, float]:
    """(runs, km, longest km) of the `days` days ending `last`."""
    runs = runs_between(last - timedelta(days=days - 1), last, today)
    return len(runs), sum(km for _, km in runs), max((km for _, km in runs), default=0.0)


def _values(today: date, day: date) -> dict[str, str]:
    """What each placeholder says in a conversation on `day`."""
    n7, km7, longest7 = _runs(today, day, 7)
    n7_before, km7_before, _ = _runs(today, day - timedelta(days=7), 7)
    n14, km14, _ = _runs(today, day, 14)
    _, km28, _ = _runs(today, day, 28)
    _, km28_before, _ = _runs(today, day - timedelta(days=28), 28)
    saturday = day - timedelta(days=(day.weekday() - 5) % 7)
    return {
        "race_name": RACE_NAME,
        "race": long_date(on(today, *RACE)),
        "date": long_date(day),
        "yesterday": long_date(day - timedelta(days=1)),
        "runs_7d": str(n7),
        "km_7d": _km(km7),
        "longest_7d": _km(longest7),
        "runs_7d_before": str(n7_before),
        "km_7d_before": _km(km7_before),
        "more_than_7d_before": "Yes" if km7 > km7_before else "No",
        "runs_14d": str(n14),
        "km_14d": _km(km14),
        "km_28d": _km(km28),
        "km_28d_before": _km(km28_before),
        "long_run": _km(_runs(today, saturday, 1)[1]),
        "long_run_before": _km(_runs(today, saturday - timedelta(days=7), 1)[1]),
    }


T = TypeVar("T", bound=DataModel)


def _filled(part: T, values: dict[str, str]) -> T:
    """`part` with the placeholders of its texts, and of its parts' texts, filled in."""
    update: dict[str, object] = {}
    for name, value in part:
        if type(value) is str and isinstance(part, _Text):  # not an EventType
            update[name] = Template(value).substitute(values)
        elif isinstance(value, tuple) and value and isinstance(value[0], _Text):
            update[name] = tuple(_filled(v, values) for v in value)
    return part.model_copy(update=update)


def build_persona(today: date) -> Persona:
    """The persona's texts as said in `today`'s week (see `memory.demo.training`)."""
    return _FILE.model_copy(
        update={
            "conversations": tuple(
                _filled(c, _values(today, on(today, *c.day))) for c in _FILE.conversations
            )
        }
    )
