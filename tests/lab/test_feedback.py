"""Vector feedback (`lab.feedback`, not adopted): a second KNN from the question moved toward
its best hits finds a memory worded like the hit but unlike the question, which the first short
lists miss."""

from __future__ import annotations

import dataclasses

from lab import feedback
from memory.coordinator import MemoryCoordinator
from memory.recall import run_requests
from memory.recall.requests import episodic_request

U = "user-1"
QUESTION = "Which city did Jon visit on his trip?"
HIT = "Jon took a short trip to Rome last week to clear his mind"
#: worded like the hit (Rome, clearing the mind), sharing no word with the question
SECOND_HOP = "Clearing my mind for a few days in Rome last week helped a lot"
FILLER = [
    "Which city would you like to visit next?",
    "Gina asked about the best time for a trip to the coast",
    "My cousin loves city life and busy streets",
    "We planned a visit to the zoo with the kids",
]


def _candidates(coord: MemoryCoordinator, beta: float) -> set[str]:
    weights = dataclasses.replace(coord.recall.weights, candidates=3, neighbour=0.0)
    qvec, _ = coord.embedder.embed_query(QUESTION)
    req = episodic_request(coord.episodic, coord.keys, U, QUESTION, qvec, 3, weights)
    feedback.with_vectors(req)
    ((vrows, trows),) = run_requests([req])
    feedback.add_feedback(req, vrows, trows, beta, docs=1, now_ms=0)
    return {str(r["id"]).rsplit(":", 1)[-1] for r in (*vrows, *trows)}


def test_feedback_reaches_a_memory_like_the_best_hit(coordinator: MemoryCoordinator) -> None:
    hit = coordinator.add_episodic(U, HIT, event_type="interaction").id
    second = coordinator.add_episodic(U, SECOND_HOP, event_type="interaction").id
    for text in FILLER:
        coordinator.add_episodic(U, text, event_type="interaction")

    without = _candidates(coordinator, beta=0.0)
    assert hit in without
    assert second not in without  # the first short lists stop at the question's own words

    with_feedback = _candidates(coordinator, beta=1.0)
    assert without <= with_feedback  # feedback only adds candidates
    assert second in with_feedback
