"""ui.resources.shared_figure: a figure built once per content of its frame, for every session."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ui import resources


def test_a_figure_is_built_once_per_frame_content_and_again_when_the_content_changes() -> None:
    resources._figure.clear()
    built: list[pd.DataFrame] = []

    def build(frame: pd.DataFrame) -> dict[str, Any]:
        built.append(frame)
        return {"rows": len(frame)}

    frame = pd.DataFrame({"day": [1, 2], "tags": [["a"], ["b", "c"]]})  # lists too
    first = resources.shared_figure(build, frame)
    again = resources.shared_figure(build, frame.copy())  # another session's equal frame
    assert again is first and len(built) == 1
    changed = resources.shared_figure(build, pd.DataFrame({"day": [1, 2, 3], "tags": [[], [], []]}))
    assert changed == {"rows": 3} and len(built) == 2

    def other(frame: pd.DataFrame) -> str:
        return "another chart"

    assert resources.shared_figure(other, frame) == "another chart"  # keyed by the builder too
    resources._figure.clear()
