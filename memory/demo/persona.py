"""The demo persona as data: Maya, a teacher training for a half marathon after a sprained ankle.

`build_persona(today)` gives eight dated conversations over five months: what was said, the
memories each one left (preferences, goals, health events, milestones), the facts she added
and a summary of each. The three newest still have their messages (short-term memory keeps a
session for SHORT_TERM_TTL_S, 30 days by default); the older ones live on, as in real use, as
their summaries and logged exchanges. One goal changed: "under 2 hours" was replaced after the
sprain by "finish comfortably in about 2:10" (the old one is kept as history). `PROCEDURES`
are the tool sequences she learned with, named as the wellness toolkit names its tools.

Every date and distance comes from `memory.demo.training`, the plan the wellness tools' data
follows for demo users, so what she said matches what the tools return.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from memory.demo.training import (
    CLEARED,
    LONG_RUNS,
    RACE,
    RACE_NAME,
    SPRAIN,
    at_ms,
    long_date,
    on,
    runs_between,
)

#: Questions that show what the persona's memory gives (docs/demo.md's script, and the
#: chat page's first screen once the persona is loaded).
DEMO_QUESTIONS = (
    "Plan my running this week",
    "How is my ankle doing?",
    "What should I eat the night before my long run?",
    "What is my goal for the race?",
    "How far did I run this week?",
    "What did you suggest to keep my fitness while I couldn't run?",
)


@dataclass(frozen=True)
class Exchange:
    user: str
    assistant: str
    tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class Remembered:
    """An episodic memory a conversation left. `when_ms` None: dated at its exchange."""

    text: str
    kind: str
    tags: tuple[str, ...]
    importance: float
    exchange: int = 0
    when_ms: int | None = None
    key: str = ""  # names it, for supersession
    how: str = "llm"  # what wrote it in the chat: LLM extraction, or a trigger phrase


@dataclass(frozen=True)
class Fact:
    text: str
    category: str
    fact_type: str = "guideline"


@dataclass(frozen=True)
class Conversation:
    start_ms: int
    exchanges: tuple[Exchange, ...]
    summary: str
    memories: tuple[Remembered, ...] = ()
    facts: tuple[Fact, ...] = ()
    #: the short-term messages are still there (a recent session)
    keeps_messages: bool = False

    def times_ms(self) -> list[int]:
        """The time of each message: a user message, its answer a minute later, the next
        exchange three minutes after that."""
        n = len(self.exchanges)
        return [self.start_ms + (4 * i + j) * 60_000 for i in range(n) for j in (0, 1)]


#: A learned procedure: the question, then each run as (tool sequence, success score, ms).
Procedure = tuple[str, tuple[tuple[tuple[str, ...], float, float], ...]]


@dataclass(frozen=True)
class Persona:
    name: str
    conversations: tuple[Conversation, ...]
    #: (old key, new key): the memory named `new` replaced the one named `old`
    superseded: tuple[tuple[str, str], ...] = ()
    procedures: tuple[Procedure, ...] = ()


#: (question, runs of (tool sequence, success score, ms)): sequences tried, best last.
PROCEDURES: tuple[Procedure, ...] = (
    ("How far did I run this week?", ((("aggregate_metrics",), 1.0, 820.0),) * 4),
    ("Show my runs from the last two weeks", ((("search_workouts",), 1.0, 760.0),) * 3),
    ("Am I running more than last week?", ((("compare_periods",), 1.0, 910.0),) * 3),
    ("Is my running going up over the last 5 weeks?", ((("trend_analysis",), 1.0, 950.0),) * 2),
    (
        "Plan my running this week",
        ((("trend_analysis",), 0.3, 1400.0),)
        + ((("search_workouts", "compare_periods"), 1.0, 1650.0),) * 3,
    ),
)


def _km(value: float) -> str:
    return f"{value:g}"


def _week_of_runs(today: date, last: date, days: int = 7) -> tuple[int, float, float]:
    """(runs, km, longest km) of the `days` days ending `last`."""
    runs = runs_between(last - timedelta(days=days - 1), last, today)
    return len(runs), sum(km for _, km in runs), max((km for _, km in runs), default=0.0)


def build_persona(today: date) -> Persona:
    """The persona dated from `today`'s week (see `memory.demo.training`)."""
    race = long_date(on(today, *RACE))
    sprain_day, cleared_day = on(today, *SPRAIN), on(today, *CLEARED)
    goal_old = f"Race goal: run the {RACE_NAME} on {race} in under 2 hours"
    goal_new = (
        f"Race goal since the sprain: plans to finish the {RACE_NAME} on {race} comfortably, "
        "in about 2 hours 10 minutes, without re-injuring her ankle"
    )

    first = Conversation(
        start_ms=at_ms(on(today, -21, 1), 19, 40),
        exchanges=(
            Exchange(
                f"Hi! I'm Maya. I've signed up for the {RACE_NAME} on {race} and I want to "
                "run it in under 2 hours.",
                "Welcome, Maya! Under 2 hours is a good goal for a first half marathon. I'll "
                "remember it, and we can plan your training around three runs a week.",
            ),
            Exchange(
                "I'm vegetarian (I eat eggs and dairy, but no meat or fish), so I need "
                "protein ideas.",
                "Good vegetarian sources: eggs, Greek yogurt, lentils, chickpeas, tofu and "
                "tempeh. Spread them over the day: runners need a bit more protein.",
            ),
            Exchange(
                "I prefer to run in the morning, around 6:30 before school. I'm a teacher.",
                "Noted: morning runs around 6:30, before school. I'll suggest plans that fit "
                "a teacher's week.",
            ),
        ),
        memories=(
            Remembered(goal_old, "goal", ("running", "race"), 0.9, 0, key="goal_old"),
            Remembered(
                "Vegetarian: eats eggs and dairy, but no meat or fish",
                "preference",
                ("diet", "food"),
                0.8,
                1,
            ),
            Remembered(
                "Prefers to run in the morning, around 6:30 before school",
                "preference",
                ("running", "schedule"),
                0.6,
                2,
            ),
            Remembered("Works as a teacher", "fact", ("work",), 0.5, 2),
        ),
        summary=f"Maya introduced herself: she is training for the {RACE_NAME} on {race} and "
        "wants to finish in under 2 hours. She is vegetarian (eggs and dairy, no meat or fish) "
        "and asked for protein ideas. She prefers morning runs around 6:30 before school, as "
        "she is a teacher.",
    )

    day2 = on(today, -17, 3)
    n7, km7, _ = _week_of_runs(today, day2)
    routine = Conversation(
        start_ms=at_ms(day2, 20, 10),
        exchanges=(
            Exchange(
                "Remember: my week is strength on Monday, an easy run on Tuesday, yoga on "
                "Wednesday evening, a tempo run on Thursday, rest on Friday and my long run "
                "on Saturday.",
                "Got it. Your week: Monday strength, Tuesday easy run, Wednesday yoga, "
                "Thursday tempo run, Friday rest, Saturday long run.",
            ),
            Exchange(
                "How far did I run this week?",
                f"In the last 7 days you ran {_km(km7)} km over {n7} runs.",
                ("aggregate_metrics",),
            ),
            Exchange(
                "I prefer short answers with bullet points, please.",
                "- Noted\n- Short answers with bullet points from now on",
            ),
        ),
        memories=(
            Remembered(
                # (no time of day: "evening" would make it a workout-time preference, and
                # replace her morning runs)
                "Training week: strength on Monday, easy run on Tuesday, yoga on Wednesday, "
                "tempo run on Thursday, rest on Friday, long run on Saturday",
                "preference",
                ("running", "schedule"),
                0.7,
                0,
                how="trigger",
            ),
            Remembered(
                "Prefers short answers with bullet points", "preference", ("style",), 0.6, 2
            ),
        ),
        facts=(
            Fact(
                "The 10 percent rule: raise weekly running distance by no more than about "
                "10 percent from one week to the next",
                "training",
            ),
        ),
        summary="Maya shared her training week: strength on Monday, an easy run on Tuesday, "
        "yoga on Wednesday evening, a tempo run on Thursday, rest on Friday and her long run "
        f"on Saturday. She checked her distance ({_km(km7)} km over {n7} runs in 7 days) and "
        "asked for short answers with bullet points.",
    )

    day3 = on(today, -12, 6)
    saturday = day3 - timedelta(days=1)
    longest = runs_between(saturday, saturday, today)[0][1]
    _, km28, _ = _week_of_runs(today, day3, 28)
    _, km28_before, _ = _week_of_runs(today, day3 - timedelta(days=28), 28)
    trail = Conversation(
        start_ms=at_ms(day3, 11, 0),
        exchanges=(
            Exchange(
                f"Did {_km(longest)} km yesterday on the river trail, my longest run so far! "
                "I love running on trails.",
                "Great progress, Maya! Keep the long run easy: you should be able to talk "
                "in full sentences.",
            ),
            Exchange(
                "Am I running more than last month?",
                f"Yes: {_km(km28)} km in the last 28 days, against {_km(km28_before)} km in "
                "the 28 days before.",
                ("compare_periods",),
            ),
        ),
        memories=(
            Remembered(
                f"Ran {_km(longest)} km on the river trail on {long_date(saturday)}, "
                "her longest run at the time",
                "milestone",
                ("running",),
                0.6,
                0,
            ),
            Remembered(
                "Loves running on trails along the river", "preference", ("running",), 0.5, 0
            ),
        ),
        summary=f"Maya ran {_km(longest)} km on the river trail, her longest run at the time, "
        f"and loves trail running. Her distance was rising: {_km(km28)} km in 28 days against "
        f"{_km(km28_before)} km the 28 days before.",
    )

    injury = Conversation(
        start_ms=at_ms(sprain_day + timedelta(days=1), 10, 15),
        exchanges=(
            Exchange(
                "I sprained my left ankle on the trail yesterday, 6 km into my long run. The "
                "physio says it's a grade 2 sprain: no running for about three weeks.",
                "I'm sorry, Maya. Rest it, ice it and keep it raised for the first days, and "
                "follow your physio. I've noted: no running for about three weeks.",
            ),
            Exchange(
                "How can I keep my fitness while I can't run?",
                "Once walking is pain-free: swimming (with a pull buoy if kicking hurts), the "
                "stationary bike and upper-body strength. Keep your Wednesday yoga, but go "
                "easy on balance poses on the left foot at first.",
            ),
        ),
        memories=(
            Remembered(
                f"Sprained her left ankle (grade 2) on a trail run on {long_date(sprain_day)}, "
                "6 km into her long run; the physio said no running for about three weeks",
                "health_event",
                ("injury", "ankle", "running"),
                0.9,
                when_ms=at_ms(sprain_day, 9, 10),
            ),
            Remembered(
                # a health event, not a goal: a running goal would replace her race goal
                "Cross-training while the sprained ankle heals: swimming on Tuesday and "
                "Thursday, the stationary bike on Saturday, no running",
                "health_event",
                ("injury", "training"),
                0.5,
                1,
            ),
        ),
        summary="Maya sprained her left ankle (grade 2) on a trail run the day before, 6 km "
        "into her long run. Her physio said no running for "
        "about three weeks. We planned cross-training: swimming, the stationary bike and "
        "upper-body strength, and she keeps her Wednesday yoga.",
    )

    cleared = Conversation(
        start_ms=at_ms(cleared_day, 18, 30),
        exchanges=(
            Exchange(
                "Good news: the physio cleared my ankle today! Easy runs only at first, build "
                "up slowly, and no trails until after the race.",
                "That's great news! We'll restart with short easy runs and add a little each "
                "week, on roads or the track, not on trails.",
            ),
            Exchange(
                "I've lost three weeks, so I'm changing my goal: I just want to finish the "
                "half marathon comfortably, in about 2 hours 10 minutes, without hurting my "
                "ankle again.",
                "A sensible change. New goal noted: finish comfortably in about 2:10, the "
                "ankle first. Your earlier goal of under 2 hours is kept as history.",
            ),
            Exchange(
                "Note this: I do balance exercises and calf raises every evening for my ankle.",
                "Noted: balance exercises and calf raises every evening.",
            ),
        ),
        memories=(
            Remembered(
                f"Running plan after her sprained left ankle (physio, {long_date(cleared_day)}): "
                "easy runs only at first, build up slowly, no trail running until after the race",
                "health_event",
                ("injury", "ankle", "running"),
                0.9,
                0,
            ),
            Remembered(goal_new, "goal", ("running", "race"), 0.9, 1, key="goal_new"),
            Remembered(
                "Does balance exercises and calf raises for her ankle every day",
                "preference",
                ("injury", "ankle"),
                0.6,
                2,
                how="trigger",
            ),
        ),
        facts=(
            Fact(
                "After a lateral ankle sprain, balance exercises and calf raises lower the "
                "risk of spraining the ankle again",
                "recovery",
            ),
        ),
        summary="The physio cleared Maya's left ankle: easy runs only at first, build up "
        "slowly, no trails until after the race. After losing three weeks she changed her "
        "goal from under 2 hours to finishing comfortably in about 2 hours 10 minutes. She "
        "does balance exercises and calf raises every evening.",
    )

    return Persona(
        name="Maya",
        conversations=(
            first,
            routine,
            trail,
            injury,
            cleared,
            *_recent(today),
        ),
        superseded=(("goal_old", "goal_new"),),
        procedures=PROCEDURES,
    )


def _recent(today: date) -> tuple[Conversation, ...]:
    """The three newest conversations: their messages are still in short-term memory."""
    day6 = on(today, -3, 2)
    n7, km7, long7 = _week_of_runs(today, day6)
    checkin = Conversation(
        start_ms=at_ms(day6, 19, 0),
        keeps_messages=True,
        exchanges=(
            Exchange(
                "How far did I run in the last 7 days?",
                f"- {_km(km7)} km over {n7} runs in the last 7 days\n"
                f"- Longest: {_km(long7)} km on Saturday",
                ("aggregate_metrics",),
            ),
            Exchange(
                "Is my running going up over the last 5 weeks?",
                "- Yes: your running distance has been rising over the last 5 weeks, since "
                "the physio cleared you\n- Keep the rise gentle, about 10 percent a week",
                ("trend_analysis",),
            ),
            Exchange(
                "Should I stretch before or after my runs?",
                "- Before: 5 minutes of easy jogging and leg swings, no long stretches\n"
                "- After: gentle calf and hip stretches\n"
                "- Keep your ankle exercises every day",
            ),
        ),
        facts=(
            Fact(
                "Good vegetarian protein sources for runners: lentils, chickpeas, tofu, "
                "tempeh, eggs and Greek yogurt",
                "nutrition",
            ),
        ),
        summary=f"Maya checked her running: {_km(km7)} km over {n7} runs in the last 7 days, "
        "and her running distance has been rising over the last 5 weeks, since the physio "
        "cleared her ankle. She asked about stretching: 5 minutes of easy jogging and leg "
        "swings before a run, gentle calf and hip stretches after, and her ankle exercises "
        "every day.",
    )

    day7 = on(today, -2, 6)
    long_run = LONG_RUNS[-2]
    n14, km14, _ = _week_of_runs(today, day7, 14)
    milestone = Conversation(
        start_ms=at_ms(day7, 9, 30),
        keeps_messages=True,
        exchanges=(
            Exchange(
                f"I ran {long_run} km yesterday, my longest run since the sprain, and the "
                "ankle felt fine!",
                f"- Brilliant, Maya!\n- {long_run} km with a happy ankle is a big step\n"
                "- Keep next week's long run about the same or a little longer",
            ),
            Exchange(
                "Show my runs from the last two weeks",
                f"- {n14} runs in the last 14 days, {_km(km14)} km in all\n"
                f"- Long runs: {LONG_RUNS[-3]} km and {long_run} km, both on Saturdays",
                ("search_workouts",),
            ),
            Exchange(
                "Thanks! I'll keep my Tuesday and Thursday runs easy.",
                "- Good plan\n- Easy means you can still talk in full sentences",
            ),
        ),
        memories=(
            Remembered(
                f"Ran {long_run} km on {long_date(day7 - timedelta(days=1))}, her longest run "
                "since the ankle sprain; the ankle felt fine",
                "milestone",
                ("running", "ankle"),
                0.7,
                when_ms=at_ms(day7 - timedelta(days=1), 8, 30),
            ),
        ),
        summary=f"Maya ran {long_run} km on Saturday, her longest run since the ankle sprain, "
        f"and the ankle felt fine. Her runs of the last 14 days: {n14} runs, {_km(km14)} km. "
        "She will keep her Tuesday and Thursday runs easy.",
    )

    day8 = on(today, -1, 1)
    n_now, km_now, _ = _week_of_runs(today, day8)
    n_before, km_before, _ = _week_of_runs(today, day8 - timedelta(days=7))
    more = "Yes" if km_now > km_before else "No"
    stiff = Conversation(
        start_ms=at_ms(day8, 18, 45),
        keeps_messages=True,
        exchanges=(
            Exchange(
                "Am I running more than last week?",
                f"- {more}: {_km(km_now)} km in the last 7 days against {_km(km_before)} km "
                "the 7 days before",
                ("compare_periods",),
            ),
            Exchange(
                "My ankle was a bit stiff after this morning's run, but not swollen. Should I "
                "worry?",
                "- Some stiffness after a sprain is common\n"
                "- Keep up the balance exercises and calf raises\n"
                "- If it swells or hurts when you walk, rest it and see your physio",
            ),
            Exchange(
                "What's a good rule for tapering before the race?",
                "- Cut your running volume by 30 to 50 percent over the last 10 to 14 days\n"
                "- Keep a few short, faster bits so your legs stay sharp",
            ),
        ),
        memories=(
            Remembered(
                f"Left ankle a bit stiff after her run on {long_date(day8)}, but not swollen",
                "health_event",
                ("injury", "ankle"),
                0.6,
                1,
                when_ms=at_ms(day8, 7, 15),
            ),
        ),
        facts=(
            Fact(
                "A taper before a half marathon cuts running volume by about 30 to 50 "
                "percent over the last 10 to 14 days",
                "training",
            ),
        ),
        summary=f"Maya is running more: {_km(km_now)} km in the last 7 days against "
        f"{_km(km_before)} km the 7 days before. Her left ankle was a bit stiff after a run "
        "but not swollen; she keeps up her balance exercises and calf raises. We talked about "
        "the race taper: 30 to 50 percent less running over the last 10 to 14 days.",
    )
    return checkin, milestone, stiff
