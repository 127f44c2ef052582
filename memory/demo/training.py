"""The demo persona's training plan, dated in weeks from the Monday of the week loaded: her
memories (`memory.demo.persona`) and the wellness tools' data for demo users
(`agent/tools/wellness.py`) both read it, so they agree to the day."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import NamedTuple

#: User ids starting with this get the persona's training in the wellness tools' data.
DEMO_PREFIX = "demo-"
#: The user `python -m memory demo load` and the app's *Load demo persona* fill by default.
DEMO_USER = "demo-maya"

# (week, weekday) relative to this week's Monday; weekday 0 = Monday.
SPRAIN = (-9, 5)  # Saturday: 6 km into a trail long run
CLEARED = (-6, 3)  # Thursday: the physio clears the ankle
FIRST_RUN = (-6, 5)  # Saturday: 5 km, the first run back
RACE = (3, 6)  # Sunday: the half marathon
RACE_NAME = "Riverside Half Marathon"

#: Saturday long runs (km) of the build-up weeks after the sprain.
LONG_RUNS = {-5: 10, -4: 12, -3: 14, -2: 16, -1: 17, 0: 18}
#: Tuesday and Thursday easy runs (km) of those weeks.
EASY_RUNS = {-5: 5, -4: 6, -3: 7, -2: 7, -1: 8, 0: 8}


class PlannedWorkout(NamedTuple):
    type: str  # one of the wellness toolkit's workout types
    minutes: int
    km: float | None
    avg_hr: int


def week_start(today: date) -> date:
    """Monday of the week `today` is in: the anchor of every date of the persona."""
    return today - timedelta(days=today.weekday())


def on(today: date, week: int, weekday: int) -> date:
    """The date of `weekday` (0 = Monday) in the week `week` weeks from this one."""
    return week_start(today) + timedelta(days=7 * week + weekday)


def at_ms(day: date, hour: int, minute: int = 0) -> int:
    """Milliseconds since the epoch of a local time on `day`."""
    return int(datetime.combine(day, time(hour, minute)).timestamp() * 1000)


def long_date(day: date) -> str:
    """'Saturday 14 June': how the persona's texts name a day."""
    return f"{day:%A} {day.day} {day:%B}"


def _run(km: float, pace_min_per_km: float, hr: int) -> PlannedWorkout:
    return PlannedWorkout("run", round(km * pace_min_per_km), float(km), hr)


def planned_workout(day: date, today: date) -> PlannedWorkout | None:
    """What the persona did on `day` (None: a rest day), with `today` the last day of data."""
    week = (week_start(day) - week_start(today)).days // 7
    wd = day.weekday()
    sprain, first_run = on(today, *SPRAIN), on(today, *FIRST_RUN)
    if day == sprain:
        return _run(6, 6.4, 150)  # cut short: she walked home
    if day < sprain:  # base building
        rise = min(1.0, max(0.0, (week + 25) / 15))
        return {
            0: PlannedWorkout("strength", 40, None, 118),
            1: _run(round(6 + 2 * rise), 6.2, 146),
            2: PlannedWorkout("yoga", 45, None, 92),
            3: _run(round(7 + rise), 5.6, 160),
            5: _run(round(10 + 5 * rise), 6.5, 148),
            6: PlannedWorkout("walk", 50, None, 100),
        }.get(wd)
    if day < first_run:  # the ankle heals: no running
        if day <= sprain + timedelta(days=7):
            return PlannedWorkout("strength", 30, None, 110) if wd == 0 else None
        return {
            0: PlannedWorkout("strength", 30, None, 110),
            1: PlannedWorkout("swim", 30, None, 128),
            2: PlannedWorkout("yoga", 40, None, 90),
            3: PlannedWorkout("swim", 30, None, 128),
            5: PlannedWorkout("cycle", 45, None, 132),
        }.get(wd)
    if day == first_run:
        return _run(5, 6.6, 142)
    return {  # build-up to the race
        0: PlannedWorkout("strength", 35, None, 116),
        1: _run(EASY_RUNS.get(week, 8), 6.3, 144),
        2: PlannedWorkout("yoga", 45, None, 92),
        3: _run(EASY_RUNS.get(week, 8), 6.3, 145),
        5: _run(LONG_RUNS.get(week, 18), 6.5, 148),
        6: PlannedWorkout("walk", 40, None, 98),
    }.get(wd)


def runs_between(first: date, last: date, today: date) -> list[tuple[date, float]]:
    """(date, km) of the runs from `first` to `last` (inclusive), oldest first."""
    out = []
    day = first
    while day <= last:
        w = planned_workout(day, today)
        if w is not None and w.type == "run" and w.km is not None:
            out.append((day, w.km))
        day += timedelta(days=1)
    return out
