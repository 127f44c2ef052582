"""The four memory stores on Redis, their index schemas and record helpers; `Stores` bundles them
with the client and key builder the coordinator and the admin helpers share."""

from __future__ import annotations

from dataclasses import dataclass

import redis

from memory.config import Settings
from memory.keys import Keys
from memory.models import check_id
from memory.stores.episodic import EpisodicStore
from memory.stores.procedural import ProceduralStore
from memory.stores.schema import (
    episodic_schema,
    open_index,
    procedural_schema,
    semantic_schema,
)
from memory.stores.semantic import SemanticStore
from memory.stores.short_term import ShortTermStore
from memory.stores.store_format import check_format
from memory.writing.secrets import PiiPolicy


@dataclass(frozen=True)
class Stores:
    client: redis.Redis
    keys: Keys
    episodic: EpisodicStore
    semantic: SemanticStore
    procedural: ProceduralStore
    short_term: ShortTermStore
    #: PII_POLICY: every `build` of a record to write gets it (emails, phone numbers).
    pii: PiiPolicy = "keep"

    @classmethod
    def open(
        cls, client: redis.Redis, keys: Keys, settings: Settings, *, model_id: str, dims: int
    ) -> Stores:
        """Open (creating when missing) the three indexes, refusing a store of another format
        (`store_format`) and another embedding model."""
        algo, pii = settings.vector_algorithm, settings.pii_policy
        schemas = [
            semantic_schema(keys, dims, algo),
            episodic_schema(keys, dims, algo),
            procedural_schema(keys, dims, algo),
        ]
        check_format(client, keys, [s.index.name for s in schemas])
        semantic, episodic, procedural = (
            open_index(client, keys, s, model_id, dims) for s in schemas
        )
        return cls(
            client=client,
            keys=keys,
            episodic=EpisodicStore(client, keys, episodic),
            semantic=SemanticStore(client, keys, semantic),
            procedural=ProceduralStore(
                client, keys, procedural, settings.procedural_recommend_threshold
            ),
            short_term=ShortTermStore(
                client, keys, settings.short_term_max_messages, settings.short_term_ttl_s, pii
            ),
            pii=pii,
        )

    def note_user(self, user_id: str) -> None:
        """List the user among those with memories (a shared set: another hash slot than
        the user's keys, so never inside their transaction; noted before it, a failed write
        leaves at worst a listed user with nothing)."""
        self.client.sadd(self.keys.users, check_id(user_id))

    def user_pipeline(self, user_id: str, transaction: bool = True) -> redis.client.Pipeline:
        """A pipeline for writes to one user's keys (all in the user's hash slot), the user
        noted first (`note_user`)."""
        self.note_user(user_id)
        return self.client.pipeline(transaction=transaction)

    def recreate_missing(self, model_id: str, dims: int) -> list[str]:
        """Create again the indexes (and their meta) a Redis lacks; returns their names."""
        indexes = (self.episodic.index, self.semantic.index, self.procedural.index)
        check_format(self.client, self.keys, [index.name for index in indexes])
        created = []
        for index in indexes:
            if not index.exists():
                created.append(index.name)
            open_index(self.client, self.keys, index.schema, model_id, dims)
        return created


__all__ = [
    "Stores",
]
