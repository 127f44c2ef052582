"""Internal names in people's words: the one table (`memory/data/screen_words.toml`) that
screens and the replies without a model read, so no kind, tool, band, step or field reaches a
person as the code spells it. Data beside the other word lists: agent and UI both read it."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from pydantic import BaseModel, ConfigDict

from memory.data_files import load_data_file


class Words(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kinds: dict[str, str]
    memory_types: dict[str, str]
    records: dict[str, str]
    tools: dict[str, str]
    bands: dict[str, str]
    how: dict[str, str]
    steps: dict[str, str]
    origins: dict[str, str]
    extraction: dict[str, str]
    fields: dict[str, str]
    counted: dict[str, tuple[str, str]]
    block_sections: dict[str, str]
    fact_types: dict[str, str]
    forgotten: dict[str, tuple[str, str]]


@cache
def table() -> Words:
    return load_data_file("screen_words.toml", Words)


def _say(section: dict[str, str], name: object, capital: bool = False) -> str:
    """A name's words; one the table lacks still reads without its underscores."""
    said = section.get(str(name)) or str(name or "").replace("_", " ").strip()
    return said[:1].upper() + said[1:] if capital else said


def kind_word(kind: object) -> str:
    return _say(table().kinds, kind, capital=True)  # health_event → Health event


def records_word(memory_type: object) -> str:
    return _say(table().records, memory_type)  # short_term → chat messages


def tool_words(tool: object) -> str:
    """`search_workouts` → `looked up your workouts`; one the table lacks: `used “get sleep”`."""
    return table().tools.get(str(tool)) or f"used “{_say({}, tool)}”"


def tools_words(tools: Iterable[object]) -> str:
    """`looked up your workouts, then compared two periods` ("" for no tools)."""
    return ", then ".join(tool_words(t) for t in tools)


def band_word(band: object) -> str:
    return _say(table().bands, band)  # high → strong match


def how_words(how: object) -> str:
    return _say(table().how, how)  # trigger → because you asked me to remember it


def step_word(step: object) -> str:
    return _say(table().steps, step)  # retrieve_all_context → recall before an answer


def extraction_words(outcome: object) -> str:
    return _say(table().extraction, outcome)  # skipped → messages without a model: only …


def field_word(field: object) -> str:
    return _say(table().fields, field)  # event_type → kind


def fact_type_word(fact_type: object) -> str:
    """A fact's type (`guideline` → `Advice`); one a person typed stays, capitalised."""
    return _say(table().fact_types, fact_type, capital=True)


def _count(section: dict[str, tuple[str, str]], n: int, name: object) -> str:
    one, many = section.get(str(name)) or (_say({}, name),) * 2
    return f"{n} {one if n == 1 else many}"


def counted_words(n: int, memory_type: object) -> str:
    """`10 things about you`, `1 way of working`: what recall looked through."""
    return _count(table().counted, n, memory_type)


def forgotten_words(n: int, what: object) -> str:
    """`1 chat message`, `3 searches you made`: what a forget deleted."""
    return _count(table().forgotten, n, what)


def origin_words(context: object) -> str | None:
    """Where a memory came from, for a context the app wrote (`LLM extraction` → `From a
    chat`; a logged exchange's `Assistant answered: …` too); None for a person's own words."""
    said = str(context or "").strip()
    for name, words in table().origins.items():
        start = name.removesuffix("…")
        if said == name or (start != name and said.startswith(start)):
            return words
    return None


#: The origins entry every memory of the demo persona shows
DEMO_ORIGIN = "(demo persona)"
#: What stands where a forgotten memory's text was (a stored reply, an answer's details)
FORGOTTEN_TEXT = "(forgotten at your request)"
