"""The success score reflects what actually happened in a turn."""

from __future__ import annotations

from agent.learning import success_score, tool_sequence
from agent.types import ToolCallRecord


def _rec(name: str, *, error: str | None = None, empty: bool = False) -> ToolCallRecord:
    return ToolCallRecord(
        name=name,
        arguments={},
        result=None if error else {"count": 1},
        error=error,
        ms=1.0,
        empty=empty,
    )


def test_no_tools_means_nothing_to_learn() -> None:
    assert success_score([]) is None


def test_clean_runs_score_one_and_every_bad_signal_lowers_the_score() -> None:
    clean = success_score([_rec("a"), _rec("b")])
    empty = success_score([_rec("a"), _rec("b", empty=True)])
    failed = success_score([_rec("a"), _rec("b", error="boom")])
    all_failed = success_score([_rec("a", error="x"), _rec("b", error="y")])
    capped = success_score([_rec("a"), _rec("b")], hit_cap=True)
    assert clean == 1.0
    assert all_failed is not None and failed is not None and empty is not None
    assert all_failed < failed < empty < clean
    assert capped is not None and capped < clean


def test_a_retried_call_is_one_step_of_the_sequence() -> None:
    seq = tool_sequence(
        [_rec("aggregate_metrics", error="bad"), _rec("aggregate_metrics"), _rec("compare_periods")]
    )
    assert seq == ["aggregate_metrics", "compare_periods"]
