"""One spelling of the memory API: the coordinator and the agent tests' fake take exactly the
parameters `memory.service` declares, with the same kinds and defaults, and so do the parts the
UI reads through it. mypy checks the types but not the defaults: `retrieve_all_context` once
recalled 5 episodic memories through the protocol and the fake, 10 (RECALL_PROMPT_K) through
the coordinator."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from memory.activity import MemoryHistory
from memory.coordinator import MemoryCoordinator
from memory.service import AgentMemory, MemoryHistoryAPI, MemoryService, SessionReads, UsageReads
from memory.stores.short_term import ShortTermStore
from memory.stores.usage import UsageRecords
from tests.fakes.fake_coordinator import FakeCoordinator


def _methods(protocol: type) -> list[str]:
    """The protocol's methods, inherited ones included (properties take no parameters)."""
    return sorted(
        name
        for name, member in inspect.getmembers(protocol)
        if not name.startswith("_") and inspect.isfunction(member)
    )


def _parameters(function: Any) -> list[tuple[str, str, Any]]:
    return [
        (p.name, p.kind.name, p.default) for p in inspect.signature(function).parameters.values()
    ]


IMPLEMENTATIONS = [
    *((MemoryCoordinator, MemoryService, name) for name in _methods(MemoryService)),
    *((FakeCoordinator, AgentMemory, name) for name in _methods(AgentMemory)),
    # the parts the UI reads through the service (`short_term`, `usage`, `history`)
    *((ShortTermStore, SessionReads, name) for name in _methods(SessionReads)),
    *((UsageRecords, UsageReads, name) for name in _methods(UsageReads)),
    *((MemoryHistory, MemoryHistoryAPI, name) for name in _methods(MemoryHistoryAPI)),
]


@pytest.mark.parametrize(
    "implementation, protocol, name",
    IMPLEMENTATIONS,
    ids=[f"{impl.__name__}.{name}" for impl, _, name in IMPLEMENTATIONS],
)
def test_an_implementation_takes_the_parameters_and_defaults_the_protocol_declares(
    implementation: type, protocol: type, name: str
) -> None:
    declared = _parameters(getattr(protocol, name))
    assert hasattr(implementation, name), f"{implementation.__name__} lacks {name}"
    assert _parameters(getattr(implementation, name)) == declared


def test_the_agent_protocol_is_part_of_the_service_and_each_method_is_declared_once() -> None:
    assert AgentMemory in MemoryService.__mro__
    again = set(_methods(AgentMemory)) & set(vars(MemoryService))
    assert again == set()
