"""Safe word queries, token estimates, short-term trimming and the prompt block's budget."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from memory.keys import Keys, user_tag
from memory.models import (
    ChatMessage,
    MemoryType,
    RecallHit,
    ScoreParts,
)
from memory.recall.terms import bm25_text, query_terms
from memory.stores.short_term import ShortTermStore
from memory.tokens import (
    CACHED_CHARS,
    MESSAGE_OVERHEAD,
    _short_message_tokens,
    estimate_tokens,
    message_tokens,
    newest_within_budget,
    raw_tokens,
    truncate_to_tokens,
)

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
def test_token_estimate_counts_words_digits_symbols_and_bytes() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 2  # 1 x SAFETY, rounded up
    assert estimate_tokens("abcdef ghijklm") == 4  # a token per 6 letters begun; no spaces
    assert estimate_tokens("2026") == 5  # a token per digit (Qwen), x 1.1
    assert estimate_tokens('{"a":1}') == 8  # JSON syntax: a token per character
    assert estimate_tokens("é") == 3  # non-ASCII: its UTF-8 bytes (2), x 1.1
    assert estimate_tokens("🏃") == 5  # 4 bytes
    assert message_tokens("abcd") == 2 + MESSAGE_OVERHEAD


# Text a characters/4 rule undercounts: JSON, numbers, emoji, CJK, code, ids.
HARD_TEXTS = [
    "I prefer morning runs before work, usually 5-6 km at an easy pace.",
    json.dumps({"metric": "steps", "days": 7, "values": [10234, 9876, 12001, 8450]}),
    "Resting HR 58 bpm on 2026-11-20 at 06:30; weight 71.4 kg; 10,000 steps; 3x400m @ 1:32.",
    "Great run today 🏃‍♀️🔥💪 new PB!!! 🎉🎉",
    "我喜欢早上跑步，每周三次。今天跑了十公里。",
    "日本語のテキストと English mixed 텍스트 ✓",
    "def f(x):\n    return {k: v for k, v in x.items() if v}  # comment",
    "api_key=sk-3f9a0c1e7b2d4a6f8e0c1b3d5f7a9c2e, id 01JD6T2ZQ8M4X7K9P3R5V1W0YB",
    "Ça va? Größe, naïve café, façade — “quotes” … ‘and’ «more»",
    '<<<MEMORY 3f9a0c1e>>>\n- [episodic/preference] "I prefer tea" (relevance: high)',
]


@pytest.mark.parametrize("text", HARD_TEXTS)
def test_the_estimate_is_not_below_a_real_tokenizer(text: str) -> None:
    from tests.fakes.fake_ollama import count_tokens

    assert estimate_tokens(text) >= count_tokens(text)


def test_truncate_cuts_at_a_word_and_marks_the_cut() -> None:
    text = "one two three four five six seven eight nine ten"
    assert truncate_to_tokens(text, 100) == text
    cut = truncate_to_tokens(text, 8)
    assert cut.endswith(" …")
    assert estimate_tokens(cut) <= 8
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
    msgs = messages(10)
    cost = message_tokens(msgs[0].content)  # the same for each
    kept = ShortTermStore.within_budget(msgs, cost * 4 + 5)
    assert [m.id for m in kept] == ["6", "7", "8", "9"]
    assert sum(message_tokens(m.content) for m in kept) <= cost * 4 + 5


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
    assert Keys("ns").episodic("u", "01ABC") == "ns:episodic:" + user_tag("u") + ":01ABC"
    assert "user with spaces" not in Keys("cm").session("user with spaces", "s")


def test_a_recent_window_is_counted_once_per_message_across_turns() -> None:
    """Each recall fits the same recent messages into the history budget again: their counts
    come from a cache the second time (the same numbers, none of the tokenising work)."""

    class Msg:
        def __init__(self, content: str) -> None:
            self.content = content

    window = [Msg(f"window message {i}: how did my run go on Saturday?") for i in range(10)]
    first = newest_within_budget(window, 10_000)
    before = _short_message_tokens.cache_info()
    assert newest_within_budget(window, 10_000) == first
    after = _short_message_tokens.cache_info()
    assert after.hits - before.hits == len(window)
    # a very long text is counted, not kept: the cache holds short messages only
    long_text = "word " * (CACHED_CHARS // 4)
    assert message_tokens(long_text) == estimate_tokens(long_text) + MESSAGE_OVERHEAD
    assert _short_message_tokens.cache_info().currsize == after.currsize


def _tokens_piece_by_piece(text: str) -> int:
    """The rule of memory/tokens.py said one piece at a time: the reference its faster count
    must equal."""
    n = 0
    for piece in re.findall(r"[A-Za-z0-9]+|[ \t]+|.", text, re.DOTALL):
        c = piece[0]
        if c.isascii() and c.isalnum():
            digits = sum(ch.isdigit() for ch in piece)
            letters = len(piece) - digits
            if digits and letters or re.search(r"[a-z][A-Z]", piece):
                n += len(piece)
            elif digits:
                n += digits
            else:
                n += (letters + 2) // 3 if letters > 12 else 1 + (letters - 1) // 6
        elif c not in " \t":
            n += 1 if c.isascii() else len(c.encode("utf-8", "surrogatepass"))
    return n


def test_the_token_count_equals_the_piece_by_piece_rule() -> None:
    rnd = random.Random(7)
    alphabet = "abcXYZ019 \t\n.,é日🏃-_\"'{}"
    texts = ["héllo wörld 日本語 🏃 isUpper ABc Hello x1y2 12345 a\tb\n", "AbCdEf", "a" * 40]
    texts += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 60))) for _ in range(2000)]
    texts.append((Path(__file__).parents[2] / "docs" / "agent.md").read_text())
    for text in texts:
        assert raw_tokens(text) == _tokens_piece_by_piece(text), text
