"""`make real-model`'s harness (realmodel/): its scripted chat through the real agent, on the
stub llama-server behind the adapter (always), and a smoke test of the real llama-server with
SmolLM2 that runs when `make real-model` has built the server and says so when it has not."""

from __future__ import annotations

import ollama
import pytest

from realmodel.build import server_binary
from realmodel.run import SCRIPT, Tee, figures, llama_server, run_chat
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


def test_the_built_llama_server_answers_through_the_adapter() -> None:
    if not server_binary().exists():
        pytest.skip(f"llama-server is not built ({server_binary()}): `make real-model` builds it")
    from realmodel.models import install

    smol = next(m for m in install() if m.name.startswith("smollm2"))
    with llama_server(server_binary(), smol, 1024, server_binary().parent / "smoke.log") as url:
        with LlamaAdapter(url, smol.name) as adapter:
            client = ollama.Client(host=adapter.url)
            info = client.show(smol.name).modelinfo or {}
            assert info["smollm2.context_length"] == 1024
            reply = client.chat(
                smol.name,
                messages=[{"role": "user", "content": "Say hello."}],
                options={"num_predict": 8, "temperature": 0},
            )
    assert reply.message.content and reply.eval_count and reply.prompt_eval_count
    assert reply.done_reason in ("stop", "length")
