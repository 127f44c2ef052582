"""The answer without a model (agent/replies.py): the few memories that answer the message,
grouped in words, the learned tools on a line of their own, "nothing yet" when nothing is
relevant; and the details' lead line counting memories, not the user's earlier questions."""

from __future__ import annotations

import re

from agent.replies import ANSWER_MEMORIES, NOTHING_YET, answer_hits, memory_only_reply
from agent.types import TurnResult
from memory.models import (
    SHOWN_FLOOR,
    MemoryContext,
    ProceduralSuggestion,
    RecallHit,
    ScoreParts,
    relevance_band,
)
from memory.stores.episodic import interaction_context
from memory.stores.quotes import FORGOTTEN_LINE, without_quote
from ui.answers import shown
from ui.details import lead_line

DAY_MS = 1_789_000_000_000  # 10 Sep 2026


def hit(text: str, score: float, kind: str = "preference", mtype: str = "episodic") -> RecallHit:
    record = {"event_type": kind, "timestamp": DAY_MS} if mtype == "episodic" else {}
    return RecallHit(
        id=text[:12],
        memory_type=mtype,
        text=text,
        score=score,
        band=relevance_band(score),
        parts=ScoreParts(final=score),
        record=record,
    )


def running_context() -> MemoryContext:
    """Eight memories above the floor (three are the user's own questions), two below it."""
    episodic = [
        hit("Running plan after the sprain: easy runs only", 0.77, "health_event"),
        hit("Race goal: about 2 hours 10 minutes", 0.55, "goal"),
        hit("Plan my running this week", 0.5, "interaction"),
        hit("Prefers to run in the morning", 0.31),  # the sixth: left out
        hit("How far did I run?", 0.2, "interaction"),
        hit("Sprained her left ankle", 0.35, "health_event"),
        hit("Ran 14 km on the river trail", 0.1, "milestone"),
        hit("Likes jazz", SHOWN_FLOOR / 2),
    ]
    semantic = [
        hit("The 10 percent rule for weekly distance", 0.4, mtype="semantic"),
        hit("Running cadence of 170 to 180 steps", SHOWN_FLOOR / 3, mtype="semantic"),
    ]
    proc = ProceduralSuggestion(
        pattern_id="p1",
        query_pattern="plan my running this week",
        tool_sequence=["search_workouts", "compare_periods"],
        confidence=0.8,
        recommended=True,
        executions=3,
        avg_score=0.9,
        similarity=1.0,
        match="exact",
    )
    return MemoryContext(
        user_id="u",
        session_id="s",
        query="Plan my running this week",
        episodic=episodic,
        semantic=semantic,
        procedural=proc,
    )


def read(line: str) -> str:
    """A line of markdown as a person reads it: escapes resolved, the invisible joiner gone."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", line).replace("\u2060", "")


def bullets(reply: str) -> list[str]:
    return [read(line[2:]) for line in reply.splitlines() if line.startswith("- ")]


def test_it_lists_the_few_best_memories_grouped_in_words() -> None:
    reply = memory_only_reply("Ollama is not reachable", running_context(), [])
    assert bullets(reply) == [
        "Running plan after the sprain: easy runs only (10 Sep 2026)",
        "Sprained her left ankle (10 Sep 2026)",  # beside the other health memory
        "Race goal: about 2 hours 10 minutes (10 Sep 2026)",
        "Plan my running this week (10 Sep 2026)",
        "The 10 percent rule for weekly distance",
    ]
    assert len(bullets(reply)) == ANSWER_MEMORIES
    lines = reply.splitlines()
    # each group under its heading in words, the group of the best memory first
    headings = [line for line in lines if line.startswith("**")]
    assert headings == [
        "**Health**",
        "**Goals**",
        "**Earlier conversations**",
        "**General knowledge**",
    ]
    assert lines[lines.index("**Goals**") + 1].startswith("- Race goal")
    # no kind as the code spells it, no band
    assert not re.search(r"\[\w+\]|health_event|relevance", reply)
    assert "Likes jazz" not in reply  # below the floor: not relevant
    assert "Prefers to run in the morning" not in reply  # the sixth best


def test_the_learned_tools_stand_on_their_own_line_after_the_list() -> None:
    reply = memory_only_reply("offline", running_context(), [])
    lines = reply.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("For questions like this"))
    assert lines[at - 1] == "" and lines[at - 2].startswith("- ")
    # shown as markdown, a blank line ends the list: the suggestion is no part of its last item
    assert "  \n  \nFor questions like this" in shown(reply)


def test_nothing_relevant_says_so() -> None:
    ctx = running_context()
    ctx.episodic = [hit("Likes jazz", SHOWN_FLOOR / 2)]
    ctx.semantic, ctx.procedural = [], None
    reply = memory_only_reply("offline", ctx, [])
    assert NOTHING_YET in reply and NOTHING_YET == "I have nothing about that yet."
    assert bullets(reply) == [] and "Likes jazz" not in reply


def test_the_details_count_memories_not_the_users_earlier_questions() -> None:
    ctx = running_context()
    r = TurnResult(turn_id="t", reply="", mode="memory-only", recalled=ctx)
    line = lead_line(r)
    # the answer listed 3 memories of the user, 1 earlier question of theirs and 1 fact
    assert line.startswith("Used 3 things I know about you: “Running plan after the sprain")
    assert "Prefers to run" not in line  # recalled, but not in the answer
    assert "also 1 earlier conversation and 1 general fact" in line
    ctx.episodic = [h for h in ctx.episodic if h.record["event_type"] == "interaction"]
    ctx.semantic = []
    assert lead_line(r).startswith("Used nothing I know about you; also 2 earlier conversations")


def test_a_turn_recalled_only_as_a_neighbour_is_not_listed_alone() -> None:
    """ "I prefer short answers" was recalled for "How far did I run" only for being said next
    to "How far did I run this week?" in the same chat (0.3 of that hit's 0.69): in the
    prompt it sits beside its seed, in a memory-only list it would stand alone, unrelated. A
    neighbour that also matches on its own (above the neighbour's floor) stays."""
    seed = hit("How far did I run this week?", 0.69, "interaction")
    alone = hit("I prefer short answers with bullet points, please.", 0.207, "interaction")
    alone.parts = ScoreParts(vector=0.05, neighbour=0.69, final=0.207)
    matches_too = hit("Did 14 km yesterday on the river trail", 0.4, "interaction")
    matches_too.parts = ScoreParts(vector=0.57, text=1.0, neighbour=0.69, final=0.4)
    ctx = MemoryContext(
        user_id="u", session_id="s", query="How far did I run", episodic=[seed, alone, matches_too]
    )
    listed = [h.text for h in answer_hits(ctx, [])]
    assert listed == [seed.text, matches_too.text]
    assert "short answers" not in memory_only_reply("Offline.", ctx, [])


def test_an_earlier_answer_keeps_its_lines_inside_its_quote_as_plain_text() -> None:
    """ "How is my ankle doing?": the answer given then was a list, shown flattened into one
    line. Each of its lines is now a line of a quote inside its memory's item, read literally
    (a line that looks like a heading or bold stays text); forgetting the memory takes the
    quote with it."""
    ctx = running_context()
    asked = hit("My ankle was a bit stiff. Should I worry?", 0.8, "interaction")
    then = "- Some stiffness is common\n- Keep up the balance exercises\n# Rest it **now**"
    asked.record["context"] = interaction_context(then)
    ctx.episodic, ctx.semantic, ctx.procedural = [asked], [], None
    reply = memory_only_reply("offline", ctx, [])
    lines = reply.splitlines()
    at = lines.index(
        "- My ankle was a bit stiff\\. Should I worry\\? (10 Sep 2026); I answered then:"
    )
    assert lines[at + 1 : at + 4] == [
        "  > \\- Some stiffness is common",
        "  > \\- Keep up the balance exercises",
        "  > \\# Rest it \\*\\*now\\*\\*",
    ]
    # as markdown, each quoted line ends in a hard break: a line of its own in the quote
    assert "  > \\- Some stiffness is common  \n  > \\- Keep up" in shown(reply)
    forgotten = without_quote(reply, asked.text).splitlines()
    assert FORGOTTEN_LINE in forgotten and not [x for x in forgotten if x.startswith("  > ")]


def test_a_memory_that_looks_like_markup_is_listed_as_plain_text() -> None:
    """A memory "# x" showed as a heading and "[a](url)" as a link: each memory's line is
    literal text (read back, the memory word for word), and forgetting it still takes its
    line out of the stored reply."""
    ctx = running_context()
    heading = hit("# Knee brace at night", 0.8, "health_event")
    link = hit("Coach's plan: [week 3](https://example.com/plan) **now**", 0.7, "goal")
    ctx.episodic, ctx.semantic, ctx.procedural = [heading, link], [], None
    reply = memory_only_reply("offline", ctx, [])
    assert bullets(reply) == [f"{heading.text} (10 Sep 2026)", f"{link.text} (10 Sep 2026)"]
    assert "- \\# Knee brace at night (10 Sep 2026)" in reply.splitlines()
    assert "](" not in reply and "**now" not in reply and "https://" not in reply
    forgotten = without_quote(reply, link.text).splitlines()
    assert FORGOTTEN_LINE in forgotten and not [x for x in forgotten if "week 3" in x]
