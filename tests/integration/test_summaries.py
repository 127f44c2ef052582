"""Session summaries on the real Redis Stack, the real embedder and the fake Ollama: a long
chat whose older turns leave the prompt gets a `summary` memory linking them, the next prompt
shows it, recall finds it; without the model it waits, visibly, and runs when the model is
back (the maintenance run or the next long turn); an idle chat is summarised by the run."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from agent.config import AgentSettings
from agent.llm import OllamaLLM
from agent.loop import ChatAgent
from agent.summarising import LLMSummariser
from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.maintenance import Maintenance
from memory.models import MemoryType, now_ms
from memory.queries import ListQuery
from tests.fakes.fake_ollama import DEFAULT_MODEL, FakeOllama, remembered_lines

HOUR = 3600 * 1000
SUMMARY = "The user runs a marathon in Berlin on 12 October and trains five days a week."
# Eight earlier exchanges: 16 messages, of which the recall's window (10) leaves 6 out.
EARLIER = [
    ("My marathon is in Berlin on 12 October", "Great, Berlin is a fast course."),
    ("I train five days a week", "That is a solid base."),
    *[(f"Question number {i} about stretching", f"Answer {i} about stretching") for i in range(6)],
]

MakeAgent = Callable[[str], ChatAgent]


@pytest.fixture
def make_agent(coordinator: MemoryCoordinator, settings: Settings) -> Iterator[MakeAgent]:
    built: list[ChatAgent] = []

    def make(ollama_url: str) -> ChatAgent:
        agent = ChatAgent(
            settings.model_copy(update={"ollama_host": ollama_url}),
            coordinator,
            toolkits=[],
            # Extraction off: the only structured request is the summary.
            agent_settings=AgentSettings(_env_file=None, llm_extraction="off"),  # type: ignore[call-arg]
            summaries=Maintenance.of(coordinator),
        )
        built.append(agent)
        return agent

    yield make
    for a in built:
        a.close()


def chat_earlier(coord: MemoryCoordinator, user: str = "ana", session: str = "s1") -> list[str]:
    """The earlier exchanges, stored as turns are; returns the ids of the 6 that will drop."""
    for question, answer in EARLIER:
        coord.store_interaction(user, session, question, answer, store_episode=False)
    return [m.id for m in coord.recent_messages(user, session, 100)[:6]]


def summaries_of(coord: MemoryCoordinator, user: str = "ana") -> list[dict]:
    rows, _ = coord.list_memories(user, MemoryType.EPISODIC, ListQuery(event_types=["summary"]))
    return rows


def test_a_trimmed_chat_gets_a_summary_that_links_its_turns_and_the_next_prompt_shows_it(
    make_agent: MakeAgent, coordinator: MemoryCoordinator, fake_ollama: FakeOllama
) -> None:
    dropped = chat_earlier(coordinator)
    agent = make_agent(fake_ollama.url)
    fake_ollama.queue_structured({"summary": SUMMARY})

    first = agent.chat("ana", "s1", "What should I eat the day before a long run?")
    assert agent.wait_for_background(timeout=60)

    assert first.recalled.short_term_dropped == 6 and first.summary == "queued"
    (asked,) = fake_ollama.chat_requests(structured=True)
    assert "My marathon is in Berlin on 12 October" in asked.prompt_text
    (summary,) = summaries_of(coordinator)
    assert summary["text"] == SUMMARY and summary["event_type"] == "summary"
    assert summary["metadata"]["message_ids"] == dropped
    assert summary["metadata"]["session_id"] == "s1"

    second = agent.chat("ana", "s1", "How many rest days do I get?")
    prompt = fake_ollama.chat_requests()[-1].system_prompt
    assert SUMMARY in remembered_lines(prompt)
    assert "[summary of this conversation]" in prompt
    assert second.recalled.session_summary is not None
    # An episodic memory like any other: search finds it from another session too.
    assert SUMMARY in [h.text for h in coordinator.search("ana", "marathon in Berlin")]


def test_without_the_model_the_summary_waits_visibly_and_the_run_writes_it_when_it_is_back(
    make_agent: MakeAgent,
    coordinator: MemoryCoordinator,
    fake_ollama: FakeOllama,
    closed_ollama_url: str,
) -> None:
    dropped = chat_earlier(coordinator)
    offline = make_agent(closed_ollama_url)

    result = offline.chat("ana", "s1", "What should I eat the day before a long run?")
    assert offline.wait_for_background(timeout=60)

    assert result.mode == "memory-only" and result.summary == "waiting for the model"
    maint = Maintenance.of(coordinator)
    assert [w["session_id"] for w in maint.summaries_waiting("ana")] == ["s1"]
    assert summaries_of(coordinator) == []
    # A run without a model (the CLI) leaves it waiting and says so.
    report = maint.run(user_id="ana")
    assert report.summaries_waiting == 1 and report.totals()["summarised"] == 0

    fake_ollama.queue_structured({"summary": SUMMARY})
    back = Maintenance.of(
        coordinator, summariser=LLMSummariser(OllamaLLM(fake_ollama.url), DEFAULT_MODEL)
    )
    report = back.run(user_id="ana")

    (done,) = report.users[0].summarised
    assert report.totals()["summarised"] == 1 and report.summaries_waiting == 0
    assert done["text"] == SUMMARY and done["session_id"] == "s1"
    (summary,) = summaries_of(coordinator)
    # The run leaves the newest 10 messages (the recall's window) to the prompt: the 18 of
    # the session minus those are summarised, the 6 dropped before this turn first.
    older = [m.id for m in coordinator.recent_messages("ana", "s1", 100)[:8]]
    assert summary["metadata"]["message_ids"] == older and older[:6] == dropped
    assert back.summaries_waiting() == []


def test_the_next_long_turn_picks_up_a_waiting_summary_when_the_model_is_back(
    make_agent: MakeAgent,
    coordinator: MemoryCoordinator,
    fake_ollama: FakeOllama,
    closed_ollama_url: str,
) -> None:
    chat_earlier(coordinator)
    offline = make_agent(closed_ollama_url)
    offline.chat("ana", "s1", "What should I eat the day before a long run?")
    assert offline.wait_for_background(timeout=60)
    assert len(Maintenance.of(coordinator).summaries_waiting("ana")) == 1

    online = make_agent(fake_ollama.url)
    fake_ollama.queue_structured({"summary": SUMMARY})
    online.chat("ana", "s1", "And the morning of the race?")
    assert online.wait_for_background(timeout=60)

    assert [s["text"] for s in summaries_of(coordinator)] == [SUMMARY]
    assert Maintenance.of(coordinator).summaries_waiting("ana") == []


def test_a_summary_with_a_number_nobody_said_is_refused_and_keeps_waiting(
    make_agent: MakeAgent, coordinator: MemoryCoordinator, fake_ollama: FakeOllama
) -> None:
    chat_earlier(coordinator)
    agent = make_agent(fake_ollama.url)
    fake_ollama.queue_structured({"summary": "The user runs a marathon in Berlin on 19 October."})

    agent.chat("ana", "s1", "What should I eat the day before a long run?")
    assert agent.wait_for_background(timeout=60)

    assert summaries_of(coordinator) == []
    assert len(Maintenance.of(coordinator).summaries_waiting("ana")) == 1


def test_an_idle_chat_is_summarised_by_the_maintenance_run_and_a_dry_run_only_lists_it(
    coordinator: MemoryCoordinator, fake_ollama: FakeOllama
) -> None:
    coordinator.store_interaction("ana", "short", "I moved to Lyon last month", "Welcome to Lyon!")
    maint = Maintenance.of(
        coordinator, summariser=LLMSummariser(OllamaLLM(fake_ollama.url), DEFAULT_MODEL)
    )
    later = now_ms() + 7 * HOUR  # past SUMMARY_IDLE_S (6 h)

    assert maint.run(user_id="ana", at_ms=now_ms()).users[0].summarised == []  # not idle yet
    dry = maint.run(user_id="ana", dry_run=True, at_ms=later)
    assert [(s["session_id"], s["messages"], s["id"]) for s in dry.users[0].summarised] == [
        ("short", 2, "")
    ]
    assert summaries_of(coordinator) == [] and fake_ollama.chat_requests(structured=True) == []

    fake_ollama.queue_structured({"summary": "The user moved to Lyon last month."})
    report = maint.run(user_id="ana", at_ms=later)

    assert report.totals()["summarised"] == 1
    assert [s["text"] for s in summaries_of(coordinator)] == ["The user moved to Lyon last month."]
    # Summarised once: the next run finds nothing new in that chat.
    assert maint.run(user_id="ana", at_ms=later + HOUR).totals()["summarised"] == 0


def test_clearing_a_chat_drops_its_waiting_summary(
    make_agent: MakeAgent, coordinator: MemoryCoordinator, closed_ollama_url: str
) -> None:
    chat_earlier(coordinator)
    offline = make_agent(closed_ollama_url)
    offline.chat("ana", "s1", "What should I eat the day before a long run?")
    assert offline.wait_for_background(timeout=60)
    assert len(Maintenance.of(coordinator).summaries_waiting("ana")) == 1

    coordinator.clear_session_memories("ana", "s1")

    assert Maintenance.of(coordinator).summaries_waiting("ana") == []
