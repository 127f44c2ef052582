"""The context budget at its edges, against the fake Ollama's real tokenizer and truncation:
the capped last round, a window too small for the tool schemas, a thinking reserve on a 4,096
window, thoughts a model writes into its content, and text the estimate undercounts (the
agent learns a per-model factor from the server's prompt count)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from agent.answering import CAP_NOTE, NO_TOOLS_NOTE
from agent.loop import ChatAgent
from tests.fakes.fake_coordinator import FakeCoordinator
from tests.fakes.fake_ollama import FakeOllama, RecordedRequest, Scripted, remembered_lines

Factory = Callable[..., ChatAgent]
DUTCH = (
    "Ik loop elke ochtend vijf kilometer voordat ik naar mijn werk ga, maar vorige week had "
    "ik last van mijn enkel en moest ik een paar dagen rust nemen. "
)

DUTCH_AGAIN = (
    "Gisteren heb ik weer rustig gelopen en dat ging goed, dus morgen probeer ik een langere "
    "ronde door het park met mijn zus, als het niet regent. "
)


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(models=["qwen2.5:7b", "small4k:3b", "qwen3:4b"]) as f:
        yield f


def test_the_capped_last_round_keeps_the_tool_rules_and_plans_what_it_sends(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, max_tool_iterations=1)
    fake.queue_tool_calls([("aggregate_metrics", {"metric": "steps", "days": 7})])
    fake.queue_reply("About 8,000 steps a day.")
    result = agent.chat("ana", "s1", "How many steps did I walk?")
    first, last = fake.chat_requests()
    assert first.body.get("tools") and not last.body.get("tools")
    # The model used its tools a moment ago: it is not told it has none.
    assert "Tools available:" in last.system_prompt and NO_TOOLS_NOTE not in last.system_prompt
    assert CAP_NOTE in last.prompt_text
    # The last plan counts no schemas (none were sent) and is what the fake saw.
    assert result.window.split is not None and result.window.split.tools == 0
    assert result.window.rounds == 2 and not last.runner_cut and last.dropped_messages == 0


def test_a_window_too_small_for_the_tool_schemas_answers_without_tools(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, num_ctx=2048)
    assert agent.message_fits("hi") is None
    result = agent.chat("ana", "s1", "hi")
    (r,) = fake.chat_requests()
    assert r.num_ctx == 2048 and not r.body.get("tools") and NO_TOOLS_NOTE in r.system_prompt
    assert any("too small for the tool schemas" in n for n in result.window.notes)
    assert not r.runner_cut and r.dropped_messages == 0 and result.mode == "llm"


def test_a_thinking_model_on_a_4096_window_keeps_room_for_the_prompt(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    agent = agent_factory(fake_coordinator, fake.url, num_ctx=4096)
    assert agent.message_fits("How should I pace my long run?", "qwen3:4b") is None
    result = agent.chat("ana", "s1", "How should I pace my long run?", model="qwen3:4b")
    (r,) = fake.chat_requests()
    assert r.body["think"] is True and r.body.get("tools")
    # The reserve for thoughts + answer is capped at a quarter of the window.
    assert r.body["options"]["num_predict"] == 1024 and result.thinking


def test_thoughts_written_into_the_content_are_kept_out_of_the_answer(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    """A server that does not know the model thinks (or an old one) sends `<think>` text as
    content: it must not become the answer, which is stored and replayed."""
    agent = agent_factory(fake_coordinator, fake.url)
    fake.queue_reply("<think>The user may want a plan. SECRET-THOUGHT</think>\n\nRest on Mondays.")
    events = list(agent.run_turn("ana", "s1", "When should I rest?"))
    result = events[-1].result
    assert result.reply == "Rest on Mondays." and "SECRET-THOUGHT" in result.thinking
    assert "SECRET-THOUGHT" not in "".join(e.text for e in events if e.kind == "token")
    stored = [m.content for m in fake_coordinator.recent_messages("ana", "s1")]
    assert stored and not any("SECRET-THOUGHT" in m for m in stored)


def test_a_message_the_check_lets_through_is_answered(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    """The check plans with room for the block's notes: the longest message it accepts on a
    4,096 window is answered, even with many memories omitted from a full recall."""
    for i in range(12):
        fake_coordinator.add_episodic("ana", f"I like tea number {i} with a long description " * 3)
    agent = agent_factory(fake_coordinator, fake.url, llm_extraction="off", num_ctx=2048)
    words = ["remember: I like tea."]
    while agent.message_fits(" ".join([*words, "12345"]), "small4k:3b") is None:
        words.append("12345")
    message = " ".join(words)
    assert len(message) < 4000  # the window, not the length limit, set the bound
    result = agent.chat("ana", "s1", message, model="small4k:3b")
    (r,) = fake.chat_requests()
    assert result.mode == "llm" and not r.runner_cut and r.dropped_messages == 0


def _dutch_reply(req: RecordedRequest) -> Scripted:
    # not one sentence three times in a row: the agent stops a reply in a loop after two
    return Scripted(content=DUTCH + DUTCH_AGAIN + DUTCH)


def test_text_the_estimate_undercounts_is_learned_from_the_servers_count(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    """Dutch costs more tokens than the estimate assumes (it is tuned to err high on English,
    JSON, numbers and CJK): the first counts above the plan make later plans larger, and from
    then on Ollama cuts nothing."""
    fake.chat_default = _dutch_reply
    agent = agent_factory(fake_coordinator, fake.url, llm_extraction="off")
    results = [
        agent.chat("ana", "s1", f"Vraag {i}: {DUTCH}", model="qwen2.5:7b") for i in range(40)
    ]
    requests = fake.chat_requests()
    learned = [i for i, r in enumerate(results) if any("planned" in n for n in r.window.notes)]
    assert learned, "the server's counts exceeded the plan at least once"
    assert agent.answerer.scale("qwen2.5:7b") > 1.0
    after = requests[learned[-1] + 1 :]
    assert after and all(r.dropped_messages == 0 and not r.runner_cut for r in after)
    cut = [r for r in requests if r.dropped_messages or r.runner_cut]
    assert len(cut) <= 3, [(r.dropped_messages, r.runner_cut) for r in cut]


MEMORY_TOOLS = {"remember_information", "recall_information", "get_memory_stats", "forget_memory"}
LOCKER = "My gym locker number is 417"
#: About 185 tokens: on a 4,096-token window with every tool schema it left no room for more.
LONG_SUMMARY = " ".join(
    [
        "The user talked about long training weeks with hill repeats, easy runs and stretching, "
        "and about sleeping too little before races."
    ]
    * 6
)


def _offered(r: RecordedRequest) -> set[str]:
    return {t["function"]["name"] for t in r.body.get("tools") or []}


def test_a_small_window_keeps_the_memories_that_answer_and_offers_the_tools_it_may_need(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    # a milestone, not a standing kind: only search brings it (a fact would be a line of the
    # user profile, kept whatever its score)
    fake_coordinator.add_episodic("ana", LOCKER, event_type="milestone")
    for i in range(4):  # weaker matches, long: not all of them fit beside the summary
        fake_coordinator.add_episodic(
            "ana",
            f"On day {i} my gym was busy and the locker room was full of people after the "
            "evening classes. " * 6,
        )
    fake_coordinator.summaries[("ana", "s1")] = LONG_SUMMARY
    agent = agent_factory(fake_coordinator, fake.url, llm_extraction="off")
    result = agent.chat("ana", "s1", "What is my gym locker number?", model="small4k:3b")
    (r,) = fake.chat_requests()
    seen = remembered_lines(r.seen_system_prompt)
    recalled = {h.text: h.score for h in result.recalled.episodic}
    # Kept by value: the fact that answers, then the summary, then the weaker memories while
    # they fit; the block still reads summary first, then the memories.
    assert seen[:2] == [LONG_SUMMARY, LOCKER] and recalled[LOCKER] > 0.3
    assert result.window.split is not None and result.window.split.memories_omitted > 0
    kept_weak = [recalled[t] for t in seen[2:]]
    left_out = [s for t, s in recalled.items() if t not in seen]
    assert left_out and min(kept_weak, default=1.0) >= max(left_out)
    # The memory tools only (the message names no other tool, no procedure matches it).
    assert _offered(r) == MEMORY_TOOLS and result.window.split.tools_left_out == 4
    assert all(name in r.system_prompt for name in MEMORY_TOOLS)
    assert "aggregate_metrics" not in r.system_prompt
    assert not r.runner_cut and r.dropped_messages == 0


def test_a_small_window_offers_a_matching_procedures_tools_and_the_tools_a_message_names(
    agent_factory: Factory, fake_coordinator: FakeCoordinator, fake: FakeOllama
) -> None:
    fake_coordinator.record_procedure(
        "ana",
        "How did I sleep this week?",
        ["aggregate_metrics"],
        success_score=1.0,
        execution_time_ms=5.0,
    )
    agent = agent_factory(fake_coordinator, fake.url, llm_extraction="off")
    agent.chat("ana", "s1", "How did I sleep this week?", model="small4k:3b")
    agent.chat("ana", "s1", "Can you compare periods of my steps?", model="small4k:3b")
    agent.chat("ana", "s1", "How did I sleep this week?", model="qwen2.5:7b")
    procedure, named, large = fake.chat_requests()
    assert _offered(procedure) == MEMORY_TOOLS | {"aggregate_metrics"}
    assert _offered(named) == MEMORY_TOOLS | {"compare_periods"}
    # A large window offers every tool, as it always did.
    assert len(_offered(large)) == 8
