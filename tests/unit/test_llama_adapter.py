"""The Ollama adapter in front of llama-server (tests/fakes/llama_adapter.py), against a small
OpenAI-compatible stub of llama-server, so the translation runs here without the real server
(which `make real-model` builds; its smoke test is tests/integration/test_real_model_harness.py).
The real `ollama` client talks to the adapter."""

from __future__ import annotations

import json
from collections.abc import Iterator

import ollama
import pytest

from agent.llm import OllamaLLM
from tests.fakes.llama_adapter import LlamaAdapter
from tests.fakes.stub_llama_server import WINDOW, Reply, StubLlamaServer

MODEL = "tiny:1m"


@pytest.fixture
def stub() -> Iterator[StubLlamaServer]:
    server = StubLlamaServer()
    yield server
    server.stop()


@pytest.fixture
def adapter(stub: StubLlamaServer) -> Iterator[LlamaAdapter]:
    with LlamaAdapter(stub.url, MODEL) as a:
        yield a


def test_tags_and_show_pass_the_servers_window_and_template_through(
    adapter: LlamaAdapter,
) -> None:
    client = ollama.Client(host=adapter.url)
    assert [m.model for m in client.list().models] == [MODEL]
    show = client.show(MODEL)
    assert show.modelinfo is not None
    assert show.modelinfo["tiny.context_length"] == WINDOW
    assert show.template == "{{ messages }} TEMPLATE"
    assert show.capabilities == ["completion"]  # the template cannot describe tools
    with pytest.raises(ollama.ResponseError) as err:
        client.show("other:1b")
    assert err.value.status_code == 404


def test_a_streamed_answer_carries_the_counts_and_the_length_stop(
    stub: StubLlamaServer, adapter: LlamaAdapter
) -> None:
    stub.replies.append(Reply(["Hel", "lo", " there"], finish="length"))
    client = ollama.Client(host=adapter.url)
    parts = list(
        client.chat(
            MODEL,
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
            options={"num_predict": 3, "num_ctx": 8192, "temperature": 0.2},
        )
    )
    assert "".join(p.message.content or "" for p in parts) == "Hello there"
    final = parts[-1]
    assert final.done and final.done_reason == "length"
    # 40 prompt tokens, 10 of them cached: Ollama counts the 30 it read (in prompt_eval_duration)
    assert (final.prompt_eval_count, final.eval_count) == (30, 3)
    assert final.prompt_eval_duration == 100_000_000
    assert final.eval_duration == 500_000_000
    sent = stub.bodies[-1]
    assert sent["max_tokens"] == 3 and sent["temperature"] == 0.2 and sent["stream"] is True
    assert "num_ctx" not in json.dumps(sent)  # the server's window is fixed at its start
    seen = adapter.requests[-1]
    assert seen.num_ctx_asked == 8192 and seen.eval_per_s == pytest.approx(6.0)
    assert seen.prompt_per_s == pytest.approx(300.0)  # 30 uncached tokens in 0.1 s


def test_a_json_schema_becomes_the_servers_response_format(
    stub: StubLlamaServer, adapter: LlamaAdapter
) -> None:
    schema = {"type": "object", "properties": {"memories": {"type": "array"}}}
    stub.replies.append(Reply(['{"memories"', ": []}"]))
    llm = OllamaLLM(adapter.url)
    messages = [{"role": "user", "content": "I like tea"}]
    text = llm.chat_json(MODEL, messages, schema, options={"num_predict": 64})
    assert json.loads(text) == {"memories": []}
    fmt = stub.bodies[-1]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"] == schema
    assert stub.bodies[-1]["max_tokens"] == 64  # the request's cap reaches the server
    assert adapter.requests[-1].stream is True  # streamed, so a time limit can close it


def test_tool_calls_come_back_as_dicts_and_results_refer_to_them() -> None:
    stub = StubLlamaServer(tools=True)
    stub.replies.append(Reply(tool_calls=[("remember", ['{"te', 'xt": "tea"}'])]))
    try:
        with LlamaAdapter(stub.url, MODEL) as adapter:
            llm = OllamaLLM(adapter.url)
            tool = {"type": "function", "function": {"name": "remember", "parameters": {}}}
            chunks = list(
                llm.stream_chat(MODEL, [{"role": "user", "content": "remember tea"}], [tool])
            )
            assert [(c.name, c.arguments) for c in chunks[-1].tool_calls] == [
                ("remember", {"text": "tea"})
            ]
            assert "tools" in (llm.profile(MODEL) or pytest.fail()).capabilities
            history = [
                {"role": "user", "content": "remember tea"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"function": {"name": "remember", "arguments": {"text": "t"}}}],
                },
                {"role": "tool", "content": "stored", "tool_name": "remember"},
            ]
            list(llm.stream_chat(MODEL, history, [tool]))
        sent = stub.bodies[-1]["messages"]
        call = sent[1]["tool_calls"][0]
        assert json.loads(call["function"]["arguments"]) == {"text": "t"}
        assert sent[2]["tool_call_id"] == call["id"]
    finally:
        stub.stop()


def test_tools_to_a_template_without_them_are_refused_as_ollama_does(
    adapter: LlamaAdapter,
) -> None:
    client = ollama.Client(host=adapter.url)
    tool = {"type": "function", "function": {"name": "remember", "parameters": {}}}
    with pytest.raises(ollama.ResponseError) as err:
        client.chat(MODEL, messages=[{"role": "user", "content": "x"}], tools=[tool])
    assert err.value.status_code == 400 and "does not support tools" in str(err.value.error)


def test_a_prompt_too_long_for_the_window_loses_its_oldest_messages_as_in_ollama() -> None:
    stub = StubLlamaServer(max_messages=3)
    try:
        with LlamaAdapter(stub.url, MODEL) as adapter:
            messages = [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "old 1"},
                {"role": "assistant", "content": "old 2"},
                {"role": "user", "content": "old 3"},
                {"role": "user", "content": "newest"},
            ]
            reply = ollama.Client(host=adapter.url).chat(MODEL, messages=messages)
            assert reply.message.content == "ok"
            assert adapter.requests[-1].dropped_messages == 2
            kept = [m["content"] for m in stub.bodies[-1]["messages"]]
            assert kept == ["sys", "old 3", "newest"]
            stub.max_messages = 1  # system + newest cannot be cut further: said, not hidden
            with pytest.raises(ollama.ResponseError) as err:
                ollama.Client(host=adapter.url).chat(MODEL, messages=messages)
            assert err.value.status_code == 500
            assert "exceeds the available context size" in str(err.value.error)
    finally:
        stub.stop()


def test_embeddings_are_not_served(adapter: LlamaAdapter) -> None:
    with pytest.raises(ollama.ResponseError) as err:
        ollama.Client(host=adapter.url).embed(MODEL, input=["x"])
    assert err.value.status_code == 501
