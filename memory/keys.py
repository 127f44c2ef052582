"""Every Redis key and index name of the project, built in one place. Keys hold digests of user
and session ids, never the raw ids, and every key of one user's data carries the user's hash tag;
what each key holds: docs/architecture.md, "Redis key layout"."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from memory.replies import as_str


def digest(*parts: str, length: int = 24) -> str:
    """Stable, collision-resistant short id of one or more strings (NUL-separated)."""
    h = hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()
    return h[:length]


def owner_tag(*ids: str) -> str:
    """TAG value standing for a user (or a user's session) in index filters.

    RediSearch TAG fields fold case, split on the separator and trim spaces, so raw ids
    ("Alice" vs "alice", "a,b", "a ") could match each other; a hex digest cannot."""
    return digest(*ids, length=32)


def user_tag(user_id: str) -> str:
    """The hash tag of every key of this user's data: one slot per user."""
    return "{u" + digest(user_id) + "}"


def _of_user(kind: str) -> Callable[[Keys, str], str]:
    """The method that names the `kind` key of a user's data."""

    def key(self: Keys, user_id: str) -> str:
        return f"{self.ns}:{kind}:{user_tag(user_id)}"

    return key


def _of_session(kind: str) -> Callable[[Keys, str, str], str]:
    """The method that names the `kind` key of one session of a user."""

    def key(self: Keys, user_id: str, session_id: str) -> str:
        return f"{self.ns}:{kind}:{user_tag(user_id)}:{digest(user_id, session_id)}"

    return key


class Keys:
    """Key and index names under one namespace (`MEMORY_NAMESPACE`, default `cm`): the names
    that depend on the namespace alone are attributes, those of a user's data methods."""

    @staticmethod
    def memory_id(key: str | bytes) -> str:
        """The id in a memory's or a procedure's key (its last segment): the one parse of
        the key names built below."""
        return as_str(key).rsplit(":", 1)[-1]

    def __init__(self, namespace: str = "cm") -> None:
        ns = self.ns = namespace
        # indexes (RedisVL) and their key prefixes
        self.episodic_index = f"{ns}_episodic"
        self.semantic_index = f"{ns}_semantic"
        self.procedural_index = f"{ns}_procedural"
        self.episodic_prefix = f"{ns}:episodic"
        self.semantic_prefix = f"{ns}:semantic"
        self.procedural_prefix = f"{ns}:procedure"
        # shared data: slots of their own, never in a user's transaction
        self.users = f"{ns}:users"
        self.imports_running = f"{ns}:imports_running"
        self.followups_pending = f"{ns}:followups_pending"
        self.shared_writes = f"{ns}:writes:shared"
        self.summaries_pending = f"{ns}:summaries:pending"
        self.knowledge_loaded = f"{ns}:knowledge_loaded"
        # bookkeeping: which store this is, and its format's markers (`memory.stores.store_format`)
        self.store_id = f"{ns}:store_id"
        self.store_unconfirmed = f"{ns}:store_unconfirmed"
        self.version = f"{ns}:keys_version"  # named for the key layout it first marked
        self.vector_dtype = f"{ns}:vector_dtype"
        self.live_tags = f"{ns}:live_tags"
        self.embedding_cache_name = f"{ns}_embedcache"
        # SCAN pattern of the cache's entries (RedisVL names them `<cache name>:<entry id>`),
        # glob characters of the namespace escaped
        escaped = "".join("\\" + c if c in "*?[]\\" else c for c in self.embedding_cache_name)
        self.embedding_cache_entries = f"{escaped}:*"
        self.metrics_latency = f"{ns}:metrics:{{metrics}}:latency"
        self.metrics_counters = f"{ns}:metrics:{{metrics}}:counters"
        # maintenance: one runner at a time (redis-py's Lock) and who holds it, one hash tag
        self.maintenance_lock = f"{ns}:maintenance:{{lock}}"
        self.maintenance_lock_holder = f"{ns}:maintenance:{{lock}}:holder"
        self.maintenance_history = f"{ns}:maintenance:history"

    def index_meta(self, index_name: str) -> str:
        return f"{self.ns}:index_meta:{index_name}"

    # --- memories: a user's in the user's slot; a fact is shared data, in a slot of its own
    def episodic(self, user_id: str, memory_id: str) -> str:
        return f"{self.episodic_prefix}:{user_tag(user_id)}:{memory_id}"

    def semantic(self, fact_id: str) -> str:
        return f"{self.semantic_prefix}:{fact_id}"

    def procedure(self, user_id: str, query_hash: str) -> str:
        return f"{self.procedural_prefix}:{user_tag(user_id)}:{query_hash}"

    # --- a user's data, all in the user's slot (a session digested with its user)
    session = _of_session("session")
    details = _of_session("turn_details")
    summary_state = _of_session("summary")
    summary_lock = _of_session("summary_lock")
    user_sessions = _of_user("user_sessions")
    session_titles = _of_user("session_titles")
    usage = _of_user("usage")
    usage_answers = _of_user("usage_answers")
    user_queries = _of_user("user_queries")
    followups = _of_user("followups")
    import_progress = _of_user("import")
    maintenance_last = _of_user("maintenance:last")
    user_merges = _of_user("user_merges")
    writes = _of_user("writes")
    activity = _of_user("activity")
    rejected_merges = _of_user("rejected_merges")
    judged_apart = _of_user("judged_apart")
    decay_state = _of_user("decay")

    def timeline(self, user_id: str, session_tag: str) -> str:
        """`session_tag`: the memory's `session` TAG value (already a digest)."""
        return f"{self.ns}:timeline:{user_tag(user_id)}:{session_tag}"

    def merge(self, user_id: str, merge_id: str) -> str:
        return f"{self.ns}:merge:{user_tag(user_id)}:{merge_id}"
