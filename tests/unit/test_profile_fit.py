"""What a prompt's user profile carries (memory.block.fit_profile), with the issue's sentences:
pinned lines and lines about health or safety are never the ones left out, whatever their kind
and however little room the others leave."""

from __future__ import annotations

from memory.block import PROFILE_TITLE, PROFILE_TOKENS, fit_profile
from memory.health import about_health
from memory.models import EventType, ProfileLine
from memory.tokens import estimate_tokens

HEALTH = [
    ("I'm allergic to peanuts and tree nuts", EventType.HEALTH_EVENT),
    ("I am lactose intolerant", EventType.FACT),
    ("I take metformin every morning", EventType.FACT),
]
NOT_HEALTH = ["Prefers short answers with bullet points", "I love trail mix after long runs"]


def line(i: int, text: str, kind: EventType = EventType.PREFERENCE, pinned: bool = False):  # type: ignore[no-untyped-def]
    return ProfileLine(id=f"m{i}", kind=kind, text=text, pinned=pinned)


def test_health_is_decided_by_the_words_not_the_kind() -> None:
    assert all(about_health(text) for text, _ in HEALTH)
    assert not any(about_health(text) for text in NOT_HEALTH)


def test_pinned_and_health_lines_are_sent_even_when_the_room_is_spent() -> None:
    long = "I keep a detailed diary of every single training session with notes " * 2
    pinned = [line(i, f"{long} {i}", pinned=True) for i in range(4)]  # more than the room
    health = [line(10 + i, text, kind) for i, (text, kind) in enumerate(HEALTH)]
    others = [line(20 + i, text) for i, text in enumerate(NOT_HEALTH)]
    fit = fit_profile([*pinned, *others, *health])
    sent = [p.id for p, _ in fit.sent]
    assert sent == [p.id for p in [*pinned, *health]]  # in the profile's order
    assert fit.left_out == others  # only those that are neither pinned nor about health


def test_without_such_lines_the_profile_keeps_to_its_room() -> None:
    fit = fit_profile([line(i, f"I like food number {i} a lot") for i in range(30)])
    text = "\n".join([PROFILE_TITLE, *(written for _, written in fit.sent)]) + "\n"
    assert fit.left_out and estimate_tokens(text) <= PROFILE_TOKENS
