"""The four memory tools, defined once: remember, recall, stats, forget. `MemoryOps` holds the
operations (validated arguments in, one result model out); `MemoryToolkit` registers them for
the chat, agent/mcp_server for MCP. Every call is scoped to one user, never to an id the model
chooses; what is stored goes through the write policy into the user's own episodic memory only
(semantic memory is shared) and, in chat, must be grounded in what the user said."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from agent.errors import ToolError
from agent.tools.registry import ToolContext
from memory.models import MemoryType
from memory.service import AgentMemory
from memory.writing import Grounding, WritePolicy, candidate_for

# ---- the arguments, as both registrations declare them ------------------------------------
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

# ---- what each tool is for (the description both registrations show) ----------------------
REMEMBER_DOC = (
    "Store something about the user in their long-term memory, when the user asks you to "
    "remember it. An exact or near duplicate of an active memory is not stored again; a new "
    "value of the same goal or preference (e.g. a new weight goal) replaces the old one in "
    "recall."
)
RECALL_DOC = (
    "Search long-term memory with the app's hybrid recall: the user's own memories (episodic) "
    "and general knowledge (semantic). Each hit has its id, type, kind, text, final score, "
    "relevance band (high/moderate/low) and the score parts."
)
STATS_DOC = "Counts of what is remembered about the user, per memory type."
FORGET_DOC = (
    "Delete one of the user's memories, when the user asks to forget it; or pause it (kept, "
    "not used) when they ask to set it aside for now, and resume it later. Find its id with "
    "recall_information first."
)


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


def _out(model: BaseModel) -> dict[str, Any]:
    """A result as the model or the client receives it (no empty fields)."""
    return model.model_dump(mode="json", exclude_none=True)


class MemoryOps:
    """The operations behind the tools, for one user per call."""

    def __init__(
        self,
        coordinator: AgentMemory,
        writer: WritePolicy,
        *,
        grounding: Callable[[str, list[str]], Grounding] | None = None,
    ) -> None:
        """`grounding(claim, texts)`: whether what the user said supports what a model asks to
        remember (checked when a call carries the user's words, i.e. in chat)."""
        self._coord = coordinator
        self._writer = writer
        self._grounding = grounding

    def remember(
        self,
        user_id: str,
        session_id: str,
        content: str,
        memory_type: str = "episodic",
        kind: str | None = None,
        tags: list[str] | None = None,
        *,
        grounding_texts: list[str] | None = None,
        context: str,
    ) -> tuple[RememberResult, Any]:
        """(the result, the StoredMemory or None)."""
        note = None
        if memory_type == MemoryType.SEMANTIC.value:
            note = (
                "Semantic memory is knowledge shared by all users and is not writable here; "
                "this text was handled as the user's own episodic memory (kind 'fact' unless "
                "given)."
            )
        if self._grounding is not None and grounding_texts is not None:
            verdict = self._grounding(content, grounding_texts)
            if not verdict.supported:
                self._coord.count_event("extraction_ungrounded")
                reason = (
                    f"the user did not say this, so it is not remembered ({verdict.reason}); "
                    "store only what the user told you"
                )
                return RememberResult(stored=False, reason=reason, note=note), None
        cand = candidate_for(content, kind, tags)
        res = self._writer.write(user_id, session_id, cand, context=context)
        if res.stored is None:
            return (
                RememberResult(
                    stored=False,
                    reason=res.reason,
                    already_remembered_as=res.duplicate_of,
                    note=note,
                ),
                None,
            )
        return (
            RememberResult(
                stored=True,
                id=res.stored.id,
                kind=res.stored.event_type,
                tags=res.stored.tags,
                replaced=res.stored.superseded_id,
                note=note,
            ),
            res.stored,
        )

    def recall(
        self, user_id: str, query: str, limit: int = 5, memory_type: str | None = None
    ) -> RecallResult:
        # The chat's own hybrid recall (vector + BM25 fusion, same threshold), per type.
        types = [memory_type] if memory_type else ["episodic", "semantic"]
        hits: list[RecalledMemory] = []
        for mt in types:
            for hit in self._coord.search(user_id, query, MemoryType(mt), k=limit):
                kind = hit.record.get("event_type") or hit.record.get("category")
                hits.append(
                    RecalledMemory(
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
                )
        return RecallResult(query=query, count=len(hits), memories=hits)

    def stats(self, user_id: str) -> dict[str, Any]:
        stats: dict[str, Any] = dict(self._coord.get_memory_stats(user_id=user_id))
        stats.pop("users", None)  # how many other people use this store is not theirs to know
        stats.pop("session_id", None)
        return stats

    def forget(
        self, user_id: str, memory_id: str, memory_type: str = "episodic", action: str = "delete"
    ) -> ForgetResult:
        memory_id = memory_id.strip()
        if not memory_id:
            raise ToolError("memory_id is empty: call recall_information to find the id.")
        if action != "delete":
            if memory_type != MemoryType.EPISODIC.value:
                raise ToolError("Only episodic memories can be paused or resumed.")
            self._coord.update_memory(
                user_id, MemoryType.EPISODIC, memory_id, paused=action == "pause"
            )
            return ForgetResult(memory_type=memory_type, id=memory_id, paused=action == "pause")
        self._coord.delete_memory(user_id, MemoryType(memory_type), memory_id)
        return ForgetResult(forgotten=memory_id, memory_type=memory_type)


class MemoryToolkit:
    """The tools in the chat's registry: the turn's user and session from the `ToolContext`."""

    name = "memory"

    def __init__(
        self,
        coordinator: AgentMemory,
        writer: WritePolicy,
        *,
        grounding: Callable[[str, list[str]], Grounding] | None = None,
    ) -> None:
        self.ops = MemoryOps(coordinator, writer, grounding=grounding)

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
        result, stored = self.ops.remember(
            ctx.user_id,
            ctx.session_id,
            content,
            memory_type,
            kind,
            tags,
            grounding_texts=ctx.grounding_texts,
            context="remember_information tool",
        )
        if stored is not None:
            ctx.stored.append(stored)
        return _out(result)

    def recall_information(
        self, ctx: ToolContext, query: Query, limit: Limit = 5, memory_type: RecallType = None
    ) -> dict[str, Any]:
        return _out(self.ops.recall(ctx.user_id, query, limit, memory_type))

    def get_memory_stats(self, ctx: ToolContext) -> dict[str, Any]:
        return self.ops.stats(ctx.user_id)

    def forget_memory(
        self,
        ctx: ToolContext,
        memory_id: MemoryId,
        memory_type: ForgetType = "episodic",
        action: ForgetAction = "delete",
    ) -> dict[str, Any]:
        return _out(self.ops.forget(ctx.user_id, memory_id, memory_type, action))


for _method, _doc in (
    (MemoryToolkit.remember_information, REMEMBER_DOC),
    (MemoryToolkit.recall_information, RECALL_DOC),
    (MemoryToolkit.get_memory_stats, STATS_DOC),
    (MemoryToolkit.forget_memory, FORGET_DOC),
):
    _method.__doc__ = _doc  # one description per tool, shared with the MCP server
