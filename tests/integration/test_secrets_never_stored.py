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
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from agent.config import AgentSettings
from agent.loop import ChatAgent
from agent.tools.memory_tools import MemoryToolkit
from agent.tools.registry import ToolContext
from memory.config import PROJECT_ROOT, Settings
from memory.coordinator import MemoryCoordinator
from memory.errors import InvalidInputError
from memory.maintenance.summaries import summarise_session
from memory.models import MemoryType, now_ms
from memory.text import plain
from memory.writing import WritePolicy, candidate_for, write_fact
from tests.fakes.fake_ollama import FakeOllama
from tests.in_process import run_main
from tests.integration.conftest import SessionEmbedder
from tests.unit.test_secrets import FORMS, LOOK_ALIKES

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
        # room for a remember call that holds every form below (~820 tokens): a shorter budget
        # cuts it, and a half-written call never reaches the write path under test
        agent_settings=AgentSettings(_env_file=None, llm_extraction="always", reply_tokens=1024),  # type: ignore[call-arg]
    )
    yield a
    a.close()


def _cli(args: list[str], redis_url: str, namespace: str, cwd: Path, **env_extra: str):  # type: ignore[no-untyped-def]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "REDIS_", "PII"))}
    env.update(REDIS_URL=redis_url, MEMORY_NAMESPACE=namespace, PYTHONPATH=str(PROJECT_ROOT))
    env.update(env_extra)
    from memory.cli import main  # in this process, as a subprocess would see it

    return run_main(main, args, env=env, cwd=cwd, prog="memory")


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
    mcp = MemoryToolkit(
        coord, WritePolicy(coord, dedup_threshold=masking.dedup_threshold, pii_policy="mask")
    )
    mcp.remember_information(ToolContext("ana", "mcp"), f"My SSN is {SSN}")
    mcp.remember_information(
        ToolContext("ana", "mcp"), f"The office wifi password is {WIFI}", "semantic"
    )

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


# --- the forms people write, on every write path ----------------------------------------------
#: Each secret of `tests.unit.test_secrets.FORMS`, as it could be found in a stored value.
FORM_LEAKS = [
    re.compile(p)
    for p in (
        r"Xq7hunter", r"\b7482\b", r"\b0451\b", r"correct horse", r"hunter2xyz", r"hunter 2",
        r"wJalrXUtnFEMI", r"0123456789abcdef", r"abc123def456", r"s3cr3tvalue",
        r"eyJhbGciOiJIUzI1NiJ9", r"dozjgNryP4J3", r"MIIBOgIBAAJBAKj34", r"KUpRKfFLfRYC9",
        r"4111\W{0,3}1111",
        r"NL91\W{0,3}ABNA\W{0,3}0417\W{0,3}1643\W{0,3}00\b",  # a look-alike's ends in 01
    )
]  # fmt: skip


def form_leaks(client: redis.Redis, namespace: str) -> list[tuple[str, str]]:
    """(key, pattern) for every stored value holding one of the secrets, in any spelling."""
    found = []
    for key, value in values(client, namespace):
        text = plain(value.decode("utf-8", "ignore"))
        found += [(key.decode(errors="replace"), p.pattern) for p in FORM_LEAKS if p.search(text)]
    return found


def test_the_forms_people_write_are_masked_on_every_write_path(
    agent: ChatAgent,
    coord: MemoryCoordinator,
    masking: Settings,
    fake_ollama: FakeOllama,
    redis_client: redis.Redis,
    redis_url: str,
    namespace: str,
    tmp_path: Path,
) -> None:
    secrets = "\n".join(text for text, _, _ in FORMS)
    masked = "\n".join(m for _, m, _ in FORMS)
    look_alikes = "\n".join(LOOK_ALIKES)

    # The chat: the message, the model's reply quoting it, extraction, the remember tool.
    fake_ollama.queue_tool_calls([("remember_information", {"content": secrets, "kind": "fact"})])
    fake_ollama.queue_reply(f"Noted:\n{secrets}")
    fake_ollama.queue_structured(
        {"memories": [{"text": secrets, "event_type": "fact", "slot": "none"}]}
    )
    turn = agent.chat("ana", "s1", f"Remember:\n{secrets}")
    coord.set_session_title(
        "ana", "s1", "pw: hunter2xyz, card 4111.1111.1111.1111", only_if_missing=True
    )
    assert agent.wait_for_background(timeout=60)
    # a line that names a secret and nothing else once masked ("the password for my bank is
    # [password]") says nothing (memory/writing/content.py); what counts here is no leak anywhere
    assert turn.saved and turn.reply.startswith("Noted:")
    (call,) = turn.tools  # the remember tool's write path ran: what it stored is checked below
    assert call.name == "remember_information" and call.result["stored"] is True, call.result
    # MCP, the sidebar's and the page's add (the write policy), the editor, a shared fact.
    writer = WritePolicy(coord, pii_policy="mask")
    mcp = MemoryToolkit(coord, writer, via=secrets)
    mcp.remember_information(ToolContext("ana", "mcp"), secrets)
    mcp.remember_information(ToolContext("ana", "mcp"), secrets, "semantic")
    added = writer.write("cy", "s1", candidate_for(secrets, how="user"))
    assert added.stored is not None and added.stored.text == masked
    kept = writer.write("ana", "s1", candidate_for(look_alikes, how="user"))
    assert kept.stored is not None and kept.stored.text == look_alikes and not kept.stored.masked
    coord.update_memory("ana", MemoryType.EPISODIC, kept.stored.id, context=secrets)
    write_fact(coord, secrets, added_by="ana", context=secrets, pii_policy="mask")
    # Metadata: keys that are secrets, values under secret-named keys.
    meta = {"DB_PASSWORD": "hunter2xyz", "4111 1111 1111 1111": "card", "pin": 7482}
    coord.add_episodic("ana", "Config noted", metadata=meta)
    coord.add_semantic("Config noted", added_by="ana", metadata={"config": {"passwd": "Xq7hunter"}})
    # The CLI.
    proc = _cli(
        ["add", "--user", "ana", "--text", secrets, "--json"],
        redis_url, namespace, tmp_path, PII_POLICY="mask",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    # A procedure's question; then an import of texts, metadata and questions as a file may
    # hold them.
    coord.record_procedure(
        "ana", secrets, ["search_memory"], success_score=1.0, execution_time_ms=1.0
    )
    doc = coord.export_user("ana")
    doc["episodic"][0].update(description=secrets, metadata=meta)
    doc["short_term"] = {"old": [{**doc["short_term"]["s1"][0], "content": secrets}]}
    doc["procedural"][0]["query_pattern"] = secrets
    coord.import_user(doc, user_id="bo")

    assert form_leaks(redis_client, namespace) == []
    texts = [r["text"] for r in coord.list_memories("ana", MemoryType.EPISODIC)[0]]
    assert look_alikes in texts and masked in texts  # masking is not dropping


@pytest.mark.parametrize(
    ("where", "change"),
    [
        (
            "session id",
            lambda doc: doc.update(short_term={"4111.1111.1111.1111": doc["short_term"]["s1"]}),
        ),
        ("session id", lambda doc: doc["episodic"][0].update(session_id="DB_PASSWORD=hunter2xyz")),
        ("message id", lambda doc: doc["short_term"]["s1"][0].update(id="pw: hunter2xyz")),
        (
            "tool name",
            lambda doc: doc["procedural"][0].update(tool_sequence=["4111/1111/1111/1111"]),
        ),
        ("category", lambda doc: doc["semantic"][0].update(category="4111 1111 1111 1111")),
        ("source", lambda doc: doc["semantic"][0].update(source="NL91 ABNA 0417 1643 00")),
    ],
)
def test_ids_and_labels_holding_a_secret_are_refused(
    coord: MemoryCoordinator,
    redis_client: redis.Redis,
    namespace: str,
    where: str,
    change: Callable[[dict[str, Any]], None],
) -> None:
    """An id or a label cannot stand as a label: a file or a writer giving one that holds a
    secret is refused, saying which, and nothing of it is stored."""
    coord.store_interaction(
        "ana", "s1", "Which tools?", "These.", tools_used=["search_memory"], success_score=1.0
    )
    coord.add_semantic("Ana likes tea", added_by="ana")
    doc = coord.export_user("ana")
    change(doc)
    with pytest.raises(InvalidInputError, match=f"{where} holds"):
        coord.import_user(doc, user_id="bo")
    assert form_leaks(redis_client, namespace) == []
    assert coord.list_memories("bo", MemoryType.EPISODIC)[0] == []
    with pytest.raises(InvalidInputError, match="session id holds"):
        coord.add_episodic("ana", "a note", session_id="4111 1111 1111 1111")
    with pytest.raises(InvalidInputError, match="category holds"):
        coord.add_semantic("a fact", added_by="ana", category="4111-1111-1111-1111")
    with pytest.raises(InvalidInputError, match="tool name holds"):
        coord.record_procedure(
            "ana", "which?", ["pw: hunter2xyz"], success_score=1.0, execution_time_ms=1.0
        )
