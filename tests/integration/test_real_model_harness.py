"""`make real-model`'s harness (realmodel/): its scripted chat through the real agent, on the
stub llama-server behind the adapter. The real server's smoke test is `make real-model-smoke`
(realmodel/test_smoke.py): CI cannot afford the build."""

from __future__ import annotations

from realmodel.run import SCRIPT, Tee, figures, run_chat
from tests.fakes.llama_adapter import LlamaAdapter
from tests.fakes.stub_llama_server import Reply, StubLlamaServer


def test_the_scripted_chat_runs_the_real_agent_and_reports_each_turn(
    redis_url: str, namespace: str
) -> None:
    from realmodel.models import HERE, Model

    stub = StubLlamaServer()
    stub.replies += [Reply(["You told me ", "about peanuts."])] * 20
    model = Model("tiny:1m", HERE / "none.gguf", None, "the stub")
    try:
        with LlamaAdapter(stub.url, model.name) as adapter:
            turns, embedder = run_chat(adapter, model, redis_url, Tee(), namespace)
            log = list(adapter.requests)
    finally:
        stub.stop()
    assert [t["message"] for t in turns] == [s[1] for s in SCRIPT]
    assert embedder
    first, recall = turns[0], turns[1]
    assert any("peanut" in s.lower() for s in first["stored"])  # the trigger phrase
    assert any("peanut" in r.lower() for r in recall["recalled"])  # in a new session
    assert all(t["requests"] and t["requests"][0]["generated_tokens"] for t in turns)
    assert recall["reply"] == "You told me about peanuts."
    figs = figures([{"name": "p", "passed": True}], turns, log)
    assert figs["checks_passed"] == 1 and figs["generated_per_s"] > 0
    assert figs["chat_expectations_met"] <= figs["chat_expectations_total"]
