"""Hybrid recall: the query pair per store, fusion and scoring, time and neighbour boosts. The
pipeline (`memory.recall.pipeline`) is imported from its module: `memory.config` reads the
scoring defaults from here, and the embedder package reads the config."""

from memory.recall.hybrid import (
    HybridRequest,
    RecallWeights,
    fuse,
    run_requests,
    time_ranges,
)
from memory.recall.requests import episodic_request, hydrate, hydration_groups, semantic_request

__all__ = [
    "HybridRequest",
    "RecallWeights",
    "episodic_request",
    "fuse",
    "hydrate",
    "hydration_groups",
    "run_requests",
    "semantic_request",
    "time_ranges",
]
