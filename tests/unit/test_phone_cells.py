"""A table cell as a phone's row reads it (ui/phone.py): lists joined, empty cells blank."""

from __future__ import annotations

import math

import pandas as pd

from ui.phone import _value


def test_a_list_cell_reads_as_its_items_joined() -> None:
    assert _value(["health", "running"]) == "health, running"
    assert _value(("a",)) == "a"


def test_empty_cells_read_as_nothing_and_numbers_as_two_decimals() -> None:
    assert _value(None) == ""
    assert _value(math.nan) == ""
    assert _value(pd.NaT) == ""
    assert _value(0.5) == "0.50"
    assert _value("text") == "text"
