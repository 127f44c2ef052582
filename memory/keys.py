"""Every Redis key and index name of the project, built in one place. Keys hold digests of user
and session ids, never the raw ids, and every key of one user's data carries the user's hash tag
(docs/architecture.md, "Scaling out")."""

from __future__ import annotations

import hashlib

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


class Keys:
    """Key and index names under one namespace (`MEMORY_NAMESPACE`, default `cm`)."""

    @staticmethod
    def memory_id(key: str | bytes) -> str:
        """The id in a memory's or a procedure's key (its last segment): the one parse of
        the key names built below."""
        return as_str(key).rsplit(":", 1)[-1]

    def __init__(self, namespace: str = "cm") -> None:
        self.ns = namespace

    # --- indexes (RedisVL) -------------------------------------------------------------
    @property
    def episodic_index(self) -> str:
        return f"{self.ns}_episodic"

    @property
    def semantic_index(self) -> str:
        return f"{self.ns}_semantic"

    @property
    def procedural_index(self) -> str:
        return f"{self.ns}_procedural"

    @property
    def episodic_prefix(self) -> str:
        return f"{self.ns}:episodic"

    @property
    def semantic_prefix(self) -> str:
        return f"{self.ns}:semantic"

    @property
    def procedural_prefix(self) -> str:
        return f"{self.ns}:procedure"

    def episodic(self, user_id: str, memory_id: str) -> str:
        return f"{self.episodic_prefix}:{user_tag(user_id)}:{memory_id}"

    def semantic(self, fact_id: str) -> str:
        """Shared data (any user may read a shared fact by its id; sharing changes its
        audience, not its key): no user tag, each fact in a slot of its own."""
        return f"{self.semantic_prefix}:{fact_id}"

    def procedure(self, user_id: str, query_hash: str) -> str:
        """O(1) procedural lookup: one hash per (user, normalised query)."""
        return f"{self.procedural_prefix}:{user_tag(user_id)}:{query_hash}"

    # --- short-term --------------------------------------------------------------------
    def session(self, user_id: str, session_id: str) -> str:
        return f"{self.ns}:session:{user_tag(user_id)}:{digest(user_id, session_id)}"

    def details(self, user_id: str, session_id: str) -> str:
        """Hash of one session: turn id -> JSON of that answer's execution details (and
        `{turn id}#{part}` -> a later part, e.g. the background extraction's outcome). Opaque
        to memory; expires and is cleared with the session's messages."""
        return f"{self.ns}:turn_details:{user_tag(user_id)}:{digest(user_id, session_id)}"

    def timeline(self, user_id: str, session_tag: str) -> str:
        """Sorted set of one session's episodic memory ids by timestamp (`session_tag` is the
        memory's `session` TAG value): finds a hit's neighbours in O(log n)."""
        return f"{self.ns}:timeline:{user_tag(user_id)}:{session_tag}"

    def user_sessions(self, user_id: str) -> str:
        """Set of session ids a user has written to (for listing and purging)."""
        return f"{self.ns}:user_sessions:{user_tag(user_id)}"

    def session_titles(self, user_id: str) -> str:
        """Hash of a user's session titles: session id -> title (from the first message,
        or as the user renamed it); a field goes when its session is cleared."""
        return f"{self.ns}:session_titles:{user_tag(user_id)}"

    def usage(self, user_id: str) -> str:
        """Hash of a user's memory usage: `n:<memory id>` -> how many stored answers used it,
        `t:<memory id>` -> when last (`memory.stores.usage`)."""
        return f"{self.ns}:usage:{user_tag(user_id)}"

    def usage_answers(self, user_id: str) -> str:
        """Sorted set of a user's recent answers by time, each JSON {turn, session, memory
        ids}: which answers used a memory (capped; no text)."""
        return f"{self.ns}:usage_answers:{user_tag(user_id)}"

    def user_queries(self, user_id: str) -> str:
        """Set of query texts a user searched with (their cached embeddings go on a purge)."""
        return f"{self.ns}:user_queries:{user_tag(user_id)}"

    @property
    def users(self) -> str:
        """Set of all user ids that have memories (for pickers and stats)."""
        return f"{self.ns}:users"

    def followups(self, user_id: str) -> str:
        """Hash: note id -> JSON of the shared-data writes that follow one of the user's
        transactions (written in that transaction; deleted once they are done)."""
        return f"{self.ns}:followups:{user_tag(user_id)}"

    def import_progress(self, user_id: str) -> str:
        """Hash of an import under way into the user (records written of how many, its mode,
        when it began): written before its first chunk, advanced by each chunk's transaction,
        deleted by the last one. Found at open, it says the import was cut off."""
        return f"{self.ns}:import:{user_tag(user_id)}"

    @property
    def imports_running(self) -> str:
        """Set of user ids an import may be under way into (read at every open)."""
        return f"{self.ns}:imports_running"

    @property
    def followups_pending(self) -> str:
        """Set of user ids that may have follow-up notes (read at every open: one SMEMBERS)."""
        return f"{self.ns}:followups_pending"

    # --- bookkeeping -------------------------------------------------------------------
    @property
    def store_id(self) -> str:
        """A random token set once (SET NX) on the Redis holding the memories: another value,
        or none, means another server (or an emptied one) now answers at the address."""
        return f"{self.ns}:store_id"

    @property
    def store_unconfirmed(self) -> str:
        """Set on a Redis found answering in place of the one the memories were on: writes
        are refused until an operator confirms it (`python -m memory redis confirm`)."""
        return f"{self.ns}:store_unconfirmed"

    @property
    def version(self) -> str:
        """The store's format (`memory.stores.store_format.FORMAT`; named for the key layout
        it first marked)."""
        return f"{self.ns}:keys_version"

    @property
    def vector_dtype(self) -> str:
        """The dtype every stored vector is in (`VECTOR_DTYPE`): part of the format's markers."""
        return f"{self.ns}:vector_dtype"

    @property
    def live_tags(self) -> str:
        """Set when every episodic memory carries its `live` tag: part of the format's markers."""
        return f"{self.ns}:live_tags"

    def index_meta(self, index_name: str) -> str:
        """Hash recording the embedding model and dimension an index was built with."""
        return f"{self.ns}:index_meta:{index_name}"

    @property
    def knowledge_loaded(self) -> str:
        """Hash: knowledge-file fact digest -> semantic fact id (idempotent loading)."""
        return f"{self.ns}:knowledge_loaded"

    @property
    def embedding_cache_name(self) -> str:
        return f"{self.ns}_embedcache"

    @property
    def embedding_cache_entries(self) -> str:
        """SCAN pattern of the cache's entries (RedisVL names them `<cache name>:<entry id>`);
        glob characters of the namespace escaped."""
        name = "".join("\\" + c if c in "*?[]\\" else c for c in self.embedding_cache_name)
        return f"{name}:*"

    @property
    def metrics_latency(self) -> str:
        """Stream of latency samples, capped with MAXLEN."""
        return f"{self.ns}:metrics:{{metrics}}:latency"

    @property
    def metrics_counters(self) -> str:
        """Hash of counters (embedding cache hits/misses, extraction outcomes...)."""
        return f"{self.ns}:metrics:{{metrics}}:counters"

    # --- maintenance (consolidation, retention, decay) ----------------------------------
    @property
    def maintenance_lock(self) -> str:
        """One runner at a time across processes (redis-py's Lock: an owner token, a TTL)."""
        return f"{self.ns}:maintenance:{{lock}}"

    @property
    def maintenance_lock_holder(self) -> str:
        """JSON {host, pid, since} of the lock's holder, with the lock's TTL: who to name when
        busy, and how a holder on this host that died is recognised."""
        return f"{self.ns}:maintenance:{{lock}}:holder"

    def maintenance_last(self, user_id: str) -> str:
        """JSON of the last real maintenance report that covered this user (the Memories page
        shows it; a purge deletes it: it quotes the user's memories)."""
        return f"{self.ns}:maintenance:last:{user_tag(user_id)}"

    @property
    def maintenance_history(self) -> str:
        """List of past reports' totals, newest first, capped (the Stats chart)."""
        return f"{self.ns}:maintenance:history"

    def merge(self, user_id: str, merge_id: str) -> str:
        """JSON record of one consolidation (its members, the canonical's text before)."""
        return f"{self.ns}:merge:{user_tag(user_id)}:{merge_id}"

    def user_merges(self, user_id: str) -> str:
        """Sorted set of a user's merge ids by time (undo lists them)."""
        return f"{self.ns}:user_merges:{user_tag(user_id)}"

    def writes(self, user_id: str) -> str:
        """Counter bumped after every write to the user's memories: the version the Stats
        page's per-user figures are cached under (in the user's hash slot)."""
        return f"{self.ns}:writes:{user_tag(user_id)}"

    @property
    def shared_writes(self) -> str:
        """Counter bumped after a write that names no user (a shared fact, an import, the
        knowledge file): part of every user's Stats version."""
        return f"{self.ns}:writes:shared"

    def activity(self, user_id: str) -> str:
        """Hash of a user's counts per day and event ("2026-11-26:forgotten" -> 3): what
        happened to memories that no longer exist. Counts only, never a text or an id."""
        return f"{self.ns}:activity:{user_tag(user_id)}"

    def rejected_merges(self, user_id: str) -> str:
        """Set of member-id signatures of merges the user rejected (never proposed again)."""
        return f"{self.ns}:rejected_merges:{user_tag(user_id)}"

    def judged_apart(self, user_id: str) -> str:
        """Set of clusters (ids and texts) the model judged different facts: not asked again."""
        return f"{self.ns}:judged_apart:{user_tag(user_id)}"

    def decay_state(self, user_id: str) -> str:
        """Hash: memory id -> "decayed_at_ms,access_count seen" (kept apart from the memory's
        hash, which an edit rewrites)."""
        return f"{self.ns}:decay:{user_tag(user_id)}"

    # --- session summaries -----------------------------------------------------------------
    def summary_state(self, user_id: str, session_id: str) -> str:
        """Hash of one session: `mark` (JSON id + timestamp of the last summarised message),
        `latest` (id of its newest summary memory, which recall shows when turns are trimmed)."""
        return f"{self.ns}:summary:{user_tag(user_id)}:{digest(user_id, session_id)}"

    def summary_lock(self, user_id: str, session_id: str) -> str:
        """One summariser per session at a time (the agent's worker, the maintenance run)."""
        return f"{self.ns}:summary_lock:{user_tag(user_id)}:{digest(user_id, session_id)}"

    @property
    def summaries_pending(self) -> str:
        """Hash: digest(user, session) -> JSON {user_id, session_id, reason, since_ms}: a summary
        that is due but waits for the model (the Maintenance tab counts them)."""
        return f"{self.ns}:summaries:pending"
