"""`--record`: a bench run also writes its record (command, commit, date, machine, embedder,
headline figures), and its stdout stays the bench's own output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import benchmarks
from benchmarks import results
from memory.config import PROJECT_ROOT
from tests.benchmarks.test_recall_benches import TINY
from tests.fakes.fake_ollama import FakeOllama


def recorded_bench(
    tmp_path: Path, redis_url: str, command: list[str], *options: str
) -> tuple[subprocess.CompletedProcess, Path]:
    """`python -m COMMAND` (e.g. `benchmarks locomo`) on the tiny LoCoMo file with `--json
    --record`; its records go to a folder of the test's own (returned)."""
    data = tmp_path / "tiny-locomo.json"
    data.write_text(json.dumps(TINY))
    out_dir = tmp_path / "results"
    argv = [*command, "--data", str(data), *options, "--json", "--quiet"]
    done = subprocess.run(
        [sys.executable, "-m", *argv, "--record", "--redis-url", redis_url],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "BENCH_RESULTS_DIR": str(out_dir)},
    )
    return done, out_dir


def test_a_recorded_locomo_run_prints_its_json_and_writes_one_record(
    tmp_path: Path, redis_url: str
) -> None:
    done, out_dir = recorded_bench(tmp_path, redis_url, ["benchmarks", "locomo"], "--k", "1,5")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)  # stdout is the --json object alone, as without --record
    assert done.stdout.count("\n") == 1 and "recorded" in done.stderr
    [record] = results.load_records(out_dir)
    assert record["bench"] == "locomo" and record["data"] == "tiny-locomo.json"
    assert record["commit"] == out["commit"]
    assert record["command"].startswith("python -m benchmarks locomo --data ")
    assert "--record" not in record["command"]
    assert record["embedder"].startswith("all-MiniLM-L6-v2")
    assert record["figures"]["R@5"] == out["recall_at"]["5"]
    assert record["figures"]["MRR"] == out["mrr"]
    # a file without the dev files' held-out conversations reports no split
    assert "held_out_R@5" not in record["figures"]


def test_a_recorded_qa_run_writes_its_accuracy_with_model_and_mode(
    fake_ollama: FakeOllama,
    redis_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = tmp_path / "tiny-locomo.json"
    data.write_text(json.dumps(TINY))
    out_dir = tmp_path / "results"
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    monkeypatch.setenv("BENCH_RESULTS_DIR", str(out_dir))
    code = benchmarks.main(
        ["qa", "--data", str(data), "--mode", "oracle", "--json", "--quiet", "--record"]
        + ["--redis-url", redis_url]
    )
    assert code == 0
    out, _err = capsys.readouterr()
    result = json.loads(out)
    [record] = results.load_records(out_dir)
    assert record["bench"] == "qa" and record["commit"] == result["commit"]
    assert record["figures"]["contains"] == result["contains"] == 1.0
    assert record["figures"]["F1"] == result["f1"]
    assert f"model {result['model']}" in record["note"] and "mode oracle" in record["note"]
