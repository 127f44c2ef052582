"""Hybrid recall: the query pair per store, fusion and scoring, time and neighbour boosts. The
pipeline (`memory.recall.pipeline`) is imported from its module: `memory.config` reads the
scoring defaults from here, and the embedder package reads the config."""

from memory.recall.hybrid import (
    RecallWeights,
    fuse,
    run_requests,
)
from memory.recall.requests import hydrate, hydration_groups

__all__ = [
    "RecallWeights",
    "fuse",
    "hydrate",
    "hydration_groups",
    "run_requests",
]
