"""The one word splitter (`memory.text.words`) in the scripts people write, and the rules by
which a text's word names a topic's word (`names_word`), used alike by forget and recall."""

from __future__ import annotations

import unicodedata

import pytest

from memory.recall.terms import query_terms
from memory.text import content_roots, embedder_knows, names_word, words


def test_combining_marks_stay_with_their_letters() -> None:
    # Devanagari vowel signs are no word characters to `re`: "अमिताभ" was cut to "अम".
    assert words("मेरे वकील अमिताभ शर्मा हैं") == ["मेरे", "वकील", "अमिताभ", "शर्मा", "हैं"]
    assert words("ฉันอยากไปเชียงใหม่ปีหน้า") == ["ฉันอยากไปเชียงใหม่ปีหน้า"]  # one run
    assert query_terms("किताब") == ["किताब"]  # a topic, not "no word"
    # NFC and NFD spellings are one word
    assert words(unicodedata.normalize("NFD", "Đà Nẵng")) == words("Đà Nẵng") == ["đà", "nẵng"]


def test_the_dotted_capital_i_folds_to_a_plain_i() -> None:
    for typed in ("İzmir", "IZMIR", "ızmir", unicodedata.normalize("NFD", "İzmir")):
        assert words(typed) == ["izmir"], typed
    assert words("İzmir'de") == ["izmir", "de"]  # Turkish writes a name's suffix after '


def test_invisible_characters_are_dropped() -> None:
    for inside in ("\u034f", "\u00ad", "\u200b", "\u200d", "\u2060", "\ufeff", "\u200e"):
        assert words(f"Oka{inside}for") == ["okafor"], repr(inside)


def test_a_word_written_as_several_counts_with_its_parts() -> None:
    # the words in order, then the parts of those written as several
    assert words("#OkaforLaw okafor2024", parts=True) == [
        "okaforlaw", "okafor2024", "okafor", "law", "okafor", "2024",
    ]  # fmt: skip
    assert words("OKAFOR_LAW HTMLParser", parts=True) == [
        "okafor_law", "htmlparser", "okafor", "law", "html", "parser",
    ]  # fmt: skip
    assert words("Bäckerei_Müller", parts=True) == ["bäckerei_müller", "bäckerei", "müller"]
    assert words("#OkaforLaw") == ["okaforlaw"]  # the whole only, unless asked
    assert words("Okafor McDonald", parts=True)[:1] == ["okafor"]
    assert "okafor" in content_roots("#OkaforLaw", parts=True)


@pytest.mark.parametrize(
    ("word", "topic", "named"),
    [
        ("서울에서", "서울", True),  # Korean particle glued after the word
        ("부산에서", "서울", False),
        ("किताबें", "किताब", True),  # Hindi plural ending
        ("अमेरिका", "अमिताभ", False),
        ("बालक", "अमिताभ", False),
        ("بالقاهرة", "القاهرة", True),  # Arabic "in the" glued before
        ("بأحمد", "أحمد", True),
        ("محمد", "أحمد", False),
        ("ฉันอยากไปเชียงใหม่ปีหน้า", "เชียงใหม่", True),  # Thai: no spaces
        ("เมื่อวานฉันซื้อหนังสือใหม่", "เชียงใหม่", False),
        ("lawyers", "lawyer", False),  # Latin: roots decide (content_roots), never a prefix
        ("article", "art", False),
    ],
)
def test_a_word_names_a_topic_by_the_rules_of_its_script(
    word: str, topic: str, named: bool
) -> None:
    assert names_word(word, topic) is named


def test_the_embedder_knows_latin_script_only() -> None:
    assert embedder_knows("My lawyer is Amitabh Sharma")
    assert embedder_knows("Lunch with Gómez in Zürich")
    assert not embedder_knows("मेरे वकील अमिताभ शर्मा हैं")
    assert not embedder_knows("ทนายของฉันชื่อสมชาย")
    assert not embedder_knows("내년에 서울에서 살고 싶어요")
    assert embedder_knows("2024-05-01 ✅")  # no letters: nothing to distrust


def test_every_format_character_of_this_unicode_is_dropped() -> None:
    """The hand-written list in memory/text.py holds every Cf character `unicodedata` knows
    (and nothing but Cf, unassigned code points, the grapheme joiner and variation selectors)."""
    from memory.text import _IGNORABLE

    for cp in range(0x110000):
        ch = chr(cp)
        category = unicodedata.category(ch)
        if category == "Cf":
            assert _IGNORABLE.match(ch), hex(cp)
        elif _IGNORABLE.match(ch):
            assert category == "Cn" or unicodedata.name(ch).startswith(
                ("COMBINING GRAPHEME JOINER", "VARIATION SELECTOR")
            ), hex(cp)
