"""`python -m memory forget`: a preview and a confirmation in a terminal, `--yes` for scripts,
a refusal (exit 2) without either, counts with `--json`. Without a terminal the CLI's `main` runs
in this process as a subprocess would see it (tests/in_process.py); with one, a real process
reads a pty."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from memory.config import PROJECT_ROOT
from memory.coordinator import MemoryCoordinator
from memory.errors import NotFoundError
from tests.in_process import run_main


@pytest.fixture
def env(redis_url: str, namespace: str, coordinator: MemoryCoordinator) -> dict[str, str]:
    """The CLI's environment: this test's Redis and namespace (the coordinator opened it)."""
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMORY_", "REDIS_", "EMBEDDING_", "OLLAMA_", "KNOWLEDGE_"))
    }
    return {
        **base,
        "REDIS_URL": redis_url,
        "MEMORY_NAMESPACE": namespace,
        "EMBEDDING_PROVIDER": "onnx",
        "PYTHONPATH": str(PROJECT_ROOT),
    }


def forget(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    from memory.cli import main

    argv = ["forget", "--user", "ana", *args]
    return run_main(main, argv, env=env, cwd=cwd, prog="memory")


def in_terminal(env: dict[str, str], cwd: Path, answer: str, *args: str) -> tuple[int, str]:
    """Run with a terminal as stdin (a pty) and type `answer`; (exit code, stdout)."""
    main, side = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memory", "forget", "--user", "ana", *args],
        cwd=cwd,
        env=env,
        stdin=side,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.close(side)
    os.write(main, answer.encode() + b"\n")
    out, _ = proc.communicate(timeout=120)
    os.close(main)
    return proc.returncode, out


@pytest.fixture
def topic(coordinator: MemoryCoordinator) -> dict[str, str]:
    lawyer = coordinator.add_episodic("ana", "My divorce lawyer is Ms Okafor", event_type="fact")
    run = coordinator.add_episodic("ana", "I run on Sundays", event_type="preference")
    return {"lawyer": lawyer.id, "run": run.id}


def exists(coordinator: MemoryCoordinator, memory_id: str) -> bool:
    try:
        coordinator.get_memory("ana", "episodic", memory_id)
    except NotFoundError:
        return False
    return True


def test_without_a_terminal_or_yes_it_refuses_and_deletes_nothing(
    env: dict[str, str], tmp_path: Path, coordinator: MemoryCoordinator, topic: dict[str, str]
) -> None:
    proc = forget(env, tmp_path, "--query", "Okafor")
    assert proc.returncode == 2
    assert "--yes" in proc.stderr and "Traceback" not in proc.stderr
    assert exists(coordinator, topic["lawyer"])


def test_yes_json_forgets_and_prints_the_counts(
    env: dict[str, str], tmp_path: Path, coordinator: MemoryCoordinator, topic: dict[str, str]
) -> None:
    proc = forget(env, tmp_path, "--query", "Okafor", "--yes", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["counts"]["memories"] == 1 and out["items"] == 1 and out["total"] >= 1
    assert not exists(coordinator, topic["lawyer"])
    assert exists(coordinator, topic["run"])


@pytest.mark.parametrize("query", ["", "the my", "2024"])
def test_a_topic_without_words_is_a_usage_error(
    env: dict[str, str], tmp_path: Path, query: str
) -> None:
    proc = forget(env, tmp_path, "--query", query, "--yes")
    assert proc.returncode == 2
    assert "Name the topic" in proc.stderr and "Traceback" not in proc.stderr


def test_in_a_terminal_the_preview_asks_first(
    env: dict[str, str], tmp_path: Path, coordinator: MemoryCoordinator, topic: dict[str, str]
) -> None:
    code, out = in_terminal(env, tmp_path, "n", "--query", "Okafor")
    assert code == 1
    assert "My divorce lawyer is Ms Okafor" in out and "Forget 1 item" in out
    assert exists(coordinator, topic["lawyer"])

    code, out = in_terminal(env, tmp_path, "y", "--query", "Okafor")
    # the result counts in the preview's unit first, then what came from it
    assert code == 0 and "forgot 1 item " in out and "1 memory" in out
    assert not exists(coordinator, topic["lawyer"])
    assert exists(coordinator, topic["run"])
