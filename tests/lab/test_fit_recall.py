"""lab/fit_recall.py's cross-validation (research): each conversation held out once, by a
fit that did not see it, and the rest of its file scored by the fits that did."""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

from lab import fit_recall


@pytest.fixture(scope="module")
def fr() -> ModuleType:
    return fit_recall


def question(conv: str, evidence_vector: float, distractor_vector: float) -> dict[str, Any]:
    """One question with 10 candidates: the evidence (first id), one distractor and 8 weak ones;
    parts are (vector, coverage, time, stated)."""
    ids = [f"{conv}-m{i}" for i in range(10)]
    vectors = [evidence_vector, distractor_vector] + [0.05 + 0.01 * i for i in range(8)]
    return {
        "file": "locomo-test.json",
        "conv": conv,
        "tune": True,
        "n_evidence": 1,
        "category": 4,
        "seeds": 5,
        "question": "What did Ann bring to the picnic?",
        "ids": ids,
        "texts": ids,
        "x": np.array([[v, 0.0, 0.0, 0.0] for v in vectors]),
        "y": np.array([1.0] + [0.0] * 9),
        "links": {r: {} for r in ids},
    }


def test_every_question_is_held_out_once_and_the_rest_is_scored_by_the_fits_that_saw_it(
    fr: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    easy = [question(c, 0.9, 0.3) for c in ("conv-a", "conv-a", "conv-c", "conv-c")]
    hard = [question("conv-b", 0.2, 0.9)]  # its evidence ranks second whatever the fit
    out = fr.cross_validate(easy + hard)["locomo-test.json"]
    # held out: 4 of 5 questions at rank 1
    assert out["holdout"]["R@1"] == pytest.approx(0.8)
    assert out["holdout"]["R@5"] == pytest.approx(1.0)
    # the rest of the file: holding a out scores b, c, c (2 of 3); b out: a, a, c, c (4 of 4);
    # c out: a, a, b (2 of 3): 8 of 10 question-fits
    assert out["tune"]["R@1"] == pytest.approx(0.8)
    assert out["gap"]["R@1"] == pytest.approx(0.0)
    table = capsys.readouterr().out
    assert "| conv-b | 1 | 1.000 / 1.000 | 1.000 / 1.000 | +0.000 (+0.000) |" in table


def test_a_file_with_one_conversation_cannot_be_cross_validated(fr: ModuleType) -> None:
    with pytest.raises(SystemExit, match="two conversations"):
        fr.cross_validate([question("conv-a", 0.9, 0.3), question("conv-a", 0.8, 0.2)])
