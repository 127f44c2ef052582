"""The package's data files (`memory/data/*.toml`): the shipped ones load into what the code
uses (the demo persona keeps her key memories), and a malformed one fails at load with a
sentence naming the file and the field."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest
from pydantic import BaseModel

from memory.data_files import DATA_DIR, load_data_file
from memory.demo import DEMO_QUESTIONS, build_persona
from memory.demo.persona import PLACEHOLDERS, PROCEDURES, Persona, _values
from memory.errors import DataFileError
from memory.maintenance.similarity import _FactWords
from memory.models import EventType
from memory.recall.statements import OTHER_EXAMPLES, PREFERENCE_EXAMPLES
from memory.text import _TextWords, stem
from memory.writing.classify import _Keywords, classify_event_type, detect_slot
from memory.writing.content import says_nothing_after_masking
from memory.writing.grounding import _GroundingWords, check_grounded
from memory.writing.secrets import SecretWords, mask_text
from memory.writing.triggers import _Triggers, extract_triggers

TODAY = date(2026, 11, 18)


def test_the_persona_file_gives_her_key_memories() -> None:
    persona = build_persona(TODAY)
    memories = {m.key or m.text: m for c in persona.conversations for m in c.memories}
    assert persona.name == "Maya" and len(persona.conversations) == 8
    assert "Vegetarian: eats eggs and dairy, but no meat or fish" in memories
    old, new = memories["goal_old"], memories["goal_new"]
    assert old.kind == new.kind == EventType.GOAL.value
    assert (
        old.text
        == "Race goal: run the Riverside Half Marathon on Sunday 13 December in under 2 hours"
    )
    assert "about 2 hours 10 minutes" in new.text
    assert persona.superseded == (("goal_old", "goal_new"),)
    sprain = next(m for m in memories.values() if m.text.startswith("Sprained her left ankle"))
    assert sprain.kind == "health_event" and "on Saturday 19 September" in sprain.text
    # her longest run since the sprain: the 16 km of the week-before-last's Saturday
    assert "Ran 16 km on Saturday 7 November" in "\n".join(memories)
    assert len(DEMO_QUESTIONS) == 6 and len(PROCEDURES) == 5


@pytest.mark.parametrize("today", [TODAY + timedelta(days=i) for i in range(7)])
def test_every_placeholder_is_filled(today: date) -> None:
    persona = build_persona(today)
    texts = [c.summary for c in persona.conversations]
    for c in persona.conversations:
        texts += [t for e in c.exchanges for t in (e.user, e.assistant)]
        texts += [m.text for m in c.memories] + [f.text for f in c.facts]
    assert texts and not [t for t in texts if "$" in t]
    assert set(_values(today, today)) == PLACEHOLDERS  # every placeholder has a value


def test_the_keyword_files_drive_classification() -> None:
    assert len(PREFERENCE_EXAMPLES) > 40 and len(OTHER_EXAMPLES) > 40
    assert not set(PREFERENCE_EXAMPLES) & set(OTHER_EXAMPLES)
    assert classify_event_type("I sprained my ankle") == EventType.HEALTH_EVENT
    assert classify_event_type("anything", ["PB"]) == EventType.MILESTONE
    assert detect_slot("I moved to Lyon", EventType.FACT) == "fact:home"
    (found,) = extract_triggers("My new goal is a 5k under 25 minutes.")
    assert found.event_type == EventType.GOAL and found.text.startswith("My new goal is")


def _broken(tmp_path: Path, name: str, old: str, new: str) -> Path:
    text = (DATA_DIR / name).read_text()
    assert old in text  # the edit below must change the shipped file
    (tmp_path / name).write_text(text.replace(old, new, 1))
    return tmp_path


MODELS: dict[str, type[BaseModel]] = {
    "demo_persona.toml": Persona,
    "event_keywords.toml": _Keywords,
    "trigger_phrases.toml": _Triggers,
    "fact_words.toml": _FactWords,
    "words.toml": _TextWords,
    "grounding_words.toml": _GroundingWords,
    "secret_words.toml": SecretWords,
}
# (file, text in it, replaced by, the field the error names)
BREAKAGES = [
    ("demo_persona.toml", 'kind = "milestone"', 'kind = "win"', "conversations.2.memories.0.kind"),
    (
        "demo_persona.toml",
        "$long_run_before km",
        "$long_run_befor km",
        "conversations.6.exchanges.1",
    ),
    ("demo_persona.toml", 'time = "09:30"', 'time = "9.30"', "conversations.6.time"),
    ("demo_persona.toml", "day = [-1, 1]", "day = [-1, 7]", "conversations.7.day.1"),
    ("demo_persona.toml", 'Saturday"', 'Saturday $"', "conversations.1.memories.0"),
    ("demo_persona.toml", 'key = "goal_new"', 'key = "goal_2"', "(the whole file)"),
    ("event_keywords.toml", '"gluten[- ]free"', '"gluten[- free"', "slots.fact.diet"),
    ("event_keywords.toml", 'pb = "milestone"', 'PB = "milestone"', "tags"),
    ("event_keywords.toml", '"that\'?s wrong",', "3,", "keywords.0.words"),
    ("trigger_phrases.toml", '"i never"', '"I never"', "soft.7.phrase"),
    ("fact_words.toml", '"left right"', '"Left right"', "value_classes.6"),
    ("words.toml", 'negation_stems = "don', "negation_stems = 3 #", "negation_stems"),
    ("words.toml", "suffixes = [", "sufixes = [", "suffixes"),
    ("grounding_words.toml", "twenty = 20", 'twenty = "20"', "tens.twenty"),
    ("secret_words.toml", 'copula = "is', 'copula = "Is', "copula"),
    ("secret_words.toml", "gitlab = 'glpat-[", "gitlab = 'glpat-(", "token_patterns.gitlab"),
]


def test_the_word_files_drive_text_grounding_and_secrets() -> None:
    assert stem("workouts") == "workout" and stem("coffees") == "coffee"
    # one framing list: an extractor's frame, a stance and a request to remember
    assert check_grounded("User mentioned that they enjoy rowing", ["I row on Sundays"]).supported
    assert says_nothing_after_masking("Please remember my password is [password]")
    # number words and the IBAN countries come from the files
    assert check_grounded("Runs twenty-five km", ["I run 25 km"]).supported
    assert "[bank account number]" in mask_text("IBAN GB82 WEST 1234 5698 7654 32")


@pytest.mark.parametrize(("name", "old", "new", "field"), BREAKAGES)
def test_a_malformed_file_names_the_file_and_the_field(
    tmp_path: Path, name: str, old: str, new: str, field: str
) -> None:
    folder = _broken(tmp_path, name, old, new)
    with pytest.raises(DataFileError) as err:
        load_data_file(name, MODELS[name], folder)
    sentence = f"The data file {folder / name} is invalid at the field {field}: "
    assert str(err.value).startswith(sentence)


def test_a_file_that_is_not_toml_or_missing_says_so(tmp_path: Path) -> None:
    folder = _broken(tmp_path, "demo_persona.toml", 'name = "Maya"', 'name = "Maya')
    with pytest.raises(DataFileError, match="demo_persona.toml is not valid TOML"):
        load_data_file("demo_persona.toml", Persona, folder)
    with pytest.raises(DataFileError, match="absent.toml cannot be read"):
        load_data_file("absent.toml", Persona, folder)
