"""The memory system: the four CoALA memory types on Redis Stack + RedisVL (docs/architecture.md).
No Streamlit and no LLM chat in here. `__all__` holds what the UI takes from the package itself;
the coordinator, maintenance and forgetting load lazily (`from memory import ListQuery` does not
load redis-py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import memory.writing.secrets  # noqa: F401  (check_id refuses ids holding a secret from here on)
from memory.demo import DEMO_QUESTIONS, DEMO_TAG, DEMO_USER, demo_contents, load_demo
from memory.queries import ListQuery, RecallOptions, SearchFilter
from memory.shape import safe_to_parse

if TYPE_CHECKING:
    from memory.admin.forget import TopicForget
    from memory.coordinator import MemoryCoordinator
    from memory.maintenance import Maintenance, MaintenanceScheduler


def __getattr__(name: str) -> Any:
    if name == "MemoryCoordinator":
        from memory.coordinator import MemoryCoordinator

        return MemoryCoordinator
    if name == "TopicForget":
        from memory.admin.forget import TopicForget

        return TopicForget
    if name in ("Maintenance", "MaintenanceScheduler"):
        from memory import maintenance

        return getattr(maintenance, name)
    raise AttributeError(f"module 'memory' has no attribute {name!r}")


__all__ = [
    "DEMO_QUESTIONS",
    "DEMO_TAG",
    "DEMO_USER",
    "ListQuery",
    "Maintenance",
    "MaintenanceScheduler",
    "MemoryCoordinator",
    "RecallOptions",
    "SearchFilter",
    "TopicForget",
    "demo_contents",
    "load_demo",
    "safe_to_parse",
]
