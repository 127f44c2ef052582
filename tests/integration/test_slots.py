"""Every transaction, script and multi-key command keeps to one hash slot.

A database sharded over several Redis processes (Redis Software / Redis Cloud) refuses a
MULTI/EXEC, a WATCH, a Lua script or a multi-key command whose keys hash to two slots
(CROSSSLOT). None runs here, so the coordinator gets a client that does what such a database
does: it computes each key's slot (redis-py's `key_slot`, the cluster's CRC16), records the keys
of every transaction (its WATCHed keys, the commands run while watching and the queued ones),
script and command, and refuses with CROSSSLOT when they span two slots. FT.SEARCH and
FT.AGGREGATE name an index, not keys: on those databases the index spans the shards.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import redis
from mcp import Client
from redis._parsers.commands import CommandsParser
from redis.client import Pipeline
from redis.crc import key_slot

from agent.mcp_server import build_server
from agent.tools.memory_tools import MemoryToolkit
from memory.admin.forget import TopicForget
from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.maintenance import Maintenance
from memory.models import MemoryType, now_ms
from memory.writing import WritePolicy
from memory.writing.policy import MemoryCandidate
from tests.integration.conftest import SessionEmbedder

DAY = 24 * 3600 * 1000
CROSSSLOT = "CROSSSLOT Keys in request don't hash to the same slot"


@dataclass
class SlotLog:
    """What a sharded database would have been asked, by kind: (command names, keys)."""

    parser: CommandsParser
    plain: redis.Redis
    seen: dict[str, list[tuple[list[str], list[bytes]]]] = field(default_factory=dict)
    refused: list[tuple[str, list[str], list[bytes]]] = field(default_factory=list)

    def keys_of(self, args: tuple[Any, ...]) -> list[bytes]:
        name = str(args[0]).upper()
        if name.startswith("FT.") or name in ("MULTI", "EXEC", "SCAN", "COMMAND", "PING"):
            return []
        keys = self.parser.get_keys(self.plain, *args) or []
        return [k if isinstance(k, bytes) else str(k).encode() for k in keys]

    def check(
        self, kind: str, commands: list[tuple[Any, ...]], extra: list[Any] | None = None
    ) -> None:
        keys = [k if isinstance(k, bytes) else str(k).encode() for k in extra or []]
        for args in commands:
            keys += self.keys_of(args)
        names = [str(a[0]).upper() for a in commands]
        self.seen.setdefault(kind, []).append((names, keys))
        if len({key_slot(k) for k in keys}) > 1:
            self.refused.append((kind, names, keys))
            raise redis.ResponseError(CROSSSLOT)

    def multi_key(self, kind: str) -> list[tuple[list[str], list[bytes]]]:
        """The checked requests of a kind that named two keys or more."""
        return [(n, k) for n, k in self.seen.get(kind, []) if len(set(k)) > 1]


class SlotPipeline(Pipeline):
    log: SlotLog

    def reset(self) -> None:
        self._slot_keys: list[Any] = []
        super().reset()

    def watch(self, *names: Any) -> Any:
        self._slot_keys = [*getattr(self, "_slot_keys", []), *names]
        self.log.check("WATCH", [], list(self._slot_keys))
        return super().watch(*names)

    def immediate_execute_command(self, *args: Any, **options: Any) -> Any:
        # A read while WATCHing runs on the same connection as the transaction that follows.
        if str(args[0]).upper() != "WATCH":
            self._slot_keys = [*self._slot_keys, *self.log.keys_of(args)]
        return super().immediate_execute_command(*args, **options)

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        stack = [args for args, _ in self.command_stack]
        if self.transaction or self.explicit_transaction:
            self.log.check("MULTI", stack, list(getattr(self, "_slot_keys", [])))
        else:
            for args in stack:
                self.log.check(_kind(args), [args])
        return super().execute(raise_on_error)


class SlotRedis(redis.Redis):
    log: SlotLog

    def execute_command(self, *args: Any, **options: Any) -> Any:
        self.log.check(_kind(args), [args])
        return super().execute_command(*args, **options)

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> SlotPipeline:
        pipe = SlotPipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)
        pipe.log = self.log
        return pipe


def _kind(args: tuple[Any, ...]) -> str:
    name = str(args[0]).upper()
    return "SCRIPT" if name in ("EVAL", "EVALSHA", "FCALL") else "COMMAND"


@pytest.fixture
def slot_client(redis_url: str) -> Iterator[SlotRedis]:
    plain = redis.Redis.from_url(redis_url)
    client = SlotRedis.from_url(redis_url)
    client.log = SlotLog(CommandsParser(plain), plain)
    yield client
    client.close()
    plain.close()


@pytest.fixture
def slot_coordinator(
    slot_client: SlotRedis, embedder: SessionEmbedder, settings: Settings
) -> Iterator[MemoryCoordinator]:
    coord = MemoryCoordinator(slot_client, embedder, settings)
    yield coord
    coord.close()


def test_the_slot_client_refuses_what_a_sharded_database_refuses(slot_client: SlotRedis) -> None:
    """The check itself: a MULTI over two slots, a script over two, a DEL of two keys."""
    pipe = slot_client.pipeline()
    pipe.set("slots-test:a", 1)
    pipe.set("slots-test:b", 1)
    with pytest.raises(redis.ResponseError, match="CROSSSLOT"):
        pipe.execute()
    with pytest.raises(redis.ResponseError, match="CROSSSLOT"):
        slot_client.eval("return 1", 2, "slots-test:a", "slots-test:b")
    with pytest.raises(redis.ResponseError, match="CROSSSLOT"):
        slot_client.delete("slots-test:a", "slots-test:b")
    pipe = slot_client.pipeline()
    pipe.set("slots-test:{t}a", 1)
    pipe.delete("slots-test:{t}a", "slots-test:{t}b")
    pipe.execute()  # one tag, one slot: accepted
    assert len(slot_client.log.refused) == 3


def _summary(turns: list[dict[str, str]]) -> str:
    return "The user talked about " + turns[0]["content"][:60]


def test_every_path_keeps_each_transaction_script_and_multi_key_command_in_one_slot(
    slot_coordinator: MemoryCoordinator,
) -> None:
    c = slot_coordinator
    log: SlotLog = c.redis.log  # type: ignore[attr-defined]
    policy = WritePolicy(c)

    # --- write: the write policy (supersession by slot), the chat's turn, procedures, facts
    policy.write("ana", "s1", MemoryCandidate(text="My weight goal is 80 kg", slot="goal:weight"))
    policy.write("ana", "s1", MemoryCandidate(text="My weight goal is 75 kg", slot="goal:weight"))
    stored = c.store_interaction(
        "ana", "s1", "How far did I run this week?", "12 km.", tools_used=["runs"], turn_id="t1"
    )
    c.store_interaction("ana", "s1", "And last week?", "9 km.", tools_used=["runs"], turn_id="t2")
    c.rescore_last_procedure("ana", "How far did I run this week?", ["runs"], 0.2)
    c.add_message("ana", "s2", "user", "Hello again")
    c.save_turn_details("ana", "s1", "t1", {"used": []})
    c.save_turn_details("ana", "s1", "t1", {"status": "done"}, part="extraction")
    fact = c.add_semantic("Kefir is a fermented drink.", added_by="ana", category="nutrition")
    pinned = c.add_episodic("ana", "I use a standing desk", importance=0.9)
    c.add_episodic_many("ana", [{"text": "I visited Lisbon in May"}, {"text": "I like figs"}])

    # --- recall (and its bookkeeping: access counts, the refined vector, cached queries)
    c.retrieve_all_context("ana", "s1", "what is my weight goal?")
    c.search("ana", "kefir", "semantic")
    c.bookkeeping.drain()

    # --- edit and supersede
    c.update_memory("ana", "episodic", pinned.id, text="I work at a standing desk")
    c.update_memory("ana", "episodic", pinned.id, pinned=True)
    c.update_memory("ana", "semantic", fact.id, text="Kefir is a fermented milk drink.")
    c.update_memory("ana", "procedural", str(stored["procedural"]), pinned=True)
    newer = c.add_episodic("ana", "I moved to Porto", supersedes=None)
    newest = c.add_episodic("ana", "I moved to Braga", supersedes=newer.id)

    # --- merge, undo, reject, accept, the maintenance run (summaries, retention, decay)
    m = Maintenance.of(c, summariser=_summary)
    for text in ("I prefer morning workouts", "Morning workouts are what I prefer"):
        c.add_episodic("ana", text)
    m.run(user_id="ana")
    (merge,) = m.merges("ana")
    m.undo_merge("ana", merge["id"])
    for text in ("My dog is called Rex", "My dog's name is Rex"):
        c.add_episodic("ana", text)
    for text in ("My cat is called Tom", "My cat's name is Tom"):
        c.add_episodic("ana", text)
    proposals = m.run(user_id="ana", dry_run=True).users[0].consolidated
    assert len(proposals) == 2
    m.reject_merge(proposals[0].model_dump())
    m.accept_merge(proposals[1].model_dump())
    assert len(m.merges("ana")) == 2  # one MGET of both records
    Maintenance.of(c).summarise_session("ana", "s1", None)  # no model: the summary waits
    m.run(at_ms=now_ms() + 120 * DAY)  # every user: summaries, expiry, decay
    assert m.last_report("ana") and m.history()

    # --- MCP (the tools and resources, in process)
    server = build_server(MemoryToolkit(c, policy), lambda: "ana")

    async def mcp_calls() -> None:
        async with Client(server) as client:
            for name, args in (
                ("remember_information", {"content": "I am allergic to peanuts"}),
                ("recall_information", {"query": "allergies"}),
                ("get_memory_stats", {}),
            ):
                result = await client.call_tool(name, args)
                assert not result.is_error, result.content
            got = await client.call_tool("recall_information", {"query": "peanuts"})
            hit = json.loads(got.content[0].text)["memories"][0]["id"]
            forgot = await client.call_tool("forget_memory", {"memory_id": hit})
            assert not forgot.is_error, forgot.content
            await client.read_resource("memory://episodic")

    # on a loop of its own thread: the browser tests' Playwright leaves a running loop in the
    # main thread, where asyncio.run() refuses to start
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, mcp_calls()).result()

    # --- forget a topic: the user's keys in one transaction, then the facts and cache entries
    forget = TopicForget.of(c)
    assert len(forget.preview("ana", "Lisbon hello").matches) == 2
    assert forget.forget("ana", "Lisbon hello").counts["messages"] == 1

    # --- export, import (merge under another user, replace), delete, purge
    exported = c.export_user("ana")
    c.import_user(exported, user_id="bob")
    c.import_user(exported, mode="replace")
    c.delete_memory("ana", "semantic", fact.id)
    c.delete_memory("ana", "episodic", newest.id)
    c.delete_memory("ana", "procedural", str(stored["procedural"]))
    c.clear_session_memories("ana", "s2")
    c.clear_user_memories("bob")
    c.clear_user_memories("ana")

    assert log.refused == []
    # The paths did run what a sharded database checks (else this test proves nothing).
    assert len(log.multi_key("MULTI")) >= 12
    assert log.multi_key("WATCH") and log.seen.get("SCRIPT")
    assert log.multi_key("COMMAND")  # e.g. the merge records' MGET, a purge's DEL
    assert c.list_memories("ana", MemoryType.EPISODIC)[1] == 0
