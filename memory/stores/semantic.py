"""Semantic memory: impersonal facts, from the shipped knowledge file (loaded once per fact) and
added by users. A user's fact is recalled for them only until an admin shares it (the `audience`
TAG: "shared" or the adder's digest)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import redis
from redisvl.index import SearchIndex
from redisvl.query import CountQuery
from redisvl.query.filter import FilterExpression, Tag
from ulid import ULID

from memory.errors import InvalidInputError
from memory.keys import Keys, digest, owner_tag
from memory.models import (
    SemanticFact,
    check_id,
    check_label,
    check_metadata,
    check_text,
    check_unicode,
    now_ms,
)
from memory.queries import ListQuery
from memory.stores.records import decode, encode, row_record, stored_hash
from memory.stores.schema import AUDIENCE_FIELD, SHARED, VECTOR_FIELD, matching_keys, query_page
from memory.writing.secrets import PiiPolicy, check_no_secret, lenient, mask_json, mask_text

TEXT_FIELDS = {"fact": 1.0, "context": 0.5}
RETURN_FIELDS = [f for f in SemanticFact.model_fields if f != "id"]
_NAME_MAX = 48


def _label(value: str, what: str) -> str:
    return check_no_secret(check_label((value or "general").strip().lower(), what, _NAME_MAX), what)


class SemanticStore:
    def __init__(self, client: redis.Redis, keys: Keys, index: SearchIndex) -> None:
        self._r = client
        self._keys = keys
        self.index = index

    @staticmethod
    def build(
        text: str,
        *,
        category: str = "general",
        fact_type: str = "general",
        context: str = "",
        source: str = "user",
        added_by: str = "",
        metadata: Any = None,
        importance: float = 0.5,
        fact_id: str | None = None,
        timestamp_ms: int | None = None,
        pii: PiiPolicy = "keep",
    ) -> SemanticFact:
        """Validated; secrets in the text, context and metadata become labels (`pii`: emails,
        phones); a category, type or source holding one is refused."""
        if not 0 <= importance <= 1:
            raise InvalidInputError("Importance must be between 0 and 1.")
        return SemanticFact(
            id=fact_id or str(ULID()),
            fact=mask_text(check_text(text, "Fact text"), pii),
            category=_label(category, "category"),
            fact_type=_label(fact_type, "fact type"),
            context=mask_text(check_unicode(context or "", "context").strip(), lenient(pii)),
            source=check_no_secret(check_label(source or "user", "source"), "source"),
            added_by=added_by or "",
            metadata=mask_json(check_metadata(metadata), pii),
            timestamp=timestamp_ms or now_ms(),
            importance=importance,
        )

    @staticmethod
    def rebuild(old: SemanticFact, pii: PiiPolicy, **changes: Any) -> SemanticFact:
        """`old` with `changes` (fields of the record) validated again as a new fact is;
        pinned and shared as `changes` leave them."""
        f = old.model_copy(update=changes)
        new = SemanticStore.build(
            f.fact,
            category=f.category,
            fact_type=f.fact_type,
            context=f.context,
            source=f.source,
            added_by=f.added_by,
            metadata=f.metadata,
            importance=f.importance,
            fact_id=f.id,
            timestamp_ms=f.timestamp,
            pii=pii,
        )
        return new.model_copy(update={"pinned": bool(f.pinned), "shared": bool(f.shared)})

    def write(self, pipe: redis.client.Pipeline, fact: SemanticFact, vec: np.ndarray) -> None:
        data = fact.model_dump(exclude={"id"})
        data[VECTOR_FIELD] = vec
        data["added_by_owner"] = owner_tag(fact.added_by) if fact.added_by else ""
        data[AUDIENCE_FIELD] = SHARED if fact.is_shared else data["added_by_owner"]
        key = self._keys.semantic(fact.id)
        pipe.delete(key)
        pipe.hset(key, mapping=encode(data))

    def get(self, fact_id: str) -> SemanticFact:
        raw = stored_hash(self._r, self._keys.semantic(fact_id), fact_id, "semantic fact")
        return SemanticFact.model_validate({**decode(raw), "id": fact_id})

    @staticmethod
    def filter_for(
        category: str | None = None,
        added_by: str | None = None,
        pinned: bool | None = None,
        fact_type: str | None = None,
        visible_to: str | None = None,
    ) -> FilterExpression | None:
        """`visible_to`: only the facts that user recalls (shared ones and their own)."""
        f: FilterExpression | None = None

        def add(expr: FilterExpression) -> None:
            nonlocal f
            f = expr if f is None else f & expr

        if category:
            add(Tag("category") == category.lower())
        if fact_type:
            add(Tag("fact_type") == fact_type.lower())
        if added_by:
            add(Tag("added_by_owner") == owner_tag(added_by))
        if pinned is not None:
            add(Tag("pinned") == ("1" if pinned else "0"))
        if visible_to:
            add(Tag(AUDIENCE_FIELD) == [SHARED, owner_tag(visible_to)])
        return f

    def list_page(self, user_id: str, q: ListQuery) -> tuple[list[dict[str, Any]], int]:
        """The facts `user_id` sees (shared ones and their own); another order than by time or
        importance lists them by time."""
        f = self.filter_for(
            category=q.category, added_by=q.added_by, pinned=q.pinned, visible_to=user_id
        )
        rows, total = query_page(self.index, f, RETURN_FIELDS, q, default_sort="timestamp")
        return [row_record(r, "fact") for r in rows], total

    def ids_added_by(self, user_id: str, *, private_only: bool = False) -> list[str]:
        """Facts this user added; `private_only` leaves out those an admin shared (they are
        everyone's now: a purge or a replacing import of the user must not remove them)."""
        f = Tag("added_by_owner") == owner_tag(check_id(user_id))
        if private_only:
            f = f & (Tag(AUDIENCE_FIELD) == owner_tag(user_id))
        return [Keys.memory_id(k) for k in matching_keys(self.index, f)]

    def count(self, visible_to: str | None = None) -> int:
        """All facts, or those a user recalls (shared ones and their own)."""
        return int(self.index.query(CountQuery(self.filter_for(visible_to=visible_to))))

    def delete_many(self, pipe: redis.client.Pipeline, fact_ids: list[str]) -> None:
        for fid in fact_ids:
            pipe.delete(self._keys.semantic(fid))

    # --- knowledge file ------------------------------------------------------------------
    @staticmethod
    def read_knowledge_file(path: Path) -> list[SemanticFact]:
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InvalidInputError(f"Knowledge file {path} does not exist.") from None
        except json.JSONDecodeError as e:
            raise InvalidInputError(f"Knowledge file {path} is not valid JSON: {e}.") from None
        items = raw.get("facts", raw) if isinstance(raw, dict) else raw
        if not isinstance(items, list):
            raise InvalidInputError(f"Knowledge file {path} must hold a list of facts.")
        facts = []
        for i, item in enumerate(items):
            if not isinstance(item, dict) or "fact" not in item:
                raise InvalidInputError(f"Knowledge file {path}: entry {i} has no 'fact'.")
            facts.append(
                SemanticStore.build(
                    item["fact"],
                    category=item.get("category", "general"),
                    fact_type=item.get("fact_type", "general"),
                    context=item.get("context", ""),
                    source=item.get("source", "knowledge_file"),
                    fact_id="kf" + digest(item["fact"], length=24),
                )
            )
        return facts

    def missing_from_store(self, facts: list[SemanticFact]) -> list[SemanticFact]:
        if not facts:
            return []
        loaded = self._r.hmget(self._keys.knowledge_loaded, [f.id for f in facts])
        return [f for f, done in zip(facts, loaded, strict=True) if not done]

    def mark_loaded(self, pipe: redis.client.Pipeline, facts: list[SemanticFact]) -> None:
        if facts:
            pipe.hset(self._keys.knowledge_loaded, mapping={f.id: "1" for f in facts})
