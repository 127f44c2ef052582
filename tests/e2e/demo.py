"""Realistic demo data for one user, written through the coordinator (for browser tests and
their screenshots): memories of every kind, a superseded one, procedures, a chat session."""

from __future__ import annotations

from typing import Any

DAY_MS = 86_400_000

EPISODIC = [
    # (text, event type, tags, importance, days ago)
    ("I am vegetarian", "preference", ["food"], 0.8, 30),
    ("I prefer short answers with bullet points", "preference", ["style"], 0.6, 25),
    ("Train for the Lyon half marathon on April 12", "goal", ["running"], 0.9, 20),
    ("Ran my first 10k in 58 minutes", "milestone", ["running"], 0.7, 12),
    ("Sprained my left ankle on a trail run", "health_event", ["injury", "running"], 0.8, 6),
    ("Sleep 7.5 hours on weeknights", "goal", ["sleep"], 0.6, 3),
]


def seed_demo_user(coordinator: Any, user: str, session: str) -> dict[str, str]:
    """Write the demo data; returns a few ids by name."""
    coffee = coordinator.add_episodic(user, "I drink two coffees a day", event_type="preference",
                                      tags=["food"], importance=0.4)  # fmt: skip
    now = coffee.timestamp
    ids: dict[str, str] = {}
    for text, kind, tags, importance, days in EPISODIC:
        mem = coordinator.add_episodic(
            user, text, event_type=kind, tags=tags, importance=importance,
            timestamp_ms=now - days * DAY_MS, session_id=session,
        )  # fmt: skip
        ids[text] = mem.id
    coordinator.add_episodic(user, "I drink one coffee a day, before noon",
                             event_type="preference", tags=["food"], importance=0.5,
                             supersedes=coffee.id)  # fmt: skip
    coordinator.update_memory(user, "episodic", ids["I am vegetarian"], pinned=True)
    coordinator.add_semantic("Lentils and chickpeas are good plant sources of iron",
                             category="nutrition", added_by=user)  # fmt: skip
    for query, tools, score, ms, times in (
        ("how did I sleep last week", ["get_sleep", "aggregate_metrics"], 0.9, 180, 4),
        ("what was my average heart rate this month", ["aggregate_metrics"], 0.8, 95, 2),
        ("plan my long run for sunday", ["get_workouts", "weather"], 0.4, 420, 1),
        ("plan my long run for sunday", ["get_workouts"], 0.85, 150, 2),
    ):
        for _ in range(times):
            coordinator.record_procedure(user, query, tools, success_score=score,
                                         execution_time_ms=ms)  # fmt: skip
    for role, text in (
        ("user", "Remember that I am vegetarian"),
        ("assistant", "Noted: you are vegetarian. I will keep it in mind for meal ideas."),
        ("user", "How did I sleep last week?"),
        ("assistant", "You slept 7.1 hours on average, a bit less on Thursday."),
    ):
        coordinator.add_message(user, session, role, text)
    for q in ("what do I eat", "running goals", "sleep", "coffee", "zzzz unrelated qqq"):
        coordinator.search(user, q, "episodic")
        coordinator.search(user, q, "semantic")
    return ids
