"""The one table of internal names in people's words (`memory/data/screen_words.toml`): every name
the code can put on a screen has its words, and none of them reads as code."""

from __future__ import annotations

import re
from typing import get_args

import pytest

from agent.tools import MemoryToolkit, ToolRegistry, WellnessToolkit
from memory import words
from memory.models import EventType, RelevanceBand
from memory.writing.policy import How

SNAKE = re.compile(r"[a-z0-9]_[a-z0-9]")

#: the operations the memory core times (memory/coordinator.py, memory/recall/pipeline.py)
OPERATIONS = ["retrieve_all_context", "embed_query", "recall", "search", "add", "add_many",
              "record", "store_interaction", "delete"]  # fmt: skip


def test_every_name_the_code_has_is_in_the_table() -> None:
    table = words.table()
    tools = ToolRegistry([MemoryToolkit(None, None), WellnessToolkit()]).names()  # type: ignore[arg-type]
    assert {e.value for e in EventType} == set(table.kinds)
    assert set(get_args(RelevanceBand)) == set(table.bands)
    assert set(get_args(How)) == set(table.how)
    assert set(tools) <= set(table.tools)
    assert set(OPERATIONS) <= set(table.steps)


def test_no_word_reads_as_code() -> None:
    table = words.table()
    for section, names in table.model_dump().items():
        for name, said in names.items():
            assert said.strip() and not SNAKE.search(said), (section, name, said)


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        (words.kind_word("health_event"), "Health event"),
        (words.kind_word("new_kind"), "New kind"),  # one the table lacks: still no code name
        (words.tools_words(["search_workouts", "compare_periods"]),
         "looked up your workouts, then compared two periods"),
        (words.tools_words(["get_sleep"]), "used “get sleep”"),
        (words.band_word("high"), "strong match"),
        (words.step_word("retrieve_all_context"), "recall before an answer"),
        (words.records_word("short_term"), "chat messages"),
        (words.field_word("event_type"), "kind"),
    ],
)  # fmt: skip
def test_names_read_as_words(said: str, expected: str) -> None:
    assert said == expected
