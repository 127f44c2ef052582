"""Numbers people read on screens said in words (ui/format.py): a time in seconds, not
milliseconds; a memory's importance as low / medium / high, the word a person picks setting
a number that reads back as the same word."""

from __future__ import annotations

import pytest

from tests.not_words import internal_words
from ui.format import IMPORTANCE_VALUES, fmt_duration, importance_word


@pytest.mark.parametrize(
    ("ms", "said"),
    [
        (3.2, "under a tenth of a second"),
        (99.9, "under a tenth of a second"),
        (340, "0.3 seconds"),
        (1000, "1.0 second"),
        (2_430, "2.4 seconds"),
        (14_200, "14 seconds"),
        (None, "–"),
    ],
)
def test_a_time_reads_in_seconds(ms: float | None, said: str) -> None:
    assert fmt_duration(ms) == said
    assert internal_words(f"Typical recall time: {said}") == []


def test_each_importance_word_sets_a_number_that_reads_back_as_that_word() -> None:
    assert list(IMPORTANCE_VALUES) == ["low", "medium", "high"]
    assert {w: importance_word(v) for w, v in IMPORTANCE_VALUES.items()} == {
        "low": "low",
        "medium": "medium",
        "high": "high",
    }
    assert importance_word(0.9) == "high" and importance_word(0.5) == "medium"
    assert importance_word(None) == ""


@pytest.mark.parametrize(
    ("source", "added_by", "said"),
    [
        ("user", "alice", "you"),
        ("user", "bob", "a person"),
        ("knowledge_file", "", "built in"),
        ("cli", "", "the command line"),
        ("demo", "alice", "the demo"),
        ("WHO physical activity guidelines", "", "WHO physical activity guidelines"),
    ],
)
def test_a_facts_source_reads_as_words(source: str, added_by: str, said: str) -> None:
    from ui.tables import semantic_frame

    fact = {"id": "f", "text": "x", "source": source, "added_by": added_by}
    assert semantic_frame([fact], viewer="alice")["Source"][0] == said


def test_the_tags_the_app_adds_itself_are_not_shown_and_an_edit_keeps_them() -> None:
    """A second walk read "tags: summary" on every chat summary (docs/app.md: shown nowhere)."""
    from memory import DEMO_TAG
    from ui.format import hidden_tags, tag_list

    stored = ["summary", DEMO_TAG, "running"]
    assert tag_list(stored) == ["running"] and tag_list("summary|running") == ["running"]
    assert hidden_tags(stored) == ["summary", DEMO_TAG]
