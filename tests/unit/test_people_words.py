"""The one table of internal names in people's words (`memory/data/screen_words.toml`): every name
the code can put on a screen has its words, and none of them reads as code."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from agent.tools import MemoryToolkit, ToolRegistry, WellnessToolkit
from agent.types import ExtractionOutcome
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
    # what became of a memory extraction, as counted (`extraction_<outcome>`, agent/loop.py)
    statuses = get_args(ExtractionOutcome.model_fields["status"].annotation)
    assert {*statuses, "ungrounded"} == set(table.extraction)


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
        (words.extraction_words("skipped"),  # "16 skipped" said why
         "messages without a model: only “remember that …” and #tags were read"),
    ],
)  # fmt: skip
def test_names_read_as_words(said: str, expected: str) -> None:
    assert said == expected


def test_no_word_of_the_table_is_an_engineering_word() -> None:
    from tests.not_words import internal_words

    for section, names in words.table().model_dump().items():
        for name, said in names.items():
            assert internal_words(said) == [], (section, name, said)


@pytest.mark.parametrize(
    ("context", "said"),
    [
        ("LLM extraction", "From a chat"),
        ("trigger phrase", "From a chat: you asked me to remember it"),
        ("Added in the sidebar memory editor", "You added it"),
        ("Assistant answered: You ran 14 km.", "From a chat"),  # a logged exchange's answer
        ("Summary of 6 messages of an earlier conversation", "A summary of an earlier chat"),
        (words.DEMO_ORIGIN, "From the demo"),
        ("Told my physio on Tuesday", None),  # a person's own note: shown as they wrote it
        ("", None),
    ],
)
def test_where_a_memory_came_from_in_words(context: str, said: str | None) -> None:
    assert words.origin_words(context) == said


def test_the_contexts_the_app_writes_have_their_words() -> None:
    """Every context a writer stores as a literal (agent, sidebar, Memories page, the demo)
    and a logged exchange's answer are said in words, so an editor never shows them raw."""
    from memory.stores.episodic import interaction_context

    root = Path(__file__).parents[2]
    literal = re.compile(r'context(?:=| or )"([^"{]+)"')
    written = {
        m.group(1)
        for folder in ("agent", "memory", "ui")
        for path in (root / folder).rglob("*.py")
        for m in literal.finditer(path.read_text(encoding="utf-8"))
    }
    assert {"LLM extraction", "trigger phrase", "Added on the Memories page"} <= written
    missing = [c for c in [*written, interaction_context("Fine.")] if not words.origin_words(c)]
    assert missing == []
