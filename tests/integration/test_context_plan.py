"""The context plan after a long chat, on the real Redis Stack, the real embedder and every
model profile of the fake Ollama (its real tokenizer and truncation): the fact that answers the
last question reaches the prompt the model saw, though a conversation summary, thirty long
turns and the tool schemas compete for the window."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent.config import AgentSettings
from agent.loop import ChatAgent
from agent.summarising import SUMMARY_SYSTEM
from agent.tools.wellness import WellnessToolkit
from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.maintenance import Maintenance
from tests.fakes.fake_ollama import PROFILES, FakeOllama, RecordedRequest, Scripted

FACT = "My gym locker number is 417"
QUESTION = "What is my gym locker number?"
#: What the fake model answers every chat turn: no echo of the memories it was shown, so the
#: fact can reach the last prompt only through the memory block.
REPLY = (
    "Good work this week. Keep the easy runs easy, add mobility work after the hill repeats "
    "and protect your sleep; we can adjust the plan as your legs recover."
)
#: A long summary (four sentences, as the summariser may write): on a small window it fills
#: the memory block's share if it is kept before the memories that answer.
SUMMARY = (
    "The user described long training weeks: a long easy run followed by mobility work and "
    "stretching, hill repeats that left the legs heavy and the calves tight, and short sleep. "
    "The user wants to plan recovery runs, sleep and stretching routines for the coming "
    "training weeks without losing the progress made on the long runs. "
    "The user keeps wondering whether strength work on two evenings would help the hills, or "
    "whether it would only make the easy runs feel harder. "
    "The user also asked whether to move the long run to Sunday morning when the park is quiet."
)


def long_message(i: int) -> str:
    """About 170 tokens of training talk, each turn its own."""
    return (
        f"Turn {i} of my training log: today I did my usual session, a long easy run followed "
        "by mobility work and stretching. My legs felt heavy after the hill repeats, my calves "
        "were tight and my sleep was short, so I want to plan recovery runs, sleep and "
        "stretching routines for the coming training weeks without losing the progress I made "
        "on the long runs. I also keep wondering whether strength work on two evenings would "
        "help the hills, or whether it would only make the easy runs feel harder, and whether "
        "I should move the long run to Sunday morning when the park is quiet."
    )


def chat_reply(req: RecordedRequest) -> Scripted:
    return Scripted(content=REPLY)


def summary_reply(req: RecordedRequest) -> Scripted:
    """The session summary (grounded in the turns it covers); no memories from extraction."""
    if SUMMARY_SYSTEM in req.prompt_text:
        return Scripted(content='{"summary": "' + SUMMARY + '"}')
    return Scripted(content='{"memories": []}')


@pytest.fixture
def fake() -> Iterator[FakeOllama]:
    with FakeOllama(
        models=list(PROFILES), chat_default=chat_reply, structured_default=summary_reply
    ) as f:
        yield f


@pytest.mark.parametrize("model", list(PROFILES))
def test_after_a_long_chat_the_fact_that_answers_is_in_the_last_prompt(
    model: str, fake: FakeOllama, coordinator: MemoryCoordinator, settings: Settings
) -> None:
    agent = ChatAgent(
        settings.model_copy(update={"ollama_host": fake.url}),
        coordinator,
        toolkits=[WellnessToolkit()],
        agent_settings=AgentSettings(_env_file=None, llm_extraction="off"),  # type: ignore[call-arg]
        summaries=Maintenance.of(coordinator),
    )
    try:
        agent.chat("ana", "s1", f"Remember: {FACT}. {long_message(0)}", model=model)
        for i in range(1, 30):
            agent.chat("ana", "s1", long_message(i), model=model)
            assert agent.wait_for_background(timeout=60)
        result = agent.chat("ana", "s1", QUESTION, model=model)
    finally:
        agent.close()

    last = fake.chat_requests()[-1]
    assert last.last_user_message == QUESTION
    # The fact, as the model saw the prompt (after any cut of Ollama's), inside the fence.
    seen = last.seen_system_prompt
    assert FACT in seen and seen.index("<<<MEMORY") < seen.index(FACT)
    assert not last.runner_cut and last.dropped_messages == 0
    # The chat's own summary competed for the room: recall offered it.
    assert result.recalled.session_summary is not None
    offered = {t["function"]["name"] for t in last.body.get("tools") or []}
    split = result.window.split
    assert split is not None
    tools = "tools" in fake.profile(model).capabilities
    if tools and fake.profile(model).context_length == 4096:
        # A small window offers the memory tools (this question names no other tool) and
        # gives the memories the room the other schemas would have taken.
        assert offered == {
            "remember_information",
            "recall_information",
            "get_memory_stats",
            "forget_memory",
        }
        assert split.tools_left_out == 4
    elif tools:
        assert len(offered) == 8 and split.tools_left_out == 0
