"""Export of one user's memories (all four types) to JSON, and import back: validated whole first,
written in chunked transactions behind a progress marker so a cut-off import finishes when run
again; vectors are recomputed on import (docs/cli.md, "Importing a large file")."""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, Literal

import numpy as np
import redis
from pydantic import BaseModel, Field, ValidationError
from redisvl.exceptions import RedisVLError
from ulid import ULID

from memory.admin import followups
from memory.admin.followups import FollowUp
from memory.admin.purge import plan_user_purge
from memory.boundary import store_error
from memory.embeddings import CachedEmbedder
from memory.errors import ImportFileError, InvalidInputError, StoreUnavailableError
from memory.keys import Keys, owner_tag
from memory.models import (
    ChatMessage,
    EpisodicMemory,
    ProceduralPattern,
    SemanticFact,
    Usage,
    check_id,
    check_unicode,
    in_time_range,
    now_ms,
)
from memory.replies import as_str
from memory.runtime.connection import bulk_client
from memory.shape import (
    MAX_IMPORT_BYTES,
    MAX_IMPORT_DEPTH,
    MAX_METADATA_DEPTH,
    check_depth,
    read_bounded,
)
from memory.stores import Stores
from memory.stores.episodic import EpisodicStore, embedding_text
from memory.stores.schema import AUDIENCE_FIELD
from memory.stores.semantic import SemanticStore
from memory.stores.short_term import ShortTermStore
from memory.stores.usage import AnswerRecord, UsageRecords, queue_import
from memory.writing.secrets import check_no_secret

log = logging.getLogger(__name__)

FORMAT = "coala-memory-export"
VERSION = 2
EMBED_BATCH = 1000


class ExportFile(BaseModel):
    format: Literal["coala-memory-export"]
    version: int = Field(ge=1, le=VERSION)
    user_id: str
    exported_at: int
    embedding_model: str = ""
    episodic: list[EpisodicMemory] = Field(default_factory=list)
    semantic: list[SemanticFact] = Field(default_factory=list)
    procedural: list[ProceduralPattern] = Field(default_factory=list)
    short_term: dict[str, list[ChatMessage]] = Field(default_factory=dict)
    #: memory id -> how many stored answers used it, and when last (since version 2)
    usage: dict[str, Usage] = Field(default_factory=dict)
    used_in: list[AnswerRecord] = Field(default_factory=list)


def export_user(stores: Stores, embedding_model: str, user_id: str) -> dict[str, Any]:
    check_id(user_id)
    episodic = [stores.episodic.get(user_id, mid) for mid in stores.episodic.ids_for_user(user_id)]
    semantic = [stores.semantic.get(fid) for fid in stores.semantic.ids_added_by(user_id)]
    procedural = [
        stores.procedural.get(user_id, Keys.memory_id(k))
        for k in stores.procedural.keys_for_user(user_id)
    ]
    sessions = {
        s: stores.short_term.all_messages(user_id, s) for s in stores.short_term.sessions(user_id)
    }
    usage = UsageRecords(stores.client, stores.keys)
    doc = ExportFile(
        format=FORMAT,
        version=VERSION,
        user_id=user_id,
        exported_at=now_ms(),
        embedding_model=embedding_model,
        episodic=episodic,
        semantic=semantic,
        procedural=procedural,
        short_term=sessions,
        usage=usage.of(user_id),
        used_in=usage.records(user_id),
    )
    return doc.model_dump(mode="json")


def read_import_file(path: Path) -> bytes:
    """An export file's bytes, its size checked before it is read (`/dev/zero` is refused)."""
    try:
        return read_bounded(path, MAX_IMPORT_BYTES, "The import file")
    except InvalidInputError as e:
        raise ImportFileError(f"{e} Nothing was imported.") from None


def import_user(
    stores: Stores,
    embedder: CachedEmbedder,
    data: dict[str, Any] | str | bytes,
    *,
    mode: Literal["merge", "replace"] = "merge",
    user_id: str | None = None,
    progress: Progress | None = None,
    chunk_records: int,
) -> dict[str, int]:
    """Import an export file; `user_id` imports it under another user. `progress` hears how
    far the embedding and the writing got; `chunk_records`: records per transaction
    (IMPORT_CHUNK_RECORDS)."""
    if mode not in ("merge", "replace"):
        raise InvalidInputError("Import mode must be 'merge' or 'replace'.")
    doc = _parse(data)
    _refuse_duplicate_ids(doc)
    target = check_id(user_id or doc.user_id)
    # Validate every record with the same rules as the write path (raises before writing).
    try:
        _check_ids(doc)
        ep_ids, sem_ids = _owned_ids(stores, target, doc)
        episodic = [
            EpisodicStore.rebuild(
                m,
                stores.pii,
                user_id=target,
                id=ep_ids[m.id],
                superseded_by=ep_ids.get(m.superseded_by or "", m.superseded_by),
            )
            for m in doc.episodic
            if not (m.expires_at and m.expires_at <= now_ms())
        ]
        # a file neither pins nor shares a fact: sharing is an admin's
        semantic = [
            SemanticStore.rebuild(
                f, stores.pii, added_by=target, id=sem_ids[f.id], pinned=False, shared=False
            )
            for f in doc.semantic
        ]
        procedural = [
            p.model_copy(update={"user_id": target, "id": _safe_id(p.id)}) for p in doc.procedural
        ]
        sessions = {
            check_id(s, "session id"): [
                ShortTermStore.build(m.role, m.content, pii=stores.pii).model_copy(
                    update={"id": m.id, "timestamp": m.timestamp}
                )
                for m in msgs
            ]
            for s, msgs in doc.short_term.items()
        }
        counts, answers = _imported_usage(
            doc, {m.id for m in episodic} | {f.id for f in semantic}, {**ep_ids, **sem_ids}
        )
    except InvalidInputError as e:
        raise ImportFileError(f"The file was not imported (nothing changed): {e}") from e

    say: Progress = progress or (lambda stage, done, total: None)
    ep_vecs = _embed(embedder, [embedding_text(m.description, m.context) for m in episodic], say)
    sem_vecs = embedder.embed_many([f.fact for f in semantic])
    proc_vecs = embedder.embed_many([p.query_pattern for p in procedural])  # masked there

    writes: list[tuple[int, Write]] = []
    for m, v in zip(episodic, ep_vecs, strict=True):
        writes.append((1, partial(stores.episodic.write, mem=m, vec=v)))
    for p, v in zip(procedural, proc_vecs, strict=True):
        writes.append((1, partial(stores.procedural.write_raw, pattern=p, vec=v, pii=stores.pii)))
    for s, msgs in sessions.items():
        if msgs:
            writes.append((len(msgs), _session_write(stores, target, s, msgs, mode)))

    old = plan_user_purge(stores, target) if mode == "replace" else None
    note = FollowUp(
        what="import",
        user_id=target,
        write_facts=list(zip(semantic, sem_vecs, strict=True)),
        user_list="add",
    )
    if old is not None:  # the old facts go before the file's: they may reuse their ids
        note.delete_facts = list(old.semantic_ids)
        note.forget_texts = list(dict.fromkeys(old.texts))
    followups.register(stores, target)
    total = sum(n for n, _ in writes)
    written = 0
    chunks = _chunks(writes, chunk_records)
    marker = _start_marker(stores, target, mode, total)
    for i, chunk in enumerate(chunks):
        last = i == len(chunks) - 1
        # The last transaction also drops what a replace leaves (possibly every old record
        # of the user: bulk work, its own timeout) and holds the note of what follows.
        client = bulk_client(stores.client) if last and old is not None else stores.client
        try:
            pipe = client.pipeline(transaction=True)
            for _, write in chunk:
                write(pipe)
            pipe.hset(marker, "written", written + sum(n for n, _ in chunk))
            if last:
                pipe.delete(marker)
                if old is not None:
                    note.cleared_sessions = old.queue(
                        pipe,
                        stores,
                        keep_episodic={m.id for m in episodic},
                        keep_procedures={stores.keys.procedure(target, p.id) for p in procedural},
                        keep_sessions=set(sessions),
                    )
                queue_import(pipe, stores.keys, target, counts, answers)
                followups.queue(pipe, stores, note)
            pipe.execute()
        except (redis.RedisError, RedisVLError) as e:
            raise StoreUnavailableError(_stopped(target, written, total, mode, e)) from e
        finally:
            if client is not stores.client:
                client.close()
        written += sum(n for n, _ in chunk)
        say("writing", written, total)
    stores.client.srem(stores.keys.imports_running, target)
    followups.run_after(stores, embedder, note, f"all {total:,} records were written")
    return {
        "episodic": len(episodic),
        "semantic": len(semantic),
        "procedural": len(procedural),
        "short_term": sum(len(m) for m in sessions.values()),
    }


Write = Callable[[redis.client.Pipeline], None]
#: (stage, done, total): "embedding", then "writing" (records; a session counts its messages)
Progress = Callable[[str, int, int], None]


def _start_marker(stores: Stores, target: str, mode: str, total: int) -> str:
    """The progress marker, written before the first chunk (an earlier cut-off import of
    the same user is said to be resumed); the user is listed and the import noted first."""
    keys = stores.keys
    marker = keys.import_progress(target)
    earlier = stores.client.hget(marker, "written")
    if earlier is not None:  # the open that ran this import said so too (`interrupted_imports`)
        log.info("resuming an import into %r cut off after %s records", target, as_str(earlier))
    stores.note_user(target)
    stores.client.sadd(keys.imports_running, target)
    stores.client.hset(
        marker, mapping={"user_id": target, "mode": mode, "total": total, "written": 0,
                         "started_ms": now_ms()},
    )  # fmt: skip
    return marker


def interrupted_imports(stores: Stores) -> list[str]:
    """At open: one line per import a stopped process left cut off, saying how far it got
    and what to do (markers of imports that ended are cleared)."""
    keys = stores.keys
    lines = []
    for user in sorted(as_str(u) for u in stores.client.smembers(keys.imports_running)):
        got = {
            as_str(k): as_str(v)
            for k, v in stores.client.hgetall(keys.import_progress(user)).items()
        }
        if not got:  # it finished (its last transaction removed the marker)
            stores.client.srem(keys.imports_running, user)
            continue
        kept = "; the user's earlier memories were kept" if got.get("mode") == "replace" else ""
        lines.append(
            f"an import into user {user!r} was cut off after {int(got['written']):,} of "
            f"{int(got['total']):,} records{kept}. Run the same import again to finish it: "
            "records keep their ids, so nothing is duplicated."
        )
    return lines


def _embed(embedder: CachedEmbedder, texts: list[str], say: Progress) -> np.ndarray:
    """In batches, saying how far it got: the model's time is most of a large import's."""
    if len(texts) <= EMBED_BATCH:
        return embedder.embed_many(texts)
    parts = []
    for start in range(0, len(texts), EMBED_BATCH):
        parts.append(embedder.embed_many(texts[start : start + EMBED_BATCH]))
        say("embedding", min(start + EMBED_BATCH, len(texts)), len(texts))
    return np.concatenate(parts)


def _session_write(
    stores: Stores, user: str, session: str, msgs: list[ChatMessage], mode: str
) -> Write:
    def write(pipe: redis.client.Pipeline) -> None:
        if mode == "replace":  # its details, title and summary state are the old session's
            stores.short_term.clear(pipe, user, session)
        pipe.delete(stores.keys.session(user, session))
        stores.short_term.write(pipe, user, session, msgs)

    return write


def _chunks(writes: list[tuple[int, Write]], size: int) -> list[list[tuple[int, Write]]]:
    """Consecutive groups of about `size` records (at least one group, maybe empty)."""
    chunks: list[list[tuple[int, Write]]] = [[]]
    n = 0
    for w in writes:
        if n >= size:
            chunks.append([])
            n = 0
        chunks[-1].append(w)
        n += w[0]
    return chunks


def _stopped(target: str, written: int, total: int, mode: str, error: BaseException) -> str:
    kept = (
        "; the user's earlier memories stay until the whole file is in" if mode == "replace" else ""
    )
    return (
        f"The import into {target!r} stopped after {written:,} of {total:,} records were "
        f"written ({store_error(error)}). Run the same import again to finish: records keep "
        f"their ids, so nothing is duplicated{kept}."
    )


def _parse(data: dict[str, Any] | str | bytes) -> ExportFile:
    _refuse_too_deep(data)
    if isinstance(data, dict):  # read as the file it stands for: its NaN refused alike
        data = json.dumps(data)
    if len(data) > MAX_IMPORT_BYTES:
        raise ImportFileError("The file is larger than 50 MB; nothing was imported.")
    try:
        # NaN and Infinity are not JSON: Python reads them, but a NaN score is never
        # found by the index, so such a record would be "imported" and then invisible.
        data = json.loads(data, parse_constant=_not_a_number)
    except json.JSONDecodeError as e:
        raise ImportFileError(
            f"Not a JSON file (line {e.lineno}: {e.msg}); nothing was imported."
        ) from None
    except UnicodeDecodeError as e:
        raise ImportFileError(
            f"The file is not UTF-8 text (invalid byte at position {e.start}); "
            "nothing was imported."
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ImportFileError(
            f'Not a memory export (expected "format": "{FORMAT}"); nothing was imported.'
        )
    try:
        doc = ExportFile.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ImportFileError(
            f"Invalid export file at {where}: {first['msg']} "
            f"({e.error_count()} problem(s)); nothing was imported."
        ) from None
    _check_texts_and_times(doc.model_dump())
    return doc


def _refuse_too_deep(data: Any) -> None:
    """Before parsing (which recurses): a file nested 1,000 deep is refused in words."""
    try:
        check_depth(data, MAX_IMPORT_DEPTH, "The file")
    except InvalidInputError as e:
        raise ImportFileError(
            f"{e} Metadata may be {MAX_METADATA_DEPTH} levels deep; nothing was imported."
        ) from None


#: The file's times (ms since 1970), wherever they stand (a metadata's keys are the user's own).
TIME_FIELDS = frozenset(
    {
        "exported_at",
        "timestamp",
        "created_at",
        "last_accessed",
        "expires_at",
        "last_used",
        "last_ms",
        "at_ms",
    }
)


def _check_texts_and_times(value: Any, where: str = "", times: bool = True) -> None:
    """Every string of the file (keys too) valid Unicode and every time between 1970 and 9999,
    before anything is embedded or written: JSON may spell a lone surrogate (`"\\ud800"`) that no
    UTF-8 text holds, and not every field passes the write path's checks."""
    if isinstance(value, str):
        try:
            check_unicode(value, f"text at {where or 'the top'}")
        except InvalidInputError as e:
            raise ImportFileError(f"{e} Nothing was imported.") from None
        return
    items: Any = value.items() if isinstance(value, dict) else ()
    if isinstance(value, list):
        items = enumerate(value)
    for k, v in items:
        path = f"{where}.{k}" if where else str(k)
        if isinstance(k, str):
            _check_texts_and_times(k, f"{path} (a key)", times=False)
        if times and k in TIME_FIELDS and v is not None and not in_time_range(v):
            raise ImportFileError(
                f"The time at {path} ({v}) is not between 1970 and 9999 (milliseconds since "
                "1970); nothing was imported."
            )
        _check_texts_and_times(v, path, times and k != "metadata")


def _not_a_number(name: str) -> Any:
    raise ImportFileError(
        f"The file holds {name}, which is not a number JSON allows; nothing was imported."
    )


def _refuse_duplicate_ids(doc: ExportFile) -> None:
    """Two records with one id would both be counted but only the last one kept."""
    for what, records in (
        ("episodic", doc.episodic),
        ("semantic", doc.semantic),
        ("procedural", doc.procedural),
    ):
        twice = [i for i, n in Counter(r.id for r in records).items() if n > 1]
        if twice:
            raise ImportFileError(
                f"The file has two {what} records with the id {twice[0]!r}; nothing was imported."
            )


def _owned_ids(
    stores: Stores, target: str, doc: ExportFile
) -> tuple[dict[str, str], dict[str, str]]:
    """File id -> id to write. An id whose record exists and belongs to someone else (the
    file came from another user, or was crafted), or is a shared fact, gets a new id: an
    import never overwrites another user's memory or the shared knowledge. (An episodic
    memory's key holds its user's tag, so another user's memory is never this key; the
    owner check stays as a guard.)"""
    ep = [_safe_id(m.id) for m in doc.episodic]
    sem = [_safe_id(f.id) for f in doc.semantic]
    pipe = stores.client.pipeline(transaction=False)
    for mid in ep:
        pipe.hget(stores.keys.episodic(target, mid), "user_id")
    for fid in sem:
        pipe.hmget(stores.keys.semantic(fid), ["added_by", AUDIENCE_FIELD])
    replies = pipe.execute()
    owners = [None if o is None else as_str(o) for o in replies[: len(ep)]]
    for added_by, audience in replies[len(ep) :]:
        # Only a fact private to this user may be replaced: a shared one (knowledge file or
        # shared by an admin) or another user's keeps its record and the file's gets a new id.
        theirs = audience is None or as_str(audience) == owner_tag(target)
        owners.append(None if added_by is None else as_str(added_by) if theirs else "")
    ep_map = {
        mid: mid if owner in (None, target) else _derived_id(target, mid)
        for mid, owner in zip(ep, owners[: len(ep)], strict=True)
    }
    sem_map = {
        fid: fid if owner in (None, target) else _derived_id(target, fid)
        for fid, owner in zip(sem, owners[len(ep) :], strict=True)
    }
    return ep_map, sem_map


def _imported_usage(
    doc: ExportFile, imported: set[str], new_id: dict[str, str]
) -> tuple[dict[str, Usage], list[AnswerRecord]]:
    """The file's usage records under the ids its memories are written with; those of
    memories not imported (expired, deleted, another user's or shared facts) are dropped, and
    so is an answer left with none."""

    def kept(ids: list[str]) -> list[str]:
        return [new_id[i] for i in ids if new_id.get(i) in imported]

    answers = []
    for a in doc.used_in:  # its ids checked with the file's (`_check_ids`)
        if ids := kept(a.memory_ids):
            answers.append(a.model_copy(update={"memory_ids": ids}))
    return {new_id[i]: u for i, u in doc.usage.items() if kept([i])}, answers


def _derived_id(target: str, file_id: str) -> str:
    """The new id of a record whose file id is taken: derived from the user and that id, so
    the same import run again writes the same record instead of a second copy. A ULID, with
    the file id's time when it is one (the order by creation stays)."""
    digest = hashlib.sha256(f"{target}\x00{file_id}".encode()).digest()
    try:
        millis = ULID.from_str(file_id).milliseconds
    except ValueError:
        millis = int.from_bytes(digest[:6], "big") >> 8
    return str(ULID.from_bytes(millis.to_bytes(6, "big") + digest[6:16]))


def _safe_id(value: str, what: str = "memory id") -> str:
    """A record's id as the file has it, or InvalidInputError: never rewritten (a secret in an
    id is refused, not masked: two ids masked alike would be one record)."""
    if not value or len(value) > 64 or ":" in value or any(ord(c) < 33 for c in value):
        raise InvalidInputError(f"Invalid {what} {value[:40]!r} in the file.")
    return check_no_secret(value, what)


def _check_ids(doc: ExportFile) -> None:
    """Every id and key of the file free of secrets, before anything is embedded or written
    (a refusal mid-way would leave part of the file)."""
    for m in doc.episodic:
        if m.superseded_by:
            _safe_id(m.superseded_by, "id of the memory that replaced it")
    for p in doc.procedural:
        for key, seq in p.sequences.items():
            check_no_secret(key, "name of a tool sequence")
            for t in seq.tools:
                check_no_secret(t, "tool name")
        for t in p.tool_sequence:
            check_no_secret(t, "tool name")
    for session, msgs in doc.short_term.items():
        for msg in msgs:
            check_no_secret(msg.id, "message id")
        check_id(session, "session id")
    for mid in doc.usage:
        _safe_id(mid, "memory id in usage")
    for a in doc.used_in:
        check_id(a.turn_id, "turn id")
        check_id(a.session_id, "session id")
        for mid in a.memory_ids:
            _safe_id(mid, "memory id in used_in")
