"""A memory's "last used" time as stored: anything that is not a time in range reads as unknown
(an earlier version's import stored 1e30 and 2**63; a hand edit can store words)."""

from __future__ import annotations

import pytest

from memory.stores.usage import _time


@pytest.mark.parametrize(
    ("stored", "read"),
    [
        ("1764000000000", 1764000000000),
        ("1764000000000.0", 1764000000000),
        ("1.764e12", 1764000000000),
        ("1e30", 0),
        (str(2**63), 0),
        ("inf", 0),  # float, then int: an overflow
        ("yesterday", 0),  # not a number
        ("", 0),
    ],
)
def test_a_stored_time_out_of_range_or_not_a_number_reads_as_unknown(
    stored: str, read: int
) -> None:
    assert _time(stored) == read
