"""The recall additions measured on LoCoMo: dates in queries, the per-term BM25 query, and the
time / session-neighbour signals in `fuse`."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
from redisvl.query.filter import Tag

from memory.models import MemoryType
from memory.recall import scoring
from memory.recall.fusion import add_neighbour_part, score_candidates
from memory.recall.hybrid import DAY_MS, RecallWeights, TermUnionTextQuery, fuse, time_ranges

NOW = int(datetime(2025, 6, 15, 12, tzinfo=UTC).timestamp() * 1000)


def ms(y: int, m: int, d: int) -> int:
    return int(datetime(y, m, d, tzinfo=UTC).timestamp() * 1000)


def test_a_named_day_covers_that_day_and_its_neighbours() -> None:
    for q in ("What did I eat on 9 November, 2022?", "on November 9th 2022", "9th of Nov 2022"):
        assert time_ranges(q, NOW) == [(ms(2022, 11, 8), ms(2022, 11, 11))], q


def test_months_years_and_relative_dates() -> None:
    assert time_ranges("my runs in March 2024", NOW) == [(ms(2024, 3, 1), ms(2024, 4, 1))]
    assert time_ranges("in December 2023", NOW) == [(ms(2023, 12, 1), ms(2024, 1, 1))]
    assert time_ranges("When did I hurt my knee in 2023?", NOW) == [
        (ms(2023, 1, 1), ms(2024, 1, 1))
    ]
    today = NOW - NOW % DAY_MS
    assert time_ranges("what did I say yesterday", NOW) == [(today - DAY_MS, today + DAY_MS)]


def test_no_date_no_range() -> None:
    for q in ("May I ask something?", "I ran 2023 metres", "my pin is 1990", ""):
        assert time_ranges(q, NOW) == [], q


def test_every_term_is_its_own_filtered_clause() -> None:
    q = TermUnionTextQuery(
        "lgbtq support the group",
        {"description": 1.0, "context": 0.5},
        filter_expression=Tag("owner") == "abc",
        stopwords=None,
    )
    s = str(q).split(" SCORER")[0]
    assert s == (
        "(@description|context:lgbtq @owner:{abc}) | (@description|context:support @owner:{abc})"
        " | (@description|context:group @owner:{abc})"
    )  # "the" is an index stopword: `(@f:the filter)` would match every memory


def test_a_tag_holding_a_form_of_a_query_word_makes_a_candidate() -> None:
    """Tags count as words of a memory: "swim" also asks for the memories tagged "swimming"."""
    q = TermUnionTextQuery(
        "swim",
        {"description": 1.0},
        filter_expression=Tag("owner") == "abc",
        stopwords=None,
        tag_field="tags",
        tag_words=sorted(scoring.forms_of(["swim"])[0]),
    )
    s = str(q).split(" SCORER")[0]
    text, tags = s.split(" | ", 1)
    assert text == "(@description:swim @owner:{abc})"
    assert tags.startswith("(@tags:{") and tags.endswith("} @owner:{abc})")
    assert {"swim", "swimming", "swims"} <= set(tags.split("{", 1)[1].split("}")[0].split(" | "))


def test_only_stopwords_match_nothing() -> None:
    q = TermUnionTextQuery(
        "the a of", "description", filter_expression=Tag("owner") == "abc", stopwords=None
    )
    assert "@owner" not in str(q) and "__no_term__" in str(q)


def _row(mid: str, distance: float, **extra: object) -> dict:
    return {
        "id": f"ns:episodic:{mid}",
        "vector_distance": str(distance),
        "timestamp": str(NOW),
        "importance": "0.5",
        **extra,
    }


W = RecallWeights(recency=0.0, importance=0.0, min_score=0.0)
Q = np.array([1.0, 0.0], dtype=np.float32)


def test_a_memory_dated_in_the_query_gets_the_time_boost() -> None:
    hits = fuse(
        MemoryType.EPISODIC, [_row("a", 0.5), _row("b", 0.5, _time_match=True)], [], Q, 5, W, NOW
    )
    by_id = {h.id: h for h in hits}
    assert by_id["b"].parts.time == 1.0 and by_id["a"].parts.time == 0.0
    assert by_id["b"].score > by_id["a"].score
    assert by_id["b"].score == round(scoring.probability(0.5, 0.0, 1.0), 4)


def test_a_neighbour_of_a_strong_hit_rises_with_it() -> None:
    rows = [
        _row("seed", 0.1),
        _row("far", 0.2),
        _row("matching_next", 0.2, _neighbour_of={"seed": 2}),
        _row("next", 0.5, _neighbour_of={"seed": 1}),
        _row("next2", 0.5, _neighbour_of={"seed": 2}),
    ]
    w = RecallWeights(recency=0.0, importance=0.0, min_score=0.0)
    assert w.neighbour == scoring.W_NEIGHBOUR > 0
    hits = fuse(MemoryType.EPISODIC, rows, [], Q, 5, w, NOW)
    score = {h.id: h.score for h in hits}
    seed = scoring.probability(0.9, 0.0, 0.0)
    assert score["seed"] == round(seed, 4)
    # A neighbour that also matches on its own: the seed's probability adds to its log-odds,
    # so it outranks the same match without a seed.
    assert score["matching_next"] == round(_own(0.8, 0.9, extra=w.neighbour * seed), 4)
    assert score["matching_next"] > score["far"] == round(_own(0.8, 0.9), 4)
    # One that does not match: the floor, a share of the seed's probability per hop.
    assert _own(0.5, 0.9, extra=w.neighbour * seed) < seed * w.neighbour_floor**2
    assert score["next"] == round(seed * w.neighbour_floor, 4)
    assert score["next2"] == round(seed * w.neighbour_floor**2, 4)
    assert [h.id for h in hits] == ["seed", "matching_next", "far", "next", "next2"]
    parts = {h.id: h.parts.neighbour for h in hits}
    assert parts == {
        "seed": 0.0,
        "far": 0.0,
        "next": round(seed, 4),
        "next2": round(seed, 4),
        "matching_next": round(seed, 4),
    }


def test_a_neighbour_above_its_seed_lowers_the_rest_alike_and_a_second_pass_changes_nothing() -> (
    None
):
    # "next" matches almost as well as its seed on its own; with the seed's part it becomes the
    # best z of the query, so every other candidate is calibrated against it (their order kept)
    rows = [
        _row("seed", 0.1),
        _row("other", 0.15),
        _row("far", 0.3),
        _row("next", 0.12, _neighbour_of={"seed": 1}),
    ]
    w = RecallWeights(recency=0.0, importance=0.0, min_score=0.0)
    scored = score_candidates(rows, [], Q, w, NOW)
    own = {rid: c["final"] for rid, c in scored.items()}
    add_neighbour_part(scored, w.neighbour, w.neighbour_floor)
    first = {rid: c["final"] for rid, c in scored.items()}
    z_next = scored["next"]["z"] + w.neighbour * own["seed"]
    assert z_next > scored["seed"]["z"]  # the neighbour now holds the best z
    assert first["next"] == scoring.calibrated(z_next, z_next)
    for rid in ("seed", "other", "far"):
        assert first[rid] == scoring.calibrated(scored[rid]["z"], z_next) < own[rid]
    assert sorted(first, key=first.__getitem__, reverse=True) == ["next", "seed", "other", "far"]
    assert scored["next"]["neighbour"] == own["seed"]
    # the seeds' own probabilities are kept apart: a second call gives the same finals
    add_neighbour_part(scored, w.neighbour, w.neighbour_floor)
    assert {rid: c["final"] for rid, c in scored.items()} == first


def _own(cosine: float, best: float, extra: float = 0.0) -> float:
    """A candidate's probability when the query's best candidate has cosine `best`; `extra`:
    log-odds added to its own (the neighbour part)."""
    best_z = scoring.logit(best, 0.0, 0.0, w_recency=0.0, w_importance=0.0)
    z = scoring.logit(cosine, 0.0, 0.0, w_recency=0.0, w_importance=0.0) + extra
    return scoring.calibrated(z, best_z)


def test_no_boosts_when_switched_off() -> None:
    w = RecallWeights(recency=0.0, importance=0.0, min_score=0.0, neighbour=0.0, time_match=0.0)
    rows = [_row("seed", 0.1), _row("next", 0.9, _neighbour_of={"seed": 1}, _time_match=True)]
    score = {h.id: h.score for h in fuse(MemoryType.EPISODIC, rows, [], Q, 5, w, NOW)}
    assert score == {
        "seed": round(scoring.probability(0.9, 0.0, 0.0), 4),
        "next": round(_own(0.1, 0.9), 4),
    }
