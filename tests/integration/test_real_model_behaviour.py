"""The agent against model profiles that behave as real local models do (tests/fakes): a
4,096-token window that Ollama would truncate silently, a thinking model, a model without
tools, a small model that writes tool calls as text and invents memories. Real Redis, the real
embedder, the real `ollama` client; the fake counts tokens with a real tokenizer, not with the
agent's estimate."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator

import pytest
import redis

from agent.config import AgentSettings
from agent.loop import ChatAgent
from memory.config import PROJECT_ROOT, Settings
from memory.coordinator import MemoryCoordinator
from memory.maintenance import Maintenance
from memory.models import MemoryType
from memory.queries import ListQuery
from tests.fakes.fake_ollama import FakeOllama, RecordedRequest, Scripted, remembered_lines
from tests.in_process import run_main

MODELS = ["qwen2.5:7b", "small4k:3b", "qwen3:4b", "gemma2:2b", "llama3.2:1b"]
# Replies as long as local models write them (~300 tokens).
FILLER = (
    "Here is a longer answer, the way a local model writes it, with a few practical points. "
    "First, keep the easy days easy and the hard days focused, and sleep enough. Second, "
    "build the weekly distance slowly, by about ten percent, and take a lighter week every "
    "fourth week. Third, eat enough carbohydrate around the long run and drink to thirst. "
) * 4

MakeAgent = Callable[..., ChatAgent]


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=list(MODELS)) as f:
        yield f


@pytest.fixture
def make_agent(coordinator: MemoryCoordinator, settings: Settings) -> Iterator[MakeAgent]:
    built: list[ChatAgent] = []

    def make(url: str, model: str, **config: object) -> ChatAgent:
        agent = ChatAgent(
            settings.model_copy(update={"ollama_host": url}),
            coordinator,
            agent_settings=AgentSettings(_env_file=None, ollama_model=model, **config),  # type: ignore[arg-type]
            summaries=Maintenance.of(coordinator),
        )
        built.append(agent)
        return agent

    yield make
    for a in built:
        a.close()


def long_reply(req: RecordedRequest) -> Scripted:
    memories = remembered_lines(req.seen_system_prompt)
    return Scripted(
        content=f"You said: {req.seen_last_user_message[:80]}. "
        + (f"I remember: {'; '.join(memories)}. " if memories else "")
        + FILLER
    )


def summary_of_turns(req: RecordedRequest) -> Scripted:
    """A summary made of the first user turn's own words (so it is grounded)."""
    text = req.last_user_message
    first = next((line for line in text.splitlines() if line.startswith("user: ")), "")
    said = json.loads(first.removeprefix("user: ")) if first else "nothing"
    return Scripted(content=json.dumps({"summary": f"The user said: {said}"}))


def all_values(client: redis.Redis, namespace: str) -> str:
    """Every string, hash, list and JSON value of the namespace, as one text to search."""
    out: list[str] = []
    for key in client.scan_iter(match=f"{namespace}*", count=1000):
        kind = client.type(key)
        if kind == b"string":
            out.append(repr(client.get(key)))
        elif kind == b"hash":
            out.append(repr(client.hgetall(key)))
        elif kind == b"list":
            out.append(repr(client.lrange(key, 0, -1)))
        elif kind == b"ReJSON-RL":
            out.append(repr(client.execute_command("JSON.GET", key)))
        elif kind == b"zset":
            out.append(repr(client.zrange(key, 0, -1)))
        elif kind == b"set":
            out.append(repr(client.smembers(key)))
    return "\n".join(out)


def test_a_40_turn_session_on_a_4096_model_loses_no_planned_message_and_summarises_the_rest(
    make_agent: MakeAgent, fake: FakeOllama, coordinator: MemoryCoordinator
) -> None:
    fake.chat_default = long_reply
    fake.structured_default = summary_of_turns
    agent = make_agent(fake.url, "small4k:3b", llm_extraction="off")
    assert agent.llm.window(agent.default_model) == 4096  # AGENT_NUM_CTX 8,192 capped by the model

    agent.chat("ana", "s1", "Remember: I am training for a half marathon in April")
    results = [
        agent.chat("ana", "s1", f"Question {i}: how should I plan week {i} of my running?")
        for i in range(38)
    ]
    results.append(agent.chat("ana", "s1", "Which race am I training for in April?"))
    assert agent.wait_for_background(timeout=120)

    chats = fake.chat_requests()
    assert len(chats) == 40
    for r in chats:
        assert r.body["options"]["num_ctx"] == 4096 == r.num_ctx
        # Ollama had nothing to cut: every message sent was seen, the memory block whole.
        assert r.dropped_messages == 0 and not r.runner_cut, r.prompt_tokens
        fence = r.seen_system_prompt
        assert "<<<MEMORY " in fence and "<<<END MEMORY " in fence
        # ... and the reply had the room planned for it.
        assert r.prompt_tokens + r.body["options"]["num_predict"] <= r.num_ctx
        assert r.done_reason == "stop"
    # The goal, long out of the history, reached the prompt as a recalled memory.
    assert "I am training for a half marathon in April" in remembered_lines(
        chats[-1].seen_system_prompt
    )
    # The agent trimmed the history itself and knew it: summaries of what left the window.
    late = results[-1]
    assert late.window.split is not None and late.window.split.history_dropped > 0
    assert late.window.split.num_ctx == 4096 and late.window.notes == []
    assert any(r.summary == "queued" for r in results)
    rows, _ = coordinator.list_memories(
        "ana", MemoryType.EPISODIC, ListQuery(event_types=["summary"])
    )
    assert rows and all(r["text"].startswith("The user said: ") for r in rows)


def test_without_num_ctx_the_same_history_would_have_been_cut(fake: FakeOllama) -> None:
    """The control: what the fake does to a request that does not plan (as the agent did)."""
    import ollama

    messages = [
        {"role": "system", "content": '<<<MEMORY x>>>\n- [episodic] "goal"\n<<<END MEMORY x>>>'}
    ]
    for i in range(20):
        messages += [
            {"role": "user", "content": f"Question {i} about my running plan?"},
            {"role": "assistant", "content": FILLER},
        ]
    messages.append({"role": "user", "content": "And now?"})
    ollama.Client(host=fake.url).chat(model="small4k:3b", messages=messages)
    (r,) = fake.chat_requests()
    assert r.num_ctx == 4096 and r.dropped_messages > 10


def test_a_message_that_cannot_fit_is_refused_with_nothing_sent_or_stored(
    make_agent: MakeAgent, fake: FakeOllama, coordinator: MemoryCoordinator
) -> None:
    from agent.budget import MessageTooLongError

    agent = make_agent(fake.url, "small4k:3b")
    paste = "Please look at these readings: " + "12345 67890 " * 320  # ~3.5k tokens
    refusal = agent.message_fits(paste)
    assert refusal is not None and "4,096" in refusal and "Shorten it" in refusal
    with pytest.raises(MessageTooLongError):
        agent.chat("ana", "s1", paste)
    assert fake.chat_requests(structured=None) == []
    assert coordinator.recent_messages("ana", "s1") == []
    assert agent.message_fits("A short question?") is None


def test_thoughts_are_shown_apart_and_never_reach_memory_history_or_summaries(
    make_agent: MakeAgent,
    fake: FakeOllama,
    coordinator: MemoryCoordinator,
    redis_client: redis.Redis,
    namespace: str,
) -> None:
    agent = make_agent(fake.url, "qwen3:4b", llm_extraction="always")
    first = agent.chat("ana", "s1", "I prefer evening runs. What do you think about that?")
    assert "THOUGHT-MARKER" in first.thinking and "THOUGHT-MARKER" not in first.reply
    second = agent.chat("ana", "s1", "And what did I say I prefer?")
    assert agent.wait_for_background(timeout=60)
    assert "THOUGHT-MARKER" in second.thinking
    # The second request replays the first answer without its thoughts.
    chats = fake.chat_requests()
    assert chats[0].body.get("think") is True
    assert all("THOUGHT-MARKER" not in r.prompt_text for r in chats)
    # JSON calls (the extraction) run with thinking off.
    structured = fake.chat_requests(structured=True)
    assert structured and all(r.body.get("think") is False for r in structured)
    # Nothing in Redis holds a thought: messages, memories, logs, caches.
    assert "THOUGHT-MARKER" not in all_values(redis_client, namespace)
    texts = [m.content for m in coordinator.recent_messages("ana", "s1")]
    assert texts and not any("THOUGHT-MARKER" in t for t in texts)


def test_thinking_can_be_turned_off(make_agent: MakeAgent, fake: FakeOllama) -> None:
    agent = make_agent(fake.url, "qwen3:4b", think=False, llm_extraction="off")
    result = agent.chat("ana", "s1", "Hello?")
    assert result.thinking == "" and fake.chat_requests()[0].body.get("think") is False


def test_a_tool_call_written_as_text_runs_and_is_not_shown(
    make_agent: MakeAgent, fake: FakeOllama
) -> None:
    agent = make_agent(fake.url, "llama3.2:1b", llm_extraction="off")
    fake.queue_tool_calls([("aggregate_metrics", {"metric": "steps", "days": 7})])
    fake.queue_reply("You averaged a good number of steps this week.")
    events = list(agent.run_turn("ana", "s1", "How many steps did I walk this week?"))
    result = events[-1].result
    # The model wrote the call into its text; the agent ran it as a call.
    first = fake.chat_requests()[0]
    assert first.body.get("tools")
    assert [t.name for t in result.tools] == ["aggregate_metrics"] and result.tools[0].error is None
    shown = "".join(e.text for e in events if e.kind == "token")
    assert "tool_call" not in shown and "aggregate_metrics" not in shown
    assert result.reply == "You averaged a good number of steps this week."
    # The second request carried the call and its result back as a tool exchange.
    second = fake.chat_requests()[1]
    assert any(m.get("role") == "tool" for m in second.body["messages"])


def test_a_text_that_only_looks_like_a_call_is_shown_as_the_answer(
    make_agent: MakeAgent, fake: FakeOllama
) -> None:
    agent = make_agent(fake.url, "llama3.2:1b", llm_extraction="off")
    raw = '<tool_call>\n{"name": "launch_rocket", "arguments": {}}\n</tool_call>'
    fake.queue_reply(raw)
    result = agent.chat("ana", "s1", "Do something")
    assert result.tools == [] and result.reply == raw


def test_hello_there_stores_nothing_the_weak_model_invented(
    make_agent: MakeAgent, fake: FakeOllama, coordinator: MemoryCoordinator
) -> None:
    agent = make_agent(fake.url, "llama3.2:1b")
    result = agent.chat("ana", "s1", "hello there, I'm just saying hi")
    assert result.extraction == "pending"
    assert agent.wait_for_background(timeout=60)
    outcome = agent.background.get(result.turn_id)
    assert outcome is not None and outcome.status == "done", outcome
    assert outcome.stored == []
    assert any("sailing yacht" in u for u in outcome.ungrounded)
    assert "dropped as not said by the user" in outcome.detail
    rows, _ = coordinator.list_memories("ana", MemoryType.EPISODIC)
    assert not any("yacht" in r["text"].lower() for r in rows)
    coordinator.metrics.flush()
    assert coordinator.metrics.counters().get("extraction_ungrounded", 0) >= 1


def test_the_same_weak_model_keeps_what_the_user_did_say(
    make_agent: MakeAgent, fake: FakeOllama, coordinator: MemoryCoordinator
) -> None:
    agent = make_agent(fake.url, "llama3.2:1b")
    result = agent.chat("ana", "s1", "I sprained my left ankle on a trail run")
    assert agent.wait_for_background(timeout=60)
    outcome = agent.background.get(result.turn_id)
    assert outcome is not None
    kept = [m.text for m in outcome.stored]
    assert any("ankle" in t for t in kept) and not any("yacht" in t for t in kept)


def test_a_model_without_tools_is_never_offered_them(
    make_agent: MakeAgent, fake: FakeOllama
) -> None:
    agent = make_agent(fake.url, "gemma2:2b", llm_extraction="off")
    events = list(agent.run_turn("ana", "s1", "How did I sleep?"))
    assert any("cannot call tools" in e.text for e in events if e.kind == "status")
    (r,) = fake.chat_requests()
    assert not r.body.get("tools") and events[-1].result.mode == "llm"
    # No schemas in its budget either.
    assert events[-1].result.window.split.tools == 0


def _check(agent: ChatAgent, fake: FakeOllama, model: str) -> dict:
    if "tools" in fake.profile(model).capabilities:  # the remember probe gets a call
        fake.queue_tool_calls([("remember_information", {"content": "My sister's name is Ines"})])
    return agent.check_model(model).model_dump()


@pytest.mark.parametrize("model", MODELS)
def test_the_model_check_probes_each_profile(
    make_agent: MakeAgent, fake: FakeOllama, coordinator: MemoryCoordinator, model: str
) -> None:
    agent = make_agent(fake.url, model)
    if model == "qwen2.5:7b":  # its fake extracts nothing by default: script two facts
        fake.queue_structured(
            {
                "memories": [
                    {"text": "I'm vegetarian", "event_type": "fact", "slot": "none"},
                    {
                        "text": "I run 5k every Saturday morning",
                        "event_type": "fact",
                        "slot": "none",
                    },
                ]
            }
        )
    report = _check(agent, fake, model)
    probes = {p["name"]: p for p in report["probes"]}
    assert list(probes) == [
        "context_length",
        "chat_template",
        "json_extraction",
        "remember_tool_call",
        "no_tool_on_small_talk",
        "uses_recalled_memory",
        "uses_earlier_answer",
        "thinking",
    ]
    assert report["context_length"] == fake.profile(model).context_length
    assert report["num_ctx"] == min(8192, fake.profile(model).context_length)
    assert probes["uses_recalled_memory"]["passed"]
    assert probes["uses_earlier_answer"]["passed"]
    assert probes["no_tool_on_small_talk"]["passed"]
    recs = " ".join(report["recommendations"])
    if model == "gemma2:2b":
        assert not probes["remember_tool_call"]["passed"]
        assert "Cannot call tools" in recs
    else:
        assert probes["remember_tool_call"]["passed"]
    if model == "llama3.2:1b":
        assert "as text" in probes["remember_tool_call"]["detail"]
        assert "Writes tool calls as text" in recs and "Invents facts" in recs
    if model == "small4k:3b":
        assert "4,096 tokens" in recs
    assert probes["thinking"]["passed"]
    if model == "qwen3:4b":
        assert "thinking off worked" in probes["thinking"]["detail"]
        assert "A thinking model" in recs
    assert probes["json_extraction"]["passed"], probes["json_extraction"]
    # The check stored nothing.
    rows, _ = coordinator.list_memories("check", MemoryType.EPISODIC)
    assert rows == []


def test_the_check_command_prints_json_and_exits_0(fake: FakeOllama, settings: Settings) -> None:
    from agent.cli import main

    env = {
        **os.environ,
        "OLLAMA_HOST": fake.url,
        "OLLAMA_MODEL": "gemma2:2b",
        "MEMORY_NAMESPACE": settings.memory_namespace,
    }
    # in this process, as a subprocess would see it (test_agent_cli.py runs a real one)
    out = run_main(main, ["check", "--json"], env=env, cwd=PROJECT_ROOT, prog="agent")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert set(report) == {
        "model",
        "context_length",
        "num_ctx",
        "capabilities",
        "probes",
        "recommendations",
    }
    assert report["model"] == "gemma2:2b" and report["context_length"] == 8192
    assert "tools" not in report["capabilities"]
    assert {"name", "passed", "detail", "ms"} <= set(report["probes"][0])
    status = run_main(main, ["status"], env=env, cwd=PROJECT_ROOT, prog="agent")
    assert status.returncode == 0 and "8,192 tokens" in status.stdout and "gemma2" in status.stdout


@pytest.mark.parametrize("model", MODELS)
def test_incognito_and_reanswer_work_on_every_model_and_store_nothing(
    fake: FakeOllama,
    make_agent: MakeAgent,
    coordinator: MemoryCoordinator,
    snapshot: Callable[[], dict[bytes, bytes]],
    model: str,
) -> None:
    """A thinking model, one without tools, one writing tool calls as text and a 4,096-token
    window: the turns of agent/private.py answer on each, within the window, and write nothing."""
    from agent.private import incognito_turn, reanswer

    agent = make_agent(fake.url, model)
    coordinator.add_episodic("pm", "I follow a vegetarian diet", event_type="preference")
    coordinator.add_episodic("pm", "I am training for a half marathon", event_type="goal")
    coordinator.bookkeeping.drain()
    first = agent.chat("pm", "s1", "Can you plan my meals for race week?")
    assert first.mode == "llm"
    agent.wait_for_background(10)
    coordinator.bookkeeping.drain()
    before = snapshot()
    veg = [h.id for h in first.recalled.episodic if "vegetarian" in h.text]
    assert veg
    for events in (
        reanswer(agent, "pm", "s1", first.turn_id, veg),
        incognito_turn(agent, "pm", "inc", "What's my goal?", history=[]),
    ):
        result = [ev for ev in events if ev.kind == "done"][0].result  # type: ignore[union-attr]
        assert result.mode == "llm" and result.reply and result.error is None
        request = fake.chat_requests()[-1]
        assert request.dropped_messages == 0 and not request.runner_cut  # fits the window
        assert "vegetarian" not in request.system_prompt
    assert snapshot() == before
