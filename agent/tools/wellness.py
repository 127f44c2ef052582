"""A demo toolkit over synthetic wellness data: workouts, resting heart rate, sleep, weight.

Deterministic (same seed, user and end date, same numbers); demo users (`memory.demo`) work
out as the persona's training plan says."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from functools import lru_cache
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import Field

from agent.errors import ToolError
from agent.tools.registry import ToolContext
from memory.demo.training import DEMO_PREFIX, PlannedWorkout, planned_workout

WorkoutType = Literal["run", "cycle", "swim", "strength", "yoga", "walk"]
Metric = Literal[
    "resting_hr",
    "sleep_hours",
    "weight_kg",
    "steps",
    "workout_minutes",
    "workout_count",
    "workout_avg_hr",
    "calories",
    "distance_km",
]
Aggregation = Literal["avg", "min", "max", "sum"]
Days = Annotated[int, Field(ge=1, le=3650)]
# The arguments' descriptions, as the model reads them in the tool schemas.
MetricArg = Annotated[
    Metric,
    Field(description="which daily metric (workout_* and calories/distance_km sum the workouts)"),
]
HowArg = Annotated[Aggregation, Field(description="avg, min, max or sum")]
DaysBack = Annotated[Days, Field(description="how many days back from today")]

UNITS: dict[str, str] = {
    "resting_hr": "bpm",
    "sleep_hours": "hours",
    "weight_kg": "kg",
    "steps": "steps",
    "workout_minutes": "minutes",
    "workout_count": "workouts",
    "workout_avg_hr": "bpm",
    "calories": "kcal",
    "distance_km": "km",
}
# type: (share of workouts, minutes mean, minutes sd, km per minute or 0, avg hr, kcal/min)
_WORKOUTS: dict[str, tuple[float, float, float, float, int, float]] = {
    "run": (0.30, 42, 12, 0.17, 152, 11.0),
    "cycle": (0.20, 60, 20, 0.42, 138, 9.0),
    "strength": (0.20, 45, 10, 0.0, 118, 6.5),
    "walk": (0.15, 50, 15, 0.09, 102, 4.5),
    "yoga": (0.10, 40, 10, 0.0, 92, 3.5),
    "swim": (0.05, 35, 8, 0.04, 132, 9.5),
}
# Metrics that exist only on days with a workout (averaged over those days only).
_WORKOUT_ONLY = {"workout_avg_hr"}


@dataclass(frozen=True)
class Workout:
    date: str
    type: str
    duration_min: int
    distance_km: float | None
    calories: int
    avg_hr: int


@dataclass(frozen=True)
class DayMetrics:
    date: str
    resting_hr: float
    sleep_hours: float
    weight_kg: float
    steps: int


class WellnessDataset:
    """`days` days of data ending at `end` (inclusive)."""

    def __init__(self, end: date, days: list[DayMetrics], workouts: list[Workout]) -> None:
        self.end = end
        self.days = days
        self.workouts = workouts

    @classmethod
    def generate(
        cls,
        seed: int,
        n_days: int,
        end: date,
        plan: Callable[[date], PlannedWorkout | None] | None = None,
    ) -> WellnessDataset:
        """`plan`: the workout of each day (None: rest) instead of random ones (demo users)."""
        rng = np.random.default_rng(seed)
        start = end - timedelta(days=n_days - 1)
        weight0 = float(rng.uniform(68, 92))
        weight_slope = float(rng.uniform(-0.03, 0.01))  # kg/day
        rhr0 = float(rng.uniform(56, 72))
        rhr_slope = float(rng.uniform(-0.02, 0.005))
        sleep_mean = float(rng.uniform(6.2, 7.8))
        steps_mean = float(rng.uniform(6000, 11000))
        workout_p = float(rng.uniform(0.35, 0.7))
        # Each person has favourite workouts: re-weight the shares.
        kinds = list(_WORKOUTS)
        shares = np.array([_WORKOUTS[k][0] for k in kinds]) * rng.uniform(0.2, 1.8, len(kinds))
        shares /= shares.sum()

        days: list[DayMetrics] = []
        workouts: list[Workout] = []
        for i in range(n_days):
            d = start + timedelta(days=i)
            weekend = d.weekday() >= 5
            days.append(
                DayMetrics(
                    date=d.isoformat(),
                    resting_hr=round(rhr0 + rhr_slope * i + float(rng.normal(0, 1.8)), 1),
                    sleep_hours=round(
                        float(
                            np.clip(
                                sleep_mean + (0.6 if weekend else 0) + rng.normal(0, 0.6), 3.5, 10.5
                            )
                        ),
                        2,
                    ),
                    weight_kg=round(weight0 + weight_slope * i + float(rng.normal(0, 0.35)), 1),
                    steps=int(max(800, steps_mean + rng.normal(0, 2200))),
                )
            )
            if plan is not None:
                planned = plan(d)
                if planned is not None:
                    workouts.append(
                        Workout(
                            date=d.isoformat(),
                            type=planned.type,
                            duration_min=planned.minutes,
                            distance_km=planned.km,
                            calories=int(planned.minutes * _WORKOUTS[planned.type][5]),
                            avg_hr=int(planned.avg_hr + rng.normal(0, 3)),
                        )
                    )
            elif rng.random() < workout_p:
                kind = kinds[int(rng.choice(len(kinds), p=shares))]
                _, mins_mu, mins_sd, km_per_min, hr, kcal = _WORKOUTS[kind]
                mins = int(max(10, rng.normal(mins_mu, mins_sd)))
                dist = (
                    round(mins * km_per_min * float(rng.uniform(0.85, 1.15)), 2)
                    if km_per_min
                    else None
                )
                workouts.append(
                    Workout(
                        date=d.isoformat(),
                        type=kind,
                        duration_min=mins,
                        distance_km=dist,
                        calories=int(mins * kcal * float(rng.uniform(0.9, 1.1))),
                        avg_hr=int(hr + rng.normal(0, 6)),
                    )
                )
        return cls(end, days, workouts)

    # ---- series ------------------------------------------------------------------------
    def window(self, days: int, offset: int = 0) -> tuple[date, date]:
        """The `days`-day window ending `offset` days before the end (inclusive dates)."""
        last = self.end - timedelta(days=offset)
        return last - timedelta(days=days - 1), last

    def series(self, metric: str, first: date, last: date) -> list[tuple[str, float]]:
        """(date, value) pairs of a metric within [first, last]."""
        lo, hi = first.isoformat(), last.isoformat()
        if metric in ("resting_hr", "sleep_hours", "weight_kg", "steps"):
            return [(d.date, float(getattr(d, metric))) for d in self.days if lo <= d.date <= hi]
        in_range = [w for w in self.workouts if lo <= w.date <= hi]
        if metric == "workout_avg_hr":
            return [(w.date, float(w.avg_hr)) for w in in_range]
        per_day: dict[str, float] = {d.date: 0.0 for d in self.days if lo <= d.date <= hi}
        for w in in_range:
            if metric == "workout_minutes":
                per_day[w.date] += w.duration_min
            elif metric == "workout_count":
                per_day[w.date] += 1
            elif metric == "calories":
                per_day[w.date] += w.calories
            elif metric == "distance_km":
                per_day[w.date] += w.distance_km or 0.0
        return sorted(per_day.items())


def _aggregate(values: list[float], how: str) -> float | None:
    if not values:
        return None
    arr = np.asarray(values)
    out = {"avg": arr.mean(), "min": arr.min(), "max": arr.max(), "sum": arr.sum()}[how]
    return round(float(out), 2)


def plan_for(user_id: str, end: date) -> Callable[[date], PlannedWorkout | None] | None:
    """The training plan a user's workouts follow: the demo persona's for demo users."""
    if not user_id.startswith(DEMO_PREFIX):
        return None
    return lambda day: planned_workout(day, end)


@lru_cache(maxsize=64)
def _dataset(seed: int, days: int, user_id: str, end: date) -> WellnessDataset:
    """A user's data, the same for the same seed and end date (cached: the tools of one answer
    read it several times)."""
    digest = hashlib.blake2b(user_id.encode(), digest_size=4).digest()
    user_seed = seed ^ int.from_bytes(digest, "little")
    return WellnessDataset.generate(user_seed, days, end, plan_for(user_id, end))


class WellnessToolkit:
    """The pluggable wellness toolkit. `today` fixes the end date (tests); default: today."""

    name = "wellness"

    def __init__(self, *, seed: int = 42, days: int = 180, today: date | None = None) -> None:
        self._seed = seed
        self._days = days
        self._today = today

    def dataset(self, user_id: str) -> WellnessDataset:
        end = self._today or date.today()
        return _dataset(self._seed, self._days, user_id, end)

    def tools(self) -> list[Callable[..., Any]]:
        return [
            self.search_workouts,
            self.aggregate_metrics,
            self.compare_periods,
            self.trend_analysis,
        ]

    def _check_days(self, days: int) -> None:
        if days > self._days:
            raise ToolError(f"Only the last {self._days} days of data exist; ask for fewer days.")

    # ---- tools -------------------------------------------------------------------------
    def search_workouts(
        self,
        ctx: ToolContext,
        workout_type: Annotated[
            WorkoutType | None,
            Field(description="only this kind of workout (run, cycle, swim, strength, yoga, walk)"),
        ] = None,
        days: Annotated[Days, Field(description="how many days back from today to search")] = 30,
        min_duration_min: Annotated[
            int, Field(ge=0, description="only workouts at least this long, in minutes")
        ] = 0,
        limit: Annotated[
            int, Field(ge=1, le=100, description="maximum number of workouts to return")
        ] = 20,
    ) -> dict[str, Any]:
        """Find the user's workouts in the last N days, newest first."""
        self._check_days(days)
        ds = self.dataset(ctx.user_id)
        first, last = ds.window(days)
        lo, hi = first.isoformat(), last.isoformat()
        found = [
            w
            for w in reversed(ds.workouts)
            if lo <= w.date <= hi
            and (workout_type is None or w.type == workout_type)
            and w.duration_min >= min_duration_min
        ]
        return {
            "period": {"from": lo, "to": hi},
            "count": len(found),
            "total_minutes": sum(w.duration_min for w in found),
            "workouts": [asdict(w) for w in found[:limit]],
        }

    def aggregate_metrics(
        self,
        ctx: ToolContext,
        metric: MetricArg,
        days: DaysBack = 7,
        aggregation: HowArg = "avg",
    ) -> dict[str, Any]:
        """Average, minimum, maximum or sum of one daily metric over the last N days."""
        self._check_days(days)
        ds = self.dataset(ctx.user_id)
        first, last = ds.window(days)
        values = [v for _, v in ds.series(metric, first, last)]
        return {
            "metric": metric,
            "aggregation": aggregation,
            "value": _aggregate(values, aggregation),
            "unit": UNITS[metric],
            "count": len(values),
            "period": {"from": first.isoformat(), "to": last.isoformat()},
        }

    def compare_periods(
        self,
        ctx: ToolContext,
        metric: MetricArg,
        period_days: Annotated[
            Days, Field(description="length of each period in days (7 = this week vs last week)")
        ] = 7,
        aggregation: HowArg = "avg",
    ) -> dict[str, Any]:
        """Compare a metric over the last N days with the N days before that."""
        self._check_days(period_days * 2)
        ds = self.dataset(ctx.user_id)
        out: dict[str, Any] = {"metric": metric, "aggregation": aggregation, "unit": UNITS[metric]}
        values: dict[str, float | None] = {}
        for label, offset in (("current", 0), ("previous", period_days)):
            first, last = ds.window(period_days, offset)
            vals = [v for _, v in ds.series(metric, first, last)]
            values[label] = _aggregate(vals, aggregation)
            out[label] = {
                "from": first.isoformat(),
                "to": last.isoformat(),
                "value": values[label],
                "count": len(vals),
            }
        cur, prev = values["current"], values["previous"]
        if cur is None or prev is None:
            out.update(change=None, change_pct=None, direction="no data", count=0)
        else:
            change = round(cur - prev, 2)
            out.update(
                change=change,
                change_pct=round(100 * change / prev, 1) if prev else None,
                direction="up" if change > 0 else "down" if change < 0 else "same",
            )
        return out

    def trend_analysis(
        self,
        ctx: ToolContext,
        metric: MetricArg,
        days: Annotated[
            Days,
            Field(description="how many days back from today (at least 7 for a meaningful trend)"),
        ] = 30,
    ) -> dict[str, Any]:
        """Linear trend of a metric over the last N days: change per week and direction."""
        self._check_days(days)
        ds = self.dataset(ctx.user_id)
        first, last = ds.window(days)
        pts = ds.series(metric, first, last)
        if len(pts) < 3:
            return {"metric": metric, "count": len(pts), "direction": "not enough data"}
        x = np.array([(date.fromisoformat(d) - first).days for d, _ in pts], dtype=float)
        y = np.array([v for _, v in pts])
        slope, intercept = np.polyfit(x, y, 1)
        pred = slope * x + intercept
        ss_res = float(((y - pred) ** 2).sum())
        ss_tot = float(((y - y.mean()) ** 2).sum())
        r2 = 1 - ss_res / ss_tot if ss_tot else 0.0
        per_week = float(slope * 7)
        flat = abs(per_week) < 0.01 * max(abs(float(y.mean())), 1e-9) or r2 < 0.05
        return {
            "metric": metric,
            "unit": UNITS[metric],
            "period": {"from": first.isoformat(), "to": last.isoformat()},
            "count": len(pts),
            "change_per_week": round(per_week, 3),
            "start_value": round(float(intercept), 2),
            "end_value": round(float(slope * x[-1] + intercept), 2),
            "r2": round(r2, 3),
            "direction": "flat" if flat else ("rising" if per_week > 0 else "falling"),
        }
