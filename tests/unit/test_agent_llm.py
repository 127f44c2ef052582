"""The Ollama client against the fake server: the real `ollama` package runs end to end."""

from __future__ import annotations

import ssl
from typing import Any

import pytest

from agent.errors import (
    LLMResponseError,
    LLMTimeoutError,
    LLMUnavailableError,
    ModelNotFoundError,
)
from agent.llm import OllamaLLM
from tests.fakes.fake_ollama import FakeOllama

# Until tests/conftest.py lists it for the whole suite.


def test_status_reports_a_reachable_server_and_its_pulled_model(fake_ollama: FakeOllama) -> None:
    st = OllamaLLM(fake_ollama.url).status("qwen2.5:7b")
    assert st.ok and st.reachable and st.model_available
    assert st.models == ["qwen2.5:7b"]
    assert st.message == ""


def test_status_says_how_to_start_ollama_when_nothing_listens(closed_ollama_url: str) -> None:
    st = OllamaLLM(closed_ollama_url).status("qwen2.5:7b")
    assert not st.reachable and not st.ok
    assert "ollama serve" in st.message and closed_ollama_url in st.message


def test_status_says_which_model_to_pull(fake_ollama: FakeOllama) -> None:
    st = OllamaLLM(fake_ollama.url).status("llama3.2:3b")
    assert st.reachable and not st.model_available
    assert "ollama pull llama3.2:3b" in st.message


def test_model_without_tag_matches_latest(fake_ollama: FakeOllama) -> None:
    fake_ollama.models.append("mistral:latest")
    assert OllamaLLM(fake_ollama.url).status("mistral").model_available


def test_stream_chat_yields_tokens_then_tool_calls(fake_ollama: FakeOllama) -> None:
    fake_ollama.queue_tool_calls([("search_workouts", {"days": 7})], content="Let me check. ")
    chunks = list(
        OllamaLLM(fake_ollama.url).stream_chat("qwen2.5:7b", [{"role": "user", "content": "hi"}])
    )
    text = "".join(c.content for c in chunks)
    assert text == "Let me check. "
    assert chunks[-1].done
    assert [(c.name, c.arguments) for c in chunks[-1].tool_calls] == [
        ("search_workouts", {"days": 7})
    ]
    assert fake_ollama.chat_requests()[0].body["stream"] is True


def test_chat_with_a_model_that_is_not_pulled_says_what_to_run(fake_ollama: FakeOllama) -> None:
    with pytest.raises(ModelNotFoundError, match="ollama pull phi3"):
        list(OllamaLLM(fake_ollama.url).stream_chat("phi3", [{"role": "user", "content": "hi"}]))


def test_chat_when_ollama_is_down_says_how_to_start_it(closed_ollama_url: str) -> None:
    with pytest.raises(LLMUnavailableError, match="ollama serve"):
        list(
            OllamaLLM(closed_ollama_url).stream_chat(
                "qwen2.5:7b", [{"role": "user", "content": "hi"}]
            )
        )


def test_a_model_that_does_not_answer_in_time_raises_a_timeout(fake_ollama: FakeOllama) -> None:
    fake_ollama.queue_hold()  # released when the fake stops
    llm = OllamaLLM(fake_ollama.url, timeout_s=0.3)
    with pytest.raises(LLMTimeoutError, match="OLLAMA_TIMEOUT_S"):
        list(llm.stream_chat("qwen2.5:7b", [{"role": "user", "content": "hi"}]))


def test_a_held_request_nobody_releases_fails_the_test_saying_so() -> None:
    # the client waits longer than the hold: the fake's bound is what ends the request
    with pytest.raises(AssertionError, match=r"queue_hold\(\) was not released within 0.2 s"):
        with FakeOllama() as fake:
            fake.queue_hold(timeout_s=0.2)
            with pytest.raises(LLMResponseError, match="not released within 0.2 s"):
                list(
                    OllamaLLM(fake.url, timeout_s=60).stream_chat(
                        "qwen2.5:7b", [{"role": "user", "content": "hi"}]
                    )
                )


def test_chat_json_sends_the_schema_as_format(fake_ollama: FakeOllama) -> None:
    fake_ollama.queue_structured({"memories": []})
    schema = {"type": "object", "properties": {"memories": {"type": "array"}}}
    raw = OllamaLLM(fake_ollama.url).chat_json(
        "qwen2.5:7b", [{"role": "user", "content": "x"}], schema
    )
    assert raw == '{"memories": []}'
    req = fake_ollama.chat_requests(structured=True)[0]
    assert req.body["format"] == schema and req.body["stream"] is True


def test_the_fake_can_be_scripted_over_http_from_another_process(fake_ollama: FakeOllama) -> None:
    import httpx

    httpx.post(f"{fake_ollama.url}/_fake/reply", json={"content": "Scripted over HTTP."})
    httpx.post(f"{fake_ollama.url}/_fake/models", json={"models": ["qwen2.5:7b", "phi3:mini"]})
    llm = OllamaLLM(fake_ollama.url)
    assert llm.status("phi3:mini").model_available
    chunks = list(llm.stream_chat("qwen2.5:7b", [{"role": "user", "content": "hi"}]))
    assert "".join(c.content for c in chunks) == "Scripted over HTTP."
    recorded = httpx.get(f"{fake_ollama.url}/_fake/requests").json()
    # the model's profile (its context length) is read once, before its first request
    assert [r["path"] for r in recorded] == ["/api/tags", "/api/show", "/api/chat"]
    assert recorded[-1]["body"]["messages"][0]["content"] == "hi"


def test_a_garbled_line_in_the_stream_is_a_response_error_not_a_decode_traceback(
    fake_ollama: FakeOllama,
) -> None:
    fake_ollama.queue_garbled("Half an answer")
    got: list[str] = []
    with pytest.raises(LLMResponseError, match="not valid JSON"):
        for chunk in OllamaLLM(fake_ollama.url).stream_chat("qwen2.5:7b", [{"role": "user"}]):
            got.append(chunk.content)
    assert "".join(got).startswith("Half")


def test_an_http_host_loads_no_certificates_and_an_https_host_still_verifies(
    fake_ollama: FakeOllama, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The TLS set-up (certificates loaded) is left out for Ollama's usual http:// host, which
    never uses it; an https:// host verifies its server as before."""
    loads: list[dict[str, object]] = []
    real = ssl.create_default_context

    def counted(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        loads.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counted)
    assert OllamaLLM(fake_ollama.url).status("qwen2.5:7b").ok
    assert loads == []
    OllamaLLM("https://127.0.0.1:9")
    assert len(loads) == 2  # its chat and its status client each verify
