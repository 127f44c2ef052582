"""Which answers used a memory (memory/stores/usage.py) on the real store and the fake Ollama:
a stored answer records the memories it was given (a memory-only reply: those it shows);
incognito turns and re-answers record nothing; deleting a memory, forgetting a topic and purging the
user take the records with them."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import redis

from agent.loop import ChatAgent
from agent.private import incognito_turn, reanswer
from agent.replies import answer_hits, in_prompt
from memory.admin.forget import TopicForget
from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.stores import usage
from tests.fakes.fake_ollama import FakeOllama

Factory = Callable[..., ChatAgent]
U = "usage-user"
DIET = "I follow a vegetarian diet"
LAWYER = "My lawyer is Ms Okafor"


def _drain(events: object) -> None:
    for _ in events:  # type: ignore[attr-defined]
        pass


def _usage_keys(client: redis.Redis, namespace: str) -> list[bytes]:
    return sorted(client.scan_iter(f"{namespace}:usage*"))


@pytest.fixture
def diet(coordinator: MemoryCoordinator) -> str:
    mem = coordinator.add_episodic(U, DIET, event_type="preference")
    coordinator.bookkeeping.drain()
    return mem.id


def test_a_stored_answer_records_the_memories_it_used(
    agent_factory: Factory,
    coordinator: MemoryCoordinator,
    settings: Settings,
    fake_ollama: FakeOllama,
    diet: str,
) -> None:
    agent = agent_factory(coordinator, fake_ollama.url, settings=settings)
    assert coordinator.usage.of(U) == {}  # never used yet

    first = agent.chat(U, "s1", "What should I eat for dinner given my diet?")
    assert diet in {h.id for h in first.recalled.episodic}
    used = coordinator.usage.of(U)[diet]
    assert used.answers == 1 and used.last_ms > 0
    second = agent.chat(U, "s2", "Any vegetarian lunch idea for my diet?")
    assert diet in {h.id for h in second.recalled.episodic}

    now = coordinator.usage.of(U)[diet]
    assert now.answers == 2 and now.last_ms >= used.last_ms
    answers = coordinator.usage.answers(U, diet)
    assert [(a.turn_id, a.session_id) for a in answers] == [
        (second.turn_id, "s2"),
        (first.turn_id, "s1"),
    ]
    # the question is found again from the chat the answer is in (the record holds no text)
    asked = [
        m.content
        for m in coordinator.recent_messages(U, "s2")
        if m.role == "user" and m.metadata.get("turn_id") == second.turn_id
    ]
    assert asked == ["Any vegetarian lunch idea for my diet?"]
    # the records are the user's own: another user sees none of them
    assert coordinator.usage.of("someone-else") == {}


def test_an_answer_records_only_the_memories_that_reached_the_model(
    agent_factory: Factory,
    coordinator: MemoryCoordinator,
    settings: Settings,
    fake_ollama: FakeOllama,
) -> None:
    """A small window leaves recalled memories out of the block: they were checked, not
    used, so "Used in" and Stats' tile do not count them (the details say the same)."""
    for i in range(12):  # long enough that ten recalled ones overflow a 4k window's share
        coordinator.add_episodic(
            U,
            f"Dinner note {i}: a vegetarian dinner of lentils, roasted squash, feta, herbs, "
            f"rice and a long list of spices number {i} that I cook on weeknights after "
            "training, with a yoghurt sauce, flatbread, pickled onions and a green salad; "
            "on Sundays the same dinner with grilled halloumi, couscous, chickpeas, mint, "
            "pomegranate seeds, toasted almonds, lemon zest, smoked paprika and cumin, and "
            "a slow bean stew with carrots, celery, leeks, tomatoes, bay leaves and thyme",
            event_type="preference",
        )
    coordinator.bookkeeping.drain()
    agent = agent_factory(coordinator, fake_ollama.url, settings=settings, num_ctx=2048)

    result = agent.chat(U, "s1", "What vegetarian dinner should I cook?")
    assert result.mode == "llm"
    recalled = [*result.recalled.episodic, *result.recalled.semantic]
    sent = {h.id for h in in_prompt(result.memory_block, recalled)}
    assert sent and len(sent) < len(recalled)  # the block left some out
    assert set(coordinator.usage.of(U)) == sent


def test_incognito_and_reanswer_record_nothing_and_memory_only_counts(
    agent_factory: Factory,
    coordinator: MemoryCoordinator,
    settings: Settings,
    fake_ollama: FakeOllama,
    closed_ollama_url: str,
    diet: str,
) -> None:
    agent = agent_factory(coordinator, fake_ollama.url, settings=settings)
    first = agent.chat(U, "s1", "What should I eat given my diet?")
    agent.wait_for_background(10)
    before = (coordinator.usage.of(U), coordinator.usage.answers(U, diet))
    assert before[0][diet].answers == 1

    _drain(incognito_turn(agent, U, "s1", "What should I eat given my diet?"))
    _drain(reanswer(agent, U, "s1", first.turn_id, [diet]))
    assert (coordinator.usage.of(U), coordinator.usage.answers(U, diet)) == before

    # a reply without the model shows the memory: it used it, as Stats counts answers
    offline = agent_factory(coordinator, closed_ollama_url, settings=settings)
    reply = offline.chat(U, "s1", "What should I eat given my diet?")
    assert reply.mode == "memory-only" and diet in {h.id for h in reply.recalled.episodic}
    assert coordinator.usage.of(U)[diet].answers == 2
    assert coordinator.usage.answers(U, diet)[0].turn_id == reply.turn_id
    shown = {h.id for h in answer_hits(reply.recalled, [])}  # what that reply listed
    for h in (*reply.recalled.episodic, *reply.recalled.semantic):
        used_by = {a.turn_id for a in coordinator.usage.answers(U, h.id)}
        assert (reply.turn_id in used_by) == (h.id in shown), h.text


def test_deleting_a_memory_takes_its_records_and_keeps_the_others(
    agent_factory: Factory,
    coordinator: MemoryCoordinator,
    settings: Settings,
    fake_ollama: FakeOllama,
    diet: str,
) -> None:
    goal = coordinator.add_episodic(U, "I eat a vegetarian meal before my runs", event_type="goal")
    coordinator.bookkeeping.drain()
    agent = agent_factory(coordinator, fake_ollama.url, settings=settings)
    turn = agent.chat(U, "s1", "What vegetarian meal should I eat?")
    assert {diet, goal.id} <= {h.id for h in turn.recalled.episodic}

    coordinator.delete_memory(U, "episodic", diet)

    assert diet not in coordinator.usage.of(U)
    assert coordinator.usage.answers(U, diet) == []
    assert coordinator.usage.of(U)[goal.id].answers == 1
    assert [a.turn_id for a in coordinator.usage.answers(U, goal.id)] == [turn.turn_id]


def test_forget_and_purge_remove_the_records(
    agent_factory: Factory,
    coordinator: MemoryCoordinator,
    settings: Settings,
    fake_ollama: FakeOllama,
    redis_client: redis.Redis,
    namespace: str,
    diet: str,
) -> None:
    agent = agent_factory(coordinator, fake_ollama.url, settings=settings)
    # before the lawyer is known (the fake model repeats what it was given: a turn whose
    # answer names the topic is forgotten with it)
    about_diet = agent.chat(U, "s2", "What vegetarian diet tips do you have?")
    lawyer = coordinator.add_episodic(U, LAWYER, event_type="fact")
    coordinator.bookkeeping.drain()
    about_lawyer = agent.chat(U, "s1", "Who is my lawyer Ms Okafor?")
    agent.wait_for_background(10)
    assert [a.turn_id for a in coordinator.usage.answers(U, lawyer.id)] == [about_lawyer.turn_id]
    assert diet in coordinator.usage.of(U)

    TopicForget.of(coordinator).forget(U, "Okafor")

    assert lawyer.id not in coordinator.usage.of(U)
    kept = b" ".join(m for k in _usage_keys(redis_client, namespace) if b"answers" in k
                     for m in redis_client.zrange(k, 0, -1))  # fmt: skip
    assert about_lawyer.turn_id.encode() not in kept  # the forgotten turn goes, whatever it used
    assert about_diet.turn_id.encode() in kept
    assert _usage_keys(redis_client, namespace)

    coordinator.clear_user_memories(U)

    assert _usage_keys(redis_client, namespace) == []
    assert coordinator.usage.of(U) == {}


def test_the_answers_kept_per_user_are_capped(
    coordinator: MemoryCoordinator, diet: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(usage, "MAX_ANSWERS", 3)
    for i in range(5):
        coordinator.store_interaction(U, "s1", f"q{i}", f"a{i}", turn_id=f"T{i}", used=[diet])

    assert coordinator.usage.of(U)[diet].answers == 5  # the count is of every answer
    assert [a.turn_id for a in coordinator.usage.answers(U, diet, limit=10)] == ["T4", "T3", "T2"]


def test_a_deleted_shared_fact_leaves_no_usage_record_in_any_users_data(
    coordinator: MemoryCoordinator, redis_client: redis.Redis, namespace: str
) -> None:
    """Two users' answers used a shared fact; an admin deletes it: neither user's counts nor
    answers name it any more (the probe found them in the other user's data)."""
    shared = coordinator.add_semantic("Oats are a whole grain")  # no adder: everyone's
    kept = coordinator.add_episodic(U, "I eat oats every morning", event_type="preference")
    for user, turn in ((U, "t-u"), ("usage-other", "t-o")):
        coordinator.store_interaction(
            user, "s1", "Are oats good?", "Yes.", turn_id=turn, used=[shared.id, kept.id],
            store_episode=False,
        )  # fmt: skip
    assert coordinator.usage.of("usage-other")[shared.id].answers == 1

    coordinator.delete_memory(U, "semantic", shared.id, as_admin=True)

    for user in (U, "usage-other"):
        assert shared.id not in coordinator.usage.of(user), user
        assert coordinator.usage.answers(user, shared.id) == [], user
    stored = b"".join(
        b"".join(redis_client.hgetall(k)) if redis_client.type(k) == b"hash" else
        b"".join(redis_client.zrange(k, 0, -1))
        for k in _usage_keys(redis_client, namespace)
    )  # fmt: skip
    assert shared.id.encode() not in stored
    assert coordinator.usage.of(U)[kept.id].answers == 1  # the other memory's stay
