"""`benchmarks.prompt_level.prompt_row`: which evidence turns have a line in the block."""

from __future__ import annotations

from dataclasses import dataclass, field

from benchmarks.prompt_level import prompt_row
from memory.models import MemoryContext, MemoryType, RecallHit, ScoreParts
from memory.stores.episodic import interaction_context


def turn(dia_id: str, text: str, score: float, reply: str = "", reply_id: str = "") -> RecallHit:
    meta = {"dia_id": dia_id, **({"reply_dia_id": reply_id} if reply_id else {})}
    record = {"event_type": "interaction", "timestamp": 1_700_000_000_000, "metadata": meta}
    if reply:
        record["context"] = interaction_context(reply)
    return RecallHit(
        id=dia_id,
        memory_type=MemoryType.EPISODIC,
        text=text,
        score=score,
        band="low",
        parts=ScoreParts(final=score),
        record=record,
    )


@dataclass
class Recalls:
    """Stands in for the coordinator: the recall is given, the bookkeeping does nothing."""

    hits: list[RecallHit]
    bookkeeping: Recalls | None = field(default=None)

    def __post_init__(self) -> None:
        self.bookkeeping = self

    def drain(self) -> None:
        pass

    def retrieve_all_context(self, user: str, session: str, query: str, options: object = None):
        return MemoryContext(user_id=user, session_id=session, query=query, episodic=self.hits)


def test_two_turns_that_read_alike_share_one_line_in_the_block() -> None:
    """Two "Thanks!" of the same day render as the same line; when one fits, one is shown."""
    filler = [turn(f"D1:{i}", "word " * 30, 0.9 - i / 100) for i in range(2, 5)]
    hits = [*filler, turn("D1:1", "Thanks!", 0.2), turn("D9:1", "Thanks!", 0.1)]
    coord = Recalls(hits)
    wide = prompt_row(coord, "u", "q", ["D1:1", "D9:1"], 2000)  # type: ignore[arg-type]
    assert wide.share == 1.0 and wide.lines == 5
    # the largest budget with room for all lines but the last (the note saying what was
    # omitted takes room too): found by bisection, as a larger budget never shows fewer lines
    low, high = 1, 2000  # lines(low) < 5 <= lines(high)
    assert prompt_row(coord, "u", "q", [], low).lines < 5  # type: ignore[arg-type]
    while high - low > 1:
        mid = (low + high) // 2
        if prompt_row(coord, "u", "q", [], mid).lines < 5:  # type: ignore[arg-type]
            low = mid
        else:
            high = mid
    budget = low
    assert prompt_row(coord, "u", "q", [], budget).lines == 4  # type: ignore[arg-type]
    assert prompt_row(coord, "u", "q", ["D1:1"], budget).share == 1.0  # type: ignore[arg-type]
    assert prompt_row(coord, "u", "q", ["D9:1"], budget).share == 0.0  # type: ignore[arg-type]


def test_a_reply_turn_counts_only_when_its_line_shows_it_whole() -> None:
    asked = turn("D1:1", "Which novel?", 0.9, reply="Project Hail Mary.", reply_id="D1:2")
    long = turn("D2:1", "And a film?", 0.8, reply="Arrival. " * 60, reply_id="D2:2")
    coord = Recalls([asked, long])
    row = prompt_row(coord, "u", "q", ["D1:2", "D2:2"], 2000)  # type: ignore[arg-type]
    assert row.share == 0.5  # the film's reply is cut to fit 300 characters
