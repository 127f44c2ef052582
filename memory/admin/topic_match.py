"""What a topic matches in one user's data, and what follows from it (older versions, a turn's
messages and the memories it wrote, summaries), until nothing new is found: the reading half of
a topic forget (`memory.admin.forget` reads the data and deletes)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from memory.errors import InvalidInputError
from memory.models import ChatMessage, EpisodicMemory, EventType, SemanticFact, check_text
from memory.text import content_roots, names_word

MatchType = Literal["episodic", "semantic", "procedural", "short_term"]


class TopicMatch(BaseModel):
    """One memory, fact, procedure or message a preview found."""

    ref: str = Field(description="What `keep` names: `type:id`, or `short_term:session:id`")
    memory_type: MatchType
    kind: str = Field(description="Event type, fact category, 'procedure', or the role")
    text: str
    timestamp: int = Field(description="ms since epoch")
    score: float | None = Field(
        default=None, description="Hybrid-search score; None when found by its words only"
    )
    session_id: str = ""
    partial: bool = Field(
        default=False,
        description="Holds some of the topic's words but not all ('trail' of 'trail mix')",
    )


def topic_roots(query: str) -> frozenset[str]:
    """The roots a text must share with the topic to mention it; refuses a topic without one."""
    roots = content_roots(check_text(query, "Topic")) if query and query.strip() else None
    if not roots:
        raise InvalidInputError(
            "Name the topic with at least one word that is not a number or a common word "
            "like 'my' or 'the' (e.g. a name or a subject)."
        )
    return roots


def mentions(text: str, roots: frozenset[str]) -> bool:
    """Does `text` hold one of the topic's roots, in whatever form it was written? Its words
    count with the parts of a word written as several (`#OkaforLaw`, `okafor2024`)."""
    held = content_roots(text, parts=True)
    if roots & held:
        return True
    strange = [r for r in roots if not r.isascii()]
    return any(names_word(w, r) for r in strange for w in held)


@dataclass(frozen=True)
class ProcedureText:
    question: str
    used: int  # ms: last used, or created
    tools: tuple[str, ...]  # every tool name of its sequences


@dataclass
class UserData:
    """Everything of one user a forget looks at, read once."""

    memories: dict[str, EpisodicMemory]
    facts: dict[str, SemanticFact]
    shared_facts: list[SemanticFact]
    procedures: dict[str, ProcedureText]
    messages: dict[str, list[tuple[str, ChatMessage]]]  # session -> (stored JSON, message)
    details: dict[str, dict[str, str]]  # session -> field -> stored JSON
    titles: dict[str, str]
    queries: list[str]
    merges: dict[str, str]  # merge id -> stored JSON
    latest_summary: dict[str, str]  # session -> id of its newest summary
    last_report: str


@dataclass
class Selection:
    episodic: set[str] = field(default_factory=set)
    semantic: set[str] = field(default_factory=set)
    procedural: set[str] = field(default_factory=set)
    messages: set[tuple[str, str]] = field(default_factory=set)  # (session, message id)

    def size(self) -> int:
        return len(self.episodic) + len(self.semantic) + len(self.procedural) + len(self.messages)


# --- matching and following ------------------------------------------------------------------


def fact_text(f: SemanticFact) -> str:
    meta = json.dumps(f.metadata, ensure_ascii=False)
    return " ".join((f.fact, f.context, f.category, f.fact_type, f.source, f.id, meta))


def memory_text(m: EpisodicMemory) -> str:
    meta = json.dumps(m.metadata, ensure_ascii=False)
    return " ".join((m.description, m.context, " ".join(m.tags), meta, m.id, m.session_id))


def message_text(session_id: str, msg: ChatMessage) -> str:
    meta = json.dumps(msg.metadata, ensure_ascii=False)
    return " ".join((msg.content, msg.id, session_id, meta))


def holds_part_only(text: str, roots: frozenset[str]) -> bool:
    """Does `text` hold some of a topic's words but not all of them?"""
    held = [r for r in roots if mentions(text, frozenset({r}))]
    return 0 < len(held) < len(roots)


def mentions_all(text: str, roots: frozenset[str]) -> bool:
    """Does `text` hold every word of the topic? What a trace (a chat's name, a search, an
    answer's record) must hold to go: "trails along the river" is no trace of "trail mix"."""
    return all(mentions(text, frozenset({r})) for r in roots)


def names_any(raw: str, ids: set[str], roots: frozenset[str]) -> bool:
    """Does a stored record quote the topic or name one of these ids?"""
    return any(i in raw for i in ids) or mentions_all(raw, roots)


def find_matches(
    data: UserData, roots: frozenset[str], scores: dict[str, float]
) -> list[TopicMatch]:
    """What mentions the topic, or scored it in search, best score first, then newest."""
    out: list[TopicMatch] = []

    def check(
        ref: str, mtype: MatchType, kind: str, text: str, at: int, said: str, s: str = ""
    ) -> None:
        """`said`: all of the record a mention may be in; `s`: its session."""
        if ref in scores or mentions(said, roots):
            partial = holds_part_only(said, roots)
            out.append(
                TopicMatch(
                    ref=ref,
                    memory_type=mtype,
                    kind=kind,
                    text=text,
                    timestamp=at,
                    score=scores.get(ref),
                    session_id=s,
                    partial=partial,
                )
            )

    for m in data.memories.values():
        kind = m.event_type.value + (" (earlier version)" if m.superseded_by else "")
        said, at = memory_text(m), m.timestamp
        check(f"episodic:{m.id}", "episodic", kind, m.description, at, said, m.session_id)
    for f in data.facts.values():
        check(f"semantic:{f.id}", "semantic", f.category, f.fact, f.timestamp, fact_text(f))
    for pid, p in data.procedures.items():
        said = " ".join((p.question, pid, *p.tools))
        check(f"procedural:{pid}", "procedural", "procedure", p.question, p.used, said)
    for s, msgs in data.messages.items():
        for _, msg in msgs:
            said, kind = message_text(s, msg), f"{msg.role} message"
            check(
                f"short_term:{s}:{msg.id}", "short_term", kind, msg.content, msg.timestamp, said, s
            )
    out.sort(key=lambda m: (-(m.score or 0.0), -m.timestamp))
    return out


def add_ref(chosen: Selection, ref: str) -> None:
    mtype, _, rest = ref.partition(":")
    if mtype == "episodic":
        chosen.episodic.add(rest)
    elif mtype == "semantic":
        chosen.semantic.add(rest)
    elif mtype == "procedural":
        chosen.procedural.add(rest)
    elif mtype == "short_term":
        session, _, mid = rest.rpartition(":")
        chosen.messages.add((session, mid))


def turns_of(data: UserData, messages: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """(session, turn id) of these messages."""
    return {
        (s, str(m.metadata["turn_id"]))
        for s, msgs in data.messages.items()
        for _, m in msgs
        if (s, m.id) in messages and m.metadata.get("turn_id")
    }


def follow(chosen: Selection, data: UserData, kept: set[str]) -> None:
    """Add what came from the chosen items, and what that came from, until nothing is new."""

    def take(ref: str) -> None:
        if ref not in kept:
            add_ref(chosen, ref)

    stored_messages = {(s, m.id) for s, msgs in data.messages.items() for _, m in msgs}
    while True:
        before = chosen.size()
        gone_messages = {mid for _, mid in chosen.messages}
        for m in data.memories.values():
            if m.superseded_by in chosen.episodic:  # an earlier version
                take(f"episodic:{m.id}")
            cited = m.metadata.get("message_ids") or []
            if m.event_type is EventType.SUMMARY and gone_messages.intersection(cited):
                take(f"episodic:{m.id}")
            answer = str(m.metadata.get("assistant_message_id") or "")
            if m.event_type is EventType.INTERACTION and answer:
                if answer in gone_messages:  # the logged exchange of a forgotten message
                    take(f"episodic:{m.id}")
                elif m.id in chosen.episodic and (m.session_id, answer) in stored_messages:
                    take(f"short_term:{m.session_id}:{answer}")  # its messages
        turns = turns_of(data, chosen.messages)
        for s, msgs in data.messages.items():
            for _, msg in msgs:
                if (s, str(msg.metadata.get("turn_id") or "")) in turns:
                    take(f"short_term:{s}:{msg.id}")
        for s, fields in data.details.items():
            for f, raw in fields.items():
                if (s, f.split("#", 1)[0]) in turns:
                    for ref in stored_refs(raw, data):
                        take(ref)
        if chosen.size() == before:
            return


def stored_refs(raw: str, data: UserData) -> list[str]:
    """The memories a turn wrote (the `stored` list of its details or extraction outcome)."""
    try:
        value: Any = json.loads(raw)
    except ValueError:
        return []
    stored = value.get("stored") if isinstance(value, dict) else None
    out = []
    for item in stored if isinstance(stored, list) else []:
        if not isinstance(item, dict):
            continue
        mid, mtype = str(item.get("id") or ""), item.get("memory_type")
        if mtype == "episodic" and mid in data.memories:
            out.append(f"episodic:{mid}")
        elif mtype == "semantic" and mid in data.facts:
            out.append(f"semantic:{mid}")
    return out
