"""The statement classifier with the shipped embedder, on sentences it was not fitted on.

These 30 sentences were written as a check when the examples in memory/recall/statements.py
were: a classifier that stopped telling a
standing preference from a plan or a request would let recall rank chatter first again.
"""

from __future__ import annotations

import numpy as np
import pytest

from memory.embeddings import OnnxMiniLMEmbedder
from memory.recall.statements import StatementModel

PREFERENCES = [
    "I'm vegetarian, so no meat for me.",
    "I can't eat shellfish, I'm allergic to it.",
    "Crowded beaches are not my thing.",
    "I much prefer audiobooks to reading.",
    "I refuse to fly with budget airlines.",
    "Bright colours aren't for me, I wear mostly black.",
    "I'm sensitive to caffeine so I skip coffee after noon.",
    "Please keep replies brief, I hate long explanations.",
    "I'm terrified of spiders.",
    "I only watch films with subtitles.",
    "I stay away from fried food.",
    "Cold weather makes me miserable.",
    "I'm into minimalist design.",
    "I don't do group tours.",
    "I have bad knees, so no running for me.",
]
OTHERS = [
    "Can you find me a cheap flight to Lisbon?",
    "We're flying to Lisbon in May, first time there.",
    "How do I convert euros to dollars quickly?",
    "I'm always on the lookout for nice places to eat when I travel.",
    "Had a long day at work.",
    "What's a good name for a cat?",
    "My friend recommended a new show.",
    "I need a recipe for dinner tonight.",
    "I bought new running shoes.",
    "Is it going to rain this weekend?",
    "We just got back from the lake.",
    "Could you explain how vaccines work?",
    "I have a presentation tomorrow.",
    "Thanks, that was useful.",
    "I'm planning to repaint the kitchen.",
]


@pytest.fixture(scope="module")
def scores() -> tuple[np.ndarray, np.ndarray]:
    embedder = OnnxMiniLMEmbedder()
    model = StatementModel(embedder)
    model.prepare()
    pos = model.probabilities(embedder.embed_many(PREFERENCES))
    neg = model.probabilities(embedder.embed_many(OTHERS))
    assert pos is not None and neg is not None
    return pos, neg


def test_most_unseen_sentences_are_classified_right(scores: tuple[np.ndarray, np.ndarray]) -> None:
    pos, neg = scores
    right = int((pos > 0.5).sum() + (neg <= 0.5).sum())
    print(f"classified right: {right} of {len(pos) + len(neg)}")
    assert right >= 27


def test_preferences_score_well_above_other_talk(scores: tuple[np.ndarray, np.ndarray]) -> None:
    pos, neg = scores
    assert pos.mean() - neg.mean() > 0.25


def test_memories_as_the_extractor_writes_them_count_as_preferences() -> None:
    embedder = OnnxMiniLMEmbedder()
    model = StatementModel(embedder)
    model.prepare()
    texts = ["User is vegetarian", "The user dislikes crowded places", "User went to the dentist"]
    p = model.probabilities(embedder.embed_many(texts))
    assert p is not None
    print({t: round(float(v), 2) for t, v in zip(texts, p, strict=True)})
    assert p[0] > 0.5 and p[1] > 0.5 and p[2] < 0.5
