"""Recall's shortcuts change nothing it returns.

A warm recall scores its candidates once (the neighbour seeds' scores are reused by the
fusion) and reads its likely hits whole in the round trip that reads the seeds' timelines.
Here each query's hits (ids, order, scores and their parts, text) are compared with the same
candidates scored from scratch and read whole afterwards, on a store whose candidates have
session neighbours (found by the searches or not, one superseded), the user's own facts and
dated turns."""

from __future__ import annotations

import dataclasses

import pytest

from memory.coordinator import MemoryCoordinator
from memory.models import RecallHit, now_ms
from memory.recall import fuse, hydrate, hydration_groups, run_requests
from memory.recall.requests import episodic_request, semantic_request

U, S = "eq-user", "s1"
MIN = 60_000
TRIP = [
    "We talked about the weather in the mountains",
    "Which hiking trail did you pick for the Dolomites trip?",
    "The Alta Via 1, starting from Lago di Braies",
    "My sister collects vintage postcards",
    "We booked the refuge for the second night",
]
RUNS = [
    "How far should my long run be this Saturday?",
    "Sixteen kilometres at an easy pace, then stretch",
    "My left knee felt fine after that",
]
FACTS = [
    ("I am vegetarian: eggs and dairy, no meat or fish", "preference"),
    ("My goal is to finish the half marathon in 2 hours 10", "goal"),
    ("I sprained my left ankle in March", "health_event"),
]
#: other memories on the trip's subject, so that the searches' short lists leave out its reply
OTHERS = [
    "I love hiking in the Alps every summer",
    "The mountain weather changed quickly on our last trip",
    "I want to pick a new hiking trail near the lakes",
    "We planned a trip to the Dolomites two years ago",
    "My hiking boots need new laces",
    "A trail run in the hills is my favourite workout",
    *(f"Hiking trail idea number {i} for a Dolomites trip" for i in range(12)),
]
QUERIES = [
    "Which hiking trail for the Dolomites trip?",
    "How long should my Saturday run be?",
    "Plan my running this week",
    "What should I eat the night before my long run?",
    "What did we talk about yesterday?",
    "refuge second night",
]


@pytest.fixture
def store(coordinator: MemoryCoordinator) -> MemoryCoordinator:
    start = now_ms() - 86_400_000
    for n, (session, turns) in enumerate((("trip", TRIP), ("runs", RUNS))):
        ids = [
            coordinator.add_episodic(
                U,
                text,
                event_type="interaction",
                session_id=session,
                timestamp_ms=start + n * 3_600_000 + i * MIN,
            ).id
            for i, text in enumerate(turns)
        ]
        if session == "trip":  # a superseded turn stays on the timeline: no neighbour
            coordinator.add_episodic(
                U, "We booked the hut instead", event_type="fact", supersedes=ids[4]
            )
    for text, kind in FACTS:
        coordinator.add_episodic(U, text, event_type=kind)
    for text in OTHERS:
        coordinator.add_episodic(U, text, event_type="fact")
    coordinator.add_semantic("Runners should increase weekly distance by at most 10 percent")
    coordinator.bookkeeping.drain()  # the statement classifier is fitted there
    # short candidate lists, so that some neighbours are found by neither search
    coordinator.recall.weights = dataclasses.replace(coordinator.recall.weights, candidates=4)
    return coordinator


def _from_scratch(coord: MemoryCoordinator, query: str, k_episodic: int) -> list[RecallHit]:
    """The candidates of the same searches scored from their rows alone, then read whole."""
    recall, stores, qvec = coord.recall, coord.stores, coord.embedder.embed_query(query)[0]
    requests = [
        episodic_request(
            stores.episodic,
            coord.keys,
            U,
            query,
            qvec,
            k_episodic,
            recall.weights,
            recall._statements,
        ),
        semantic_request(stores.semantic, U, query, qvec, 3, recall.weights),
    ]
    now = now_ms()
    ep, sem = (
        fuse(req.memory_type, vrows, trows, qvec, req.k, req.weights, now)
        for req, (vrows, trows) in zip(requests, run_requests(requests), strict=True)
    )
    hydrate(coord.redis, hydration_groups(coord.keys, U, ep, sem))
    return ep + sem


def _seen(hits: list[RecallHit]) -> list[tuple[str, str, float, dict, str]]:
    return [(h.memory_type.value, h.id, h.score, h.parts.model_dump(), h.text) for h in hits]


@pytest.mark.parametrize("query", QUERIES)
def test_recall_returns_what_scoring_from_scratch_returns(
    store: MemoryCoordinator, query: str
) -> None:
    ctx = store.retrieve_all_context(U, S, query)
    assert ctx.episodic
    expected = _from_scratch(store, query, store.settings.recall_prompt_k)
    assert _seen(ctx.episodic + ctx.semantic) == _seen(expected)
    assert all(h.record.get("description") == h.text for h in ctx.episodic)


def test_the_store_exercises_neighbours_found_and_read(store: MemoryCoordinator) -> None:
    """The comparison above covers the neighbour paths: turns the searches found are
    boosted, and turns they did not find are read and recalled for their neighbour alone."""
    k = store.settings.recall_prompt_k
    off = dataclasses.replace(store.recall.weights, neighbour=0.0)
    read, boosted = [], []
    for query in QUERIES:
        hits = store.retrieve_all_context(U, S, query).episodic
        assert TRIP[4] not in {h.text for h in hits}  # superseded: no neighbour
        qvec = store.embedder.embed_query(query)[0]
        req = episodic_request(store.stores.episodic, store.keys, U, query, qvec, k, off)
        ((vrows, trows),) = run_requests([req])
        found = {str(r["id"]).rsplit(":", 1)[-1] for r in (*vrows, *trows)}
        read += [h for h in hits if h.id not in found]
        boosted += [h for h in hits if h.id in found and h.parts.neighbour > 0]
    # read for their neighbour alone (within two turns): at least the floor's share of it
    floor = store.recall.weights.neighbour_floor**store.recall.weights.neighbour_hops
    assert read and all(h.score >= round(h.parts.neighbour * floor, 4) - 1e-4 for h in read)
    assert all(h.parts.neighbour > 0 for h in read)
    assert boosted
