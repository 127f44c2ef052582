"""Secrets never stored (memory/writing/secrets.py), on every write path, with PII_POLICY=mask:
a chat turn through the agent and the fake Ollama (its short-term transcript, the logged
exchange, trigger phrases, the remember tool, background extraction, the turn's details, the
session title), MCP remember (episodic and semantic), the sidebar's add (the write policy),
the editor, the CLI, an import file, a summary. Then every Redis value of the namespace
(memories, messages, details, titles, the embedding cache, metrics) is read and searched for
each secret. And PII_POLICY=refuse: a clear error, exit 2 in the CLI, nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from agent.config import AgentSettings
from agent.loop import ChatAgent
from agent.mcp_server import McpMemoryTools
from memory.config import PROJECT_ROOT, Settings
from memory.coordinator import MemoryCoordinator
from memory.errors import InvalidInputError
from memory.maintenance.summaries import summarise_session
from memory.models import MemoryType, now_ms
from memory.writing import WritePolicy, candidate_for
from tests.fakes.fake_ollama import FakeOllama
from tests.integration.conftest import SessionEmbedder

CARD = "4111 1111 1111 1111"
IBAN = "NL91 ABNA 0417 1643 00"
SSN = "123-45-6789"
PASSWORD = "hunter2"
WIFI = "swordfish"
API_KEY = "sk-proj-Zq8abcdefghijklmnop"
EMAIL = "anna.secret@example.com"
PHONE = "+31 6 9876 5432"
#: How each may appear in a stored value (as typed, or its digits run together).
NEEDLES = [
    CARD,
    CARD.replace(" ", ""),
    IBAN,
    IBAN.replace(" ", ""),
    SSN,
    PASSWORD,
    WIFI,
    "Zq8abcdefghijklmnop",
    EMAIL,
    PHONE,
    "9876 5432",
]


def values(client: redis.Redis, namespace: str) -> Iterator[tuple[bytes, bytes]]:
    """(key, each value) of every key of the namespace, read by type (DUMP would compress)."""
    for key in client.scan_iter(match=f"{namespace}*", count=1000):
        kind = client.type(key)
        if kind == b"string":
            yield key, client.get(key) or b""
        elif kind == b"hash":
            for f, v in client.hgetall(key).items():
                yield key, f + b"=" + v
        elif kind == b"list":
            for v in client.lrange(key, 0, -1):
                yield key, v
        elif kind == b"set":
            for v in client.smembers(key):
                yield key, v
        elif kind == b"zset":
            for v in client.zrange(key, 0, -1):
                yield key, v
        elif kind == b"stream":
            for _, fields in client.xrange(key):
                for f, v in fields.items():
                    yield key, f + b"=" + v
        elif kind == b"ReJSON-RL":
            yield key, client.execute_command("JSON.GET", key) or b""
        else:
            raise AssertionError(f"unexpected key type {kind!r} of {key!r}")


def leaks(client: redis.Redis, namespace: str) -> list[tuple[str, str]]:
    return [
        (key.decode(errors="replace"), needle)
        for key, value in values(client, namespace)
        for needle in NEEDLES
        if needle.encode() in value
    ]


@pytest.fixture
def masking(settings: Settings) -> Settings:
    return settings.model_copy(update={"pii_policy": "mask"})


@pytest.fixture
def coord(
    redis_client: redis.Redis, embedder: SessionEmbedder, masking: Settings
) -> Iterator[MemoryCoordinator]:
    c = MemoryCoordinator(redis_client, embedder, masking)
    yield c
    c.close()


@pytest.fixture
def agent(
    coord: MemoryCoordinator, masking: Settings, fake_ollama: FakeOllama
) -> Iterator[ChatAgent]:
    a = ChatAgent(
        masking.model_copy(update={"ollama_host": fake_ollama.url}),
        coord,
        toolkits=None,  # the memory tools, as in the app
        agent_settings=AgentSettings(_env_file=None, llm_extraction="always"),  # type: ignore[call-arg]
    )
    yield a
    a.close()


def _cli(args: list[str], redis_url: str, namespace: str, cwd: Path, **env_extra: str):  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "REDIS_", "PII"))}
    env.update(REDIS_URL=redis_url, MEMORY_NAMESPACE=namespace, PYTHONPATH=str(PROJECT_ROOT))
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-m", "memory", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_no_path_stores_a_secret(
    agent: ChatAgent,
    coord: MemoryCoordinator,
    masking: Settings,
    fake_ollama: FakeOllama,
    redis_client: redis.Redis,
    redis_url: str,
    namespace: str,
    tmp_path: Path,
) -> None:
    # --- the chat: a trigger phrase, the model's reply quoting it, background extraction ----
    message = f"Remember: my card number is {CARD} and my email is {EMAIL}"
    fake_ollama.queue_structured(
        {"memories": [{"text": f"My card number is {CARD}", "event_type": "fact", "slot": "none"}]}
    )
    fake_ollama.queue_reply(f"Noted your card {CARD}; I will write to {EMAIL}.")
    turn = agent.chat("ana", "s1", message)
    coord.set_session_title("ana", "s1", message, only_if_missing=True)
    assert agent.wait_for_background(timeout=60)
    assert turn.saved and turn.stored
    assert set(turn.masked) == {"card number", "email address"}
    assert turn.stored[0].masked == ["card number", "email address"]

    # --- the model's remember tool ------------------------------------------------------
    fake_ollama.queue_tool_calls(
        [("remember_information", {"content": f"My IBAN is {IBAN}", "kind": "fact"})]
    )
    fake_ollama.queue_reply("Saved.")
    fake_ollama.queue_structured({"memories": []})
    tool_turn = agent.chat("ana", "s1", f"Please keep my IBAN {IBAN} in mind")
    assert agent.wait_for_background(timeout=60)
    assert "bank account number" in tool_turn.masked
    # "My IBAN is [bank account number]" names the secret and says nothing else: not stored
    assert tool_turn.stored == []

    # --- MCP remember, episodic and semantic -------------------------------------------
    mcp = McpMemoryTools(
        coord, WritePolicy(coord, dedup_threshold=masking.dedup_threshold, pii_policy="mask")
    )
    mcp.remember("ana", "mcp", f"My SSN is {SSN}", context="MCP client")
    mcp.remember("ana", "mcp", f"The office wifi password is {WIFI}", "semantic", context="MCP")

    # --- the sidebar's add (the write policy), then the editor's change -------------------
    writer = WritePolicy(coord, pii_policy="mask")
    added = writer.write(
        "ana", "s1", candidate_for(f"My API key is {API_KEY}, it expires in June", how="user")
    )
    assert added.stored is not None and added.stored.masked == ["api key"]
    coord.update_memory(
        "ana", MemoryType.EPISODIC, added.stored.id, text=f"My password is {PASSWORD}"
    )

    # --- an import file written before masking existed ----------------------------------
    doc = coord.export_user("ana")
    doc["episodic"][0]["description"] = f"Call me on {PHONE}, card {CARD}"
    doc["episodic"][0]["id"] = "imported-1"
    doc["short_term"] = {"old": [{**doc["short_term"]["s1"][0], "content": f"pin is {PASSWORD}"}]}
    doc["procedural"][0]["query_pattern"] = f"my password is {PASSWORD}"  # the tool turn's
    coord.import_user(doc, user_id="bo")

    # --- a summary a model wrote ----------------------------------------------------------
    for q, a in [("How was my run?", "Fine."), ("And my sleep?", "Good.")]:
        coord.store_interaction("ana", "s2", q, a, store_episode=False)
    out = summarise_session(
        coord.stores,
        coord.embedder,
        "ana",
        "s2",
        lambda turns: f"The user asked about a run and sleep; their wifi password is {WIFI}.",
        reason="test",
        now_ms=now_ms(),
    )
    assert out.status == "done" and "[password]" in out.texts[0]

    # --- the CLI --------------------------------------------------------------------------
    proc = _cli(
        ["add", "--user", "ana", "--text", f"My passport number is X{SSN[:3]}99 and pin is 4321",
         "--json"],
        redis_url, namespace, tmp_path, PII_POLICY="mask",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["masked"] == ["pin", "government id number"]

    assert leaks(redis_client, namespace) == []
    # The memories are still there, with labels: masking is not dropping.
    texts = [r["text"] for r in coord.list_memories("ana", MemoryType.EPISODIC)[0]]
    assert "My card number is [card number] and my email is [email address]" in texts
    assert "My password is [password]" in texts
    assert "[card number]" in coord.recent_messages("ana", "s1")[1].content  # the reply


def test_tags_and_metadata_hold_no_secret(
    coord: MemoryCoordinator, redis_client: redis.Redis, namespace: str
) -> None:
    # Tags and metadata come from callers too (the API, MCP, an import): a secret there
    # is masked like one in the text, and a tag that is a secret is left out.
    mem = coord.add_episodic(
        "ana",
        "Booked the flight",
        tags=["travel", CARD.replace(" ", "")],
        metadata={"note": f"paid with {CARD}", "contact": [EMAIL], "seats": 2},
    )
    fact = coord.add_semantic(
        "The office has a guest network", added_by="ana", metadata={"wifi": f"password is {WIFI}"}
    )
    assert leaks(redis_client, namespace) == []
    got = coord.get_memory("ana", MemoryType.EPISODIC, mem.id)
    assert got["tags"] == ["travel"]
    assert got["metadata"] == {
        "note": "paid with [card number]",
        "contact": ["[email address]"],
        "seats": 2,
    }
    assert coord.get_memory("ana", MemoryType.SEMANTIC, fact.id)["metadata"] == {
        "wifi": "password is [password]"
    }


def test_refuse_policy_writes_nothing_and_the_cli_exits_2(
    settings: Settings,
    redis_client: redis.Redis,
    embedder: SessionEmbedder,
    redis_url: str,
    namespace: str,
    tmp_path: Path,
) -> None:
    refusing = settings.model_copy(update={"pii_policy": "refuse"})
    coord = MemoryCoordinator(redis_client, embedder, refusing)
    try:
        writer = WritePolicy(coord, pii_policy="refuse")
        with pytest.raises(InvalidInputError, match="an email address"):
            writer.write("ana", "s1", candidate_for(f"Write to me at {EMAIL}", how="user"))
        with pytest.raises(InvalidInputError, match="a phone number"):
            coord.store_interaction("ana", "s1", f"call me on {PHONE}", "OK")
        # A reply quoting one is masked, not refused: the user's message stays saveable.
        coord.store_interaction("ana", "s1", "What is the club's address?", f"It is {EMAIL}.")
        assert coord.recent_messages("ana", "s1")[-1].content == "It is [email address]."
    finally:
        coord.close()
    proc = _cli(
        ["add", "--user", "ana", "--text", f"My email is {EMAIL}"],
        redis_url, namespace, tmp_path, PII_POLICY="refuse",
    )  # fmt: skip
    assert proc.returncode == 2
    assert "email address" in proc.stderr and "PII_POLICY" in proc.stderr
    assert leaks(redis_client, namespace) == []
