"""lab/profile_pages.py: a named part's time is its outermost function's cumulative time."""

from __future__ import annotations

import cProfile
import pstats
import time

from lab import profile_pages


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
