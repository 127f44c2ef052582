"""A slow reader's prompt (issue 47, point 4): when reading the whole prompt would take the reply's
time, the plan (agent.budget.fit_request) keeps the newest messages and the strongest memories
that the model reads in time, and never drops the profile's health lines or the message."""

from __future__ import annotations

from agent.budget import Fit, fit_request
from agent.prompt import render_memory_block, system_rules
from agent.speed import MIN_REPLY_TOKENS, Speed
from memory.block import profile_tokens
from memory.models import (
    ChatMessage,
    EventType,
    MemoryContext,
    MemoryType,
    ProfileLine,
    RecallHit,
    ScoreParts,
)

NONCE = "0a1b2c3d"
MESSAGE = "What should I cook for dinner tonight?"
HEALTH = "I'm allergic to peanuts"
#: Recalled memories, strongest first (their scores fall by 0.05 each).
MEMORIES = [f"Memory {i}: the user once mentioned {'something ' * 6}number {i}" for i in range(12)]
START_MS = 1_790_000_000_000


def _context() -> MemoryContext:
    hits = [
        RecallHit(
            id=f"s{i}",
            memory_type=MemoryType.SEMANTIC,
            text=text,
            score=0.9 - 0.05 * i,
            band="high",
            parts=ScoreParts(),
            record={},
        )
        for i, text in enumerate(MEMORIES)
    ]
    profile = [ProfileLine(id="p1", kind=EventType.FACT, text=HEALTH, importance=0.9)]
    return MemoryContext(user_id="u", session_id="s", query=MESSAGE, semantic=hits, profile=profile)


def _history() -> list[ChatMessage]:
    return [
        ChatMessage(
            id=f"h{i}",
            role="user" if i % 2 == 0 else "assistant",
            content=f"Message {i} of the conversation, {'with some words ' * 8}",
            timestamp=START_MS + 60_000 * i,
        )
        for i in range(10)
    ]


def _plan(read_tokens: int | None) -> Fit:
    ctx = _context()
    return fit_request(
        num_ctx=4096,
        reply_reserve=256,
        memory_cap=1500,
        system_messages=[system_rules()],
        tool_schemas=[],
        message=MESSAGE,
        exchange=[],
        history=_history(),
        render_block=lambda budget: render_memory_block(ctx, budget_tokens=budget, nonce=NONCE),
        profile_tokens=profile_tokens(ctx.profile),
        read_tokens=read_tokens,
    )


def _kept_memories(plan: Fit) -> list[str]:
    return [m for m in MEMORIES if m in plan.block.text]


def test_a_model_that_reads_the_whole_prompt_in_time_gets_all_of_it() -> None:
    full = _plan(None)
    assert len(full.window) == 10 and _kept_memories(full) == MEMORIES
    roomy = _plan(full.split.prompt + 1)
    assert roomy.split == full.split and roomy.split.read_cap is None


def test_a_slow_reader_loses_the_oldest_messages_first() -> None:
    full = _plan(None)
    read = full.split.prompt - full.split.history // 2
    plan = _plan(read)
    assert plan.split.prompt <= read and plan.split.read_cap == read
    # the newest messages stay, the oldest go; the memories all stay
    assert 0 < len(plan.window) < 10 and plan.window == _history()[-len(plan.window) :]
    assert plan.split.history_dropped == 10 - len(plan.window)
    assert _kept_memories(plan) == MEMORIES and HEALTH in plan.block.text


def test_then_the_weakest_memories() -> None:
    full = _plan(None)
    read = full.split.prompt - full.split.history - full.split.memories // 2
    plan = _plan(read)
    assert plan.split.prompt <= read and plan.split.read_cap == read
    assert plan.window == []
    kept = _kept_memories(plan)  # the strongest stay
    assert 0 < len(kept) < len(MEMORIES) and kept == MEMORIES[: len(kept)]
    assert plan.split.memories_omitted == len(MEMORIES) - len(kept)
    assert HEALTH in plan.block.text


def test_the_health_line_and_the_message_stay_however_slow_the_reader() -> None:
    plan = _plan(0)
    assert HEALTH in plan.block.text
    assert plan.window == [] and _kept_memories(plan) == []
    assert plan.split.message > 0 and plan.split.read_cap == 0
    assert plan.split.history_dropped == 10 and plan.split.memories_omitted == len(MEMORIES)
    assert plan.split.profile > 0


def test_the_prompt_room_leaves_a_short_reply_its_time() -> None:
    speed = Speed(write_s=1 / 15, read_s=1 / 30, overhead_s=0.5)
    room = speed.prompt_room(15.0)
    assert room == int((15.0 - 0.5 - MIN_REPLY_TOKENS / 15) * 30)
    # reading that much leaves the shortest reply its time, within the 15 s
    assert speed.reply_seconds(room, MIN_REPLY_TOKENS) <= 15.0
    assert speed.reply_seconds(room + 1, MIN_REPLY_TOKENS) > 15.0
    assert Speed(write_s=1 / 15).prompt_room(15.0) is None  # reading speed never measured
