"""What Gemma 3 270M showed (issue 47), on the fake's profiles that reproduce it: every model
request is bounded and a cut is named with what to do; a question is no fact; the model check
is not fooled by a model that copies its prompt; a slow model's replies stay short and its
background extraction waits for them."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from agent.check import CHECK_REPLY_TOKENS, repeated_instructions
from agent.errors import LLMLimitError
from agent.extraction import EXTRACTION_REPLY_TOKENS, LLMExtractor
from agent.llm import OllamaLLM
from agent.loop import ChatAgent
from agent.merging import JUDGE_REPLY_TOKENS, MERGE_REPLY_TOKENS, LLMJudge, LLMMerger
from agent.prompt import build_system_prompt, render_memory_block
from agent.speed import REPLY_SECONDS
from agent.summarising import SUMMARY_REPLY_TOKENS, LLMSummariser
from memory.models import MemoryContext, MemoryType, RecallHit, ScoreParts
from tests.fakes.fake_coordinator import FakeCoordinator
from tests.fakes.fake_ollama import FakeOllama, Scripted

Factory = Callable[..., ChatAgent]
GEMMA, SLOW, FAST = "gemma3:270m", "slow20:1b", "qwen2.5:7b"


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=[FAST, GEMMA, SLOW]) as f:
        yield f


# ---- 1. every model request is bounded -----------------------------------------------------


def test_each_json_request_carries_a_cap_fitted_to_its_answer(fake: FakeOllama) -> None:
    llm = OllamaLLM(fake.url)
    fake.queue_structured({"memories": []})
    LLMExtractor(llm).extract(FAST, "I like tea")
    fake.queue_structured({"summary": "The user likes tea."})
    assert LLMSummariser(llm, FAST)([{"role": "user", "content": "I like tea"}])
    fake.queue_structured({"same_fact": True})
    assert LLMJudge(llm, FAST)(["I like tea", "I love tea"], "preference") is True
    fake.queue_structured({"same_fact": True, "text": "I like tea"})
    assert LLMMerger(llm, FAST)(["I like tea", "I like tea a lot"], "preference")
    caps = [r.body["options"]["num_predict"] for r in fake.chat_requests(structured=True)]
    assert caps == [
        EXTRACTION_REPLY_TOKENS,
        SUMMARY_REPLY_TOKENS,
        JUDGE_REPLY_TOKENS,
        MERGE_REPLY_TOKENS,
    ]


def test_runaway_extraction_json_is_cut_at_its_cap_and_the_turn_says_what_to_do(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=GEMMA)
    result = agent.chat("alice", "s1", "I have been sleeping badly lately")
    assert agent.wait_for_background(timeout=30)
    (req,) = fake.chat_requests(structured=True)  # cut JSON is not retried: it runs away again
    assert req.done_reason == "length" and req.eval_count == EXTRACTION_REPLY_TOKENS
    outcome = agent.extraction_log("alice")[0]
    assert outcome.status == "failed"
    assert f"{EXTRACTION_REPLY_TOKENS}-token cap" in outcome.detail
    assert "AGENT_LLM_EXTRACTION=off" in outcome.limit and "token cap" in outcome.limit
    # kept beside the answer: the status box of the turn shows it after a rerun or a reload
    kept = agent.turn_details("alice", "s1")[result.turn_id]
    assert outcome.limit in kept.limits
    assert fake_coordinator.active_texts("alice") == []


def test_a_json_request_is_stopped_at_its_time_limit(fake: FakeOllama) -> None:
    words = " ".join(["more"] * 200)
    fake.queue_responder(lambda req: Scripted(content=words, delay_s=0.05), structured=True)
    with pytest.raises(LLMLimitError, match="still writing") as caught:
        OllamaLLM(fake.url).chat_json(
            FAST, [{"role": "user", "content": "x"}], {"type": "object"}, time_limit_s=0.2
        )
    assert caught.value.what == "time"
    (req,) = fake.chat_requests(structured=True)
    deadline = time.monotonic() + 10  # the fake notices the closed stream at its next word
    while not req.client_closed and time.monotonic() < deadline:
        time.sleep(0.05)
    assert req.client_closed, "the stream was closed, so the server stops generating"


def test_the_model_check_bounds_every_probe(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=FAST)
    agent.check_model(FAST)
    requests = fake.chat_requests(structured=None)
    assert requests and all("num_predict" in r.body["options"] for r in requests)
    chat_caps = {r.body["options"]["num_predict"] for r in fake.chat_requests()}
    assert chat_caps == {CHECK_REPLY_TOKENS}


# ---- 2. a question is no fact; the assistant's words are not the user's ------------------------


def test_a_fact_drawn_from_a_question_is_not_stored(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=GEMMA, llm_extraction="always")
    agent.chat("alice", "s1", "Do I have any food allergies?")
    assert agent.wait_for_background(timeout=30)
    outcome = agent.extraction_log("alice")[0]
    assert [u.split(" (")[0] for u in outcome.ungrounded] == ["Yes, I have any food allergies"]
    assert "asked" in outcome.ungrounded[0]
    assert fake_coordinator.active_texts("alice") == []


def test_a_question_alone_costs_no_extraction_request(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=GEMMA)
    result = agent.chat("alice", "s1", "Do I have any food allergies?")
    assert result.extraction == "skipped (nothing personal)"
    assert fake.chat_requests(structured=True) == []


def test_a_request_to_remember_phrased_as_a_question_is_stored(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=GEMMA)
    agent.chat("alice", "s1", "Can you note that I'm vegan?")
    assert agent.wait_for_background(timeout=30)
    outcome = agent.extraction_log("alice")[0]
    assert [m.text for m in outcome.stored] == ["I'm vegan"]
    assert fake_coordinator.active_texts("alice") == ["I'm vegan"]


def test_a_remember_call_drawn_from_a_question_is_refused(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=FAST, llm_extraction="off")
    fake.queue_tool_calls([("remember_information", {"content": "I have a food allergy"})])
    fake.queue_reply("I cannot tell yet.")
    result = agent.chat("alice", "s1", "Do I have any food allergies?")
    (call,) = result.tools
    assert call.result["stored"] is False and "asked" in call.result["reason"]
    assert fake_coordinator.active_texts("alice") == []


def test_what_the_assistant_said_is_not_stored_as_the_users_fact(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=FAST, llm_extraction="always")
    fake.queue_reply("Your resting heart rate averaged 52 bpm last week.")
    fake.queue_structured({"memories": []})
    agent.chat("alice", "s1", "How was my heart rate?")
    fake.queue_structured(
        {
            "memories": [
                {
                    "text": "My resting heart rate averaged 52 bpm last week",
                    "event_type": "fact",
                    "slot": "none",
                }
            ]
        }
    )
    agent.chat("alice", "s1", "Great, I feel fit")
    assert agent.wait_for_background(timeout=30)
    outcome = agent.extraction_log("alice")[0]
    assert outcome.stored == [] and len(outcome.ungrounded) == 1
    assert fake_coordinator.active_texts("alice") == []


# ---- 3. the model check is not fooled ---------------------------------------------------------


def test_the_check_names_a_base_model_that_copies_its_prompt(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    report = agent_factory(fake_coordinator, fake.url, ollama_model=GEMMA).check_model(GEMMA)
    probes = {p.name: p for p in report.probes}
    assert not probes["chat_template"].passed
    assert "no chat template" in probes["chat_template"].detail
    # the model copied a prompt that holds the memory (the old check passed that), and
    # the copy does not count as using it
    assert any("Biscuit" in r.seen_prompt for r in fake.chat_requests())
    memory = probes["uses_recalled_memory"]
    assert not memory.passed
    assert "the model repeats its instructions" in memory.detail
    assert "is it a chat model?" in memory.detail
    recs = " ".join(report.recommendations)
    assert "No chat template" in recs and "Never stops" in recs
    assert "Repeats its instructions" in recs and "qwen2.5:7b" in recs


def test_the_check_names_a_chat_model_that_never_stops(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    fake.queue_tool_calls([("remember_information", {"content": "My sister's name is Ines"})])
    for _ in range(3):  # small talk, the remembered fact, the earlier answer
        fake.queue_reply("and then, " * 400)
    report = agent_factory(fake_coordinator, fake.url, ollama_model=FAST).check_model(FAST)
    probes = {p.name: p for p in report.probes}
    assert probes["chat_template"].passed and probes["remember_tool_call"].passed
    small_talk = probes["no_tool_on_small_talk"]
    assert not small_talk.passed and f"{CHECK_REPLY_TOKENS}-token cap" in small_talk.detail
    assert "Never stops on a short question" in " ".join(report.recommendations)


def _memory_prompt(text: str) -> str:
    hit = RecallHit(
        id="m1",
        memory_type=MemoryType.EPISODIC,
        text=text,
        score=0.9,
        band="high",
        parts=ScoreParts(),
        record={"event_type": "fact"},
    )
    ctx = MemoryContext(user_id="u", session_id="s", query="q", episodic=[hit])
    return build_system_prompt(render_memory_block(ctx), tool_names=[])


def test_an_echo_of_the_instructions_is_told_from_an_answer() -> None:
    system = _memory_prompt("My dog is called Biscuit and he loves long walks on the beach")
    tools = [{"type": "function", "function": {"name": "remember_information",
              "description": "Store a fact the user asked you to remember for later"}}]  # fmt: skip
    # an answer may quote a memory in full: that is using it
    quoted = "Your dog is called Biscuit and he loves long walks on the beach."
    assert repeated_instructions(quoted, system, tools) is None
    assert repeated_instructions(system, system, tools) == "the memory fence"
    rules = system.split("<<<MEMORY")[0]
    assert repeated_instructions(rules[:400], system, tools) == "the system prompt"
    copied = "store a fact the user asked you to remember for later"
    assert repeated_instructions(copied, system, tools) == "the tool schemas"


# ---- 4. a slow model stays usable --------------------------------------------------------------


def _reply_caps(fake: FakeOllama) -> list[int]:
    return [r.body["options"]["num_predict"] for r in fake.chat_requests()]


def test_a_slow_model_gets_a_reply_it_writes_in_about_15_s_and_the_status_says_so(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=SLOW, llm_extraction="off")
    first = agent.chat("alice", "s1", "Hello, how are you today?")
    assert first.tokens_per_s == pytest.approx(20, rel=0.01)
    events = list(agent.run_turn("alice", "s1", "Tell me about sleep"))
    capped = int(20 * REPLY_SECONDS)
    assert _reply_caps(fake) == [agent.config.reply_tokens, capped]
    statuses = [e.text for e in events if e.kind == "status"]
    assert any("20 tokens/s" in s and f"{capped} tokens" in s for s in statuses)


def test_a_fast_model_keeps_todays_budget(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=FAST, llm_extraction="off")
    agent.chat("alice", "s1", "Hello, how are you today?")
    result = agent.chat("alice", "s1", "Tell me about sleep")
    assert _reply_caps(fake) == [agent.config.reply_tokens] * 2
    assert result.tokens_per_s is not None and result.tokens_per_s >= 30


def test_a_slow_models_cut_reply_says_what_was_cut_and_what_to_do(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=SLOW, llm_extraction="off")
    agent.chat("alice", "s1", "Hello, how are you today?")
    fake.queue_reply("Sleep matters, " * 500)
    result = agent.chat("alice", "s1", "Tell me everything about sleep")
    capped = int(20 * REPLY_SECONDS)
    assert result.window.done_reason == "length"
    (limit,) = result.limits
    assert f"{capped}-token cap" in limit and "20 tokens/s" in limit and "faster model" in limit


def test_a_slow_models_extraction_waits_for_the_reply_streaming_now(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=SLOW, llm_extraction="off")
    agent.chat("alice", "s1", "Hello, how are you today?")  # the speed is known from here
    with agent.replies.replying():  # a reply streams
        agent.background.submit("t1", "alice", "s1", SLOW, "I run 5k on Saturdays")
        assert not agent.background.wait(timeout=0.5)
        assert fake.chat_requests(structured=True) == []
    assert agent.background.wait(timeout=30)
    assert len(fake.chat_requests(structured=True)) == 1
    assert fake_coordinator.active_texts("alice") == ["I run 5k on Saturdays"]


def test_a_fast_models_extraction_does_not_wait(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=FAST, llm_extraction="off")
    agent.chat("alice", "s1", "Hello, how are you today?")
    with agent.replies.replying():
        agent.background.submit("t1", "alice", "s1", FAST, "I run 5k on Saturdays")
        assert agent.background.wait(timeout=30)
        assert len(fake.chat_requests(structured=True)) == 1
