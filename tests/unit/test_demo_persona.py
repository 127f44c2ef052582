"""The demo persona as data, and the wellness data the tools return for a demo user: her
memories and her workouts tell one story (runs rising before the race, no runs for three
weeks after the sprain, the distances she quotes), whatever the weekday of the load."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from agent.tools.registry import ToolContext
from agent.tools.wellness import WellnessDataset, WellnessToolkit, plan_for
from memory.demo import DEMO_USER, build_persona
from memory.demo.persona import PROCEDURES
from memory.demo.training import (
    CLEARED,
    DEMO_PREFIX,
    FIRST_RUN,
    LONG_RUNS,
    RACE,
    SPRAIN,
    on,
    planned_workout,
)
from memory.maintenance.summaries import check_summary
from memory.models import EventType
from memory.writing import detect_slot

# a whole week of load days: every weekday the persona may be anchored on
WEEK = [date(2026, 11, 16) + timedelta(days=i) for i in range(7)]
TOOLS = {"search_workouts", "aggregate_metrics", "compare_periods", "trend_analysis"}


def _runs(ds: WellnessDataset, first: date, last: date) -> list[tuple[str, float]]:
    lo, hi = first.isoformat(), last.isoformat()
    return [
        (w.date, w.distance_km or 0.0)
        for w in ds.workouts
        if w.type == "run" and lo <= w.date <= hi
    ]


@pytest.mark.parametrize("today", WEEK, ids=lambda d: f"{d:%a}")
def test_a_demo_users_workouts_follow_the_persona(today: date) -> None:
    ds = WellnessToolkit(today=today).dataset(DEMO_USER)
    sprain, first_run = on(today, *SPRAIN), on(today, *FIRST_RUN)
    runs = _runs(ds, today - timedelta(days=179), today)
    assert len(runs) >= 50  # a half-marathon runner: three runs a week for months
    # the sprained ankle: 6 km that day, then no run until the physio's clearance
    assert _runs(ds, sprain, sprain) == [(sprain.isoformat(), 6.0)]
    assert _runs(ds, sprain + timedelta(days=1), first_run - timedelta(days=1)) == []
    assert (first_run - sprain).days == 21
    assert on(today, *CLEARED) < first_run < on(today, *RACE)
    # the build-up: every Saturday's long run longer than the one before
    saturdays = [on(today, w, 5) for w in range(-5, 0)]
    assert [dict(_runs(ds, d, d))[d.isoformat()] for d in saturdays] == [
        LONG_RUNS[w] for w in range(-5, 0)
    ]
    assert LONG_RUNS[-5] < LONG_RUNS[-4] < LONG_RUNS[-3] < LONG_RUNS[-2] < LONG_RUNS[-1]


@pytest.mark.parametrize("today", WEEK, ids=lambda d: f"{d:%a}")
def test_the_tools_see_running_rise_since_the_comeback(today: date) -> None:
    kit = WellnessToolkit(today=today)
    ctx = ToolContext(user_id=DEMO_USER, session_id="s")
    assert kit.trend_analysis(ctx, "distance_km", days=56)["direction"] == "rising"
    assert kit.compare_periods(ctx, "distance_km", 28, "sum")["direction"] == "up"
    assert kit.search_workouts(ctx, workout_type="run", days=30)["count"] >= 10
    # anyone else's data is generated as before (no plan)
    assert plan_for("alice", today) is None and plan_for(DEMO_PREFIX + "x", today) is not None


def _as_of(today: date, day: date) -> WellnessToolkit:
    """The tools as they answered on `day`, with the persona anchored on `today`."""
    kit = WellnessToolkit(today=day)
    past = WellnessDataset.generate(0, 180, day, plan_for(DEMO_USER, today))
    kit.dataset = lambda _user: past  # type: ignore[method-assign]
    return kit


def test_what_she_was_told_is_what_the_tools_said() -> None:
    """The replies of her past sessions state what the tools returned on those days."""
    today = WEEK[3]
    ctx = ToolContext(user_id=DEMO_USER, session_id="s")
    persona = build_persona(today)
    checked = 0
    for conv in persona.conversations:
        day = date.fromtimestamp(conv.ms(today) / 1000)
        kit = _as_of(today, day)
        for ex in conv.exchanges:
            if ex.tools == ("aggregate_metrics",) and "7 days" in ex.assistant:
                got = kit.aggregate_metrics(ctx, "distance_km", 7, "sum")
                assert f"{got['value']:g} km" in ex.assistant
                checked += 1
            elif ex.tools == ("trend_analysis",):
                assert kit.trend_analysis(ctx, "distance_km", 35)["direction"] == "rising"
                checked += 1
            elif ex.tools == ("compare_periods",):
                days = 28 if "28 days" in ex.assistant else 7
                got = kit.compare_periods(ctx, "distance_km", days, "sum")
                assert got["direction"] == "up"
                cur, prev = got["current"]["value"], got["previous"]["value"]
                assert f"{cur:g} km" in ex.assistant and f"{prev:g} km" in ex.assistant
                checked += 1
            elif ex.tools == ("search_workouts",):
                got = kit.search_workouts(ctx, workout_type="run", days=14)
                assert f"{got['count']} runs" in ex.assistant
                checked += 1
    assert checked == 6
    milestone = next(
        m for c in persona.conversations for m in c.memories if m.text.startswith("Ran 16 km")
    )
    assert milestone.when is not None
    saturday = date.fromtimestamp(milestone.when.ms(today) / 1000)
    ds = WellnessToolkit(today=today).dataset(DEMO_USER)
    assert _runs(ds, saturday, saturday) == [(saturday.isoformat(), 16.0)]


@pytest.mark.parametrize("today", WEEK, ids=lambda d: f"{d:%a}")
def test_the_persona_is_dated_in_order_and_in_the_past(today: date) -> None:
    persona = build_persona(today)
    starts = [c.ms(today) for c in persona.conversations]
    assert starts == sorted(starts)
    now_ms = int((today.toordinal() - date(1970, 1, 1).toordinal()) * 86_400_000)
    assert starts[-1] < now_ms  # every conversation before today
    assert sum(c.keeps_messages for c in persona.conversations) == 3
    assert all(c.keeps_messages for c in persona.conversations[-3:])


def test_recent_summaries_pass_the_summary_check() -> None:
    """A summary with a number the turns never said is refused: the persona's pass."""
    for today in WEEK:
        for conv in build_persona(today).conversations:
            turns = [
                {"role": r, "content": t}
                for ex in conv.exchanges
                for r, t in (("user", ex.user), ("assistant", ex.assistant))
            ]
            assert check_summary(conv.summary, turns) == conv.summary, conv.summary


def test_only_the_changed_goal_shares_a_slot() -> None:
    """The write policy supersedes by slot: only the race goal may replace anything."""
    persona = build_persona(WEEK[0])
    slots = [
        (detect_slot(m.text, EventType(m.kind)), m.key)
        for c in persona.conversations
        for m in c.memories
    ]
    named = [(slot, key) for slot, key in slots if slot]
    shared = {s for s, _ in named if sum(1 for t, _ in named if t == s) > 1}
    assert shared == {"goal:running"}
    assert sorted(k for s, k in named if s == "goal:running") == ["goal_new", "goal_old"]


def test_procedures_use_the_real_tools_and_end_recommended() -> None:
    for _question, runs in PROCEDURES:
        assert all(set(tools) <= TOOLS for tools, _, _ in runs)
    tools_said = {
        t for c in build_persona(WEEK[0]).conversations for ex in c.exchanges for t in ex.tools
    }
    assert tools_said <= TOOLS


def test_every_day_has_at_most_one_planned_workout_of_a_known_type() -> None:
    today = WEEK[4]
    kinds = {
        w.type
        for i in range(200)
        if (w := planned_workout(today - timedelta(days=i), today)) is not None
    }
    assert kinds <= {"run", "cycle", "swim", "strength", "yoga", "walk"}
