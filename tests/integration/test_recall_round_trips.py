"""Recall's round trips to Redis: a warm recall reads everything it searches
in one pipelined round trip, plus one that reads the kept hits whole (with the timelines of
the session neighbours of its best candidates); an uncached query adds one (the embedding
cache's lookup rides in the first, its write in the second). A chat turn's user profile is its
version (the user's write counter) in the first round trip, and its queries, only when a write
changed it, in the one that reads the hits.

A client that notes every request (a pipeline or a lone command) with the thread that sent it
is handed to the coordinator; only the calling thread's requests count (the metrics flush and
the bookkeeping worker have threads of their own)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest
from redisvl.extensions.cache.embeddings import EmbeddingsCache

from agent.loop import ChatAgent
from lab import profile_recall as lab_recall
from memory.admin.stats import note_write
from memory.block import PROFILE_TITLE
from memory.config import Settings
from memory.coordinator import MemoryCoordinator
from memory.queries import RecallOptions
from tests.fakes.fake_ollama import FakeOllama
from tests.integration.conftest import SessionEmbedder

U, S = "ana", "s1"


class CountingRedis(lab_recall.CountingRedis):
    def mine(self) -> list[list[str]]:
        me = threading.get_ident()
        return [names for ident, names in self.requests if ident == me]


@pytest.fixture
def counting(
    redis_url: str, embedder: SessionEmbedder, settings: Settings
) -> Iterator[tuple[MemoryCoordinator, CountingRedis]]:
    client = CountingRedis.from_url(redis_url)
    client.requests = []
    coord = MemoryCoordinator(client, embedder, settings)
    coord.add_message(U, S, "user", "I started running again")
    coord.add_episodic(U, "My left knee hurts after long runs", event_type="health_event")
    coord.add_episodic(U, "I prefer running in the morning", event_type="preference")
    coord.record_procedure(
        U, "How far did I run this week?", ["runs"], success_score=1.0, execution_time_ms=10.0
    )
    coord.bookkeeping.drain()
    yield coord, client
    coord.close()
    client.close()


def _recall(
    coord: MemoryCoordinator, client: CountingRedis, query: str, **options: bool
) -> list[list[str]]:
    client.requests.clear()
    ctx = coord.retrieve_all_context(U, S, query, RecallOptions(**options))
    requests = client.mine()
    assert ctx.episodic and ctx.short_term  # it did find something of each
    return requests


def test_a_warm_recall_searches_every_store_in_one_round_trip(
    counting: tuple[MemoryCoordinator, CountingRedis],
) -> None:
    coord, client = counting
    query = "What did I say about my knee?"
    coord.retrieve_all_context(U, S, query)  # the query's vector is now known
    coord.bookkeeping.drain()

    first, hydrate = _recall(coord, client, query)  # exactly two round trips

    # store marker, short-term, exact procedure, then episodic + semantic searches (vector
    # and text each) and the most similar procedure
    assert first[0] == "GET" and first.count("FT.SEARCH") == 5
    assert set(hydrate) == {"HMGET"}
    # a chat turn's user profile is the user's write counter and, the first time, three more
    # queries (aggregations: pinned, about health, standing) beside it, in the first round trip
    first, hydrate = _recall(coord, client, query, include_profile=True)
    assert first.count("FT.SEARCH") == 5 and first.count("GET") == 2
    assert first.count("FT.AGGREGATE") == 3 and set(hydrate) == {"HMGET"}


def _profile(
    coord: MemoryCoordinator, client: CountingRedis, query: str
) -> tuple[list[list[str]], set[str]]:
    client.requests.clear()
    ctx = coord.retrieve_all_context(U, S, query, RecallOptions(include_profile=True))
    return client.mine(), {p.text for p in ctx.profile}


def test_the_profile_is_read_again_only_after_a_write_that_changes_it(
    counting: tuple[MemoryCoordinator, CountingRedis],
) -> None:
    coord, client = counting
    query = "What did I say about my knee?"
    coord.retrieve_all_context(U, S, query)  # the query's vector is now known
    coord.bookkeeping.drain()
    known = {"My left knee hurts after long runs", "I prefer running in the morning"}

    def aggregations(requests: list[list[str]]) -> list[int]:
        return [r.count("FT.AGGREGATE") for r in requests]

    requests, lines = _profile(coord, client, query)
    assert aggregations(requests) == [3, 0] and lines == known  # nothing kept: read at once
    # the same write version: the counter is read (one GET more), no aggregation runs
    requests, lines = _profile(coord, client, query)
    assert aggregations(requests) == [0, 0] and lines == known
    assert requests[0].count("GET") == 2  # the store marker and the write counter
    # a chat turn's exchange is no profile line: the profile read before it still holds
    coord.store_interaction(U, S, query, "Rest it.")
    coord.bookkeeping.drain()
    requests, lines = _profile(coord, client, query)
    assert aggregations(requests) == [0, 0] and lines == known
    # a new preference written here is: the profile is read again at once, in the first trip
    coord.add_episodic(U, "I prefer trails to roads", event_type="preference")
    coord.bookkeeping.drain()
    requests, lines = _profile(coord, client, query)
    assert aggregations(requests) == [3, 0] and lines == known | {"I prefer trails to roads"}
    requests, lines = _profile(coord, client, query)
    assert aggregations(requests) == [0, 0] and "I prefer trails to roads" in lines
    # another process's write is seen here only as the counter moving (as a CLI's would be):
    # found by the version, the profile is read in the round trip that reads the hits
    note_write(coord.redis, coord.keys, U)
    requests, lines = _profile(coord, client, query)
    assert aggregations(requests) == [0, 3] and "HMGET" in requests[1]
    assert "I prefer trails to roads" in lines
    # a recall that searches nothing: after a write here, the profile is read in its one trip
    coord.add_episodic(U, "I am allergic to ibuprofen", event_type="health_event")
    only = RecallOptions(
        include_episodic=False, include_semantic=False, include_procedural=False,
        include_profile=True,
    )  # fmt: skip
    client.requests.clear()
    ctx = coord.retrieve_all_context(U, S, query, only)
    assert aggregations(client.mine()) == [3]
    assert "I am allergic to ibuprofen" in {p.text for p in ctx.profile}
    # ... and after another process's write, in a round trip of its own
    note_write(coord.redis, coord.keys, U)
    client.requests.clear()
    ctx = coord.retrieve_all_context(U, S, query, only)
    assert aggregations(client.mine()) == [0, 3]
    assert "I am allergic to ibuprofen" in {p.text for p in ctx.profile}


def test_an_unseen_query_adds_one_round_trip_and_writes_the_embedding_cache(
    counting: tuple[MemoryCoordinator, CountingRedis], settings: Settings
) -> None:
    coord, client = counting
    query = "Which time of day do I like to run?"

    first, second, hydrate = _recall(coord, client, query)

    assert "HGETALL" in first and "FT.SEARCH" not in first  # the cache lookup, before searches
    assert second[0] == "HSET" and second.count("FT.SEARCH") == 5  # cache write, then searches
    assert set(hydrate) == {"HMGET"}
    # RedisVL's own cache reads the entry the recall wrote (same key and layout)
    cache = EmbeddingsCache(name=coord.keys.embedding_cache_name, redis_client=coord.redis)
    entry = cache.get(query, coord.embedder.model_id)
    assert entry is not None and len(entry["embedding"]) == coord.embedder.dims


def test_an_entry_of_redisvls_cache_serves_the_recall_without_the_model(
    counting: tuple[MemoryCoordinator, CountingRedis],
) -> None:
    coord, client = counting
    query = "Any advice for my knee?"
    vec = coord.embedder.inner.embed(query)
    cache = EmbeddingsCache(name=coord.keys.embedding_cache_name, redis_client=coord.redis)
    cache.set(query, coord.embedder.model_id, vec.tolist())
    before = coord.metrics.counters().get("embed_cache_redis_hit", 0)

    first, second, _ = _recall(coord, client, query)

    assert "HGETALL" in first and "HSET" not in second  # found: nothing written again
    coord.metrics.flush()
    assert coord.metrics.counters().get("embed_cache_redis_hit", 0) == before + 1


def test_session_neighbours_ride_in_the_round_trip_that_reads_the_hits(
    counting: tuple[MemoryCoordinator, CountingRedis],
) -> None:
    coord, client = counting
    start = 1_700_000_000_000
    for i, text in enumerate(["Which trail for the knee?", "The flat one by the river"]):
        coord.add_episodic(
            U, text, event_type="interaction", session_id="trip", timestamp_ms=start + i * 60_000
        )
    # not a request for advice ("good for my knee"): those read no neighbours
    query = "Which trail did we pick for the knee?"
    coord.retrieve_all_context(U, S, query)  # the query's vector is now known
    coord.bookkeeping.drain()

    first, second = _recall(coord, client, query)  # the timelines cost no round trip of their own

    assert first.count("FT.SEARCH") == 5
    # one timeline read per seed (the window both ways: the trip's two turns are the seeds)
    assert second.count("ZRANGEBYSCORE") == 2 and "ZREVRANGEBYSCORE" not in second
    assert "HMGET" in second


def test_a_chat_turn_reads_its_profile_in_its_recall(
    counting: tuple[MemoryCoordinator, CountingRedis],
    agent_factory: Callable[..., ChatAgent],
    settings: Settings,
) -> None:
    coord, client = counting
    with FakeOllama(models=["small4k:3b"]) as fake:
        agent = agent_factory(
            coord, fake.url, settings=settings, ollama_model="small4k:3b", llm_extraction="off"
        )
        fake.queue_reply("Rest it.")
        client.requests.clear()
        done = agent.chat(U, S, "What did I say about my knee?")
        prompt = fake.chat_requests()[-1].seen_system_prompt
    requests = client.mine()

    # an unseen query: the cache lookup with the profile (its version and, nothing kept yet, its
    # three queries), then the searches with the cache write, then the hits read whole
    def searches(request: list[str]) -> int:
        return request.count("FT.SEARCH") + request.count("FT.AGGREGATE")

    assert [r for r in requests if searches(r)] == requests[0:2]
    assert requests[0].count("FT.AGGREGATE") == 3 and searches(requests[0]) == 3
    assert requests[1].count("FT.SEARCH") == 5 and searches(requests[1]) == 5
    assert {p.text for p in done.recalled.profile} == {
        "My left knee hurts after long runs",
        "I prefer running in the morning",
    }
    assert PROFILE_TITLE in prompt and "I prefer running in the morning" in prompt
