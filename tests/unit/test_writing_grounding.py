"""The grounding check on hand-written examples: faithful rewrites are kept, inventions are not.

Where a cosine matters, the comment gives the all-MiniLM-L6-v2 value measured with the
project's ONNX embedder (claim vs the user's message); the tests use stubs.

They are what `MIN_WORD_SHARE` and `MIN_SIMILARITY` were set on. At 0.5 of the content words
"User has a dog named Rex" would pass from "I have a dog" were the name lower-case, and
"Prefers kilometers over miles" (miles never said); at 0.6 every faithful rewrite still passes
("User's goal is to run a half marathon in April" from "my goal is a half marathon in April" is
3 of 4): with 2 content words both must be found, with 3-4 all but one, with 5 three. True
paraphrases score low ("I don't eat meat" -> "User is vegetarian" 0.51, "I hate running on
treadmills" -> "User dislikes treadmill running" 0.73) while changed facts score high ("I prefer
morning workouts" -> "User prefers evening workouts" 0.74; "I run 5k on Saturdays" -> "User runs
10k on Saturdays" 0.67, which the numbers veto catches): 0.8 admits only near-restatements ("I
prefer kilometers" -> "Prefers kilometers over miles" 0.84). A stronger embedder
(nomic-embed-text) may warrant its own threshold.
"""

from __future__ import annotations

import pytest

from memory.text import root
from memory.writing.grounding import (
    MIN_SIMILARITY,
    MIN_WORD_SHARE,
    Grounding,
    check_grounded,
    stated,
)

SUPPORTED = [
    # (what the user said, the model's memory)
    (["I'm vegetarian and run 5k on Saturdays"], "User is vegetarian"),
    (["I'm vegetarian and run 5k on Saturdays"], "User runs 5k on Saturdays"),
    (["my goal is a half marathon in April"], "User's goal is to run a half marathon in April"),
    (["I sprained my left ankle on a trail run"], "User sprained their left ankle"),
    (["I prefer morning workouts"], "I prefer morning workouts"),  # a first-person copy
    (["I prefer workouts in the morning"], "User prefers morning workouts"),
    (["I love hiking in the mountains"], "The user enjoys mountain hikes"),
    (["my knee hurts after long runs"], "User's knee hurts after long runs"),
    (["I'm studying Spanish for a trip to Mexico"], "User studies Spanish for a Mexico trip"),
    (["I don't like coffee"], "User doesn't like coffee"),
    (["I don't eat meat"], "User avoids meat"),
    (["I hate running on treadmills"], "User dislikes treadmill running"),
    (["I run on Saturdays, not Sundays"], "User runs on Saturdays"),
    (["I like tea. I don't like coffee at all."], "User likes tea but not coffee"),
    (["my physio told me to rest for two weeks"], "User's physiotherapist advised 2 weeks rest"),
    # numbers compared as values
    (["I do 10k steps a day"], "User walks 10,000 steps a day"),
    (["I walk 10000 steps daily"], "User walks 10,000 steps daily"),
    (["my resting pulse is 52.0"], "User's resting pulse is 52"),
    (["my pace is 5.50 per km"], "User runs at a pace of 5.5 per km"),
    (["I run 5k"], "User runs 5 km"),
    (["I run 5 km every day"], "User runs 5k every day"),
    (["I do 10 thousand steps"], "User does 10,000 steps"),  # a number, then its multiplier
    (["I walk a thousand steps a day"], "User walks 1000 steps a day"),  # a multiplier alone
    (["I have two dogs"], "User has 2 dogs"),
    (["I turned twenty-five last week"], "User turned 25"),
    (["my alarm goes off at 06:30"], "User's alarm goes off at 6:30"),
    (["I moved to Lisbon in 2019"], "User moved to Lisbon in 2019"),
    # several messages together
    (["I run 5k", "I do it on Saturdays"], "User runs 5k on Saturdays"),
    (
        [
            "hi again",
            "How much sleep do I actually need?",
            "I usually sleep 7 hours but wake up tired",
        ],
        "The user asked about sleep and said they sleep 7 hours",
    ),
]

UNSUPPORTED = [
    # (what the user said, the model's memory, a word of the reason)
    (["hello there, I'm just saying hi"], "User owns a sailing yacht called Seabird", "seabird"),
    (["hello there, I'm just saying hi"], "user owns a sailing yacht", "yacht"),
    (["I run 5k"], "User runs 10k", "numbers"),
    (["I do 10 thousand steps"], "User does 20,000 steps", "numbers"),
    (["I walk a thousand steps a day"], "User walks 2000 steps a day", "numbers"),
    (["I run 5k on Saturdays"], "User runs 5k on Saturdays at 7:00", "7:00"),
    (["my alarm goes off at 6:30"], "User's alarm goes off at 6:45", "6:45"),
    (["I moved to Lisbon in 2019"], "User moved to Lisbon in 2021", "2021"),
    (["I have a dog"], "User has one dog named Rex", "rex"),  # a new name
    (["I have a dog"], "user has a dog named rex", "rex"),  # not capitalised: 1 of 2 words
    (["I have a dog called Max"], "User has a dog named Max and a cat named Luna", "luna"),
    (["I don't like coffee"], "User likes coffee", "negation differs"),
    (["I hate coffee"], "User likes coffee", "negation differs"),
    (["I love coffee"], "User hates coffee", "negation differs"),
    (["I never run at night"], "User runs at night", "negation differs"),
    (["I prefer morning workouts"], "User prefers evening workouts", "evening"),
    (["I weigh 80 kg"], "User weighs 80 lbs", "lbs"),
    (["my sister is getting married"], "User's brother is getting married in Rome", "brother"),
]


@pytest.mark.parametrize(("sources", "claim"), SUPPORTED)
def test_faithful_rewrites_are_supported(sources: list[str], claim: str) -> None:
    g = check_grounded(claim, sources)
    assert g.supported, g
    assert g.reason.startswith("supported (")


@pytest.mark.parametrize(("sources", "claim", "why"), UNSUPPORTED)
def test_inventions_are_unsupported(sources: list[str], claim: str, why: str) -> None:
    g = check_grounded(claim, sources)
    assert not g.supported, g
    assert why in g.reason


def test_the_yacht_names_every_invented_word() -> None:
    g = check_grounded(
        "User owns a sailing yacht called Seabird", ["hello there, I'm just saying hi"]
    )
    assert g.reason == "not in what the user said: owns, sailing, yacht, seabird (names: seabird)"


def test_a_changed_number_is_named() -> None:
    g = check_grounded("User runs 10k", ["I run 5k"])
    assert g == Grounding(False, "numbers not in what the user said: 10k")


def test_the_reason_counts_words_and_numbers() -> None:
    g = check_grounded("User walks 10,000 steps a day", ["I do 10k steps a day"])
    assert g.reason == "supported (2 of 3 words, numbers 10,000)"


def test_one_new_word_of_two_is_too_many() -> None:
    """0.6: miles were never mentioned, so without a similarity this is unsupported."""
    g = check_grounded("Prefers kilometers over miles", ["I prefer kilometers"])
    assert g == Grounding(False, "not in what the user said: miles")
    assert check_grounded(
        "Prefers kilometers over miles", ["I prefer kilometers"], min_word_share=0.5
    )


def test_similarity_is_a_second_chance_for_paraphrases() -> None:
    # MiniLM: 0.84 ("over miles" is implied); the stub stands in for the embedder.
    g = check_grounded(
        "Prefers kilometers over miles", ["I prefer kilometers"], similarity=lambda a, b: 0.84
    )
    assert g.supported
    assert g.reason == "supported by similarity 0.84 (1 of 2 words)"
    # a paraphrase with no shared word: MiniLM gives only 0.51, a stronger embedder more
    veg = check_grounded("User is vegetarian", ["I don't eat meat"], similarity=lambda a, b: 0.86)
    assert veg.supported
    low = check_grounded("User is vegetarian", ["I don't eat meat"], similarity=lambda a, b: 0.51)
    assert not low.supported
    assert low.reason == "not in what the user said: vegetarian (best similarity 0.51)"


def test_similarity_takes_the_best_source() -> None:
    scores = {"hi": 0.1, "I never eat meat or fish": 0.9}
    g = check_grounded(
        "User is pescatarian", ["hi", "I never eat meat or fish"], similarity=lambda a, b: scores[b]
    )
    assert g.supported


def test_similarity_is_not_called_when_the_words_suffice() -> None:
    calls: list[tuple[str, str]] = []

    def spy(a: str, b: str) -> float:
        calls.append((a, b))
        return 0.0

    assert check_grounded("User is vegetarian", ["I am vegetarian"], similarity=spy).supported
    assert calls == []


@pytest.mark.parametrize(
    ("sources", "claim"),
    [
        (["I run 5k"], "User runs 10k"),  # MiniLM 0.67 for the Saturday variant
        (["I don't like coffee"], "User likes coffee"),  # MiniLM 0.685
        (["I have a dog"], "User has a dog named Rex"),
    ],
)
def test_vetoes_beat_any_similarity(sources: list[str], claim: str) -> None:
    assert not check_grounded(claim, sources, similarity=lambda a, b: 0.99).supported


@pytest.mark.parametrize(
    ("claim", "sources", "reason"),
    [
        ("", ["I run"], "empty claim"),
        ("   \n", ["I run"], "empty claim"),
        ("User runs", [], "nothing the user said to check against"),
        ("User runs", ["", "  "], "nothing the user said to check against"),
        ("The user said so.", ["I said so"], "nothing to check: no content words or numbers"),
        ("(.*)+?[" * 50, ["hi"], "nothing to check: no content words or numbers"),
    ],
)
def test_nothing_to_check_is_unsupported(claim: str, sources: list[str], reason: str) -> None:
    assert check_grounded(claim, sources) == Grounding(False, reason)


def test_a_bare_string_is_one_source() -> None:
    assert check_grounded("User is vegetarian", "I'm vegetarian").supported


def test_word_forms_meet() -> None:
    for a, b in [
        ("running", "runs"),
        ("run", "running"),
        ("mornings", "morning"),
        ("vegetarians", "vegetarian"),
        ("hiking", "hike"),
        ("studies", "studying"),
        ("saturdays", "saturday"),
        ("coffees", "coffee"),
    ]:
        assert root(a) == root(b), (a, b)
    assert root("vegetarian") != root("vegetables")


def test_long_inputs_are_judged_and_reasons_stay_short() -> None:
    words = [
        f"w{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}{chr(97 + i // 676 % 26)}" for i in range(5000)
    ]
    source = " ".join(words * 20)  # 100,000 words
    g = check_grounded(" ".join(words), [source, "x" * 200_000, "9" * 50_000])
    assert g.supported
    huge = check_grounded("9" * 50_000, ["1"])
    assert not huge.supported and len(huge.reason) < 200


@pytest.mark.parametrize(
    ("sources", "claim", "supported"),
    [
        # a compound's 4-letter part is too short to match by prefix: a false "unsupported"
        (["I prefer morning workouts"], "User prefers working out in the mornings", False),
        # word order is not checked: a false "supported"
        (["I prefer tea over coffee"], "User prefers coffee over tea", True),
        # a negator before the word it negates is not seen: a false "supported"
        (["coffee isn't for me"], "User likes coffee", True),
    ],
)
def test_known_limits(sources: list[str], claim: str, supported: bool) -> None:
    """Lexical limits (module docstring); a change here should be deliberate."""
    assert check_grounded(claim, sources).supported is supported


def test_defaults_are_documented_values() -> None:
    assert MIN_WORD_SHARE == 0.6
    assert MIN_SIMILARITY == 0.8


@pytest.mark.parametrize(
    ("source", "claim"),
    [
        # a framing or stop word between the negator and the fact does not end its reach
        ("I don't like running in the rain", "User dislikes running in the rain"),
        ("I do not like to run in the evening", "User dislikes running in the evening"),
        ("I don't really enjoy swimming in cold water", "User dislikes swimming in cold water"),
        # an age in the extractor's words
        ("I'm 34", "User is 34 years old"),
        # a 24-hour time in 12-hour words
        ("I sleep at 22:30 most nights", "User sleeps at 10:30 PM most nights"),
    ],
)
def test_common_rewrites_of_the_extractor_are_supported(source: str, claim: str) -> None:
    assert check_grounded(claim, [source]).supported, check_grounded(claim, [source]).reason


# ---- what the user asked states nothing (statements_only) ---------------------------------


@pytest.mark.parametrize(
    ("message", "claim"),
    [
        # Gemma 3 270M's extraction of a question (issue 47)
        ("Do I have any food allergies?", "Yes, I have a food allergy"),
        ("do i have any food allergies", "I have a food allergy"),
        ("What is my resting heart rate?", "My resting heart rate"),
        ("Am I allergic to peanuts?", "User is allergic to peanuts"),
    ],
)
def test_a_question_supports_no_fact(message: str, claim: str) -> None:
    verdict = check_grounded(claim, [message], statements_only=True)
    assert not verdict.supported
    assert "asked" in verdict.reason
    # without the rule the words alone would have passed it
    assert check_grounded(claim, [message]).supported


@pytest.mark.parametrize(
    ("message", "claim"),
    [
        ("Can you remember that I'm vegan?", "I'm vegan"),
        ("Could you please note that my sister is called Ines?", "My sister is called Ines"),
        ("Will you remember I run 5k on Saturdays, please?", "User runs 5k on Saturdays"),
        ("I'm allergic to nuts. What can I cook tonight?", "User is allergic to nuts"),
        ("I weigh 72.5 kg. Is that a lot?", "User weighs 72.5 kg"),
    ],
)
def test_a_request_phrased_as_a_question_or_a_statement_beside_one_still_counts(
    message: str, claim: str
) -> None:
    assert check_grounded(claim, [message], statements_only=True).supported


def test_the_question_beside_a_statement_adds_nothing() -> None:
    message = "I'm allergic to nuts. Do I also have a shellfish allergy?"
    assert stated(message) == ["I'm allergic to nuts."]
    assert stated("   ") == [] and stated("I swim.\n\n  \nI run.") == ["I swim.", "I run."]
    assert not check_grounded(
        "User has a shellfish allergy", [message], statements_only=True
    ).supported
