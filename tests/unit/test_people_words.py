"""The one table of internal names in people's words (`memory/data/screen_words.toml`): every name
the code can put on a screen has its words, and none of them reads as code."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from agent.prompt import SECTION_TITLES
from agent.tools.memory_tools import MemoryToolkit
from agent.tools.registry import ToolRegistry
from agent.tools.wellness import WellnessToolkit
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
    assert set(table.counted) == set(table.memory_types)
    assert set(table.block_sections) == set(SECTION_TITLES)
    # what a forget counts (memory/admin/forget.py: the report's keys, and its rows)
    source = (Path(__file__).parents[2] / "memory/admin/forget.py").read_text(encoding="utf-8")
    keys = set(re.findall(r'^ {12}"([a-z_]+)": ', source, re.M))
    assert "cached_embeddings" in keys and {*keys, "items"} == set(table.forgotten)


def said_of(table: words.Words) -> list[tuple[str, str, str]]:
    """(section, name, words) of every entry; a counted one (one, several) twice."""
    return [
        (section, name, one)
        for section, names in table.model_dump().items()
        for name, said in names.items()
        for one in ([said] if isinstance(said, str) else said)
    ]


def test_no_word_reads_as_code() -> None:
    for section, name, said in said_of(words.table()):
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
        (words.counted_words(10, "episodic"), "10 things about you"),
        (words.counted_words(1, "procedural"), "1 way of working"),
        (words.fact_type_word("guideline"), "Advice"),
        (words.fact_type_word("from my coach"), "From my coach"),  # typed by a person
        (words.forgotten_words(8, "cached_embeddings"),
         "8 notes the search kept to find texts faster"),
        (words.forgotten_words(12, "answer_details"), "12 notes of how answers were made"),
        (words.extraction_words("skipped"),  # "16 skipped" said why
         "messages without a model: only “remember that …” and #tags were read"),
    ],
)  # fmt: skip
def test_names_read_as_words(said: str, expected: str) -> None:
    assert said == expected


def test_no_word_of_the_table_is_an_engineering_word() -> None:
    from tests.not_words import internal_words

    for section, name, said in said_of(words.table()):
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
    # context="…", context or "…", and the add form's "Added on/in …" (chosen by where it is drawn)
    literal = re.compile(r'context(?:=| or )"([^"{]+)"|"(Added (?:on|in) [^"{]+)"')
    written = {
        m.group(1) or m.group(2)
        for folder in ("agent", "memory", "ui")
        for path in (root / folder).rglob("*.py")
        for m in literal.finditer(path.read_text(encoding="utf-8"))
    }
    assert {
        "LLM extraction",
        "trigger phrase",
        "Added on the Memories page",
        "Added in the sidebar memory editor",
    } <= written
    missing = [c for c in [*written, interaction_context("Fine.")] if not words.origin_words(c)]
    assert missing == []


@pytest.mark.parametrize(
    ("memory_type", "kind", "said"),
    [
        ("episodic", "fact", "Fact"),
        ("episodic", "health_event (earlier version)", "Health event (earlier version)"),
        ("semantic", "training", "Training"),
        ("procedural", "procedure", ""),
        ("short_term", "user message", "You"),
        ("short_term", "assistant message", "Assistant"),
    ],
)
def test_a_forget_previews_kinds_read_as_words(memory_type: str, kind: str, said: str) -> None:
    """The walk read "📔 About you · fact" and "user message" in the Forget tab's preview."""
    from tests.not_words import internal_words
    from ui.forget import _kind

    assert _kind({"memory_type": memory_type, "kind": kind}) == said
    assert internal_words(said) == []
