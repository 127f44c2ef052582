"""`python -m agent chat` as a user would script it: real Redis, fake Ollama. `_run` calls the
CLI's `main` in this process as a subprocess would see it (tests/in_process.py);
`_run_process` runs a real `python -m agent` where only a process shows it (argv bytes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from memory.config import PROJECT_ROOT, Settings
from tests.fakes.fake_ollama import (
    FakeOllama,
    RecordedRequest,
    Scripted,
    echo_responder,
    remembered_lines,
)
from tests.in_process import run_main


def _env(settings: Settings, ollama_url: str) -> dict[str, str]:
    return {
        **os.environ,
        "REDIS_URL": str(settings.redis_url),
        "MEMORY_NAMESPACE": settings.memory_namespace,
        "OLLAMA_HOST": ollama_url,
        "OLLAMA_MODEL": "qwen2.5:7b",
    }


def _run(settings: Settings, ollama_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    from agent.cli import main

    env = _env(settings, ollama_url)
    return run_main(main, list(args), env=env, cwd=PROJECT_ROOT, prog="agent")


def _run_process(
    settings: Settings, ollama_url: str, *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agent", *args],
        cwd=PROJECT_ROOT,
        env=_env(settings, ollama_url),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _chat_json(
    settings: Settings, url: str, user: str, session: str, message: str
) -> dict[str, Any]:
    proc = _run(settings, url, "chat", "--user", user, "--session", session, "--json", message)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_chat_json_prints_reply_recall_tools_stored_and_mode(
    settings: Settings, fake_ollama: FakeOllama
) -> None:
    out = _chat_json(settings, fake_ollama.url, "alice", "s1", "Remember: I prefer evening runs")
    assert {"reply", "recalled", "tools", "stored", "mode"} <= set(out)
    assert out["mode"] == "llm"
    assert [(m["text"], m["how"]) for m in out["stored"]] == [("I prefer evening runs", "trigger")]

    fake_ollama.queue_tool_calls([("search_workouts", {"workout_type": "run", "days": 14})])
    fake_ollama.queue_reply("You ran in the evenings.")
    out = _chat_json(settings, fake_ollama.url, "alice", "s2", "When do I prefer to run?")
    assert out["reply"] == "You ran in the evenings."
    assert [t["name"] for t in out["tools"]] == ["search_workouts"] and out["tools"][0][
        "error"
    ] is None
    assert [h["text"] for h in out["recalled"]["episodic"]][0] == "I prefer evening runs"
    assert "I prefer evening runs" in remembered_lines(
        fake_ollama.chat_requests()[-2].system_prompt
    )


def test_chat_json_with_ollama_down_is_memory_only_and_exits_zero(
    settings: Settings, closed_ollama_url: str
) -> None:
    out = _chat_json(settings, closed_ollama_url, "carol", "s1", "Important: I have asthma")
    assert out["mode"] == "memory-only"
    assert "ollama serve" in out["reply"]
    assert [m["event_type"] for m in out["stored"]] == ["health_event"]


def test_chat_without_json_prints_a_readable_transcript(
    settings: Settings, fake_ollama: FakeOllama
) -> None:
    fake_ollama.queue_reply("Hello Dana, nice to meet you.")
    proc = _run(
        settings, fake_ollama.url, "chat", "--user", "dana", "--session", "s1", "Hi, I'm Dana"
    )
    assert proc.returncode == 0, proc.stderr
    assert "dana> Hi, I'm Dana" in proc.stdout
    assert "assistant> Hello Dana, nice to meet you." in proc.stdout
    assert "mode: llm" in proc.stdout


def test_status_says_what_to_run(settings: Settings, closed_ollama_url: str) -> None:
    proc = _run(settings, closed_ollama_url, "status")
    assert proc.returncode == 1 and "ollama serve" in proc.stdout


def test_an_exchange_that_could_not_be_stored_exits_1_and_says_so(
    settings: Settings, fake_ollama: FakeOllama, redis_client
) -> None:
    """Redis refuses writes (maxmemory reached): the answer is printed, but the script is
    told on stderr and by the exit code that the exchange is not in memory."""
    old = redis_client.config_get("maxmemory")["maxmemory"]

    def fill_redis_then_answer(req: RecordedRequest) -> Scripted:
        redis_client.config_set("maxmemory", 1)  # from now on every write is refused
        return echo_responder(req)

    fake_ollama.queue_responder(fill_redis_then_answer)
    try:
        proc = _run(settings, fake_ollama.url, "chat", "--user", "u", "--session", "s", "Hello")
    finally:
        redis_client.config_set("maxmemory", old)
    assert "You said: Hello" in proc.stdout
    assert proc.returncode == 1, proc.stderr
    assert "NOT saved" in proc.stderr


def test_chat_transcript_escapes_terminal_control_characters(
    settings: Settings, fake_ollama: FakeOllama
) -> None:
    """A message, a remembered memory and a reply carrying ANSI codes cannot clear or
    recolour the terminal: the transcript shows the codes as visible escapes."""
    fake_ollama.queue_reply("Noted \x1b[2J\x1b[31mred\x1b[0m\x07")
    proc = _run(
        settings,
        fake_ollama.url,
        "chat",
        "--user",
        "dana",
        "--session",
        "s1",
        "Remember: I like \x1b[5mblinking\x1b[0m text",
    )
    assert proc.returncode == 0, proc.stderr
    assert not any(c in proc.stdout for c in "\x1b\x07"), proc.stdout
    assert "assistant> Noted \\x1b[2J\\x1b[31mred\\x1b[0m\\x07" in proc.stdout
    assert "remembered [preference] I like \\x1b[5mblinking\\x1b[0m text" in proc.stdout


def test_a_message_that_is_not_utf8_is_refused_with_a_message(
    settings: Settings, closed_ollama_url: str
) -> None:
    # a real process: the lone surrogate reaches it as the raw byte, as from a Latin-1 shell
    args = ("chat", "--user", "u", "--session", "s", "caf\udce9")
    proc = _run_process(settings, closed_ollama_url, *args)
    assert proc.returncode == 2
    assert "not valid UTF-8" in proc.stderr and "Traceback" not in proc.stderr
