"""Safe word queries, token estimates, short-term trimming and the prompt block's budget."""

from __future__ import annotations

import pytest

from memory.keys import Keys
from memory.models import (
    ChatMessage,
    MemoryContext,
    MemoryType,
    ProceduralSuggestion,
    RecallHit,
    ScoreParts,
)
from memory.prompt_block import render_prompt_block
from memory.short_term import ShortTermStore
from memory.textquery import bm25_text, query_terms
from memory.tokens import MESSAGE_OVERHEAD, estimate_tokens, message_tokens, truncate_to_tokens

# --- BM25 query terms -------------------------------------------------------------------
SPECIALS = "|}{*-@()[]~\"':;!%$^&+=<>/\\,."


def test_query_terms_keep_words_drop_stopwords_and_duplicates() -> None:
    assert query_terms("What did I eat for Breakfast, breakfast?") == ["eat", "breakfast"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a|b running", ["running"]),
        ("x} sleep", ["sleep"]),
        ("steps* -goal", ["steps", "goal"]),
        ("@user_id:{bob} tea", ["user_id", "bob", "tea"]),
        ("(heart | rate) => [0 1]", ["heart", "rate"]),
        ("ü用户 Müsli", ["ü用户", "müsli"]),
    ],
)
def test_query_terms_strip_query_syntax(text: str, expected: list[str]) -> None:
    terms = query_terms(text)
    assert terms == expected
    assert not any(c in SPECIALS for t in terms for c in t)


def test_only_syntax_or_stopwords_gives_no_text_query() -> None:
    assert bm25_text("| } * - @ ()") is None
    assert bm25_text("what is the") is None
    assert bm25_text("Heart-rate zones?") == "heart rate zones"


def test_query_terms_are_capped() -> None:
    assert len(query_terms(" ".join(f"word{i}" for i in range(100)))) == 32


# --- token estimate ---------------------------------------------------------------------
def test_token_estimate_is_a_quarter_of_the_characters_rounded_up() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert message_tokens("abcd") == 1 + MESSAGE_OVERHEAD


def test_truncate_cuts_at_a_word_and_marks_the_cut() -> None:
    text = "one two three four five six seven eight nine ten"
    assert truncate_to_tokens(text, 100) == text
    cut = truncate_to_tokens(text, 4)
    assert cut.endswith(" …")
    assert estimate_tokens(cut) <= 4
    assert text.startswith(cut[:-2])


# --- short-term trimming ------------------------------------------------------------------
def messages(n: int, chars: int = 36) -> list[ChatMessage]:
    return [
        ChatMessage(
            id=str(i),
            role="user" if i % 2 == 0 else "assistant",
            content=f"{i:02d}" + "x" * (chars - 2),
            timestamp=i,
        )
        for i in range(n)
    ]


def test_within_budget_keeps_the_newest_in_order_and_drops_the_oldest() -> None:
    msgs = messages(10)  # 9 + 4 = 13 tokens each
    kept = ShortTermStore.within_budget(msgs, 13 * 4 + 5)
    assert [m.id for m in kept] == ["6", "7", "8", "9"]
    assert sum(message_tokens(m.content) for m in kept) <= 13 * 4 + 5


def test_within_budget_keeps_all_when_they_fit_and_none_when_nothing_fits() -> None:
    msgs = messages(3)
    assert ShortTermStore.within_budget(msgs, 10_000) == msgs
    assert ShortTermStore.within_budget(msgs, 5) == []


def test_an_old_short_message_is_not_kept_once_a_newer_one_did_not_fit() -> None:
    msgs = [
        *messages(1, chars=4),
        ChatMessage(id="big", role="assistant", content="y" * 400, timestamp=9),
    ]
    assert ShortTermStore.within_budget(msgs, 50) == []  # no gaps in the conversation


# --- prompt block -------------------------------------------------------------------------
def hit(i: int, mtype: MemoryType, score: float, text: str, **record: object) -> RecallHit:
    band = "high" if score >= 0.7 else "moderate" if score >= 0.4 else "low"
    return RecallHit(
        id=str(i),
        memory_type=mtype,
        text=text,
        score=score,
        band=band,
        parts=ScoreParts(final=score),
        record=record,
    )


def context(n_episodic: int = 3) -> MemoryContext:
    ctx = MemoryContext(user_id="u", session_id="s", query="q")
    ctx.episodic = [
        hit(
            i,
            MemoryType.EPISODIC,
            0.9 - i * 0.1,
            f"Episodic memory number {i} about running and sleep",
            event_type="preference",
            timestamp=1_700_000_000_000,
        )
        for i in range(n_episodic)
    ]
    ctx.semantic = [
        hit(9, MemoryType.SEMANTIC, 0.3, "Adults need 7 to 9 hours of sleep.", category="sleep")
    ]
    ctx.procedural = ProceduralSuggestion(
        pattern_id="p",
        query_pattern="How did I sleep?",
        tool_sequence=["get_sleep", "chart"],
        confidence=0.75,
        recommended=True,
        executions=2,
        avg_score=1.0,
        similarity=1.0,
        match="exact",
    )
    return ctx


def test_prompt_block_shows_every_section_with_bands() -> None:
    text, tokens = render_prompt_block(context(), 1_000)
    assert "Personal memories of this user:" in text
    assert "PREFERENCE (high relevance): Episodic memory number 0" in text
    assert "[2023-11-14]" in text
    assert "get_sleep -> chart" in text and "confidence 0.75" in text
    assert "recommended" in text
    assert "[SLEEP] (low relevance) Adults need 7 to 9 hours of sleep." in text
    assert tokens == estimate_tokens(text)
    assert "left out" not in text


@pytest.mark.parametrize("budget", [40, 90, 150])
def test_prompt_block_respects_the_budget_and_says_what_was_left_out(budget: int) -> None:
    _, full_tokens = render_prompt_block(context(n_episodic=6), 10_000)
    text, tokens = render_prompt_block(context(n_episodic=6), budget)
    assert full_tokens > budget
    assert "left out to fit the memory budget" in text
    assert tokens == estimate_tokens(text)
    assert tokens <= budget  # the whole block, the "left out" note included


def test_prompt_block_keeps_the_best_memories_first() -> None:
    text, _ = render_prompt_block(context(n_episodic=6), 80)
    assert "number 0" in text and "number 1" in text
    assert "number 4" not in text and "number 5" not in text
    assert text.index("number 0") < text.index("number 1")


def test_empty_context_gives_an_empty_block() -> None:
    assert render_prompt_block(MemoryContext(user_id="u", session_id="s", query="q"), 100) == (
        "",
        0,
    )


# --- keys ---------------------------------------------------------------------------------
def test_session_keys_never_collide_on_separators() -> None:
    keys = Keys("cm")
    assert keys.session("a:b", "c") != keys.session("a", "b:c")
    assert keys.session("a", "bc") != keys.session("ab", "c")
    assert keys.user_sessions("a:b") != keys.user_sessions("a")
    assert keys.procedure("a:b", "h") != keys.procedure("a", "b:h")


def test_keys_are_stable_and_namespaced() -> None:
    assert Keys("cm").session("u", "s") == Keys("cm").session("u", "s")
    assert Keys("cm").session("u", "s") != Keys("other").session("u", "s")
    assert Keys("ns").episodic("01ABC") == "ns:episodic:01ABC"
    assert "user with spaces" not in Keys("cm").session("user with spaces", "s")
