"""Maintenance with the model and in the background, on the real Redis Stack: the merged text
the model writes (agent/merging.py through the fake Ollama) is used when valid and refused when
it changes a number; the app's background thread runs maintenance on its own."""

from __future__ import annotations

import threading

from agent.llm import OllamaLLM
from agent.merging import LLMMerger
from memory.coordinator import MemoryCoordinator
from memory.maintenance import Maintenance, MaintenanceReport, MaintenanceScheduler
from memory.models import MemoryType
from memory.queries import ListQuery
from tests.fakes.fake_ollama import DEFAULT_MODEL, FakeOllama


def active_texts(coord: MemoryCoordinator, user: str) -> set[str]:
    rows, _ = coord.list_memories(user, MemoryType.EPISODIC, ListQuery(include_superseded=False))
    return {r["text"] for r in rows}


def with_model(coord: MemoryCoordinator, fake: FakeOllama) -> Maintenance:
    return Maintenance.of(coord, merger=LLMMerger(OllamaLLM(fake.url), DEFAULT_MODEL))


def test_the_model_written_merge_is_used_when_it_keeps_the_facts(
    coordinator: MemoryCoordinator, fake_ollama: FakeOllama
) -> None:
    coordinator.add_episodic("ana", "I prefer morning workouts", importance=0.5)
    coordinator.add_episodic("ana", "Morning workouts are what I prefer", importance=0.8)
    fake_ollama.queue_structured({"same_fact": True, "text": "I prefer my workouts in the morning"})

    report = with_model(coordinator, fake_ollama).run(user_id="ana")

    assert active_texts(coordinator, "ana") == {"I prefer my workouts in the morning"}
    (merge,) = Maintenance.of(coordinator).merges("ana")
    assert merge["how"] == "llm" and report.totals()["consolidated"] == 1
    (asked,) = fake_ollama.chat_requests(structured=True)
    assert "Morning workouts are what I prefer" in asked.prompt_text


def test_a_model_merge_that_changes_a_number_is_refused_and_the_best_worded_stays(
    coordinator: MemoryCoordinator, fake_ollama: FakeOllama
) -> None:
    coordinator.add_episodic("ana", "My weight goal is 75 kg", event_type="goal", importance=0.8)
    coordinator.add_episodic("ana", "My goal weight is 75 kg", event_type="goal", importance=0.5)
    fake_ollama.queue_structured({"same_fact": True, "text": "My weight goal is 70 kg"})

    report = with_model(coordinator, fake_ollama).run(user_id="ana")

    assert report.totals()["consolidated"] == 1
    assert active_texts(coordinator, "ana") == {"My weight goal is 75 kg"}
    (merge,) = Maintenance.of(coordinator).merges("ana")
    assert merge["how"] == "best_worded"
    assert len(fake_ollama.chat_requests(structured=True)) == 1  # asked, then refused


def test_the_background_thread_runs_maintenance_without_anyone_asking(
    coordinator: MemoryCoordinator,
) -> None:
    coordinator.add_episodic("ana", "I prefer morning workouts", importance=0.5)
    coordinator.add_episodic("ana", "Morning workouts are what I prefer", importance=0.8)
    ran = threading.Event()

    class Signalling(Maintenance):
        # Readiness is an event set by the run itself: no sleep, no timing threshold.
        def run(self, **kwargs: object) -> MaintenanceReport:
            try:
                return super().run(**kwargs)  # type: ignore[arg-type]
            finally:
                ran.set()

    maint = Signalling(coordinator.stores, coordinator.embedder, coordinator.settings)
    scheduler = MaintenanceScheduler(maint, interval_s=0.01).start()
    try:
        assert ran.wait(timeout=60)
    finally:
        scheduler.stop()

    assert not scheduler.running
    assert active_texts(coordinator, "ana") == {"Morning workouts are what I prefer"}
    # The thread may have run again before stop(): the merge happened once, in some run.
    assert sum(run["consolidated"] for run in maint.history()) == 1
