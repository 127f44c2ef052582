"""Smoke tests of the benchmarks on tiny synthetic data: the shape of what they report, and
that recall@k / MRR are computed right. No timing is asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks import latency, locomo
from benchmarks.common import bench_coordinator, collect_garbage, percentiles
from benchmarks.prompt_level import prompt_row
from memory.config import PROJECT_ROOT, Settings
from memory.coordinator import MemoryCoordinator


def _turn(speaker: str, dia: str, text: str, **extra: str) -> dict[str, str]:
    return {"speaker": speaker, "dia_id": dia, "text": text, **extra}


TINY: list[dict[str, Any]] = [
    {
        "sample_id": "tiny-1",
        "conversation": {
            "speaker_a": "Ada",
            "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                _turn("Ada", "D1:1", "Hi Bo! How was your week?"),
                _turn("Bo", "D1:2", "Great, I adopted a tortoise named Quibble."),
                _turn("Ada", "D1:3", "Lovely! I took up the theremin last month."),
                _turn(
                    "Bo", "D1:4", "Send me a photo!", blip_caption="a photo of a tortoise on grass"
                ),
            ],
            "session_2_date_time": "10:00 am on 20 June, 2023",
            "session_2": [
                _turn("Ada", "D2:1", "My theremin concert is next Friday in Lisbon."),
                _turn("Bo", "D2:2", "Quibble ate a whole strawberry today."),
                _turn("Ada", "D2:3", "Ha, that tortoise has taste."),
            ],
        },
        "qa": [
            {
                "question": "What is the name of Bo's tortoise?",
                "answer": "Quibble",
                "evidence": ["D1:2"],
                "category": 4,
            },
            {
                "question": "Where is Ada's theremin concert?",
                "answer": "Lisbon",
                "evidence": ["D2:1", "D1:3"],
                "category": 1,
            },
            {"question": "An adversarial one", "answer": "", "evidence": ["D1:1"], "category": 5},
        ],
    }
]


def test_recall_at_k_and_mrr_on_a_hand_made_ranking() -> None:
    ranked = [("D1:1",), ("D1:3",), ("D2:1",), ("D2:2",)]
    rec, rr = locomo._metrics(ranked, ["D1:3", "D2:2"], [1, 2, 3, 4])
    assert rec == {1: 0.0, 2: 0.5, 3: 0.5, 4: 1.0}
    assert rr == 0.5  # first evidence at rank 2
    rec, rr = locomo._metrics(ranked, ["X:9"], [1, 4])
    assert rec == {1: 0.0, 4: 0.0} and rr == 0.0


def test_a_hit_holds_the_reply_its_message_got() -> None:
    """In a chat the assistant's reply is stored as the context of the message it answered:
    an evidence turn the assistant said is found with that message."""
    ranked = [("D1:1",), ("D1:3", "D1:4")]
    rec, rr = locomo._metrics(ranked, ["D1:4"], [1, 2])
    assert rec == {1: 0.0, 2: 1.0} and rr == 0.5


CHAT = [
    {
        "sample_id": "chat-1",
        "conversation": {
            "speaker_a": "Noah",
            "speaker_b": "Assistant",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Noah", "dia_id": "D1:1", "text": "Can you suggest a sci-fi novel?"},
                {
                    "speaker": "Assistant",
                    "dia_id": "D1:2",
                    "text": "Try Project Hail Mary by Andy Weir: a lone astronaut saves Earth. "
                    + "It is funny, clever and full of real science. " * 3,
                },
                {"speaker": "Noah", "dia_id": "D1:3", "text": "I went for a run this morning."},
                {"speaker": "Assistant", "dia_id": "D1:4", "text": "Nice, how far?"},
            ],
        },
        "qa": [
            {
                "question": "Which sci-fi novel did you suggest to me?",
                "answer": "Project Hail Mary",
                "evidence": ["D1:2"],
                "category": 4,
            }
        ],
    }
]


def test_an_answer_the_assistant_gave_reaches_the_block_with_its_message(
    coordinator: MemoryCoordinator,
) -> None:
    wide = locomo.run(coordinator, CHAT, [1], min_score=0.0, prompt_budget=800, user_prefix="w-")
    assert wide["recall_at"]["1"] == 1.0  # the message that got the suggestion is found first
    assert wide["prompt"]["evidence_share"] == 1.0  # and its line shows the reply whole
    # A budget with room for the message's line but not for the reply: the line is kept
    # without it, and the reply (the evidence) did not reach the model.
    narrow = locomo.run(coordinator, CHAT, [1], min_score=0.0, prompt_budget=120, user_prefix="n-")
    assert narrow["prompt"]["evidence_share"] == 0.0
    question = CHAT[0]["qa"][0]["question"]
    assert prompt_row(coordinator, "n-chat-1", question, ["D1:1"], 120).share == 1.0
    assert prompt_row(coordinator, "n-chat-1", question, ["D1:2"], 120).share == 0.0


def test_turns_become_write_path_items_with_speaker_date_reply_and_order() -> None:
    items = locomo.turn_items(TINY[0]["conversation"])
    assert len(items) == 7
    first, second, photo = items[0], items[1], items[3]
    assert first["text"] == "Ada (8 May 2023): Hi Bo! How was your week?"
    assert first["context"] == ""
    assert second["context"] == "replying to Ada: Hi Bo! How was your week?"
    assert photo["text"].endswith("[image: a photo of a tortoise on grass]")
    assert second["metadata"] == {"dia_id": "D1:2", "speaker": "Bo"}
    assert second["session_id"] == "session_1" and items[4]["session_id"] == "session_2"
    # turns keep their order inside a session: one minute apart from the session's start
    assert second["timestamp_ms"] - first["timestamp_ms"] == 60_000


def test_a_chat_with_an_assistant_is_stored_as_the_app_stores_exchanges() -> None:
    """Each user message is one memory whose context is the assistant's reply (what
    store_interaction writes); the reply is not a memory of its own."""
    conversation = {
        "speaker_a": "Noah",
        "speaker_b": "Assistant",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Noah", "dia_id": "D1:1", "text": "I avoid crowded tourist spots."},
            {"speaker": "Assistant", "dia_id": "D1:2", "text": "Noted: quieter places."},
            {"speaker": "Noah", "dia_id": "D1:3", "text": "Thanks!"},
        ],
    }
    items = locomo.turn_items(conversation)
    assert [it["metadata"]["dia_id"] for it in items] == ["D1:1", "D1:3"]
    assert items[0]["context"] == "Assistant answered: Noted: quieter places."
    assert items[0]["metadata"]["reply_dia_id"] == "D1:2"


def test_locomo_run_reports_recall_mrr_categories_latency_and_ingest(
    coordinator: MemoryCoordinator,
) -> None:
    result = locomo.run(coordinator, TINY, [1, 5, 10, 20], min_score=0.0)
    assert result["n_questions"] == 2  # category 5 is skipped
    assert set(result["recall_at"]) == {"1", "5", "10", "20"}
    assert all(0.0 <= v <= 1.0 for v in result["recall_at"].values())
    # 7 turns, k = 10 and 20 cover all of them: every evidence turn is found
    assert result["recall_at"]["10"] == result["recall_at"]["20"] == 1.0
    assert set(result["by_category"]) == {"1 multi-hop", "4 single-hop"}
    assert result["by_category"]["4 single-hop"]["n_questions"] == 1
    # both words of the question are in the evidence turn: it is among the first hits (a
    # photo caption of Bo's sharing the same words may come first in 7 turns)
    assert result["by_category"]["4 single-hop"]["recall_at"]["5"] == 1.0
    assert 0.0 < result["mrr"] <= 1.0
    assert set(result["latency_ms"]) == {"p50", "p95"}
    assert result["ingest_s"] >= 0 and result["n_turns"] == 7
    assert result["by_conversation"]["tiny-1"]["n_questions"] == 2
    assert "R@10" in locomo.render(result)


def test_locomo_command_prints_json_with_the_documented_keys(
    tmp_path: Path, redis_url: str
) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(TINY))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks",
            "locomo",
            "--data",
            str(data),
            "--k",
            "1,5",
            "--json",
            "--redis-url",
            redis_url,
        ],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert {"recall_at", "mrr", "by_category", "n_questions", "latency_ms", "ingest_s"} <= set(out)
    assert set(out["recall_at"]) == {"1", "5"}
    assert "ingest" in done.stderr  # progress goes to stderr, never into the JSON


def test_locomo_command_refuses_a_bad_k(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(TINY))
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "locomo", "--data", str(data), "--k", "0"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0 and "--k" in done.stderr


def test_latency_run_reports_every_figure(
    redis_client: Any, embedder: Any, settings: Settings
) -> None:
    emb = latency.BenchEmbedder(embedder)
    coord = MemoryCoordinator(redis_client, emb, settings, load_knowledge=False)
    try:
        res = latency.run(coord, emb, [20, 40], n_queries=3, ingest_sample=20, pool_size=20)
    finally:
        coord.close()
    assert [s["size"] for s in res["sizes"]] == [20, 40]
    assert [s["user_memories"] for s in res["sizes"]] == [2, 4]
    for s in res["sizes"]:
        for key in ("retrieve_warm_ms", "retrieve_cold_ms"):
            assert set(s[key]) == {"p50", "p95", "p99", "stages"}
            assert "episodic" in s[key]["stages"]
        assert set(s["store_interaction_ms"]) == {"p50", "p95", "p99"}
        assert s["bytes_per_memory"] > 0 and s["hash_bytes_per_memory"] > 0
    assert res["ingest"]["memories"] == 20 and res["ingest"]["per_second"] > 0
    assert set(res["embedding_cache"]) == {"local_hit_ms", "redis_hit_ms", "model_embed_ms"}
    text = latency.render(res)
    assert "retrieve_all_context" in text and "memories/s" in text


@pytest.mark.parametrize(
    ("samples", "expected"),
    [([], {"p50": 0.0, "p95": 0.0, "p99": 0.0}), ([1.0, 2.0, 3.0], {"p50": 2.0})],
)
def test_percentiles(samples: list[float], expected: dict[str, float]) -> None:
    got = percentiles(samples)
    for k, v in expected.items():
        assert got[k] == v


def test_recall_overrides_change_only_the_named_weights(coordinator: MemoryCoordinator) -> None:
    from benchmarks.common import apply_recall_overrides

    before = coordinator.recall.weights
    got = apply_recall_overrides(coordinator, ["neighbour=0", "neighbour_hops=1"])
    now = coordinator.recall.weights
    assert now.neighbour == 0.0 and now.neighbour_hops == 1
    assert got["candidates"] == before.candidates and got["neighbour"] == 0.0
    with pytest.raises(SystemExit):
        apply_recall_overrides(coordinator, ["no_such_field=1"])


def test_prompt_budget_measures_what_reaches_the_memory_block(
    coordinator: MemoryCoordinator,
) -> None:
    # A generous budget holds every recalled turn of the tiny conversation: the evidence of the
    # single-hop question (the tortoise's name) has a line in the block.
    wide = locomo.run(coordinator, TINY, [5], min_score=0.0, prompt_budget=2000, user_prefix="w-")
    prompt = wide["prompt"]
    assert prompt["budget_tokens"] == 2000 and prompt["n_questions"] == 2
    assert prompt["by_category"]["4 single-hop"]["evidence_share"] == 1.0
    assert 0 < prompt["tokens"]["p95"] <= 2000
    # A budget that holds the fence and little else leaves the evidence out, and says so.
    narrow = locomo.run(coordinator, TINY, [5], min_score=0.0, prompt_budget=60, user_prefix="n-")
    assert narrow["prompt"]["evidence_share"] < prompt["evidence_share"]
    assert narrow["prompt"]["tokens"]["p95"] <= 60
    assert "evidence in the agent's memory block" in locomo.render(narrow)


def test_the_bench_collects_what_access_counts_leave_so_bm25_does_not_depend_on_timing(
    embedder: Any,
) -> None:
    # The bench's own server, as a run uses it: every turn recalled once (an access count each
    # indexes it again), then the question's garbage collected.
    with bench_coordinator(None, embedder) as coord:
        ids = coord.add_episodic_many("u", locomo.turn_items(TINY[0]["conversation"]))
        index = coord.episodic.index.name

        def bm25() -> list[Any]:
            return coord.stores.client.execute_command(
                "FT.SEARCH", index, "tortoise", "WITHSCORES", "NOCONTENT", "SCORER", "BM25STD"
            )

        coord.episodic.touch("u", ids)
        uncollected = bm25()
        collect_garbage(coord)
        collected = bm25()
        # the replaced entries counted until collected (a handful of them is collected too)
        assert collected != uncollected
        # what Redis Search's own collector would do later changes nothing any more
        coord.stores.client.execute_command("FT.DEBUG", "GC_FORCEINVOKE", index)
        assert bm25() == collected


@pytest.mark.parametrize(
    "value, expected",
    [
        ("1:56 pm on 8 May, 2023", (2023, 5, 8, 13, 56)),
        ("2023/05/20 (Sat) 02:21", (2023, 5, 20, 2, 21)),
        ("2023-05-08T13:56:00", (2023, 5, 8, 13, 56)),
        ("2023-05-08", (2023, 5, 8, 0, 0)),
        ("2023-05-08T23:30-05:00", (2023, 5, 9, 4, 30)),  # one clock: UTC
    ],
)
def test_session_dates_of_other_data_sets_are_read(value: str, expected: tuple[int, ...]) -> None:
    d = locomo.parse_session_date(value)
    assert (d.year, d.month, d.day, d.hour, d.minute) == expected and d.utcoffset() is not None


def test_a_session_date_in_no_known_format_is_refused_naming_the_session(tmp_path: Path) -> None:
    bad = json.loads(json.dumps(CHAT))
    bad[0]["conversation"]["session_1_date_time"] = "the day after the party"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(ValueError, match="chat-1: session_1_date_time: 'the day after the party'"):
        locomo.load(path)


def test_questions_without_a_locomo_category_are_asked_and_adversarial_ones_are_not() -> None:
    sample = {
        "qa": [
            {"question": "a", "evidence": ["D1:1"], "category": 2},
            {"question": "b", "evidence": ["D1:1"]},  # another data set: no category
            {"question": "c", "evidence": ["D1:1"], "category": 5},  # adversarial
            {"question": "d", "evidence": [], "category": 4},  # nothing to find
        ]
    }
    sample["qa"] += [
        {"question": "e", "evidence": ["D1:1"], "category": "5"},  # written as text
        {"question": "f", "evidence": ["D1:1"], "category": "4"},
        {"question": "g", "evidence": ["D1:1"], "category": True},
    ]
    asked = locomo.questions(sample)
    assert [q["question"] for q in asked] == ["a", "b", "f", "g"]
    assert [locomo.category_of(q) for q in asked] == [2, 0, 4, locomo.UNCATEGORISED]
    assert locomo.CATEGORY_NAMES[locomo.UNCATEGORISED] == "uncategorised"
