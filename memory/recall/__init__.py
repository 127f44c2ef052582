"""Hybrid recall: the query pair per store, fusion and scoring, time and neighbour boosts."""

from memory.recall.hybrid import (
    HybridRequest,
    RecallWeights,
    fuse,
    hydrate,
    run_requests,
    time_ranges,
)
from memory.recall.pipeline import RecallPipeline
from memory.recall.requests import episodic_request, hydration_groups, semantic_request

__all__ = [
    "HybridRequest",
    "RecallPipeline",
    "RecallWeights",
    "episodic_request",
    "fuse",
    "hydrate",
    "hydration_groups",
    "run_requests",
    "semantic_request",
    "time_ranges",
]
