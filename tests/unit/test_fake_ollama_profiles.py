"""The fake Ollama's model profiles, driven through the real `ollama` client: context window,
truncation as Ollama does it, reply length, thinking, tools, extraction defaults."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import ollama
import pytest

from agent.extraction import EXTRACTION_SYSTEM, ExtractionResult, extraction_schema
from tests.fakes.fake_ollama import (
    INVENTED_MEMORY,
    PROFILES,
    THOUGHT_MARKER,
    FakeOllama,
    ModelProfile,
    RecordedRequest,
    count_tokens,
    echo_responder,
)

ALL_MODELS = list(PROFILES)

TOOL = {
    "type": "function",
    "function": {
        "name": "aggregate_metrics",
        "description": "Average of a wellness metric",
        "parameters": {
            "type": "object",
            "properties": {"metric": {"type": "string"}},
            "required": ["metric"],
        },
    },
}


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=ALL_MODELS) as f:
        yield f


@pytest.fixture
def client(fake: FakeOllama) -> ollama.Client:
    return ollama.Client(host=fake.url)


def last_chat(fake: FakeOllama) -> RecordedRequest:
    return fake.chat_requests(structured=None)[-1]


def long_history(pairs: int = 60) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [
        {"role": "system", "content": "SYSTEM-RULES: you are a wellness assistant."}
    ]
    for i in range(pairs):
        msgs.append({"role": "user", "content": f"question{i} " + "about my training " * 30})
        msgs.append({"role": "assistant", "content": f"answer{i} " + "keep going " * 10})
    msgs.append({"role": "user", "content": "LAST-QUESTION what do I prefer?"})
    return msgs


def extraction_messages(message: str) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": EXTRACTION_SYSTEM.format(slots="none")},
        {"role": "user", "content": "User message:\n" + json.dumps(message)},
    ]


# ---- the tokenizer ---------------------------------------------------------------------


def test_count_tokens_is_a_real_untruncated_tokenizer() -> None:
    assert count_tokens("") == 0
    assert count_tokens("Hello world") == 2
    # tokenizer.json configures truncation at 128 tokens and padding: both are off.
    assert count_tokens("word " * 1000) == 1000


# ---- /api/show and /api/tags -----------------------------------------------------------


@pytest.mark.parametrize("name", ALL_MODELS)
def test_show_reports_the_profile(client: ollama.Client, name: str) -> None:
    prof = PROFILES[name]
    shown = client.show(name)
    info = dict(shown.modelinfo or {})
    assert info["general.architecture"] == prof.family
    assert info[f"{prof.family}.context_length"] == prof.context_length
    assert isinstance(info["general.parameter_count"], int)
    assert list(shown.capabilities or []) == list(prof.capabilities)
    assert shown.details is not None
    assert shown.details.family == prof.family
    assert shown.details.parameter_size == prof.parameter_size
    assert shown.details.quantization_level == prof.quantization
    assert shown.parameters
    assert bool(shown.template) == prof.chat_template  # a base model shows an empty one


def test_profile_table() -> None:
    expected = {
        "qwen2.5:7b": (32768, ("completion", "tools")),
        "llama3.2:3b": (131072, ("completion", "tools")),
        "small4k:3b": (4096, ("completion", "tools")),
        "qwen3:4b": (40960, ("completion", "tools", "thinking")),
        "gemma2:2b": (8192, ("completion",)),
        "llama3.2:1b": (131072, ("completion", "tools")),
        "gemma3:270m": (32768, ("completion",)),
        "slow20:1b": (131072, ("completion", "tools")),
        "cpu35:270m": (32768, ("completion",)),
        "read60:135m": (4096, ("completion",)),
    }
    assert {n: (p.context_length, p.capabilities) for n, p in PROFILES.items()} == expected
    assert PROFILES["llama3.2:1b"].tool_calls_as_text and PROFILES["llama3.2:1b"].invents_memories
    assert not PROFILES["qwen2.5:7b"].extracts


def test_tags_details_come_from_the_profile(client: ollama.Client) -> None:
    by_name = {m.model: m for m in client.list().models}
    assert set(by_name) == set(ALL_MODELS)
    gemma = by_name["gemma2:2b"].details
    assert gemma is not None and (gemma.family, gemma.quantization_level) == ("gemma2", "Q4_0")


def test_unknown_and_overridden_profiles() -> None:
    custom = ModelProfile("tiny:1b", 2048, ("completion",), "llama", "1.0B", "Q8_0")
    with FakeOllama(
        models=["mystery:7b", "qwen2.5:7b", "tiny:1b"],
        no_tools_models=["qwen2.5:7b"],
        profiles={"tiny:1b": custom},
        default_num_ctx=8192,
    ) as fake:
        c = ollama.Client(host=fake.url)
        generic = fake.profile("mystery:7b")
        assert (generic.context_length, generic.capabilities, generic.family) == (
            32768,
            ("completion", "tools"),
            "qwen2",
        )
        assert list(c.show("qwen2.5:7b").capabilities or []) == ["completion"]
        assert dict(c.show("tiny:1b").modelinfo or {})["llama.context_length"] == 2048
        c.chat("mystery:7b", messages=[{"role": "user", "content": "hi"}], stream=False)
        assert last_chat(fake).num_ctx == 8192
        c.chat("tiny:1b", messages=[{"role": "user", "content": "hi"}], stream=False)
        assert last_chat(fake).num_ctx == 2048  # the default is capped too


# ---- the context window ----------------------------------------------------------------


def test_default_window_drops_the_oldest_messages_silently(
    fake: FakeOllama, client: ollama.Client
) -> None:
    msgs = long_history()
    assert sum(count_tokens(m["content"]) for m in msgs) > 4096
    resp = client.chat("qwen2.5:7b", messages=msgs, stream=False)

    req = last_chat(fake)
    assert req.num_ctx == 4096
    assert req.dropped_messages > 0 and not req.runner_cut
    assert resp.prompt_eval_count == req.prompt_tokens <= 4096
    assert req.seen_messages[0] == msgs[0]  # the system message stays
    assert req.seen_messages[-1] == msgs[-1]  # and the newest
    # What is kept after the system message is the newest stretch of the history.
    assert req.seen_messages[1:] == msgs[len(msgs) - len(req.seen_messages) + 1 :]
    assert len(req.seen_messages) + req.dropped_messages == len(msgs)
    assert "question0 " not in req.seen_prompt and "SYSTEM-RULES" in req.seen_prompt
    assert req.seen_system_prompt == msgs[0]["content"]
    # Only the token counts tell the client; the prompt filled the window, so the reply
    # (which shares it) may have been cut.
    assert (resp.prompt_eval_count or 0) + (resp.eval_count or 0) <= 4096
    assert echo_responder(req).content.startswith("You said: LAST-QUESTION what do I prefer?")


def test_a_history_that_fits_is_sent_whole(fake: FakeOllama, client: ollama.Client) -> None:
    msgs = long_history(pairs=3)
    client.chat("qwen2.5:7b", messages=msgs, stream=False)
    req = last_chat(fake)
    assert req.dropped_messages == 0 and not req.runner_cut
    assert req.seen_messages == msgs
    assert req.prompt_tokens == count_tokens(req.seen_prompt)


def test_tool_schemas_take_room_in_the_window(fake: FakeOllama, client: ollama.Client) -> None:
    msgs = [
        {"role": "system", "content": "Rules."},
        {"role": "user", "content": "How did I sleep?"},
    ]
    client.chat("qwen2.5:7b", messages=msgs, stream=False)
    without = last_chat(fake).prompt_tokens
    client.chat("qwen2.5:7b", messages=msgs, tools=[TOOL], stream=False)
    req = last_chat(fake)
    assert req.prompt_tokens > without + 50
    assert req.seen_prompt.startswith("<|im_start|>system\n# Tools\n")
    assert req.body["tools"][0]["function"]["name"] == "aggregate_metrics"
    assert "<tools>\n" + json.dumps(req.body["tools"][0]) + "\n</tools>" in req.seen_prompt
    assert req.seen_system_prompt == "Rules."


def test_one_huge_message_is_cut_by_the_runner(
    fake: FakeOllama, client: ollama.Client, caplog: pytest.LogCaptureFixture
) -> None:
    system = "ALPHA-BRAVO rules of the assistant, stated first."
    huge = "START-OF-MESSAGE " + "lorem ipsum dolor sit amet " * 1500 + "END-OF-MESSAGE"
    msgs = [{"role": "system", "content": system}, {"role": "user", "content": huge}]
    with caplog.at_level(logging.WARNING, logger="tests.fakes.fake_ollama"):
        resp = client.chat("qwen2.5:7b", messages=msgs, stream=False)

    req = last_chat(fake)
    assert req.runner_cut and req.dropped_messages == 0
    assert resp.prompt_eval_count == req.num_ctx == 4096
    assert req.seen_prompt.startswith("<|im_")  # the first 4 tokens: "<", "|", "im", "_"
    assert "alpha" not in req.seen_prompt.lower()  # the system prompt's start is gone
    assert req.seen_system_prompt == ""
    assert req.seen_prompt.endswith("END-OF-MESSAGE<|im_end|>\n<|im_start|>assistant\n")
    assert "START-OF-MESSAGE" not in req.seen_last_user_message
    assert req.system_prompt == system and req.prompt_text.endswith("END-OF-MESSAGE")  # as sent
    assert any(
        "truncating input prompt limit=4096" in r.getMessage()
        and "keep=4 new=4096" in r.getMessage()
        for r in caplog.records
    )
    # The prompt fills the window: no room left for a reply.
    assert resp.done_reason == "length" and resp.eval_count == 0
    assert resp.message.content == ""


def test_runner_cut_into_the_system_prompt_keeps_its_tail_and_drops_a_headless_fence(
    fake: FakeOllama, client: ollama.Client
) -> None:
    fence_head, fence_tail = "<<<MEMORY abc123>>>", "<<<END MEMORY abc123>>>"
    filler = "\n".join(f'- [episodic/fact] "Filler memory number {i}"' for i in range(400))
    system = (
        "Rules come first.\n"
        + fence_head
        + '\n- [episodic/preference] "I like tea"\n'
        + filler
        + "\n"
        + fence_tail
        + "\nSYSTEM-TAIL"
    )
    msgs = [{"role": "system", "content": system}, {"role": "user", "content": "What do I like?"}]
    client.chat("qwen2.5:7b", messages=msgs, stream=False)

    req = last_chat(fake)
    assert req.runner_cut
    seen_system = req.seen_system_prompt
    assert seen_system.endswith("SYSTEM-TAIL") and len(seen_system) < len(system)
    assert fence_head not in req.seen_prompt and fence_tail in req.seen_prompt
    assert seen_system in req.seen_prompt
    # The echo answers from what the model saw: the fence lost its head, so no memories.
    echo = echo_responder(req).content
    assert echo.startswith("You said: What do I like?")
    assert "I have no memories" in echo
    # What was SENT still has them.
    assert "I like tea" in req.system_prompt


def test_echo_uses_memories_the_model_saw(fake: FakeOllama, client: ollama.Client) -> None:
    system = 'Rules.\n<<<MEMORY n1>>>\n- [episodic/preference] "I like tea"\n<<<END MEMORY n1>>>'
    resp = client.chat(
        "qwen2.5:7b",
        messages=[{"role": "system", "content": system}, {"role": "user", "content": "Hi"}],
        stream=False,
    )
    assert resp.message.content == "You said: Hi\nI remember: I like tea"


def test_num_ctx_option_is_honoured_and_capped(fake: FakeOllama, client: ollama.Client) -> None:
    msgs = long_history(pairs=60)
    client.chat("qwen2.5:7b", messages=msgs, options={"num_ctx": 16384}, stream=False)
    req = last_chat(fake)
    assert req.num_ctx == 16384 and req.dropped_messages == 0 and not req.runner_cut
    assert req.prompt_tokens > 4096

    client.chat("gemma2:2b", messages=msgs, options={"num_ctx": 100_000}, stream=False)
    assert last_chat(fake).num_ctx == 8192  # gemma2's trained context
    client.chat("small4k:3b", messages=msgs, options={"num_ctx": 8192}, stream=False)
    req = last_chat(fake)
    assert req.num_ctx == 4096 and req.dropped_messages > 0


def test_tool_response_is_not_orphaned_from_its_tool_call(
    fake: FakeOllama, client: ollama.Client
) -> None:
    msgs: list[dict[str, Any]] = [
        {"role": "system", "content": "Rules."},
        {"role": "user", "content": "old " * 3000},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": "aggregate_metrics", "arguments": {"m": "x"}}}],
        },
        {"role": "tool", "content": "numbers " * 5000, "tool_name": "aggregate_metrics"},
    ]
    client.chat("qwen2.5:7b", messages=msgs, tools=[TOOL], stream=False)
    req = last_chat(fake)
    assert [m["role"] for m in req.seen_messages] == ["system", "assistant", "tool"]
    assert req.dropped_messages == 1 and req.runner_cut


# ---- reply length ----------------------------------------------------------------------


def test_reply_is_cut_at_num_predict(fake: FakeOllama, client: ollama.Client) -> None:
    text = "The quick brown fox jumps over the lazy dog near the river bank."
    fake.queue_reply(text)
    resp = client.chat(
        "qwen2.5:7b",
        messages=[{"role": "user", "content": "Tell me"}],
        options={"num_predict": 5},
        stream=False,
    )
    assert resp.done_reason == "length" and resp.eval_count == 5
    assert resp.message.content == "The quick brown fox jumps"

    fake.queue_reply(text)
    chunks = list(
        client.chat("qwen2.5:7b", messages=[{"role": "user", "content": "Tell me"}], stream=True)
    )
    assert "".join(c.message.content or "" for c in chunks) == text
    assert chunks[-1].done_reason == "stop" and chunks[-1].eval_count == count_tokens(text)
    assert chunks[-1].prompt_eval_count == last_chat(fake).prompt_tokens


def test_reply_shares_the_window_with_the_prompt(fake: FakeOllama, client: ollama.Client) -> None:
    fake.queue_reply("word " * 200)
    resp = client.chat(
        "qwen2.5:7b",
        messages=[{"role": "user", "content": "hi " * 900}],
        options={"num_ctx": 1000},
        stream=False,
    )
    req = last_chat(fake)
    assert resp.done_reason == "length"
    assert (resp.prompt_eval_count or 0) + (resp.eval_count or 0) == 1000 == req.num_ctx
    assert count_tokens(resp.message.content or "") == resp.eval_count


# ---- thinking --------------------------------------------------------------------------


def test_thinking_is_streamed_before_the_content(fake: FakeOllama, client: ollama.Client) -> None:
    chunks = list(
        client.chat("qwen3:4b", messages=[{"role": "user", "content": "Plan my week"}], stream=True)
    )
    kinds = [
        "thinking" if c.message.thinking else "content"
        for c in chunks
        if c.message.thinking or c.message.content
    ]
    assert kinds and kinds[0] == "thinking" and "content" in kinds
    assert kinds == sorted(kinds, key=lambda k: k != "thinking")  # all thoughts first
    thinking = "".join(c.message.thinking or "" for c in chunks)
    content = "".join(c.message.content or "" for c in chunks)
    assert THOUGHT_MARKER in thinking and "Plan my week" in thinking
    assert THOUGHT_MARKER not in content and content.startswith("You said: Plan my week")
    # Thinking counts as reply tokens.
    assert chunks[-1].eval_count == count_tokens(thinking) + count_tokens(content)


def test_scripted_thinking_and_think_false(fake: FakeOllama, client: ollama.Client) -> None:
    fake.queue_reply("Rest on Sunday.", thinking="Let me look at the load first.")
    resp = client.chat("qwen3:4b", messages=[{"role": "user", "content": "Week?"}], stream=False)
    assert resp.message.thinking == "Let me look at the load first."
    assert resp.message.content == "Rest on Sunday."

    chunks = list(
        client.chat(
            "qwen3:4b", messages=[{"role": "user", "content": "Week?"}], think=False, stream=True
        )
    )
    assert all(not c.message.thinking for c in chunks)
    assert "".join(c.message.content or "" for c in chunks).startswith("You said: Week?")


def test_think_true_on_a_model_without_thinking_is_400(client: ollama.Client) -> None:
    with pytest.raises(ollama.ResponseError) as err:
        client.chat("qwen2.5:7b", messages=[{"role": "user", "content": "hi"}], think=True)
    assert err.value.status_code == 400
    assert err.value.error == '"qwen2.5:7b" does not support thinking'


def test_format_on_a_thinking_model_puts_the_json_into_thinking(
    fake: FakeOllama, client: ollama.Client
) -> None:
    schema = {"type": "object", "properties": {"summary": {"type": "string"}}}
    fake.queue_structured({"summary": "ok"})
    resp = client.chat(
        "qwen3:4b", messages=[{"role": "user", "content": "sum up"}], format=schema, stream=False
    )
    assert resp.message.content == ""
    assert json.loads(resp.message.thinking or "") == {"summary": "ok"}

    fake.queue_structured({"summary": "ok"})
    resp = client.chat(
        "qwen3:4b",
        messages=[{"role": "user", "content": "sum up"}],
        format=schema,
        think=False,
        stream=False,
    )
    assert json.loads(resp.message.content or "") == {"summary": "ok"}
    assert not resp.message.thinking


# ---- tools -----------------------------------------------------------------------------


def test_weak_model_writes_tool_calls_as_text(fake: FakeOllama, client: ollama.Client) -> None:
    fake.queue_tool_calls([("aggregate_metrics", {"metric": "sleep_hours"})])
    resp = client.chat(
        "llama3.2:1b",
        messages=[{"role": "user", "content": "How did I sleep?"}],
        tools=[TOOL],
        stream=False,
    )
    assert not resp.message.tool_calls
    content = resp.message.content or ""
    assert content.startswith("<tool_call>\n") and content.endswith("\n</tool_call>")
    inner = content.removeprefix("<tool_call>\n").removesuffix("\n</tool_call>")
    assert json.loads(inner) == {
        "name": "aggregate_metrics",
        "arguments": {"metric": "sleep_hours"},
    }

    fake.queue_tool_calls([("aggregate_metrics", {"metric": "steps"})])
    chunks = list(
        client.chat(
            "llama3.2:1b",
            messages=[{"role": "user", "content": "Steps?"}],
            tools=[TOOL],
            stream=True,
        )
    )
    assert not any(c.message.tool_calls for c in chunks)
    assert '"arguments": {"metric": "steps"}' in "".join(c.message.content or "" for c in chunks)


def test_capable_model_sends_structured_tool_calls(fake: FakeOllama, client: ollama.Client) -> None:
    fake.queue_tool_calls([("aggregate_metrics", {"metric": "sleep_hours"})])
    resp = client.chat(
        "qwen2.5:7b",
        messages=[{"role": "user", "content": "How did I sleep?"}],
        tools=[TOOL],
        stream=False,
    )
    (call,) = resp.message.tool_calls or []
    assert call.function.name == "aggregate_metrics"
    assert dict(call.function.arguments) == {"metric": "sleep_hours"}
    assert resp.eval_count and resp.eval_count > 0


def test_model_without_tools_answers_400(fake: FakeOllama, client: ollama.Client) -> None:
    with pytest.raises(ollama.ResponseError) as err:
        client.chat("gemma2:2b", messages=[{"role": "user", "content": "hi"}], tools=[TOOL])
    assert err.value.status_code == 400
    assert err.value.error == "registry.ollama.ai/library/gemma2:2b does not support tools"
    # Without tools it answers.
    resp = client.chat("gemma2:2b", messages=[{"role": "user", "content": "hi"}], stream=False)
    assert (resp.message.content or "").startswith("You said: hi")


# ---- structured defaults (extraction) ----------------------------------------------------


def extract(client: ollama.Client, model: str, message: str, **kw: Any) -> list[dict[str, Any]]:
    resp = client.chat(
        model,
        messages=extraction_messages(message),
        format=extraction_schema(),
        stream=False,
        **kw,
    )
    raw = resp.message.content or ""
    ExtractionResult.model_validate_json(raw)  # what the agent accepts
    return list(json.loads(raw)["memories"])


def test_extracting_profile_keeps_first_person_clauses(client: ollama.Client) -> None:
    message = (
        "I prefer morning runs and my goal is to weigh 70 kg. "
        "What's the weather tomorrow? My dog is called Rex but the cat has no name."
    )
    mems = extract(client, "small4k:3b", message)
    assert mems == [
        {"text": "I prefer morning runs", "event_type": "preference", "slot": "none", "tags": []},
        {"text": "My goal is to weigh 70 kg", "event_type": "goal", "slot": "none", "tags": []},
        {"text": "My dog is called Rex", "event_type": "fact", "slot": "none", "tags": []},
    ]
    assert extract(client, "small4k:3b", "Do I like tea?") == []
    assert extract(client, "gemma2:2b", "i want to run a marathon")[0] == {
        "text": "I want to run a marathon",
        "event_type": "goal",
        "slot": "none",
        "tags": [],
    }


def test_weak_model_invents_a_memory(client: ollama.Client) -> None:
    assert extract(client, "llama3.2:1b", "hello there") == [
        {"text": INVENTED_MEMORY, "event_type": "fact", "slot": "none", "tags": []}
    ]
    mems = extract(client, "llama3.2:1b", "I hate treadmills.")
    assert [m["text"] for m in mems] == ["I hate treadmills", INVENTED_MEMORY]


def test_ideal_models_keep_the_empty_extraction(client: ollama.Client) -> None:
    assert extract(client, "qwen2.5:7b", "I prefer morning runs") == []
    assert extract(client, "llama3.2:3b", "I prefer morning runs") == []


def test_thinking_model_extracts_when_think_is_off(client: ollama.Client) -> None:
    mems = extract(client, "qwen3:4b", "I love swimming", think=False)
    assert [m["text"] for m in mems] == ["I love swimming"]
    # With thinking left on, the JSON lands in `thinking` and the content is empty.
    resp = client.chat(
        "qwen3:4b",
        messages=extraction_messages("I love swimming"),
        format=extraction_schema(),
        stream=False,
    )
    assert resp.message.content == ""
    assert THOUGHT_MARKER not in (resp.message.thinking or "")
    assert json.loads(resp.message.thinking or "")["memories"][0]["text"] == "I love swimming"


def test_other_structured_requests_keep_the_structured_default(client: ollama.Client) -> None:
    schema = {"type": "object", "properties": {"summary": {"type": "string"}}}
    resp = client.chat(
        "small4k:3b",
        messages=[{"role": "user", "content": "I prefer tea"}],
        format=schema,
        stream=False,
    )
    assert json.loads(resp.message.content or "") == {"memories": []}
