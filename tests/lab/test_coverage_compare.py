"""lab.coverage_compare: which product files moved, and when the rule of issue 43 is broken."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab import coverage_compare


def report(files: dict[str, tuple[int, int]]) -> dict[str, object]:
    """A `coverage json` report: path -> (statements, covered lines), no branches."""
    return {
        "files": {
            name: {"summary": {"num_statements": n, "covered_lines": c}}
            for name, (n, c) in files.items()
        }
    }


def run(tmp_path: Path, before: dict, after: dict, capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    (tmp_path / "b.json").write_text(json.dumps(report(before)))
    (tmp_path / "a.json").write_text(json.dumps(report(after)))
    code = coverage_compare.main([str(tmp_path / "b.json"), str(tmp_path / "a.json")])
    return code, capsys.readouterr().out


def test_a_file_that_lost_more_than_a_point_is_named_and_fails(tmp_path, capsys) -> None:
    before = {"memory/a.py": (200, 180), "agent/b.py": (100, 50), "tests/t.py": (10, 0)}
    after = {"memory/a.py": (200, 190), "agent/b.py": (100, 48), "tests/t.py": (10, 10)}
    code, out = run(tmp_path, before, after, capsys)
    assert code == 1
    assert "| memory/a.py | 90.0 | 95.0 | +5.0 |" in out
    assert "| agent/b.py | 50.0 | 48.0 | -2.0 |" in out
    assert "LOST agent/b.py: -2.0 points" in out
    assert "tests/t.py" not in out  # not the product
    assert "| **total lines** (230/300 → 238/300) | 76.67 | 79.33 | +2.67 |" in out


def test_small_moves_are_left_out_and_pass_while_the_total_holds(tmp_path, capsys) -> None:
    before = {"ui/x.py": (1000, 900), "app.py": (200, 160)}
    after = {"ui/x.py": (1000, 903), "app.py": (200, 159), "ui/new.py": (10, 10)}
    code, out = run(tmp_path, before, after, capsys)
    assert code == 0, out
    assert "ui/x.py" not in out and "| app.py" not in out  # moved by less than a point
    assert "| ui/new.py | — | 100.0 | only after |" in out


def test_a_lower_total_fails_even_when_no_file_lost_a_point(tmp_path, capsys) -> None:
    before = {"memory/a.py": (1000, 900), "memory/b.py": (1000, 900)}
    after = {"memory/a.py": (1000, 895), "memory/b.py": (1000, 896)}
    code, out = run(tmp_path, before, after, capsys)
    assert code == 1 and "LOST total: -0.45 points" in out
