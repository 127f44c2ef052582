"""Forget and recall in the scripts people write, end to end with the real embedder: for each
language, what a forget deletes (what names the topic, as people write it: glued particles,
suffixes, no spaces, combining marks) and what it keeps (everything else, including words that
start with the same letters). all-MiniLM-L6-v2 knows English: it calls unrelated Hindi, Thai or
Korean sentences close, so there a forget decides by words alone, and recall's score and its
learned tool habits do not lean on the cosine (`memory.text.embedder_knows`).
"""

from __future__ import annotations

import json
import unicodedata

import pytest

from memory.admin.forget import TopicForget
from memory.coordinator import MemoryCoordinator
from memory.models import BAND_HIGH, BAND_MODERATE
from memory.queries import SearchFilter
from tests.integration.conftest import Run

# language: (topic, texts that name it, texts that do not)
CASES = {
    "hindi": (
        "अमिताभ",
        ["मेरे वकील अमिताभ शर्मा हैं", "कल अमिताभ जी से मिलना है"],
        ["मैं अगले साल अमेरिका जाना चाहता हूँ", "मेरी बहन अमृता पुणे में रहती है"],
    ),
    "hindi plural": (
        "किताब",  # refused before: its vowel sign split the word
        ["मुझे यह किताब बहुत पसंद है", "मैंने तीन किताबें खरीदीं"],
        ["मेरा कुत्ता बहुत प्यारा है", "मैं हर सुबह चाय पीता हूँ"],
    ),
    "arabic": (
        "أحمد",
        ["محاميّ اسمه أحمد منصور", "اتصلت بأحمد أمس"],  # بأحمد: "with Ahmad", glued
        ["محمد صديقي منذ الطفولة", "أختي تعمل طبيبة في عمّان"],
    ),
    "arabic article": (
        "القاهرة",
        ["أريد أن أسافر إلى القاهرة في الصيف", "أخي يعيش بالقاهرة"],
        ["اشتريت سيارة جديدة الأسبوع الماضي", "أختي تعمل طبيبة في عمّان"],
    ),
    "thai": (
        "เชียงใหม่",  # Chiang Mai; no spaces between Thai words
        ["ฉันอยากไปเชียงใหม่ปีหน้า", "แม่ของฉันอยู่ที่เชียงใหม่"],
        ["ทนายของฉันชื่อสมชาย", "เมื่อวานฉันซื้อหนังสือใหม่"],  # ใหม่ "new" alone stays
    ),
    "korean": (
        "서울",
        ["내년에 서울에서 살고 싶어요", "서울은 너무 복잡해요"],
        ["여동생은 부산에서 간호사로 일해요", "어제 새 책을 샀어요"],
    ),
    "turkish": (
        "İzmir",
        [
            "Gelecek yıl İzmir'de yaşamak istiyorum",
            "Annem IZMIR'DEN aradı",
            "izmir’deki ev satıldı",
        ],
        ["Kız kardeşim Ankara'da doktor", "Dün yeni bir kitap aldım"],
    ),
    "vietnamese": (
        "Đà Nẵng",
        [
            "Năm sau tôi muốn chuyển đến Đà Nẵng",
            unicodedata.normalize("NFD", "Bố mẹ tôi sống ở Đà Nẵng"),
        ],
        ["Em gái tôi làm y tá ở Huế", "Hôm qua tôi mua một cuốn sách mới"],
    ),
}


def _descriptions(c: MemoryCoordinator, user: str) -> set[str]:
    rows, _ = c.list_memories(user, "episodic")
    return {r["text"] for r in rows}


@pytest.mark.parametrize("language", list(CASES))
def test_a_forget_deletes_what_names_the_topic_and_keeps_the_rest(
    coordinator: MemoryCoordinator, language: str
) -> None:
    c, forget = coordinator, TopicForget.of(coordinator)
    topic, named, other = CASES[language]
    user = "u-" + language.replace(" ", "-")
    for text in [*named, *other]:
        c.add_episodic(user, text, event_type="fact")

    preview = forget.preview(user, topic)
    assert sorted(m.text for m in preview.matches) == sorted(named)
    report = forget.forget(user, topic)

    assert report.counts["memories"] == len(named)
    assert _descriptions(c, user) == set(other)


def test_turkish_capitals_and_the_dotted_i_are_one_word(coordinator: MemoryCoordinator) -> None:
    c, forget = coordinator, TopicForget.of(coordinator)
    topic, named, other = CASES["turkish"]
    for text in [*named, *other]:
        c.add_episodic("tr-caps", text, event_type="fact")
    # The topic typed in capitals, or with a decomposed dotted I, finds the same memories.
    for typed in ("IZMIR", unicodedata.normalize("NFD", "İzmir"), "ızmir"):
        assert sorted(m.text for m in forget.preview("tr-caps", typed).matches) == sorted(named)


#: a question about something no memory names, per language (Rahul, Bangkok, Jeju, Dubai)
ABSENT = {
    "hindi": "मेरा दोस्त राहुल कहाँ रहता है",
    "thai": "กรุงเทพมีร้านอาหารอร่อยไหม",
    "korean": "제주도 여행 계획을 세워 주세요",
    "arabic": "ما هي أفضل الفنادق في دبي",
}


@pytest.mark.parametrize("language", list(ABSENT))
def test_search_does_not_call_unrelated_texts_close_where_the_embedder_cannot_tell(
    coordinator: MemoryCoordinator, language: str
) -> None:
    """Recall's word score finds the named memory first; the cosine (0.5-1.0 between unrelated
    sentences in these scripts) makes no other memory a strong hit, and none a moderate one
    for a question about something no memory names."""
    c = coordinator
    topic, named, other = CASES[language]
    user = "s-" + language
    for text in [*named, *other]:
        c.add_episodic(user, text, event_type="fact")
    hits = c.search(user, topic, k=10, where=SearchFilter(min_score=0.0))
    assert hits and hits[0].text in named
    assert [h.text for h in hits if h.score >= BAND_HIGH and h.text in other] == []
    unrelated = c.search(user, ABSENT[language], k=10, where=SearchFilter(min_score=0.0))
    assert [(h.text, h.score) for h in unrelated if h.score >= BAND_MODERATE] == []


def test_camel_case_digits_and_the_grapheme_joiner_count_as_the_name(
    coordinator: MemoryCoordinator,
) -> None:
    c, forget = coordinator, TopicForget.of(coordinator)
    named = [
        "Booked a call #OkaforLaw",
        "Invoice okafor2024 paid",
        "Oka\u034ffor sent the papers",  # a combining grapheme joiner inside the name
        "Meeting notes from OKAFOR_LAW",
    ]
    other = ["Lunch with the law school friends", "I run on Sundays"]
    for text in [*named, *other]:
        c.add_episodic("cc", text, event_type="milestone")
    forget.forget("cc", "Okafor")
    assert _descriptions(c, "cc") == set(other)
    # and search no longer finds it
    hits = c.search("cc", "Okafor", k=10, where=SearchFilter(min_score=0.0))
    assert not {h.text for h in hits} & set(named)


def test_the_issues_probe_on_the_command_line(cli: Run) -> None:
    """The commands of the report: forgetting अमिताभ deletes the memory about him, not those
    about America (अमेरिका) and Amrita (अमृता)."""
    for text in (
        "मेरे वकील अमिताभ शर्मा हैं",
        "मैं अगले साल अमेरिका जाना चाहता हूँ",
        "मेरी बहन अमृता पुणे में रहती है",
    ):
        cli("add", "--user", "hi5", "--text", text)
    out = json.loads(cli("forget", "--user", "hi5", "--query", "अमिताभ", "--yes", "--json").stdout)
    assert out["counts"]["memories"] == 1 and out["items"] == 1
    listed = json.loads(cli("list", "--user", "hi5", "--json").stdout)
    texts = {row["text"] for row in listed["items"]}
    assert texts == {"मैं अगले साल अमेरिका जाना चाहता हूँ", "मेरी बहन अमृता पुणे में रहती है"}
    # A topic of one word with a vowel sign is a topic, not a usage error.
    assert cli("forget", "--user", "hi5", "--query", "किताब", "--yes").returncode == 0


def test_no_learned_tool_habit_is_suggested_by_a_cosine_the_embedder_cannot_mean(
    coordinator: MemoryCoordinator,
) -> None:
    """Any two Thai questions are 1.00 apart to the embedder: a habit learned for one is not
    "similar" to another; the same question still finds its own."""
    c = coordinator
    asked = "พรุ่งนี้ที่เชียงใหม่อากาศเป็นอย่างไร"  # the weather in Chiang Mai tomorrow?
    c.record_procedure("th-p", asked, ["get_weather"], success_score=1.0, execution_time_ms=1.0)
    other = c.retrieve_all_context("th-p", "s1", "ช่วยแปลประโยคนี้เป็นภาษาอังกฤษ")  # translate
    assert other.procedural is None
    same = c.retrieve_all_context("th-p", "s1", asked)
    assert same.procedural is not None and same.procedural.tool_sequence == ["get_weather"]
