"""lab/profile_pages.py: a named part's time is its outermost function's cumulative time."""

from __future__ import annotations

import cProfile
import pstats
import time

from lab import profile_pages
from memory.config import PROJECT_ROOT


def render_sidebar() -> None:  # named as the part it stands for (ui/sidebar.py)
    _inner()


def _inner() -> None:
    time.sleep(0.02)


def test_a_part_takes_its_functions_cumulative_time_and_an_absent_part_none(
    monkeypatch,
) -> None:
    prof = cProfile.Profile()
    prof.runcall(render_sidebar)
    monkeypatch.setattr(
        profile_pages,
        "PARTS",
        (("sidebar", "test_profile_pages.py", "render_sidebar"), ("absent", "nowhere.py")),
    )
    parts = dict(profile_pages.part_times(pstats.Stats(prof)))
    assert parts["sidebar"] >= 0.02
    assert parts["absent"] == 0.0


def test_the_chat_pages_imports_leave_pandas_for_later() -> None:
    """The first paint needs no table: pandas (about 0.4 s of CPU) comes with the first one,
    or with the chart warm-up after the page is drawn (docs/performance.md)."""
    secs, pandas = profile_pages.import_cpu(PROJECT_ROOT)
    assert secs > 0
    assert not pandas
