"""What Gemma 3 270M showed (issue 47), on the fake's profiles that reproduce it: every model
request is bounded and a cut is named with what to do; a question is no fact; the model check
is not fooled by a model that copies its prompt; a slow model's replies stay short and its
background extraction waits for them."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agent.check import CHECK_REPLY_TOKENS, EXTRACTION_PROBE
from agent.echo import ITS_OWN_WORDS, EchoGuard, repeated_instructions
from agent.errors import LLMLimitError
from agent.extraction import EXTRACTION_REPLY_TOKENS, LLMExtractor
from agent.llm import OllamaLLM
from agent.loop import ChatAgent
from agent.merging import JUDGE_REPLY_TOKENS, MERGE_REPLY_TOKENS, LLMJudge, LLMMerger
from agent.prompt import build_system_prompt, render_memory_block
from agent.summarising import SUMMARY_REPLY_TOKENS, LLMSummariser
from agent.types import StatusEvent, TokenEvent, TurnEvent
from memory.models import MemoryContext, MemoryType, RecallHit, ScoreParts
from tests.fakes.fake_coordinator import FakeCoordinator
from tests.fakes.fake_ollama import FakeOllama, Scripted

Factory = Callable[..., ChatAgent]
GEMMA, SLOW, FAST, READS = "gemma3:270m", "slow20:1b", "qwen2.5:7b", "cpu35:270m"
#: reads 60 prompt tokens/s, writes 15 (SmolLM2 135M on a shared CPU)
SLOW_READER = "read60:135m"
#: AGENT_REPLY_SECONDS's default: the longest a reply should take
REPLY_S = 15.0


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=[FAST, GEMMA, SLOW, READS, SLOW_READER]) as f:
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
    outcome = agent.background.outcomes("alice")[0]
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
    outcome = agent.background.outcomes("alice")[0]
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
    outcome = agent.background.outcomes("alice")[0]
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
    outcome = agent.background.outcomes("alice")[0]
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
        fake.queue_reply(" ".join(f"and then {i}," for i in range(400)))  # no loop: it goes on
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


def test_the_extraction_probe_counts_a_fact_said_five_times_once(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    """SmolLM2 135M answered the probe with its sentence five times: "5 supported fact(s) of 2
    expected" passed it."""
    copy = {"text": EXTRACTION_PROBE, "event_type": "fact", "slot": "none"}
    fake.queue_structured({"memories": [copy] * 5})
    report = agent_factory(fake_coordinator, fake.url, ollama_model=FAST).check_model(FAST)
    probe = {p.name: p for p in report.probes}["json_extraction"]
    assert not probe.passed
    assert probe.detail.startswith("1 supported fact(s) of 2 expected")
    assert "4 repeated copies not counted" in probe.detail


def test_a_chat_reply_that_repeats_its_instructions_is_not_shown(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    """Gemma 3 270M's first reply in the chat was its whole system prompt and memory block."""
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=GEMMA, llm_extraction="off")
    # the profile's echo, a word at a time as a slow model writes it
    fake.queue_responder(lambda r: Scripted(content=r.seen_system_prompt, delay_s=0.005))
    events = list(agent.run_turn("alice", "s1", "Remember that I'm allergic to peanuts."))
    shown = "".join(e.text for e in events if isinstance(e, TokenEvent))
    result = events[-1].result  # type: ignore[union-attr]
    (req,) = fake.chat_requests()
    assert "You are a friendly wellness assistant" in req.body["messages"][0]["content"]
    assert "wellness assistant" not in shown and "<<<" not in shown and "peanuts" not in shown
    assert shown == result.reply  # the words said instead are the reply, stored as such
    assert "repeating its instructions" in shown and "not a chat model" in shown
    assert "qwen2.5:7b" in shown  # what to use instead
    deadline = time.monotonic() + 10
    while not req.client_closed and time.monotonic() < deadline:
        time.sleep(0.05)
    assert req.client_closed, "the copy was stopped, not written to its cap"


def test_a_copy_of_the_rules_after_some_prose_is_cut_where_it_starts() -> None:
    system = _memory_prompt("My dog is called Biscuit")
    rules = system.split("<<<MEMORY")[0]
    line = '- [semantic/safety] "Sudden chest pain needs care." (low, 28 Nov 2026)'
    # what was shown before the copy is recognised is never part of it (the last words wait)
    for reply, echoed in (
        ("Sure thing! " + rules, "the system prompt"),
        ("Your dog is Biscuit.\n" + system[system.index("<<<MEMORY") :], "the memory fence"),
        ("You are allergic to peanuts, as you told me.\n" + line, "the memory lines"),
        ("Your dog is called Biscuit, and you told me so yesterday.", None),
        ("A list:\n- [ ] walk Biscuit\n- [the vet](https://example.org) at nine", None),
    ):
        guard = EchoGuard(system)
        out = "".join(guard.feed(ch) for ch in reply)  # however the stream splits it
        out += guard.finish()
        assert guard.echoed == echoed
        assert reply.startswith(out)
        if echoed is None:
            assert out == reply
        else:  # all that came before the copy, none of it
            assert out.rstrip() in ("Sure thing!", "Your dog is Biscuit.", reply.split("\n-")[0])
    guard = EchoGuard(system)
    assert "".join(guard.feed(w + " ") for w in ("Sure thing! " + rules).split()) == "Sure thing! "


def test_words_of_its_own_before_a_copy_stay_and_the_copy_is_named(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    """Gemma's later replies answered, then copied the block's memory lines."""
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=FAST, llm_extraction="off")
    fake.queue_reply(
        "You are allergic to peanuts, as you told me before.\nWhat is the meaning of this?\n"
        '- [semantic/safety] "Sudden chest pain needs care." (low, 28 Nov 2026)\n'
    )
    result = agent.chat("alice", "s1", "What am I allergic to?")
    assert result.reply.startswith("You are allergic to peanuts, as you told me before.")
    assert "[semantic" not in result.reply and "Sudden chest pain" not in result.reply
    assert "went on to repeat its instructions (the memory lines)" in result.reply
    assert "chat model" in result.reply


APOLOGY = "I'm sorry if I made any mistake. "


@pytest.mark.parametrize(
    ("reply", "unit", "shown"),
    [
        ("Sure. " + APOLOGY * 12, APOLOGY, 2),
        ("Sure.\n" + "- Monday: an easy run\n" * 5, "- Monday: an easy run\n", 2),  # 4 words
        # lines that share words but say something new each time are an answer
        ("Plan:\n" + "".join(f"- Day {d}: easy run of {d + 4} km\n" for d in range(1, 8)), "", 0),
        ("No, no, no: rest today. Yes, yes, yes, run tomorrow.", "", 0),
        ("No no no no no, not today.", "", 0),
        ("Day 3: I walked 3 km" + ", then I rested" * 3 + ".", "", 0),  # 3 words, 3 times
        ("Day 3: I walked 3 km" + ", then I rested" * 5 + ".", ", then I rested", 3),  # 12 words
        ("Your heart rate?\n" + "<heart_rate>\n" * 25, "<heart_rate>\n", 4),  # Gemma 3 270M
        (APOLOGY * 2 + "Here is your plan.", "", 0),
    ],
)
def test_a_reply_that_repeats_itself_is_stopped_at_its_last_copy(
    reply: str, unit: str, shown: int
) -> None:
    """SmolLM2 135M once wrote one apology again and again to its 454-token cap: a run of four
    words or more is stopped at its third copy, a shorter one once its copies make 12 words."""
    guard = EchoGuard(_memory_prompt("My dog is called Biscuit"))
    out = "".join(guard.feed(ch) for ch in reply)  # however the stream splits it
    out += guard.finish()
    assert (guard.echoed == ITS_OWN_WORDS) is bool(unit)
    assert reply.startswith(out)
    if unit:  # what came before the loop and all its copies but the last
        assert out.count(unit.strip()) == shown
    else:
        assert out == reply


def test_a_chat_reply_in_a_loop_ends_the_request_and_says_why(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=FAST, llm_extraction="off")
    fake.queue_responder(lambda r: Scripted(content="Sorry! " + APOLOGY * 60, delay_s=0.002))
    result = agent.chat("alice", "s1", "Can you plan my week?")
    (req,) = fake.chat_requests()
    assert result.reply.startswith("Sorry! " + APOLOGY)
    assert result.reply.count("made any mistake") == 2
    assert result.reply.endswith(f"({FAST} began repeating itself, so its reply was stopped here.)")
    assert "chat model" not in result.reply  # a loop is not a base model's echo
    deadline = time.monotonic() + 10
    while not req.client_closed and time.monotonic() < deadline:
        time.sleep(0.05)
    assert req.client_closed, "the loop was stopped, not written to its cap"


# ---- 4. a slow model stays usable --------------------------------------------------------------


def _reply_caps(fake: FakeOllama) -> list[int]:
    return [r.body["options"]["num_predict"] for r in fake.chat_requests()]


def _statuses(events: list[TurnEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, StatusEvent)]


def test_a_slow_model_gets_a_reply_it_writes_in_about_15_s_and_the_status_says_so(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=SLOW, llm_extraction="off")
    first = agent.chat("alice", "s1", "Hello, how are you today?")
    assert first.tokens_per_s == pytest.approx(20, rel=0.01)
    events = list(agent.run_turn("alice", "s1", "Tell me about sleep"))
    first_cap, cap = _reply_caps(fake)
    assert first_cap == agent.config.reply_tokens  # nothing measured yet
    # 20 tokens/s and a prompt read in no time (the fake says 1 µs): what it writes in 15 s
    assert 20 * REPLY_S - 5 <= cap <= 20 * REPLY_S
    assert any("20 tokens/s" in s and f"{cap} tokens" in s for s in _statuses(events))


def test_a_model_that_writes_fast_but_reads_slowly_gets_the_reply_that_fits_15_s(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    """35 tokens/s was above the old 30 tokens/s line, so Gemma's replies kept 768 tokens and
    took 27-47 s: reading the prompt took most of it."""
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=READS, llm_extraction="off")
    agent.chat("alice", "s1", "Hello, how are you today?")
    events = list(agent.run_turn("alice", "s1", "Tell me about sleep"))
    first, second = fake.chat_requests()
    assert first.body["options"]["num_predict"] == agent.config.reply_tokens
    cap = second.body["options"]["num_predict"]
    # the fake's durations: 150 prompt tokens/s, 35 written tokens/s
    read_s, reply_s = second.prompt_tokens / 150, cap / 35
    assert read_s > 2 and cap < 35 * REPLY_S  # the prompt's reading made the cap smaller
    assert REPLY_S - 1 < read_s + reply_s <= REPLY_S + 0.5
    (note,) = [s for s in _statuses(events) if "read its prompt" in s]
    assert "35 tokens/s" in note and f"{cap} tokens" in note and "15 s in all" in note
    result = events[-1].result  # type: ignore[union-attr]
    assert result.window.split.reply == cap  # the details show what was sent


def test_a_slow_readers_prompt_is_shortened_to_fit_15_s_and_the_status_says_how_to_change_it(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    """SmolLM2 135M read its ~600-token prompts for 12-16 s of its 15: a shorter reply alone
    could not keep the time. The oldest messages give way; the health line and the message
    do not."""
    fake_coordinator.add_episodic("alice", "I'm allergic to peanuts", event_type="fact")
    agent = agent_factory(
        fake_coordinator, fake.url, ollama_model=SLOW_READER, llm_extraction="off"
    )
    rests = "".join(f", then I rested for {j} min" for j in range(4))
    said = [f"Day {i}: I walked {i} km{rests}." for i in range(8)]
    for text in said:
        agent.chat("alice", "s1", text)
    events = list(agent.run_turn("alice", "s1", "What should I cook for dinner?"))
    last = fake.chat_requests()[-1]
    # the fake's durations: 60 prompt tokens/s, 15 written tokens/s; planned from the tokens
    # it read per planned token in the earlier turns (the estimate errs high)
    cap = last.body["options"]["num_predict"]
    assert REPLY_S - 1 < last.prompt_tokens / 60 + cap / 15 <= REPLY_S + 0.5
    sent = [m["content"] for m in last.body["messages"]]
    assert sent[-1] == "What should I cook for dinner?"
    assert "I'm allergic to peanuts" in sent[0]
    assert said[-1] in sent and said[0] not in sent  # the oldest gave way, the newest stayed
    result = events[-1].result  # type: ignore[union-attr]
    (note,) = [n for n in result.limits if "shortened" in n]
    assert "AGENT_REPLY_SECONDS" in note and "older messages" in note and SLOW_READER in note
    assert any("prompt shortened" in s for s in _statuses(events))
    assert result.window.split.read_cap is not None and result.window.split.history_dropped > 0


def test_a_reader_too_slow_for_even_the_shortest_prompt_still_reads_the_health_line(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    """At 5 s the rules and the message alone take longer to read: nothing else is sent, and
    the status says what the answer costs instead of promising 5 s."""
    fake_coordinator.add_episodic("alice", "I'm allergic to peanuts", event_type="fact")
    agent = agent_factory(
        fake_coordinator, fake.url, ollama_model=SLOW_READER, llm_extraction="off", reply_seconds=5
    )
    agent.chat("alice", "s1", "Hello, how are you today?")
    events = list(agent.run_turn("alice", "s1", "What should I cook for dinner?"))
    last = fake.chat_requests()[-1]
    assert last.prompt_tokens / 60 > 5  # more than the 5 s to read, with nothing left to drop
    sent = [m["content"] for m in last.body["messages"]]
    assert sent[-1] == "What should I cook for dinner?" and "Hello" not in " ".join(sent)
    assert "I'm allergic to peanuts" in sent[0]
    (status,) = [s for s in _statuses(events) if "prompt shortened" in s]
    assert "more than 5 s even so" in status


def test_what_the_check_measured_caps_the_first_reply_after_a_restart(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama, tmp_path: Path
) -> None:
    speeds = tmp_path / "speeds.json"
    agent_factory(fake_coordinator, fake.url, ollama_model=SLOW, speed_file=speeds).check_model(
        SLOW
    )  # `python -m agent check`, in a process of its own
    assert f"{fake.url} {SLOW}" in json.loads(speeds.read_text())
    fresh = agent_factory(
        fake_coordinator, fake.url, ollama_model=SLOW, speed_file=speeds, llm_extraction="off"
    )  # the app, started later: nothing measured in its process
    fresh.chat("alice", "s1", "Tell me about sleep")
    assert 20 * REPLY_S - 5 <= _reply_caps(fake)[-1] <= 20 * REPLY_S
    # without the file, the first reply is not capped
    agent_factory(fake_coordinator, fake.url, ollama_model=SLOW, llm_extraction="off").chat(
        "alice", "s2", "Tell me about sleep"
    )
    assert _reply_caps(fake)[-1] == fresh.config.reply_tokens


def test_a_speed_file_that_cannot_be_read_is_measured_anew(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama, tmp_path: Path
) -> None:
    speeds = tmp_path / "speeds.json"
    speeds.write_text("{not json")
    agent = agent_factory(
        fake_coordinator, fake.url, ollama_model=SLOW, speed_file=speeds, llm_extraction="off"
    )
    result = agent.chat("alice", "s1", "Hello, how are you today?")
    assert result.error is None and _reply_caps(fake) == [agent.config.reply_tokens]
    kept = json.loads(speeds.read_text())[f"{fake.url} {SLOW}"]
    assert 1 / kept["write_s"] == pytest.approx(20, rel=0.01)


def test_a_model_never_measured_is_stopped_after_the_reply_time_then_capped(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(
        fake_coordinator, fake.url, ollama_model=FAST, llm_extraction="off", reply_seconds=0.5
    )
    words = " ".join(f"more{i}" for i in range(400))  # not a loop: it says something new
    fake.queue_responder(lambda req: Scripted(content=words, delay_s=0.01))
    result = agent.chat("alice", "s1", "Tell me everything about sleep")
    assert result.window.done_reason == "time"
    assert 0 < result.reply.count("more") < 400
    (limit,) = result.limits
    assert "stopped after about 0.5 s" in limit and "not measured yet" in limit
    (req,) = fake.chat_requests()
    deadline = time.monotonic() + 10  # the fake notices the closed stream at its next word
    while not req.client_closed and time.monotonic() < deadline:
        time.sleep(0.05)
    assert req.client_closed, "the stream was closed, so the server stops generating"
    # measured from the pieces and the clock: the next reply is capped to fit 0.5 s
    agent.chat("alice", "s1", "And briefly?")
    assert _reply_caps(fake)[-1] < agent.config.reply_tokens


def test_a_fast_model_keeps_todays_budget(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=FAST, llm_extraction="off")
    agent.chat("alice", "s1", "Hello, how are you today?")
    result = agent.chat("alice", "s1", "Tell me about sleep")
    assert _reply_caps(fake) == [agent.config.reply_tokens] * 2
    assert result.tokens_per_s == pytest.approx(100, rel=0.01)
    assert result.window.split.read_cap is None and not result.limits


def test_a_slow_models_cut_reply_says_what_was_cut_and_what_to_do(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, ollama_model=SLOW, llm_extraction="off")
    agent.chat("alice", "s1", "Hello, how are you today?")
    fake.queue_reply(" ".join(f"Sleep matters {i}," for i in range(500)))
    result = agent.chat("alice", "s1", "Tell me everything about sleep")
    capped = _reply_caps(fake)[-1]
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
