"""A session summary that fails never breaks a turn (agent/summarising.py): a model error
leaves the summary waiting, and the worker outlives a store error and a crash."""

from __future__ import annotations

from agent.llm import OllamaLLM
from agent.summarising import LLMSummariser, SummaryWorker
from memory.errors import StoreUnavailableError
from memory.maintenance.summaries import SummaryOutcome
from tests.fakes.fake_ollama import FakeOllama


def test_a_model_error_leaves_the_summary_waiting(fake_ollama: FakeOllama) -> None:
    fake_ollama.queue_error(500, "model runner crashed", structured=True)
    summarise = LLMSummariser(OllamaLLM(fake_ollama.url), "qwen2.5:7b")
    assert summarise([{"role": "user", "content": "I run on Sundays"}]) is None


class FlakySummaries:
    """Fails with a store error, then crashes, then summarises."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def summarise_session(self, user_id, session_id, summariser, *, before_id=None, reason=""):  # type: ignore[no-untyped-def]
        self.calls.append(session_id)
        if len(self.calls) == 1:
            raise StoreUnavailableError("Redis went away")
        if len(self.calls) == 2:
            raise RuntimeError("a bug")
        return SummaryOutcome(status="done", messages=4)


def test_the_worker_outlives_a_store_error_and_a_crash() -> None:
    summaries = FlakySummaries()
    worker = SummaryWorker(summaries)
    try:
        for session in ("s-1", "s-2", "s-3"):
            worker.submit("ada", session, None, None)
        assert worker.wait(timeout=30)
    finally:
        worker.shutdown()
    assert summaries.calls == ["s-1", "s-2", "s-3"]
