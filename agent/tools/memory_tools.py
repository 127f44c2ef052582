"""Memory tools the model can call (seed 001): remember, recall, stats, forget.

Every call is scoped to the user of the turn (the `ToolContext`), never to an id the model
chooses. What the model stores goes through the same duplicate/supersession checks as
extracted memories, and only into the user's own episodic memory: semantic memory is shared by
all users, so text from a chat is never written there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field

from agent.errors import ToolError
from agent.tools.registry import ToolContext
from memory.models import MemoryType
from memory.service import AgentMemory
from memory.writing import Grounding, WritePolicy, candidate_for

RememberType = Literal[
    "preference", "goal", "health_event", "milestone", "correction", "feedback", "fact", "knowledge"
]


class MemoryToolkit:
    name = "memory"

    def __init__(
        self,
        coordinator: AgentMemory,
        writer: WritePolicy,
        *,
        grounding: Callable[[str, list[str]], Grounding] | None = None,
    ) -> None:
        """`grounding(claim, texts)`: whether what the user said supports what the model
        asks to remember (only when the call's context carries the user's words)."""
        self._coord = coordinator
        self._writer = writer
        self._grounding = grounding

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
        content: Annotated[str, Field(min_length=3, max_length=2000)],
        memory_type: RememberType | None = None,
    ) -> dict[str, Any]:
        """Store something about the user in long-term memory, when the user asks you to
        remember it.

        Args:
            content: the fact, preference or goal, as one self-contained sentence
            memory_type: preference, goal, health_event, milestone, correction, feedback or
                fact; guessed from the text when omitted
        """
        cand = candidate_for(content, memory_type)
        et = cand.event_type
        if self._grounding is not None and ctx.grounding_texts is not None:
            verdict = self._grounding(content, ctx.grounding_texts)
            if not verdict.supported:
                self._coord.count_event("extraction_ungrounded")
                return {
                    "stored": False,
                    "reason": "the user did not say this, so it is not remembered "
                    f"({verdict.reason}); store only what the user told you",
                }
        res = self._writer.write(
            ctx.user_id, ctx.session_id, cand, context="remember_information tool"
        )
        if res.stored is None:
            return {
                "stored": False,
                "reason": res.reason,
                "already_remembered_as": res.duplicate_of,
            }
        ctx.stored.append(res.stored)
        out: dict[str, Any] = {"stored": True, "id": res.stored.id, "event_type": et.value}
        if res.stored.superseded_id:
            out["replaced"] = res.stored.superseded_id
        return out

    def recall_information(
        self,
        ctx: ToolContext,
        query: Annotated[str, Field(min_length=1, max_length=1000)],
        limit: Annotated[int, Field(ge=1, le=20)] = 5,
        memory_type: Literal["episodic", "semantic"] | None = None,
    ) -> dict[str, Any]:
        """Search long-term memory: the user's own memories (episodic) and general
        knowledge (semantic).

        Args:
            query: what to look for, in a few words
            limit: maximum number of memories per type
            memory_type: episodic or semantic; both when omitted
        """
        types = [memory_type] if memory_type else ["episodic", "semantic"]
        results: list[dict[str, Any]] = []
        for mt in types:
            for hit in self._coord.search(ctx.user_id, query, MemoryType(mt), k=limit):
                et = hit.record.get("event_type")
                results.append(
                    {
                        "id": hit.id,
                        "memory_type": mt,
                        "event_type": str(et) if et else None,
                        "text": hit.text,
                        "score": round(float(hit.score), 3),
                        "relevance": hit.band,
                    }
                )
        return {"query": query, "count": len(results), "memories": results}

    def get_memory_stats(self, ctx: ToolContext) -> dict[str, Any]:
        """Counts of what is remembered about the user, per memory type."""
        return dict(self._coord.get_memory_stats(user_id=ctx.user_id))

    def forget_memory(
        self,
        ctx: ToolContext,
        memory_id: Annotated[str, Field(min_length=1, max_length=200)],
        memory_type: Literal["episodic", "procedural"] = "episodic",
    ) -> dict[str, Any]:
        """Delete one of the user's memories, when the user asks you to forget it.
        Find its id with recall_information first.

        Args:
            memory_id: the id of the memory, as returned by recall_information
            memory_type: episodic (default) or procedural
        """
        if not memory_id.strip():
            raise ToolError("memory_id is empty: call recall_information to find the id.")
        self._coord.delete_memory(ctx.user_id, MemoryType(memory_type), memory_id.strip())
        return {"forgotten": memory_id.strip(), "memory_type": memory_type}
