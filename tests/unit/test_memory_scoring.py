"""Scores a user sees: procedural confidence, relevance bands, and the hybrid-recall fusion."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memory.config import Settings
from memory.models import BAND_HIGH, BAND_MODERATE, MemoryType, relevance_band
from memory.recall import scoring
from memory.recall.hybrid import DAY_MS, RecallWeights, annotate_coverage, fuse, score_candidates
from memory.recall.scoring import terms_of_query
from memory.stores.procedural import confidence, normalize_query, query_hash
from memory.stores.records import vector_bytes
from memory.text import words

NOW = 1_750_000_000_000
THRESHOLD = Settings(_env_file=None).procedural_recommend_threshold


# --- procedural confidence (Beta(1, 1) posterior mean) -----------------------------------
def test_one_success_is_not_certainty() -> None:
    assert confidence(1.0, 1) == pytest.approx(2 / 3)
    assert confidence(1.0, 1) < 1.0


def test_confidence_rises_with_each_success_and_never_reaches_one() -> None:
    values = [confidence(float(n), n) for n in range(1, 50)]
    assert values == sorted(values)
    assert len(set(values)) == len(values)  # strictly rising
    assert all(v < 1.0 for v in values)


def test_confidence_falls_with_each_failure() -> None:
    after_two_successes = confidence(2.0, 2)
    one_failure = confidence(2.0, 3)
    two_failures = confidence(2.0, 4)
    assert after_two_successes > one_failure > two_failures


def test_partial_success_counts_as_a_fraction() -> None:
    assert confidence(0.0, 1) < confidence(0.5, 1) < confidence(1.0, 1)


def test_recommended_threshold_needs_two_clean_successes() -> None:
    assert THRESHOLD == 0.7
    assert confidence(1.0, 1) < THRESHOLD  # one success: not yet recommended
    assert confidence(2.0, 2) >= THRESHOLD  # two: recommended
    assert confidence(2.0, 3) < THRESHOLD  # a failure drops it below again


def test_no_runs_means_no_opinion() -> None:
    assert confidence(0.0, 0) == 0.5


# --- query normalisation (the O(1) procedural lookup key) -------------------------------
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Steps on 3 May?", "steps on # may"),
        ("  How   MANY steps,   did I walk?? ", "how many steps did i walk"),
        ("sleep on 2024-05-03", "sleep on # # #"),
        ("Café au lait!", "café au lait"),
        ("???", ""),
    ],
)
def test_normalize_query(query: str, expected: str) -> None:
    assert normalize_query(query) == expected


def test_same_question_with_other_numbers_shares_a_pattern() -> None:
    a = query_hash(normalize_query("How many steps did I walk on 3 May?"))
    b = query_hash(normalize_query("how many steps did I walk on 14 may"))
    c = query_hash(normalize_query("How much did I sleep on 3 May?"))
    assert a == b
    assert a != c


# --- relevance bands (thresholds from the reliability table, BENCHMARKS.md) -------------
@pytest.mark.parametrize(
    ("score", "band"),
    [
        (1.0, "high"),
        (BAND_HIGH, "high"),
        (BAND_HIGH - 1e-4, "moderate"),
        (BAND_MODERATE, "moderate"),
        (BAND_MODERATE - 1e-4, "low"),
        (0.0, "low"),
    ],
)
def test_relevance_bands(score: float, band: str) -> None:
    assert relevance_band(score) == band


def test_the_default_threshold_keeps_low_band_hits() -> None:
    assert 0 < Settings(_env_file=None).recall_min_score < BAND_MODERATE


# --- scoring -----------------------------------------------------------------------------
def unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


QUERY = unit(1, 0, 0, 0)
NO_EXTRAS = RecallWeights(recency=0.0, importance=0.0, min_score=0.0)


def vector_row(mid: str, distance: float, **fields: object) -> dict:
    return {
        "id": f"ns:episodic:{mid}",
        "vector_distance": str(distance),
        "description": f"memory {mid}",
        "timestamp": str(NOW),
        "importance": "0.5",
        **{k: str(v) for k, v in fields.items()},
    }


def text_row(mid: str, bm25: float, vec: np.ndarray | None = None, **fields: object) -> dict:
    row = {
        "id": f"ns:episodic:{mid}",
        "score": bm25,
        "description": f"memory {mid}",
        "timestamp": str(NOW),
        "importance": "0.5",
        **{k: str(v) for k, v in fields.items()},
    }
    if vec is not None:
        row["embedding"] = vector_bytes(vec)  # as stored: the index's dtype
    return row


def run(vrows: list, trows: list, weights: RecallWeights = NO_EXTRAS, k: int = 10) -> dict:
    hits = fuse(MemoryType.EPISODIC, vrows, trows, QUERY, k, weights, NOW)
    return {h.id: h for h in hits}


def covered(query: str, rows: list[dict]) -> dict[str, float]:
    annotate_coverage(rows, terms_of_query(query), {"description": 1.0, "context": 0.5})
    return {r["id"].rsplit(":", 1)[-1]: r["_cover"] for r in rows}


def test_vector_only_hit_has_its_similarity_and_no_word_part() -> None:
    hits = run([vector_row("a", 0.2)], [])
    a = hits["a"]
    assert a.parts.vector == pytest.approx(0.8)
    assert a.parts.text == 0.0
    assert a.score == pytest.approx(scoring.probability(0.8, 0.0, 0.0), abs=1e-4)
    assert a.parts.final == a.score
    assert a.text == ""  # filled in by `hydrate`, which reads the kept hits whole
    assert a.record["id"] == "a" and a.record["timestamp"] == NOW
    assert a.memory_type is MemoryType.EPISODIC


def test_a_rare_shared_word_counts_more_than_a_common_one() -> None:
    rows = [
        vector_row("rare", 0.5, description="my knee hurts when I run"),
        vector_row("common1", 0.5, description="I like tea"),
        vector_row("common2", 0.5, description="I like maps"),
        vector_row("common3", 0.5, description="I like the sea"),
    ]
    cover = covered("Do I like knee exercises?", rows)
    assert cover["rare"] > cover["common1"] > 0
    assert cover["common1"] == cover["common2"] == cover["common3"]


def test_coverage_is_a_share_of_the_query_and_context_words_count_half() -> None:
    rows = [
        vector_row("all", 0.5, description="marathon training plan"),
        vector_row("ctx", 0.5, description="sure", context="marathon training plan"),
        vector_row("none", 0.5, description="unrelated"),
    ]
    cover = covered("marathon training plan?", rows)
    assert cover["all"] == pytest.approx(1.0)
    assert cover["ctx"] == pytest.approx(0.5)
    assert cover["none"] == 0.0


def test_words_match_across_plural_and_ing_forms() -> None:
    rows = [vector_row("a", 0.5, description="I love morning workouts"), vector_row("b", 0.5)]
    assert covered("a workout in the morning", rows)["a"] == pytest.approx(1.0)


def test_one_common_shared_word_never_outranks_a_strong_meaning_match() -> None:
    # The case: the only shared word ("like") is one many memories have.
    meaning = vector_row("workouts", 0.48, description="I prefer morning workouts before 7am")
    word = vector_row("bullets", 0.90, description="I like concise answers in bullet points")
    others = [vector_row(f"o{i}", 0.95, description=f"I like topic {i}") for i in range(3)]
    rows = [meaning, word, *others]
    annotate_coverage(rows, terms_of_query("When do I like to exercise?"), {"description": 1.0})
    hits = fuse(MemoryType.EPISODIC, rows, [], QUERY, 5, NO_EXTRAS, NOW)
    assert hits[0].id == "workouts"
    assert hits[0].score > 2 * max(h.score for h in hits[1:])


def test_text_only_hit_gets_its_vector_similarity_from_the_stored_vector() -> None:
    stored = unit(1, 1, 0, 0)  # cosine with QUERY = 0.7071
    hits = run([], [text_row("t", 3.0, vec=stored)])
    assert hits["t"].parts.vector == pytest.approx(0.7071, abs=1e-4)
    assert "embedding" not in hits["t"].record  # vectors are not handed to the UI


def test_raw_bm25_does_not_change_the_score() -> None:
    # BM25 only finds candidates: its raw scale means nothing across queries.
    stored = unit(1, 1, 0, 0)
    assert run([], [text_row("t", 3.0, vec=stored)])["t"].score == pytest.approx(
        run([], [text_row("t", 30.0, vec=stored)])["t"].score
    )


def test_hits_below_the_threshold_are_dropped() -> None:
    threshold = scoring.probability(0.6, 0.0, 0.0)
    weights = RecallWeights(recency=0.0, importance=0.0, min_score=threshold)
    hits = run([vector_row("close", 0.1), vector_row("far", 0.8)], [], weights)
    assert set(hits) == {"close"}


def test_results_are_best_first_and_cut_to_k() -> None:
    rows = [vector_row(str(i), d) for i, d in enumerate([0.5, 0.1, 0.3, 0.2])]
    hits = fuse(MemoryType.EPISODIC, rows, [], QUERY, 2, NO_EXTRAS, NOW)
    assert [h.id for h in hits] == ["1", "3"]
    assert hits[0].score >= hits[1].score


def test_recency_and_importance_shift_the_score() -> None:
    weights = RecallWeights(recency=0.25, importance=0.5, half_life_days=30, min_score=0.0)
    old = vector_row("old", 0.2, timestamp=NOW - 30 * DAY_MS, importance=0.0)
    new = vector_row("new", 0.2, timestamp=NOW, importance=0.0)
    pinned = vector_row("pinned", 0.2, timestamp=NOW - 30 * DAY_MS, importance=0.0, pinned=1)
    hits = run([old, new, pinned], [], weights)
    assert hits["new"].parts.recency == 1.0
    assert hits["old"].parts.recency == pytest.approx(0.5)  # one half-life
    assert hits["new"].score > hits["old"].score
    assert hits["pinned"].parts.importance == 1.0  # pinned counts as most important
    assert hits["pinned"].score > hits["old"].score


def test_scores_stay_within_zero_and_one() -> None:
    weights = RecallWeights(recency=1.0, importance=1.0, min_score=0.0)
    row = vector_row("a", 0.0, importance=1.0, description="a b c")
    annotate_coverage([row], terms_of_query("a b c"), {"description": 1.0})
    hits = run([row], [text_row("a", 9.0)], weights)
    assert 0.0 <= hits["a"].score <= 1.0


# --- the fast paths of recall's scoring give what the plain definitions give ----------------
@pytest.mark.parametrize(
    "texts",
    [
        ("I went running, then ran again.", "Context: RUNS!"),
        ("Together we got better", ""),  # "get"/"better" inside other words or not at all
        ("", ""),
        ("workouts/runs; running's (fine) \u2014 run\u2026", "better-than-ever"),
        ("Gets\tbetter\nand\u00a0better", "no"),
    ],
)
def test_term_forms_match_the_words_as_word_sets_do(texts: tuple[str, str]) -> None:
    """Recall matches a query's terms with `TermForms` (it skips texts holding no form and
    intersects the words with all forms at once): the same matches as per-term word sets."""
    terms = [*terms_of_query("running workouts get better"), "run"]  # "run" repeated
    weights = [1.0, 0.5]
    fast = scoring.term_forms(tuple(terms)).matches(texts, weights)
    plain = scoring.term_matches(
        scoring.forms_of(terms), [scoring.word_set(t) for t in texts], weights
    )
    assert fast == plain
    assert scoring.term_forms(tuple(terms)) is scoring.term_forms(tuple(terms))  # built once


@pytest.mark.parametrize(
    "family",
    [
        ("swim", "swims", "swimming"),
        ("run", "running"),
        ("stop", "stops", "stopped", "stopping"),
        ("call", "calls", "called", "calling"),
        ("workout", "workouts"),
    ],
)
def test_a_word_matches_its_other_forms(family: tuple[str, ...]) -> None:
    """A doubled consonant before an ending does not keep a word from its other forms: "Which
    days do I swim?" covers "swimming on Tuesday"."""
    for asked in family:
        (term,) = terms_of_query(asked)
        for written in family:
            fast = scoring.term_forms((term,)).matches([f"I like {written} a lot"], [1.0])
            assert fast == [1.0], (asked, written)


def test_every_word_of_the_demo_persona_matches_itself() -> None:
    """The forms a query word is matched in hold that word as written (they are generated
    from its root, not read from the text)."""
    text = (Path(__file__).parents[2] / "memory/data/demo_persona.toml").read_text()
    vocabulary = {w for w in words(text) if len(w) > 1 and not w[0].isdigit()}
    assert len(vocabulary) > 300  # the file was read
    missed = [w for w in vocabulary if w not in scoring.forms_of([scoring.word_key(w)])[0]]
    assert missed == []
    # `TermForms` skips a text that does not hold a term: each form starts with its term
    keys = {scoring.word_key(w) for w in vocabulary}
    assert [k for k in keys if any(not f.startswith(k) for f in scoring.forms_of([k])[0])] == []


def test_candidates_read_from_hashes_score_as_search_rows_do() -> None:
    """A neighbour read by HMGET comes as bytes, a semantic row has no session or event type:
    scored like the same memory as search text."""
    as_text = vector_row("a", 0.25, pinned=1, session="s1", event_type="fact")
    as_bytes = {k: v.encode() if isinstance(v, str) else v for k, v in as_text.items()}
    bare = {k: v for k, v in as_text.items() if k not in ("session", "event_type", "pinned")}
    w = RecallWeights(recency=0.25, importance=0.5, min_score=0.0)
    text_scored = score_candidates([as_text], [], QUERY, w, NOW)["a"]
    bytes_scored = score_candidates([as_bytes], [], QUERY, w, NOW)["a"]
    assert bytes_scored == text_scored
    assert text_scored["rec"]["pinned"] is True and text_scored["session"] == "s1"
    bare_scored = score_candidates([bare], [], QUERY, w, NOW)["a"]
    assert bare_scored["rec"]["session"] == "" and bare_scored["rec"]["event_type"] == ""
    assert bare_scored["importance"] == 0.5
