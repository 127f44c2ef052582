"""`benchmarks.qa` (`python -m benchmarks qa`) on a tiny made-up LoCoMo file, against the
fake Ollama and the session's Redis Stack.

The fake's default reply echoes the question and lists the remembered lines it saw in the
prompt, so: oracle mode (only the evidence turns, which hold the answers) is right on every
question, none mode (no memories) on none, and memory mode somewhere in between.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
import redis

from agent.config import AgentSettings
from agent.llm import OllamaLLM
from benchmarks import locomo
from benchmarks import qa as bench_qa
from benchmarks.common import Progress
from benchmarks.locomo import turn_items
from memory.block import render_memory_block
from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.models import MemoryContext
from tests.fakes.fake_ollama import FakeOllama


def _turn(speaker: str, dia: str, text: str) -> dict[str, str]:
    return {"speaker": speaker, "dia_id": dia, "text": text}


TINY: list[dict[str, Any]] = [
    {
        "sample_id": "qa-1",
        "conversation": {
            "speaker_a": "Ada",
            "speaker_b": "Bo",
            "session_1_date_time": "9:00 am on 4 March, 2023",
            "session_1": [
                _turn("Ada", "D1:1", "Morning Bo! Did the move go well?"),
                _turn("Bo", "D1:2", "Yes, we finally moved into the flat in Porto on Saturday."),
                _turn("Ada", "D1:3", "Nice. Did the animals come along?"),
                _turn("Bo", "D1:4", "All three cats, they hid under the sofa all day."),
            ],
            "session_2_date_time": "6:30 pm on 20 June, 2023",
            "session_2": [
                _turn("Ada", "D2:1", "Guess what, I started learning the cello."),
                _turn("Bo", "D2:2", "Wow! Who is your teacher?"),
                _turn("Ada", "D2:3", "A retired violinist called Marguerite from next door."),
                _turn("Bo", "D2:4", "Sounds lovely, enjoy it!"),
            ],
        },
        "qa": [
            {
                "question": "Which city did Bo move to?",
                "answer": "Porto",
                "evidence": ["D1:2"],
                "category": 4,
            },
            {
                "question": "How many cats does Bo have?",
                "answer": 3,  # an int, as LoCoMo has some
                "evidence": ["D1:3", "D1:4"],
                "category": 1,
            },
            {
                "question": "When did Ada tell Bo she had started the cello?",
                "answer": "June 2023",
                "evidence": ["D2:1"],
                "category": 2,
            },
            {
                "question": "What is the name of the person who teaches Ada?",
                "answer": "Marguerite",
                "evidence": ["D2:3", "D9:9"],  # one id names no turn, as in the real data
                "category": 3,
            },
            {"question": "An adversarial one", "answer": "", "evidence": ["D1:1"], "category": 5},
        ],
    }
]
N_TURNS = 8
CATEGORY_KEYS = {"1 multi-hop", "2 temporal", "3 open-domain", "4 single-hop"}
RESULT_KEYS = {
    "mode",
    "model",
    "n_questions",
    "contains",
    "f1",
    "prompt_tokens",
    "prompt_eval_count",
    "memory_tokens",
    "by_category",
    "failed",
    "commit",
    "date",
    "data",
}
FIGURES = {
    "n_questions",
    "contains",
    "f1",
    "prompt_tokens",
    "prompt_eval_count",
    "memory_tokens",
    "failed",
}


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-locomo.json"
    path.write_text(json.dumps(TINY), encoding="utf-8")
    return path


def _args(*argv: str) -> argparse.Namespace:
    """Parse `qa ...` as `python -m benchmarks` does."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    bench_qa.add_parser(parser.add_subparsers(dest="bench", required=True))
    return parser.parse_args(["qa", *argv])


def _run(
    capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[int, dict[str, Any] | None, str, str]:
    args = _args(*argv)
    code = args.fn(args)  # how `python -m benchmarks` calls it: Settings() from the environment
    out, err = capsys.readouterr()
    parsed = json.loads(out) if code == 0 and "--json" in argv else None
    return code, parsed, out, err


# ---- the scorer ------------------------------------------------------------------------------


def test_normalise_lowercases_and_drops_punctuation_articles_and_extra_spaces() -> None:
    assert bench_qa.normalise("  The Cat's   BOWL, an apple!  ") == "cats bowl apple"
    assert bench_qa.normalise("1,000 and 7.0 and 3.50") == "1000 and 7 and 3.5"
    assert bench_qa.normalise("Twenty-one, seven") == "21 7"


@pytest.mark.parametrize(
    ("reply", "gold", "expected"),
    [
        ("Bo moved to Porto last year.", "Porto", True),
        ("He lives in PORTO!", "porto", True),
        ("She went to the Portobello market.", "Porto", False),  # whole words only
        ("It was on 20 June, 2023.", "June 2023", True),
        ("It was in June.", "June 2023", False),
        ("The answer is a painting of the lake", "painting of lake", True),  # articles dropped
        ("", "Porto", False),
    ],
)
def test_contains_matches_the_normalised_gold_answer_as_whole_words(
    reply: str, gold: str, expected: bool
) -> None:
    assert bench_qa.contains(reply, gold) is expected


@pytest.mark.parametrize(
    ("reply", "gold", "expected"),
    [
        ("Bo has seven cats.", "7", True),
        ("Bo has 7 cats.", "seven", True),
        ("About 7.0 hours.", 7, True),  # an int gold answer, as in the JSON
        ("Twenty-one of them.", "21", True),
        ("1,000 people came.", "1000", True),
        ("Bo has 17 cats.", "7", False),  # a number is not a substring match
        ("In 2017.", "7", False),
        ("Bo has a few cats.", "3", False),
        ("It took 2.5 days", "2.5", True),
    ],
)
def test_a_numeric_gold_answer_is_compared_as_a_number(
    reply: str, gold: Any, expected: bool
) -> None:
    assert bench_qa.contains(reply, gold) is expected


def test_f1_is_squad_style_over_normalised_tokens() -> None:
    assert bench_qa.f1("Porto", "porto.") == 1.0
    assert bench_qa.f1("the Porto", "Porto") == 1.0  # the article is not a token
    # reply "moved to porto" vs gold "porto": precision 1/3, recall 1 -> F1 0.5
    assert bench_qa.f1("Moved to Porto", "Porto") == pytest.approx(0.5)
    assert bench_qa.f1("seven", 7) == 1.0  # numbers are canonical for F1 too
    assert bench_qa.f1("Lisbon", "Porto") == 0.0
    assert bench_qa.f1("", "Porto") == 0.0


def test_as_number_reads_only_answers_that_are_one_number() -> None:
    assert bench_qa.as_number(3) == 3.0
    assert bench_qa.as_number("three") == 3.0
    assert bench_qa.as_number("7.0") == 7.0
    assert bench_qa.as_number("7 times") is None
    assert bench_qa.as_number("June 2023") is None


# ---- the oracle's context -------------------------------------------------------------------


def test_oracle_hits_are_the_evidence_turns_with_their_ingested_text() -> None:
    items = turn_items(TINY[0]["conversation"])
    hits, missing = bench_qa.evidence_hits(items, ["D2:3", "D9:9", "D2:3"])
    assert missing == 1 and len(hits) == 1
    (hit,) = hits
    ingested = next(it for it in items if it["metadata"]["dia_id"] == "D2:3")
    assert hit.text == ingested["text"]
    assert hit.text.startswith("Ada (20 June 2023): A retired violinist called Marguerite")
    assert hit.score == 1.0 and hit.band == "high"
    assert hit.record == {
        "event_type": "interaction",
        "timestamp": ingested["timestamp_ms"],
        "context": ingested["context"],
    }


def test_an_oracle_reply_turn_reaches_the_block_with_the_message_it_answered() -> None:
    """A chat's evidence said by the assistant is stored as its message's context: the
    oracle's block shows it after the message, as the agent's would."""
    conversation = {
        "speaker_a": "Noah",
        "speaker_b": "Assistant",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Noah", "dia_id": "D1:1", "text": "Which sci-fi novel should I read?"},
            {"speaker": "Assistant", "dia_id": "D1:2", "text": "Try Project Hail Mary."},
        ],
    }
    (hit,), missing = bench_qa.evidence_hits(turn_items(conversation), ["D1:2"])
    ctx = MemoryContext(user_id="u", session_id="s", query="Which novel?", episodic=[hit])
    assert missing == 0
    assert ', you answered "Try Project Hail Mary."' in render_memory_block(ctx).text


# ---- the command, per mode --------------------------------------------------------------------


def _check_shape(result: dict[str, Any], mode: str, data_file: Path) -> None:
    assert RESULT_KEYS <= set(result)
    assert result["mode"] == mode and result["model"] == "qwen2.5:7b"
    assert result["data"] == str(data_file)
    assert result["n_questions"] == 4 and result["failed"] == 0  # category 5 is skipped
    assert result["n_turns"] == N_TURNS and result["evidence_missing"] == 1
    assert set(result["by_category"]) == CATEGORY_KEYS
    for cat in result["by_category"].values():
        assert set(cat) == FIGURES
        assert cat["n_questions"] == 1 and cat["failed"] == 0
        assert cat["prompt_tokens"] > 0 and cat["prompt_eval_count"] > 0
        assert cat["memory_tokens"] > 0
    # the overall figures are the means of the (here one-question) categories
    cats = list(result["by_category"].values())
    assert result["contains"] == pytest.approx(sum(c["contains"] for c in cats) / 4, abs=1e-4)
    assert result["f1"] == pytest.approx(sum(c["f1"] for c in cats) / 4, abs=1e-4)
    assert result["prompt_tokens"] == pytest.approx(
        sum(c["prompt_tokens"] for c in cats) / 4, abs=0.1
    )


def test_each_mode_reports_accuracy_tokens_and_categories(
    fake_ollama: FakeOllama,
    redis_url: str,
    data_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    results: dict[str, dict[str, Any]] = {}
    for mode in bench_qa.MODES:
        code, result, out, err = _run(
            capsys, "--data", str(data_file), "--mode", mode, "--json", "--redis-url", redis_url
        )
        assert code == 0, err
        assert result is not None
        assert out.count("\n") == 1  # stdout is the JSON object alone ...
        assert "ingest qa-1" in err and "asked 4 questions" in err  # ... progress is on stderr
        _check_shape(result, mode, data_file)
        results[mode] = result

    oracle, none, memory = results["oracle"], results["none"], results["memory"]
    # the evidence turns hold every answer, and the echo lists them
    assert oracle["contains"] == 1.0
    assert all(c["contains"] == 1.0 for c in oracle["by_category"].values())
    # with no memories the echo holds only the question, which holds no answer
    assert none["contains"] == 0.0
    assert all(c["contains"] == 0.0 for c in none["by_category"].values())
    assert memory["contains"] >= none["contains"] and memory["f1"] >= none["f1"]
    assert oracle["f1"] > none["f1"]
    # a memory block with lines costs more than the empty fence
    assert oracle["memory_tokens"] > none["memory_tokens"]
    assert oracle["prompt_tokens"] > none["prompt_tokens"]

    # every request was the agent's prompt with no tools offered, one per question and mode
    chats = fake_ollama.chat_requests()
    assert len(chats) == 3 * 4
    assert all(not r.body.get("tools") for r in chats)
    assert all(r.body["options"]["num_ctx"] == AgentSettings().num_ctx for r in chats)


def test_the_table_says_what_the_modes_mean_and_quiet_prints_no_progress(
    fake_ollama: FakeOllama,
    redis_url: str,
    data_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    code, _, out, err = _run(
        capsys, "--data", str(data_file), "--mode", "oracle", "--quiet", "--redis-url", redis_url
    )
    assert code == 0, err
    assert err == ""
    assert "contains" in out and "F1" in out and "4 single-hop" in out
    assert "oracle = only the evidence turns" in out and "memory - none" in out


def test_limit_and_conversations_choose_the_first_questions_in_file_order(
    fake_ollama: FakeOllama,
    redis_url: str,
    data_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    code, result, _, err = _run(
        capsys,
        "--data",
        str(data_file),
        "--mode",
        "none",
        "--limit",
        "2",
        "--conversations",
        "qa-1",
        "--json",
        "--quiet",
        "--redis-url",
        redis_url,
    )
    assert code == 0, err
    assert result is not None and result["n_questions"] == 2
    assert set(result["by_category"]) == {"4 single-hop", "1 multi-hop"}
    asked = [r.last_user_message for r in fake_ollama.chat_requests()]
    assert asked == ["Which city did Bo move to?", "How many cats does Bo have?"]


def test_a_failed_request_counts_as_wrong_and_the_run_goes_on(
    fake_ollama: FakeOllama,
    redis_url: str,
    data_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    fake_ollama.queue_error(500, "the runner crashed")  # the first question's request
    code, result, _, err = _run(
        capsys,
        "--data",
        str(data_file),
        "--mode",
        "oracle",
        "--json",
        "--quiet",
        "--redis-url",
        redis_url,
    )
    assert code == 0, err
    assert result is not None
    assert result["failed"] == 1 and result["n_questions"] == 4
    assert result["by_category"]["4 single-hop"]["failed"] == 1
    assert result["by_category"]["4 single-hop"]["contains"] == 0.0
    assert result["contains"] == 0.75  # the other three still answered from the evidence
    # the failed request reported no server count: the mean is over the other three
    assert result["by_category"]["4 single-hop"]["prompt_eval_count"] is None
    assert result["prompt_eval_count"] is not None


def test_an_unreachable_server_or_missing_model_fails_fast(
    fake_ollama: FakeOllama,
    closed_ollama_url: str,
    data_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("OLLAMA_HOST", closed_ollama_url)
    # no --redis-url: failing before the embedded Redis is started (or anything ingested)
    code, _, out, err = _run(capsys, "--data", str(data_file), "--json")
    assert code == 1 and out == ""
    assert "not reachable" in err and "ollama serve" in err

    monkeypatch.setenv("OLLAMA_HOST", fake_ollama.url)
    code, _, out, err = _run(capsys, "--data", str(data_file), "--model", "nope:1b", "--json")
    assert code == 1 and out == ""
    assert "ollama pull nope:1b" in err
    assert fake_ollama.chat_requests() == []


# ---- nothing is stored by asking ---------------------------------------------------------------


def _memory_keys(client: redis.Redis, namespace: str) -> set[bytes]:
    """Keys of the namespace that hold memories or sessions: not metrics, not the query
    embedding cache and its per-user note (recall's own bookkeeping)."""
    return {
        key
        for key in client.scan_iter(match=f"{namespace}*", count=1000)
        if b":metrics:" not in key
        and b":user_queries:" not in key
        and not key.startswith(f"{namespace}_embedcache".encode())
    }


def test_asking_stores_nothing(
    coordinator: MemoryCoordinator,
    redis_client: redis.Redis,
    namespace: str,
    settings: Settings,
    fake_ollama: FakeOllama,
) -> None:
    data = json.loads(json.dumps(TINY))
    user = bench_qa.USER_PREFIX + "qa-1"
    n_turns, _ = locomo.ingest(coordinator, data, Progress(quiet=True), bench_qa.USER_PREFIX)
    assert n_turns == N_TURNS
    before = _memory_keys(redis_client, namespace)
    assert coordinator.episodic.count(user) == N_TURNS

    s = settings.model_copy(update={"ollama_host": fake_ollama.url})
    answerer = bench_qa.make_answerer(OllamaLLM.from_settings(s, AgentSettings(_env_file=None)), s)
    for mode in bench_qa.MODES:
        result = bench_qa.ask(coordinator, answerer, "qwen2.5:7b", data, mode)
        assert result["n_questions"] == 4 and result["failed"] == 0
    coordinator.bookkeeping.drain()  # access counts of recalled memories are written

    assert coordinator.episodic.count(user) == N_TURNS
    assert coordinator.episodic.count() == N_TURNS  # nor under another user
    assert _memory_keys(redis_client, namespace) == before
    assert coordinator.recent_messages(user, bench_qa.SESSION) == []
