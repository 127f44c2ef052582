"""The four memory tools, defined once: remember, recall, stats, forget, each a method of
`MemoryToolkit` (typed arguments in, one result model out) that the chat's registry and
agent/mcp_server both register. Every call is scoped to one user, never to an id the model
chooses; what is stored goes through the write policy into the user's own episodic memory only
(semantic memory is shared) and, in chat, must be grounded in what the user said."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field
from pydantic_core import to_jsonable_python

from agent.errors import ToolError
from agent.tools.registry import ToolContext
from memory.models import MemoryType, RecallHit
from memory.service import AgentMemory
from memory.writing import Grounding, WritePolicy, candidate_for

# ---- the arguments ------------------------------------
Kind = Literal[
    "preference", "goal", "health_event", "milestone", "correction", "feedback", "fact", "knowledge"
]
Content = Annotated[
    str,
    Field(
        min_length=3,
        max_length=2000,
        description="The fact, preference or goal, as one self-contained sentence",
    ),
]
RememberAs = Annotated[
    Literal["episodic", "semantic"],
    Field(
        description="episodic (the user's own memory). semantic is shared knowledge and not "
        "writable: such text is stored as the user's episodic fact"
    ),
]
KindArg = Annotated[
    Kind | None,
    Field(
        description="preference, goal, health_event, milestone, correction, feedback or fact; "
        "guessed from the text when omitted"
    ),
]
Tags = Annotated[
    list[Annotated[str, Field(max_length=64)]] | None,
    Field(max_length=20, description="Optional tags, e.g. ['running', 'knee']"),
]
Query = Annotated[
    str, Field(min_length=1, max_length=1000, description="What to look for, in a few words")
]
Limit = Annotated[int, Field(ge=1, le=20, description="Maximum number of memories per type")]
RecallType = Annotated[
    Literal["episodic", "semantic"] | None,
    Field(
        description="episodic (the user's memories) or semantic (general knowledge); both when "
        "omitted"
    ),
]
MemoryId = Annotated[
    str,
    Field(min_length=1, max_length=200, description="The id, as returned by recall_information"),
]
ForgetType = Annotated[
    Literal["episodic", "procedural"],
    Field(description="episodic (default) or procedural (a learned tool sequence)"),
]
ForgetAction = Annotated[
    Literal["delete", "pause", "resume"],
    Field(
        description="delete (default); pause: keep the episodic memory but never use it until "
        "resumed; resume: use a paused one again"
    ),
]


# ---- the results ----------------------------------------------------------------------------
class RememberResult(BaseModel):
    stored: bool
    memory_type: str = MemoryType.EPISODIC.value
    id: str | None = None
    kind: str | None = None
    tags: list[str] | None = None
    replaced: str | None = Field(default=None, description="Id of the memory this replaced")
    reason: str | None = Field(default=None, description="Why nothing was stored")
    already_remembered_as: str | None = None
    note: str | None = None


class RecalledMemory(BaseModel):
    id: str
    type: str
    kind: str | None
    text: str
    score: float
    band: str
    parts: dict[str, float]


class RecallResult(BaseModel):
    query: str
    count: int
    memories: list[RecalledMemory]


class ForgetResult(BaseModel):
    forgotten: str | None = None
    memory_type: str
    paused: bool | None = Field(default=None, description="After a pause or a resume")
    id: str | None = Field(default=None, description="The memory paused or resumed")


def recalled(hit: RecallHit) -> RecalledMemory:
    """A recalled memory as a tool result (and `python -m agent chat --json`) shows it."""
    kind = hit.record.get("event_type") or hit.record.get("category")
    return RecalledMemory(
        id=hit.id,
        type=hit.memory_type.value,
        kind=str(getattr(kind, "value", kind)) if kind else None,
        text=hit.text,
        score=round(float(hit.score), 4),
        band=hit.band,
        parts={
            k: round(float(v), 4)
            for k, v in hit.parts.model_dump(mode="json").items()
            if isinstance(v, int | float)
        },
    )


def _out(model: BaseModel) -> dict[str, Any]:
    """A result as the model or the client receives it (no empty fields)."""
    return model.model_dump(mode="json", exclude_none=True)


class MemoryToolkit:
    """The four tools, for the chat's registry and the MCP server (which registers the same
    functions from that registry): the user and session from the `ToolContext`."""

    name = "memory"

    def __init__(
        self,
        coordinator: AgentMemory,
        writer: WritePolicy,
        *,
        grounding: Callable[[str, list[str]], Grounding] | None = None,
        via: str = "remember_information tool",
    ) -> None:
        """`grounding(claim, texts)`: whether what the user said supports what a model asks to
        remember (checked when a call carries the user's words, i.e. in chat); `via`: the
        context a remembered memory keeps (where it came from)."""
        self.coordinator = coordinator
        self._writer = writer
        self._grounding = grounding
        self._via = via

    def tools(self) -> list[Callable[..., Any]]:
        return [
            self.remember_information,
            self.recall_information,
            self.get_memory_stats,
            self.forget_memory,
        ]

    def remember_information(
        self,
        ctx: ToolContext,
        content: Content,
        memory_type: RememberAs = "episodic",
        kind: KindArg = None,
        tags: Tags = None,
    ) -> dict[str, Any]:
        """Store something about the user in their long-term memory, when the user asks you
        to remember it. An exact or near duplicate of an active memory is not stored again; a
        new value of the same goal or preference (e.g. a new weight goal) replaces the old one
        in recall."""
        note = None
        if memory_type == MemoryType.SEMANTIC.value:
            note = (
                "Semantic memory is knowledge shared by all users and is not writable here; "
                "this text was handled as the user's own episodic memory (kind 'fact' unless "
                "given)."
            )
        if self._grounding is not None and ctx.grounding_texts is not None:
            verdict = self._grounding(content, ctx.grounding_texts)
            if not verdict.supported:
                self.coordinator.count_event("extraction_ungrounded")
                reason = (
                    f"the user did not say this, so it is not remembered ({verdict.reason}); "
                    "store only what the user told you"
                )
                return _out(RememberResult(stored=False, reason=reason, note=note))
        cand = candidate_for(content, kind, tags)
        res = self._writer.write(ctx.user_id, ctx.session_id, cand, context=self._via)
        if res.stored is None:
            return _out(
                RememberResult(
                    stored=False,
                    reason=res.reason,
                    already_remembered_as=res.duplicate_of,
                    note=note,
                )
            )
        ctx.stored.append(res.stored)
        return _out(
            RememberResult(
                stored=True,
                id=res.stored.id,
                kind=res.stored.event_type,
                tags=res.stored.tags,
                replaced=res.stored.superseded_id,
                note=note,
            )
        )

    def recall_information(
        self, ctx: ToolContext, query: Query, limit: Limit = 5, memory_type: RecallType = None
    ) -> dict[str, Any]:
        """Search long-term memory with the app's hybrid recall: the user's own memories
        (episodic) and general knowledge (semantic). Each hit has its id, type, kind, text,
        final score, relevance band (high/moderate/low) and the score parts."""
        # The chat's own hybrid recall (vector + BM25 fusion, same threshold), per type.
        types = [memory_type] if memory_type else ["episodic", "semantic"]
        hits = [
            recalled(hit)
            for mt in types
            for hit in self.coordinator.search(ctx.user_id, query, MemoryType(mt), k=limit)
        ]
        return _out(RecallResult(query=query, count=len(hits), memories=hits))

    def get_memory_stats(self, ctx: ToolContext) -> dict[str, Any]:
        """Counts of what is remembered about the user, per memory type."""
        stats: dict[str, Any] = to_jsonable_python(
            self.coordinator.get_memory_stats(user_id=ctx.user_id)
        )
        stats.pop("users", None)  # how many other people use this store is not theirs to know
        stats.pop("session_id", None)
        return stats

    def forget_memory(
        self,
        ctx: ToolContext,
        memory_id: MemoryId,
        memory_type: ForgetType = "episodic",
        action: ForgetAction = "delete",
    ) -> dict[str, Any]:
        """Delete one of the user's memories, when the user asks to forget it; or pause it
        (kept, not used) when they ask to set it aside for now, and resume it later. Find its
        id with recall_information first."""
        memory_id = memory_id.strip()
        if not memory_id:
            raise ToolError("memory_id is empty: call recall_information to find the id.")
        if action != "delete":
            if memory_type != MemoryType.EPISODIC.value:
                raise ToolError("Only episodic memories can be paused or resumed.")
            paused = action == "pause"
            self.coordinator.update_memory(
                ctx.user_id, MemoryType.EPISODIC, memory_id, paused=paused
            )
            return _out(ForgetResult(memory_type=memory_type, id=memory_id, paused=paused))
        self.coordinator.delete_memory(ctx.user_id, MemoryType(memory_type), memory_id)
        return _out(ForgetResult(forgotten=memory_id, memory_type=memory_type))
