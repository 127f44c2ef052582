"""The user profile (standing memories in every prompt) and pause, on the real store: what the
profile holds follows every write path, it reaches the prompt on a small window where recall
alone would not bring the fact, and a paused memory is listed, exported and counted but never
recalled nor in the profile."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from mcp import Client, StdioServerParameters

from agent.loop import ChatAgent
from agent.private import incognito_turn, reanswer
from memory.block import PROFILE_TITLE, PROFILE_TOKENS, read_block
from memory.config import PROJECT_ROOT, Settings
from memory.coordinator import MemoryCoordinator
from memory.maintenance import Maintenance
from memory.queries import ListQuery
from memory.tokens import estimate_tokens
from memory.user_profile import PROFILE_READ, profile_commands, profile_lines_of
from memory.writing.policy import WritePolicy, candidate_for
from tests.fakes.fake_ollama import FakeOllama
from tests.integration.conftest import Run

DAY_MS = 86_400_000
LIKES = [
    "cooking with friends on Fridays",
    "spicy food",
    "trying new recipes at dinner",
    "eating late in the evening",
    "Italian cooking",
    "a big breakfast before long runs",
    "baking bread at the weekend",
    "cheap and quick meals",
    "cooking dinner with my family",
    "easy recipes after work",
    "cooking in a wok",
    "Sunday dinners at home",
]
DISHES = ["pasta", "rice", "soup", "a stir fry", "risotto", "pancakes", "a curry", "tacos"]
LONG = (
    "Here is what happened this week in some detail, because I like to keep a record: I ran "
    "on Monday and Wednesday, slept badly on Thursday, and walked a lot at the weekend. "
) * 3


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=["small4k:3b"]) as f:
        yield f


@pytest.fixture
def agent(
    agent_factory: Callable[..., ChatAgent],
    coordinator: MemoryCoordinator,
    settings: Settings,
    fake: FakeOllama,
) -> ChatAgent:
    return agent_factory(
        coordinator, fake.url, settings=settings, ollama_model="small4k:3b", llm_extraction="off"
    )


def profile_section(system_prompt: str) -> list[str]:
    """The texts of the profile section's lines in a prompt's memory block."""
    lines, inside = [], False
    for line in read_block(system_prompt):
        if line.kind == "title":
            inside = line.text == PROFILE_TITLE[:-1]
        elif line.kind == "memory" and inside:
            lines.append(line.text)
    return lines


def searched_lines(system_prompt: str) -> list[str]:
    lines, inside = [], False
    for line in read_block(system_prompt):
        if line.kind == "title":
            inside = line.text != PROFILE_TITLE[:-1]
        elif line.kind == "memory" and inside:
            lines.append(line.text)
    return lines


def add(
    coord: MemoryCoordinator, text: str, kind: str, days_ago: int = 0, importance: float = 0.7
) -> str:
    ts = int(time.time() * 1000) - days_ago * DAY_MS
    return coord.add_episodic(
        "ana", text, event_type=kind, importance=importance, timestamp_ms=ts
    ).id


def test_a_standing_fact_recall_does_not_match_is_in_the_profile_on_a_4096_window(
    agent: ChatAgent, coordinator: MemoryCoordinator, fake: FakeOllama
) -> None:
    veg = add(coordinator, "I'm vegetarian", "preference", days_ago=30, importance=0.9)
    add(coordinator, "I want to run a half marathon in April", "goal", days_ago=20)
    # Since then, evenings of cooking talk: what recall finds for a cooking question.
    for i, dish in enumerate(DISHES):
        add(coordinator, f"Tonight I cooked {dish} for dinner", "interaction", days_ago=10 - i)
    for i, thing in enumerate(LIKES):  # and what else they told about themselves
        add(coordinator, f"I like {thing}", "preference", days_ago=9 - i % 9, importance=0.5)
    for i in range(10):  # a long chat first: the history competes for the small window
        fake.queue_reply(f"Noted, turn {i}. " + LONG)
        agent.chat("ana", "s1", f"Turn {i}: {LONG}")
    question = "What should I cook tonight?"
    recalled = coordinator.retrieve_all_context("ana", "s1", question)
    assert veg not in {h.id for h in recalled.episodic}  # recall alone would not bring it
    fake.queue_reply("A lentil curry.")
    result = agent.chat("ana", "s1", question)
    last = fake.chat_requests()[-1]
    assert last.num_ctx == 4096 and not last.runner_cut
    assert "I'm vegetarian" in profile_section(last.seen_system_prompt)
    assert "I'm vegetarian" not in searched_lines(last.seen_system_prompt)  # not twice
    split = result.window.split
    assert split is not None and 0 < split.profile <= PROFILE_TOKENS
    assert split.history_dropped > 0  # the history gave way, not the profile


def test_the_profile_follows_adds_replacements_pauses_and_deletes(
    coordinator: MemoryCoordinator,
) -> None:
    def texts() -> list[str]:
        return [p.text for p in coordinator.user_profile("ana")]

    old = add(coordinator, "My goal is 80 kg", "goal", importance=0.9)
    knee = add(coordinator, "My left knee hurts on stairs", "health_event", importance=0.8)
    add(coordinator, "You asked about the weather", "interaction", importance=0.9)
    assert texts() == ["My goal is 80 kg", "My left knee hurts on stairs"]  # by importance
    new = coordinator.add_episodic(
        "ana", "My goal is 75 kg", event_type="goal", importance=0.9, supersedes=old
    ).id
    assert texts() == ["My goal is 75 kg", "My left knee hurts on stairs"]
    coordinator.update_memory("ana", "episodic", knee, paused=True)
    assert texts() == ["My goal is 75 kg"]
    coordinator.update_memory("ana", "episodic", knee, paused=False)
    assert "My left knee hurts on stairs" in texts()
    coordinator.update_memory("ana", "episodic", new, text="My goal is 74 kg")
    assert texts()[0] == "My goal is 74 kg"
    coordinator.delete_memory("ana", "episodic", knee)
    assert texts() == ["My goal is 74 kg"]
    assert coordinator.user_profile("bob") == []  # another user's profile is their own


def test_the_profile_line_is_capped_and_searched_memories_do_not_repeat_it() -> None:
    from memory.block import profile_lines, render_memory_block
    from memory.models import EventType, MemoryContext, ProfileLine, RecallHit, ScoreParts

    profile = [
        ProfileLine(id=f"p{i}", kind=EventType.PREFERENCE, text=f"I like food number {i} a lot")
        for i in range(30)
    ]
    kept = profile_lines(profile)
    assert 0 < len(kept) < 30
    assert (
        estimate_tokens("\n".join([PROFILE_TITLE, *(t for _, t in kept)]) + "\n") <= PROFILE_TOKENS
    )
    hit = RecallHit(
        id="p0",
        memory_type="episodic",
        text=profile[0].text,
        score=0.9,
        band="high",
        parts=ScoreParts(),
    )
    ctx = MemoryContext(user_id="u", session_id="s", query="q", episodic=[hit], profile=profile)
    block = render_memory_block(ctx, budget_tokens=2000)
    assert block.text.count(profile[0].text) == 1 and block.profile_tokens > 0


def test_incognito_has_no_profile_and_answer_without_drops_its_lines(
    agent: ChatAgent, coordinator: MemoryCoordinator, fake: FakeOllama
) -> None:
    veg = add(coordinator, "I'm vegetarian", "preference")
    add(coordinator, "I want to run a half marathon in April", "goal")
    fake.queue_reply("Pasta.")
    done = agent.chat("ana", "s1", "What should I cook tonight?")
    assert "I'm vegetarian" in profile_section(fake.chat_requests()[-1].seen_system_prompt)
    fake.queue_reply("A bean chili.")
    list(reanswer(agent, "ana", "s1", done.turn_id, [veg]))
    again = profile_section(fake.chat_requests()[-1].seen_system_prompt)
    assert "I'm vegetarian" not in again and "I want to run a half marathon in April" in again
    fake.queue_reply("Anything you like.")
    list(incognito_turn(agent, "ana", "s2", "What should I cook tonight?"))
    assert PROFILE_TITLE not in fake.chat_requests()[-1].seen_system_prompt


# ---- pause ---------------------------------------------------------------------------------


def test_a_paused_memory_is_listed_counted_apart_never_recalled_and_exported_with_its_state(
    coordinator: MemoryCoordinator, tmp_path: Path
) -> None:
    mid = add(coordinator, "I'm allergic to peanuts", "health_event")
    coordinator.update_memory("ana", "episodic", mid, paused=True)
    rows, total = coordinator.list_memories("ana", "episodic", ListQuery())
    assert total == 1 and rows[0]["paused"] is True
    assert coordinator.get_memory_stats("ana")["episodic"]["paused"] == 1
    assert coordinator.search("ana", "peanut allergy", "episodic") == []
    ctx = coordinator.retrieve_all_context("ana", "s", "Am I allergic to peanuts?")
    assert mid not in {h.id for h in ctx.episodic} and coordinator.user_profile("ana") == []
    exported = coordinator.export_user("ana")
    assert exported["episodic"][0]["paused"] is True
    coordinator.import_user(exported, user_id="cy")
    (row,), _ = coordinator.list_memories("cy", "episodic", ListQuery())
    assert row["paused"] is True and coordinator.search("cy", "peanut allergy", "episodic") == []
    coordinator.update_memory("ana", "episodic", mid, paused=False)
    assert [h.id for h in coordinator.search("ana", "peanut allergy", "episodic")] == [mid]
    assert coordinator.get_memory_stats("ana")["episodic"]["paused"] == 0


def test_a_memory_stored_before_pausing_existed_is_active(coordinator: MemoryCoordinator) -> None:
    mid = add(coordinator, "I'm allergic to peanuts", "health_event")
    key = coordinator.keys.episodic("ana", mid)
    coordinator.redis.hdel(key, "paused")
    assert coordinator.get_memory("ana", "episodic", mid)["paused"] is False
    assert [h.id for h in coordinator.search("ana", "peanut allergy", "episodic")] == [mid]
    assert [p.id for p in coordinator.user_profile("ana")] == [mid]


def test_the_cli_pauses_lists_and_resumes(cli: Run, coordinator: MemoryCoordinator) -> None:
    mid = add(coordinator, "I'm allergic to peanuts", "health_event")
    assert "paused episodic" in cli("pause", "--user", "ana", "--id", mid).stdout
    assert "(paused) I'm allergic to peanuts" in cli("list", "--user", "ana").stdout
    stats = json.loads(cli("stats", "--user", "ana", "--json").stdout)
    assert stats["episodic"]["paused"] == 1
    out = json.loads(cli("resume", "--user", "ana", "--id", mid, "--json").stdout)
    assert out == {"id": mid, "paused": False}
    assert coordinator.get_memory("ana", "episodic", mid)["paused"] is False
    missing = cli("pause", "--user", "ana", "--id", "01NOSUCHMEMORY", ok=False)
    assert missing.returncode == 1 and "No episodic memory" in missing.stderr


def test_the_mcp_forget_tool_pauses_and_resumes(
    settings: Settings, closed_ollama_url: str, coordinator: MemoryCoordinator
) -> None:
    env = {
        "REDIS_URL": str(settings.redis_url),
        "MEMORY_NAMESPACE": settings.memory_namespace,
        "OLLAMA_HOST": closed_ollama_url,
    }
    mid = add(coordinator, "My knee hurts after long runs", "health_event")

    async def scenario() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "agent", "mcp", "--user", "ana"],
            env=env,
            cwd=PROJECT_ROOT,
        )
        async with Client(params) as client:
            res = await client.call_tool("forget_memory", {"memory_id": mid, "action": "pause"})
            assert not res.is_error, res.content
            assert json.loads(res.content[0].text) == {
                "memory_type": "episodic",
                "id": mid,
                "paused": True,
            }
            hits = await client.call_tool(
                "recall_information", {"query": "knee pain", "memory_type": "episodic"}
            )
            assert json.loads(hits.content[0].text)["count"] == 0
            res = await client.call_tool("forget_memory", {"memory_id": mid, "action": "resume"})
            assert json.loads(res.content[0].text)["paused"] is False

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, scenario()).result()
    assert coordinator.get_memory("ana", "episodic", mid)["paused"] is False


def test_undoing_a_replacement_brings_a_paused_memory_back_paused(
    coordinator: MemoryCoordinator,
) -> None:
    old = add(coordinator, "My goal is 80 kg", "goal")
    coordinator.update_memory("ana", "episodic", old, paused=True)
    new = coordinator.add_episodic("ana", "My goal is 75 kg", event_type="goal", supersedes=old)
    coordinator.history.undo_write("ana", new.id, old)
    rec = coordinator.get_memory("ana", "episodic", old)
    assert (rec["paused"], rec["superseded_by"]) == (True, None)  # as the user left it
    assert coordinator.search("ana", "which goal weight", "episodic") == []
    assert coordinator.user_profile("ana") == []


def test_undoing_a_merge_brings_a_paused_member_back_paused(
    coordinator: MemoryCoordinator,
) -> None:
    rex = add(coordinator, "My dog is called Rex", "fact", importance=0.4)
    add(coordinator, "My dog's name is Rex", "fact", importance=0.9)
    maintenance = Maintenance.of(coordinator)
    maintenance.run(user_id="ana")
    (merge,) = maintenance.merges("ana")
    assert merge["member_ids"] == [rex]
    coordinator.update_memory(
        "ana", "episodic", rex, paused=True
    )  # paused while merged away (listed as history)
    maintenance.undo_merge("ana", merge["id"])
    rec = coordinator.get_memory("ana", "episodic", rex)
    assert (rec["paused"], rec["superseded_by"]) == (True, None)
    assert rex not in {h.id for h in coordinator.search("ana", "my dog Rex", "episodic")}


def test_restating_a_paused_memory_stores_no_second_copy_and_keeps_it_paused(
    coordinator: MemoryCoordinator,
) -> None:
    writer = WritePolicy(coordinator)
    veg = add(coordinator, "I'm vegetarian", "preference")
    coordinator.update_memory("ana", "episodic", veg, paused=True)
    for text in ("I'm vegetarian", "i'm vegetarian."):
        res = writer.write("ana", "s1", candidate_for(text, "preference", how="user"))
        assert (res.stored, res.duplicate_of) == (None, veg)
        assert "paused" in res.reason  # the writer can say where it is
        # ...and the chat and the editors too, so it is not taken for a recalled memory
        assert res.already_remembered() == (
            "Already remembered (paused: resume it to have it recalled)"
        )
    coordinator.update_memory("ana", "episodic", veg, paused=False)
    res = writer.write("ana", "s1", candidate_for("I'm vegetarian", "preference", how="user"))
    assert (res.duplicate_of, res.already_remembered()) == (veg, "Already remembered")
    coordinator.update_memory("ana", "episodic", veg, paused=True)
    rows, total = coordinator.list_memories("ana", "episodic", ListQuery())
    assert total == 1 and rows[0]["paused"] is True
    assert coordinator.user_profile("ana") == []


def test_among_memories_of_equal_importance_the_profile_holds_the_newest(
    coordinator: MemoryCoordinator, redis_url: str
) -> None:
    # More standing memories of one importance than the profile reads: the newest must win
    # the room, stored in any order (the index's own order is the order they were written).
    ages = [(i * 7) % 20 for i in range(20)]  # 0..19 days old, written out of date order
    ids = {
        age: add(coordinator, f"I like dish number {age}", "preference", days_ago=age)
        for age in ages
    }
    lines = coordinator.user_profile("ana")
    newest = [ids[age] for age in sorted(ages)][:PROFILE_READ]
    assert [line.id for line in lines] == newest
    # the same lines through a RESP3 connection (REDIS_URL=...?protocol=3)
    client = redis.Redis.from_url(redis_url, protocol=3)
    try:
        commands = profile_commands(coordinator.episodic, "ana")
        replies = [client.execute_command(*c) for c in commands]
    finally:
        client.close()
    assert all(isinstance(r, dict) for r in replies) and profile_lines_of(replies) == lines


ALLERGY = "I'm allergic to peanuts and tree nuts"
HEALTH = [ALLERGY, "I am lactose intolerant", "I take metformin every morning"]
EARLIER = ["What can I cook for dinner tomorrow?", "Any quick recipe for a weeknight dinner?"]


def test_health_facts_and_pinned_memories_are_in_the_profile_sent_and_shown(
    agent: ChatAgent, coordinator: MemoryCoordinator, fake: FakeOllama
) -> None:
    from memory.block import fit_profile

    for i, thing in enumerate(LIKES):  # more important standing memories than the room holds
        add(coordinator, f"I like {thing}", "preference", days_ago=i, importance=0.9)
    add(coordinator, ALLERGY, "health_event", days_ago=30, importance=0.5)
    for text in HEALTH[1:]:  # plain facts by their kind: their words make them health facts
        add(coordinator, text, "fact", days_ago=30, importance=0.5)
    race = add(coordinator, "Ran the Lyon 10k in 52 minutes", "milestone", days_ago=40)
    # not a standing kind: pinned, so in
    coordinator.update_memory("ana", "episodic", race, pinned=True)

    lines = coordinator.user_profile("ana")
    fit = fit_profile(lines)
    sent = [line.text for line, _ in fit.sent]
    assert sent[0] == "Ran the Lyon 10k in 52 minutes"  # pinned first
    assert set(HEALTH) <= set(sent)
    assert fit.left_out and not {p.text for p in fit.left_out} & {*HEALTH, sent[0]}

    for question in EARLIER:  # this chat's own questions, in the history of the next turn
        fake.queue_reply("A lentil curry.")
        agent.chat("ana", "s1", question)
    fake.queue_reply("A rice bowl without nuts.")
    agent.chat("ana", "s1", "Give me a recipe for tonight's dinner")
    prompt = fake.chat_requests()[-1].seen_system_prompt
    assert profile_section(prompt) == sent  # the profile shown is the one sent, in its order
    assert not set(EARLIER) & set(searched_lines(prompt))  # the history carries them already
