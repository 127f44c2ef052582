"""Load the demo persona into a user, or take it out again (`python -m memory demo load|reset`;
docs/demo.md). Demo data is marked (DEMO_TAG, DEMO_SOURCE, the persona's questions, session
names) and written through public methods, the write policy included, dated as it happened; a
user with memories of their own is refused (`OwnMemoriesError`) unless `replace`."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from ulid import ULID

from memory.demo.persona import PROCEDURES, Conversation, Persona, build_persona
from memory.demo.training import DEMO_USER
from memory.errors import InvalidInputError
from memory.models import EventType, check_id
from memory.queries import ListQuery
from memory.service import MemoryService

if TYPE_CHECKING:
    from memory.coordinator import MemoryCoordinator
    from memory.writing import WritePolicy

log = logging.getLogger(__name__)

DEMO_TAG = "demo"
DEMO_SOURCE = "demo"
_DEMO_SESSION = re.compile(r"s-\d{8}-\d{4}-demo")
KINDS = ("episodic", "semantic", "procedural", "sessions")
_PAGE = 500


def demo_session_id(start_ms: int) -> str:
    """`s-20260302-1940-demo`: the app's session id form, with `demo` for the random part."""
    return f"s-{datetime.fromtimestamp(start_ms / 1000):%Y%m%d-%H%M}-demo"


def is_demo_session(session_id: str) -> bool:
    return bool(_DEMO_SESSION.fullmatch(session_id))


def _normalised_questions() -> frozenset[str]:
    from memory.stores.procedural import normalize_query

    return frozenset(normalize_query(q) for q, _ in PROCEDURES)


@dataclass(frozen=True)
class UserContents:
    """How much of a user's memory is the demo's and how much their own."""

    own: dict[str, int]
    demo: dict[str, int]

    @property
    def has_own(self) -> bool:
        return any(self.own.values())

    @property
    def has_demo(self) -> bool:
        return any(self.demo.values())

    def describe_own(self) -> str:
        """'3 episodic memories, 1 chat session'."""
        names = {
            "episodic": ("episodic memory", "episodic memories"),
            "semantic": ("fact", "facts"),
            "procedural": ("learned procedure", "learned procedures"),
            "sessions": ("chat session", "chat sessions"),
        }
        return ", ".join(f"{n} {names[k][n != 1]}" for k in KINDS if (n := self.own.get(k, 0)))


class OwnMemoriesError(InvalidInputError):
    """The user has memories of their own: the demo would be mixed into them."""

    def __init__(self, user_id: str, contents: UserContents) -> None:
        self.user_id = user_id
        self.contents = contents
        super().__init__(
            f"{user_id!r} has memories of their own ({contents.describe_own()}); loading "
            "the demo persona would mix it with them."
        )


@dataclass
class DemoReport:
    """What a load wrote (or a reset removed), per memory type."""

    user: str
    episodic: int = 0
    semantic: int = 0
    procedural: int = 0
    sessions: int = 0
    messages: int = 0
    replaced: bool = False
    notes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("notes")
        return out


def _all_rows(
    coord: MemoryService, user_id: str, memory_type: str, query: ListQuery | None = None
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    page = 1
    while True:
        where = replace(query or ListQuery(), page=page, page_size=_PAGE)
        found, total = coord.list_memories(user_id, memory_type, where)
        rows.extend(found)
        if not found or len(rows) >= total:
            return rows
        page += 1


def demo_contents(coord: MemoryService, user_id: str) -> UserContents:
    """Count the user's demo memories and their own (episodic ones by two count queries)."""
    check_id(user_id)
    _, episodic = coord.list_memories(user_id, "episodic", ListQuery(page_size=1))
    _, episodic_demo = coord.list_memories(
        user_id, "episodic", ListQuery(tags=[DEMO_TAG], page_size=1)
    )
    questions = _normalised_questions()
    facts = _all_rows(coord, user_id, "semantic", ListQuery(added_by=user_id))
    procedures = _all_rows(coord, user_id, "procedural")
    sessions = coord.short_term.sessions(user_id)
    demo = {
        "episodic": episodic_demo,
        "semantic": sum(f.get("source") == DEMO_SOURCE for f in facts),
        "procedural": sum(p.get("normalized_query") in questions for p in procedures),
        "sessions": sum(is_demo_session(s) for s in sessions),
    }
    totals = {
        "episodic": episodic,
        "semantic": len(facts),
        "procedural": len(procedures),
        "sessions": len(sessions),
    }
    return UserContents(own={k: totals[k] - demo[k] for k in KINDS}, demo=demo)


# --- loading ---------------------------------------------------------------------------------


def _summary_item(conv: Conversation, session_id: str, ids: list[str], times: list[int]) -> dict:
    """A session summary as `memory.maintenance.summaries` writes one (plus the demo tag)."""
    return {
        "text": conv.summary,
        "event_type": EventType.SUMMARY,
        "context": f"Summary of {len(times)} messages of an earlier conversation",
        "metadata": {
            "session_id": session_id,
            "message_ids": ids,
            "from_ms": times[0],
            "to_ms": times[-1],
            "reason": "idle",
        },
        "session_id": session_id,
        "timestamp_ms": times[-1],
        "tags": ["summary", DEMO_TAG],
    }


def _log_items(conv: Conversation, session_id: str, ids: list[str], times: list[int]) -> list:
    """The logged exchanges, as `store_interaction` writes them (plus the demo tag)."""
    from memory.stores.episodic import interaction

    return [
        {
            **interaction(session_id, ex.user, ex.assistant, ids[2 * i + 1], ex.tools),
            "timestamp_ms": times[2 * i],
            "tags": [DEMO_TAG],
        }
        for i, ex in enumerate(conv.exchanges)
    ]


def _messages(
    coord: MemoryCoordinator, user_id: str, session_id: str, times: list[int], conv: Conversation
) -> list[str]:
    ids = []
    for i, ex in enumerate(conv.exchanges):
        for j, (role, text) in enumerate((("user", ex.user), ("assistant", ex.assistant))):
            msg = coord.add_message(user_id, session_id, role, text, timestamp_ms=times[2 * i + j])
            ids.append(msg.id)
    return ids


def load_demo(
    coord: MemoryCoordinator,
    user_id: str = DEMO_USER,
    *,
    replace: bool = False,
    today: date | None = None,
    writer: WritePolicy | None = None,
    progress: Callable[[str], None] | None = None,
) -> DemoReport:
    """Write the persona into `user_id` (see the module docstring). `writer`: the app's
    shared write policy (its per-user lock); `progress` gets a line per step."""
    from memory.maintenance import Maintenance
    from memory.writing import MemoryCandidate, WritePolicy, detect_slot, write_fact

    say = progress or (lambda _line: None)
    check_id(user_id)
    today = today or date.today()
    persona: Persona = build_persona(today)
    before = demo_contents(coord, user_id)
    if before.has_own and not replace:
        raise OwnMemoriesError(user_id, before)
    report = DemoReport(user_id, replaced=before.has_own)
    if before.has_own:
        say(f"Purging {user_id}'s own memories ({before.describe_own()}) first (--replace).")
        coord.clear_user_memories(user_id)
    elif before.has_demo:
        say(f"{user_id} holds the demo already: loading it afresh.")
        coord.clear_user_memories(user_id)

    say(f"Writing {persona.name}'s conversations ({len(persona.conversations)} sessions)…")
    logs: list[dict[str, Any]] = []
    stated: list[tuple[int, str, Any]] = []
    recent: list[tuple[str, Conversation]] = []
    for conv in persona.conversations:
        sid = demo_session_id(conv.ms(today))
        times = conv.times_ms(today)
        if conv.keeps_messages:
            ids = _messages(coord, user_id, sid, times, conv)
            recent.append((sid, conv))
            report.sessions += 1
            report.messages += len(ids)
        else:  # their messages expired long ago: the summary and the logged exchanges stay
            ids = [str(ULID.from_timestamp(t)) for t in times]
            logs.append(_summary_item(conv, sid, ids, times))
        logs += _log_items(conv, sid, ids, times)
        for m in conv.memories:
            stated.append((m.when.ms(today) if m.when else times[2 * m.exchange], sid, m))
    coord.add_episodic_many(user_id, logs)

    say("Summarising the recent sessions…")
    maintenance = Maintenance.of(coord)
    for sid, conv in recent:
        text = conv.summary
        out = maintenance.summarise_session(user_id, sid, lambda _turns, t=text: t, reason="idle")
        for mid in out.memory_ids:
            coord.update_memory(user_id, "episodic", mid, tags=["summary", DEMO_TAG])
        if out.status != "done":  # e.g. SUMMARY_MIN_MESSAGES above the session's length
            report.notes.append(f"summary of {sid} written without its mark ({out.status})")
            times = conv.times_ms(today)
            ids = [m.id for m in coord.recent_messages(user_id, sid, len(times))]
            coord.add_episodic_many(user_id, [_summary_item(conv, sid, ids, times)])

    say("Adding her facts and learned tool procedures…")
    for conv in persona.conversations:
        for f in conv.facts:
            write_fact(
                coord,
                f.text,
                added_by=user_id,
                category=f.category,
                fact_type=f.fact_type,
                context="Added in the sidebar memory editor",
                source=DEMO_SOURCE,
                timestamp_ms=conv.ms(today),  # learned in that conversation, not today
            )
    # Her procedures were learned over her months of questions: first used in her first
    # conversation, last in her newest one (not at the load).
    first, last = persona.conversations[0].ms(today), persona.conversations[-1].ms(today)
    for question, runs in PROCEDURES:
        for tools, score, ms in runs:
            pattern = coord.record_procedure(
                user_id, question, list(tools), success_score=score, execution_time_ms=ms
            )
        coord.stores.procedural.set_dates(user_id, pattern.id, first, last)

    say("Writing what she told the assistant (the write policy, oldest first)…")
    policy = writer or WritePolicy(
        coord,
        dedup_threshold=coord.settings.dedup_threshold,
        pii_policy=coord.settings.pii_policy,
    )
    for when, sid, m in sorted(stated, key=lambda s: s[0]):
        cand = MemoryCandidate(
            text=m.text,
            event_type=m.kind,
            tags=[*m.tags, DEMO_TAG],
            slot=detect_slot(m.text, m.kind),
            importance=m.importance,
            how=m.how,
        )
        context = "trigger phrase" if m.how == "trigger" else "LLM extraction"
        res = policy.write(user_id, sid, cand, context=context, timestamp_ms=when)
        if res.stored is None:
            report.notes.append(f"not stored ({res.reason}): {m.text}")

    after = demo_contents(coord, user_id).demo
    report.episodic, report.semantic, report.procedural = (after[k] for k in KINDS[:3])
    for note in report.notes:
        log.warning("demo persona: %s", note)
    return report


def reset_demo(coord: MemoryService, user_id: str = DEMO_USER) -> DemoReport:
    """Remove the demo and all it made from `user_id`: a load refuses a user with memories of
    their own (or purges them first, with `replace`), so whatever a user holds beside a loaded
    demo was made with it: the chats of a presentation and their messages, the memories and
    facts they stored, the answers' usage, the procedures learned. So the user is purged whole
    (`clear_user_memories`), and the next load needs no *Replace*. A user without the demo is
    left alone (the report counts nothing)."""
    check_id(user_id)
    if not demo_contents(coord, user_id).has_demo:
        return DemoReport(user_id)
    messages = sum(
        len(coord.recent_messages(user_id, s, _PAGE)) for s in coord.short_term.sessions(user_id)
    )
    removed = coord.clear_user_memories(user_id)
    return DemoReport(
        user_id,
        episodic=removed["episodic"],
        semantic=removed["semantic"],
        procedural=removed["procedural"],
        sessions=removed["sessions"],
        messages=messages,
    )
