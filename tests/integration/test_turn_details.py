"""An answer's execution details are kept beside it in Redis: read back as a
`TurnResult` by another process's agent (a reload, a restart), without a thinking model's
thoughts, compact, with the background extraction's outcome once it finishes, and gone with
the session when it is cleared or the user purged."""

from __future__ import annotations

import json

import redis

from agent.config import AgentSettings
from agent.loop import ChatAgent
from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.keys import Keys
from memory.models import EventType
from tests.fakes.fake_ollama import FakeOllama


def make_agent(
    coordinator: MemoryCoordinator, settings: Settings, url: str, model: str = "qwen2.5:7b"
) -> ChatAgent:
    return ChatAgent(
        settings.model_copy(update={"ollama_host": url}),
        coordinator,
        agent_settings=AgentSettings(_env_file=None, ollama_model=model),  # type: ignore[call-arg]
    )


def test_details_are_kept_with_the_answer_and_read_back_by_a_new_agent(
    coordinator: MemoryCoordinator,
    settings: Settings,
    redis_client: redis.Redis,
    embedder: object,
) -> None:
    coordinator.add_episodic(
        "ana", "I am training for a half marathon in April", event_type=EventType.GOAL
    )
    with FakeOllama() as fake:
        fake.queue_tool_calls([("aggregate_metrics", {"metric": "sleep_hours", "days": 7})])
        fake.queue_reply("Train three times a week.")
        agent = make_agent(coordinator, settings, fake.url)
        try:
            result = agent.chat("ana", "s1", "How should I train for my half marathon?")
            assert agent.wait_for_background(timeout=60)
        finally:
            agent.close()
        # "After a restart": a new agent (and coordinator) reads what the first one kept.
        again = MemoryCoordinator(redis_client, embedder, settings)  # type: ignore[arg-type]
        other = make_agent(again, settings, fake.url)
        try:
            kept = other.turn_details("ana", "s1")
        finally:
            other.close()
            again.close()
    answer = coordinator.recent_messages("ana", "s1")[-1]
    assert answer.role == "assistant" and answer.metadata["turn_id"] == result.turn_id
    d = kept[result.turn_id]
    assert d.reply == result.reply and d.mode == "llm"
    assert [h.text for h in d.recalled.episodic] == [h.text for h in result.recalled.episodic]
    assert d.memory_block == result.memory_block
    assert [t.name for t in d.tools] == ["aggregate_metrics"] and d.tools[0].result
    assert d.timings_ms == result.timings_ms
    # Compact: the hits keep only the record fields shown, the recent messages no text.
    hit = d.recalled.episodic[0]
    assert set(hit.record) <= {"event_type", "category", "timestamp", "tags", "pinned", "added_by"}
    assert hit.record["event_type"] == "goal"
    assert all(m.content == "" for m in d.recalled.short_term)
    # Same lifetime as the session's messages.
    keys = Keys(settings.memory_namespace)
    ttl = redis_client.ttl(keys.details("ana", "s1"))
    assert 0 < ttl <= coordinator.short_term.ttl_s
    assert coordinator.short_term.ttl("ana", "s1") > 0


def test_a_thinking_models_thoughts_are_never_kept_with_the_details(
    coordinator: MemoryCoordinator, settings: Settings, redis_client: redis.Redis
) -> None:
    with FakeOllama(models=["qwen3:4b"]) as fake:
        fake.queue_reply("Run easy on Sunday.", thinking="THOUGHT-MARKER private reasoning")
        agent = make_agent(coordinator, settings, fake.url, model="qwen3:4b")
        try:
            result = agent.chat("ana", "s1", "When should I do my long run?")
            assert agent.wait_for_background(timeout=60)
            kept = agent.turn_details("ana", "s1")
        finally:
            agent.close()
    assert "THOUGHT-MARKER" in result.thinking
    assert kept[result.turn_id].thinking == ""
    raw = redis_client.hgetall(Keys(settings.memory_namespace).details("ana", "s1"))
    assert raw and not any(b"THOUGHT-MARKER" in v for v in raw.values())
    assert all("thinking" not in json.loads(v) for v in raw.values())


def test_the_background_extraction_outcome_is_kept_beside_the_details(
    coordinator: MemoryCoordinator, settings: Settings
) -> None:
    with FakeOllama() as fake:
        fake.queue_structured(
            {
                "memories": [
                    {
                        "text": "I am training for the Lisbon half marathon in March",
                        "event_type": "goal",
                        "slot": "none",
                    }
                ]
            }
        )
        agent = make_agent(coordinator, settings, fake.url)
        try:
            result = agent.chat("ana", "s1", "I'm training for the Lisbon half marathon in March")
            assert result.extraction == "pending"
            assert agent.wait_for_background(timeout=60)
            kept = agent.turn_details("ana", "s1")[result.turn_id]
        finally:
            agent.close()
    assert kept.extraction.startswith("done")
    assert "I am training for the Lisbon half marathon in March" in [m.text for m in kept.stored]


def test_clearing_the_session_or_purging_the_user_removes_the_details(
    coordinator: MemoryCoordinator, settings: Settings, redis_client: redis.Redis
) -> None:
    keys = Keys(settings.memory_namespace)
    with FakeOllama() as fake:
        agent = make_agent(coordinator, settings, fake.url)
        try:
            agent.chat("ana", "s1", "Hello there")
            agent.chat("ana", "s2", "Hello again")
            assert agent.wait_for_background(timeout=60)
            assert agent.turn_details("ana", "s1") and agent.turn_details("ana", "s2")
            coordinator.clear_session_memories("ana", "s1")
            assert agent.turn_details("ana", "s1") == {}
            assert not redis_client.exists(keys.details("ana", "s1"))
            coordinator.clear_user_memories("ana")
            assert agent.turn_details("ana", "s2") == {}
            assert not redis_client.exists(keys.details("ana", "s2"))
        finally:
            agent.close()


def test_details_of_turns_trimmed_from_the_session_are_dropped(
    coordinator: MemoryCoordinator,
) -> None:
    store = coordinator.short_term
    store.max_messages = 4  # two exchanges
    for i in range(6):
        turn = f"t{i}"
        coordinator.store_interaction(
            "ana", "s1", f"Question {i}", f"Answer {i}", store_episode=False, turn_id=turn
        )
        coordinator.save_turn_details("ana", "s1", turn, {"n": i})
        coordinator.save_turn_details("ana", "s1", turn, {"status": "done"}, part="extraction")
    kept = coordinator.turn_details("ana", "s1")
    assert len(kept) <= 4 and {"t4", "t5"} <= set(kept)
    assert kept["t5"] == {"": {"n": 5}, "extraction": {"status": "done"}}


def test_a_stopped_answer_keeps_its_details_as_far_as_the_turn_got(
    coordinator: MemoryCoordinator, settings: Settings
) -> None:
    from ui.stopping import StreamGuard

    coordinator.add_episodic(
        "ana", "I am training for a half marathon in April", event_type=EventType.GOAL
    )
    with FakeOllama() as fake:
        fake.queue_slow_reply("Here is your plan: " + " ".join(f"w{i}" for i in range(300)), 0.05)
        agent = make_agent(coordinator, settings, fake.url)
        question = "Plan my half marathon training"
        guard = StreamGuard(coordinator, "ana", "s1", question, model="qwen2.5:7b")
        events = guard.watch(agent.run_turn("ana", "s1", question))
        try:
            for ev in events:  # as the chat page does on ⏹ Stop: a few words in, close
                if ev.kind == "token" and len(guard.parts) >= 3:
                    break
            events.close()
            guard.keep_partial()
            kept = agent.turn_details("ana", "s1")
        finally:
            agent.close()
    assert guard.stopped
    question_msg, answer = coordinator.recent_messages("ana", "s1")[-2:]
    assert answer.metadata["stopped"] is True and answer.content.endswith("[stopped]")
    # both messages carry the turn id, as a finished turn's do
    assert question_msg.metadata["turn_id"] == answer.metadata["turn_id"]
    d = kept[answer.metadata["turn_id"]]
    assert d.stopped and d.reply == answer.content and d.extraction == "skipped (stopped)"
    # what was recalled, and the memory block the model was given, as in a finished turn
    assert [h.text for h in d.recalled.episodic] == ["I am training for a half marathon in April"]
    assert "I am training for a half marathon in April" in d.memory_block
    assert d.memory_block_tokens > 0 and d.model == "qwen2.5:7b"
