"""Current over stale: values that change, each stated again in a later session,
some in other words, written through the agent's real extraction (trigger phrases) and
WritePolicy into the real coordinator. Recall and the prompt block must offer the current
value and never the replaced one; a month of maintenance in between must not bring it back."""

from __future__ import annotations

from agent.prompt import render_memory_block
from memory.coordinator import MemoryCoordinator
from memory.maintenance import Maintenance
from memory.models import now_ms
from memory.writing import WritePolicy, extract_triggers

# (first session, later session, question, stale words, current words)
UPDATES = [
    (
        "Remember: my weight goal is 80 kg",
        "Remember: my goal weight is now 75 kg",
        "what is my target weight?",
        "80 kg",
        "75 kg",
    ),
    (
        "Remember: I live in Lisbon",
        "Note this: I moved to Porto",
        "where do I live?",
        "Lisbon",
        "Porto",
    ),
    (
        "Remember: I work as a nurse",
        "Remember: my new job is teaching at a school",
        "what is my job?",
        "nurse",
        "teaching",
    ),
    (
        "Remember: I eat meat",
        "Remember: I am vegetarian now",
        "what diet do I follow?",
        "eat meat",
        "vegetarian",
    ),
]


def write(writer: WritePolicy, user: str, session: str, message: str) -> None:
    for cand in extract_triggers(message):
        writer.write(user, session, cand, context=message)


def test_recall_and_prompt_offer_the_current_value_never_the_stale_one(
    coordinator: MemoryCoordinator,
) -> None:
    writer = WritePolicy(coordinator)
    for old, _, _, _, _ in UPDATES:
        write(writer, "ana", "s1", old)
    for _, new, _, _, _ in UPDATES:
        write(writer, "ana", "s2", new)
    Maintenance.of(coordinator).run(user_id="ana", at_ms=now_ms() + 30 * 24 * 3600 * 1000)

    stale_over_current = []
    for _, _, question, stale, current in UPDATES:
        ctx = coordinator.retrieve_all_context("ana", "s3", question)
        recalled = " | ".join(h.text for h in ctx.episodic)
        block = render_memory_block(ctx).text
        if stale in recalled or stale in block or current not in recalled:
            stale_over_current.append((question, recalled))
    assert stale_over_current == []
