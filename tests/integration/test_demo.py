"""The demo persona on the test Redis: `python -m memory demo load|reset` (the CLI's `main` in
this process as a subprocess would see it, tests/in_process.py; REDIS_URL and MEMORY_NAMESPACE
of this test), and what recall and maintenance make of it."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memory.block import render_memory_block
from memory.coordinator import MemoryCoordinator
from memory.demo import (
    DEMO_QUESTIONS,
    DEMO_TAG,
    DEMO_USER,
    OwnMemoriesError,
    build_persona,
    demo_contents,
    load_demo,
    reset_demo,
)
from memory.demo.persona import PROCEDURES
from memory.demo.training import SPRAIN, on
from memory.errors import NotFoundError
from memory.maintenance import Maintenance
from memory.queries import ListQuery
from tests.in_process import run_main
from tests.integration.conftest import Run, cli_env

KEYS = {"user", "episodic", "semantic", "procedural", "sessions", "messages", "replaced"}


@pytest.fixture
def cli(redis_url: str, namespace: str, tmp_path: Path, coordinator: MemoryCoordinator) -> Run:
    from memory.cli import main

    env = cli_env(redis_url, namespace)

    def run(*args: str, ok: bool = True) -> subprocess.CompletedProcess:
        # cwd: away from the project's .env
        proc = run_main(main, ["demo", *args], env=env, cwd=tmp_path, prog="memory")
        if ok:
            assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
        return proc

    return run


def expected_counts(today: date | None = None) -> dict[str, int]:
    persona = build_persona(today or date.today())
    convs = persona.conversations
    return {
        # logged exchanges + a summary per session + what she stated
        "episodic": sum(len(c.exchanges) + 1 + len(c.memories) for c in convs),
        "semantic": sum(len(c.facts) for c in convs),
        "procedural": len(PROCEDURES),
        "sessions": sum(c.keeps_messages for c in convs),
        "messages": sum(2 * len(c.exchanges) for c in convs if c.keeps_messages),
    }


def add_own(coord: MemoryCoordinator, user: str) -> dict[str, str]:
    """One memory of each type that the user made themselves (not the demo's)."""
    mem = coord.add_episodic(user, "My bike is a red Canyon gravel bike", event_type="fact")
    fact = coord.add_semantic("Gravel tyres run at lower pressure", added_by=user)
    coord.record_procedure(user, "Where did I cycle?", ["search_workouts"],
                           success_score=1.0, execution_time_ms=100)  # fmt: skip
    coord.add_message(user, "s-20261101-0900-ab12", "user", "Hello from my own chat")
    return {"episodic": mem.id, "semantic": fact.id}


def test_load_json_then_load_again_is_idempotent(cli: Run, coordinator: MemoryCoordinator):
    first = json.loads(cli("load", "--json").stdout)
    assert set(first) == KEYS
    assert first == {"user": DEMO_USER, "replaced": False, **expected_counts()}
    again = json.loads(cli("load", "--json").stdout)
    assert again == first  # the demo alone is loaded afresh, not twice
    contents = demo_contents(coordinator, DEMO_USER)
    assert not contents.has_own
    assert contents.demo == {
        k: first[k] for k in ("episodic", "semantic", "procedural", "sessions")
    }
    # human output: what was written on stdout, the steps on stderr
    human = cli("load")
    assert f"loaded the demo persona into {DEMO_USER}" in human.stdout
    assert "Plan my running this week" in human.stdout
    assert "loading it afresh" in human.stderr


def test_load_is_refused_over_own_memories_unless_replace(cli: Run, coordinator: MemoryCoordinator):
    own = add_own(coordinator, DEMO_USER)
    refused = cli("load", ok=False)
    assert refused.returncode == 2
    assert "memories of their own" in refused.stderr and "--replace" in refused.stderr
    assert demo_contents(coordinator, DEMO_USER).demo == dict.fromkeys(
        ("episodic", "semantic", "procedural", "sessions"), 0
    )  # nothing was written
    as_json = cli("load", "--json", ok=False)
    assert as_json.returncode == 2
    assert json.loads(as_json.stdout)["type"] == "OwnMemoriesError"

    replaced = json.loads(cli("load", "--replace", "--json").stdout)
    assert replaced == {"user": DEMO_USER, "replaced": True, **expected_counts()}
    with pytest.raises(NotFoundError):
        coordinator.get_memory(DEMO_USER, "episodic", own["episodic"])
    assert not demo_contents(coordinator, DEMO_USER).has_own


def test_reset_removes_the_demo_and_all_a_presentation_made(
    cli: Run, coordinator: MemoryCoordinator, snapshot: Callable[[], dict[bytes, bytes]]
):
    before_load = snapshot()
    load_demo(coordinator, DEMO_USER)
    # a presentation: a chat of its own with an answer that used a demo memory (usage, a
    # title, the logged exchange), and what it stored: a memory, a fact, a procedure
    chat = "s-20261101-0900-ab12"
    made = add_own(coordinator, DEMO_USER)
    rows, _ = coordinator.list_memories(DEMO_USER, "episodic", ListQuery(tags=[DEMO_TAG]))
    used = rows[0]["id"]
    answer = f"You told me: {rows[0]['text']}"
    coordinator.store_interaction(
        DEMO_USER, chat, "What is my goal for the race?", answer, turn_id="T1", used=[used]
    )
    coordinator.set_session_title(DEMO_USER, chat, "Race day")
    assert coordinator.usage.of(DEMO_USER)[used].answers == 1

    removed = json.loads(cli("reset", "--json").stdout)
    counts = expected_counts()
    assert removed["user"] == DEMO_USER
    assert removed["episodic"] == counts["episodic"] + 2  # the stored memory, the exchange
    assert (removed["semantic"], removed["procedural"]) == (
        counts["semantic"] + 1,
        counts["procedural"] + 1,
    )
    assert removed["sessions"] == counts["sessions"] + 1
    assert DEMO_USER not in coordinator.list_users()
    with pytest.raises(NotFoundError):
        coordinator.get_memory(DEMO_USER, "episodic", made["episodic"])
    assert snapshot() == before_load  # every key: chats, messages, usage, facts, procedures

    # the next load finds nothing of anyone's own: no Replace needed
    again = json.loads(cli("load", "--json").stdout)
    assert again == {"user": DEMO_USER, "replaced": False, **expected_counts()}


def test_loading_over_own_memories_in_process_raises(coordinator: MemoryCoordinator):
    add_own(coordinator, "demo-bo")
    with pytest.raises(OwnMemoriesError) as err:
        load_demo(coordinator, "demo-bo")
    assert err.value.contents.own["episodic"] == 1
    assert "1 episodic memory" in str(err.value)
    assert reset_demo(coordinator, "demo-bo").episodic == 0  # nothing of the demo to remove
    assert demo_contents(coordinator, "demo-bo").own["episodic"] == 1  # their own memory stays


def _hits(coord: MemoryCoordinator, query: str) -> list[dict[str, Any]]:
    ctx = coord.retrieve_all_context(DEMO_USER, "s-new-chat", query)
    return [{"kind": h.record.get("event_type"), "text": h.text} for h in ctx.episodic]


@pytest.mark.parametrize("days_ago", [0, 3, 6])
def test_recall_finds_the_injury_and_the_race_goal(coordinator: MemoryCoordinator, days_ago: int):
    """Loaded today, or a few days ago (any weekday): a new chat's recall for planning her
    running brings back the sprained ankle and the current race goal."""
    load_demo(coordinator, today=date.today() - timedelta(days=days_ago))
    coordinator.bookkeeping.drain()  # the statement classifier's fit, as in a running app
    hits = _hits(coordinator, "plan my running this week")
    assert any(h["kind"] == "health_event" and "ankle" in h["text"] for h in hits), hits
    assert any(h["kind"] == "goal" and "Half Marathon" in h["text"] for h in hits), hits
    goal = _hits(coordinator, "What is my goal for the race?")
    assert any(h["kind"] == "goal" and "2 hours 10 minutes" in h["text"] for h in goal), goal
    assert not any("under 2 hours" in h["text"] and h["kind"] == "goal" for h in goal)
    diet = _hits(coordinator, "What should I eat the night before my long run?")
    assert any("vegetarian" in h["text"].lower() for h in diet), diet
    proc = coordinator.retrieve_all_context(DEMO_USER, "s-x", "Plan my running this week")
    assert proc.procedural is not None and proc.procedural.recommended
    assert proc.procedural.tool_sequence == ["search_workouts", "compare_periods"]


def test_what_the_assistant_suggested_after_the_sprain_reaches_the_block(
    coordinator: MemoryCoordinator,
):
    """The demo's sixth question is answered by an earlier reply, shown with its message."""
    load_demo(coordinator)
    coordinator.bookkeeping.drain()
    ctx = coordinator.retrieve_all_context(DEMO_USER, "s-new-chat", DEMO_QUESTIONS[5])
    lines = render_memory_block(ctx, budget_tokens=1500).text.splitlines()
    line = next(x for x in lines if "How can I keep my fitness while I can't run?" in x)
    assert ', you answered "Once walking is pain-free: swimming' in line


def test_the_changed_goal_keeps_its_history(coordinator: MemoryCoordinator):
    load_demo(coordinator)
    goals, _ = coordinator.list_memories(DEMO_USER, "episodic", ListQuery(event_types=["goal"]))
    old = next(g for g in goals if "under 2 hours" in g["text"])
    new = next(g for g in goals if "2 hours 10 minutes" in g["text"])
    assert old["superseded_by"] == new["id"] and not new.get("superseded_by")
    assert old["timestamp"] < new["timestamp"]
    assert DEMO_TAG in old["tags"] and DEMO_TAG in new["tags"]


def test_dated_sessions_summaries_and_maintenance(coordinator: MemoryCoordinator):
    today = date.today()
    load_demo(coordinator, today=today)
    sessions = coordinator.short_term.sessions(DEMO_USER)
    assert len(sessions) == 3 and all(s.endswith("-demo") for s in sessions)
    for s in sessions:
        msgs = coordinator.recent_messages(DEMO_USER, s)
        assert [m.role for m in msgs[:2]] == ["user", "assistant"]
        day = datetime.fromtimestamp(msgs[0].timestamp / 1000).date()
        assert s.startswith(f"s-{day:%Y%m%d}") and day < today
    summaries, n = coordinator.list_memories(
        DEMO_USER, "episodic", ListQuery(event_types=["summary"])
    )
    assert n == len(build_persona(today).conversations)
    for sm in summaries:
        assert {"summary", DEMO_TAG} <= set(sm["tags"])
        meta = sm["metadata"] if isinstance(sm["metadata"], dict) else json.loads(sm["metadata"])
        assert meta["session_id"] == sm["session_id"] and meta["message_ids"]
        assert sm["context"].startswith("Summary of ")
    # the sprain is dated on the day the wellness data's runs stop
    injuries, _ = coordinator.list_memories(
        DEMO_USER, "episodic", ListQuery(event_types=["health_event"])
    )
    sprain = next(i for i in injuries if i["text"].startswith("Sprained"))
    assert datetime.fromtimestamp(sprain["timestamp"] / 1000).date() == on(today, *SPRAIN)
    # maintenance has nothing to do: every session is summarised, nothing expires or merges
    report = Maintenance.of(coordinator).run(user_id=DEMO_USER, dry_run=True)
    assert report.summaries_waiting == 0
    assert all(v == 0 for v in report.totals().values()), report.totals()


def test_her_facts_and_procedures_and_their_sequences_carry_her_dates_not_the_load_day(
    coordinator: MemoryCoordinator,
):
    load_demo(coordinator, DEMO_USER)
    today = int(datetime.combine(date.today(), datetime.min.time()).timestamp() * 1000)
    facts, _ = coordinator.list_memories(DEMO_USER, "semantic", ListQuery(added_by=DEMO_USER))
    procedures, _ = coordinator.list_memories(DEMO_USER, "procedural")
    assert facts and procedures
    assert all(int(f["timestamp"]) < today for f in facts)
    assert all(int(p["last_used"]) < today for p in procedures)
    assert all(int(p["created_at"]) <= int(p["last_used"]) for p in procedures)
    # each tool sequence's "Last used" (the Memories page's column) too, the last tried last
    for p in procedures:
        used = [int(s["last_used"]) for s in p["sequences"].values()]
        assert used and all(int(p["created_at"]) < u < today for u in used), p["query_pattern"]
        assert used == sorted(used) and used[-1] == int(p["last_used"])
