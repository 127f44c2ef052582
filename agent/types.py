"""The agent's public data types: what the UI and the CLI receive from `ChatAgent` (the turn's
events are a discriminated union on `kind`, `TurnEvent`; docs/architecture.md, "The agent's
Python API")."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from memory.models import MemoryContext, RecallHit
from memory.writing import StoredMemory


class LLMStatus(BaseModel):
    """Reachability of the Ollama server and availability of the chosen model."""

    reachable: bool = Field(description="The Ollama server answered")
    host: str = Field(description="OLLAMA_HOST as used by the client")
    model: str = Field(description="The model the agent will chat with")
    model_available: bool = Field(description="That model is pulled on the server")
    models: list[str] = Field(default_factory=list, description="Models pulled on the server")
    message: str = Field(default="", description="What is wrong and what to run; '' when OK")
    checked_at: float = Field(default=0.0, description="time.time() of the check")

    @property
    def ok(self) -> bool:
        return self.reachable and self.model_available


#: The chat template's own tokens around the messages (BOS, the open assistant turn).
TEMPLATE_TOKENS = 16


class BudgetSplit(BaseModel):
    """Where the window of one request went, in estimated tokens (shown in the details)."""

    num_ctx: int = Field(description="The window sent as options.num_ctx")
    rules: int = Field(default=0, description="System rules and notes, without the memories")
    tools: int = Field(default=0, description="Tool schemas as the template renders them")
    memories: int = Field(default=0, description="The fenced memory block, its profile apart")
    profile: int = Field(default=0, description="The user profile's section of the block")
    history: int = Field(default=0, description="Earlier messages of the conversation")
    message: int = Field(default=0, description="The user's message")
    tool_results: int = Field(default=0, description="This turn's tool calls and results")
    reply: int = Field(default=0, description="Kept free for the answer (num_predict)")
    history_dropped: int = Field(default=0, description="Older messages left out to fit")
    memories_omitted: int = Field(default=0, description="Recalled memories left out to fit")
    tools_left_out: int = Field(
        default=0, description="Tools not offered, so that memories keep room in a small window"
    )
    scale: float = Field(
        default=1.0, description="Planned this much larger than estimated (learned per model)"
    )
    read_cap: int | None = Field(
        default=None,
        description="Prompt tokens a slow model reads in AGENT_REPLY_SECONDS, when that "
        "shortened the prompt (None: it did not)",
    )

    @property
    def prompt(self) -> int:
        return (
            self.rules
            + self.tools
            + self.memories
            + self.profile
            + self.history
            + self.message
            + self.tool_results
            + TEMPLATE_TOKENS
        )


class WindowReport(BaseModel):
    """What the agent planned for one turn's model requests, and what the server reported."""

    split: BudgetSplit | None = Field(default=None, description="The last request's budget")
    rounds: int = 0
    prompt_eval_count: int | None = Field(
        default=None,
        description="Prompt tokens the server counted (last request); None if it did not say",
    )
    done_reason: str | None = None
    notes: list[str] = Field(
        default_factory=list,
        description="What the model may not have seen, or why the answer stopped",
    )


class ToolCallRecord(BaseModel):
    """One tool call: what the model asked for and what it got back."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    error: str | None = Field(default=None, description="Set when the tool failed")
    ms: float = 0.0
    empty: bool = Field(default=False, description="The tool ran but found nothing")


class TurnResult(BaseModel):
    """Everything about one turn, for display and for scripting."""

    turn_id: str = ""
    reply: str
    mode: Literal["llm", "memory-only"]
    recalled: MemoryContext
    memory_block: str = Field(
        default="", description="Exactly what was injected into the system prompt"
    )
    memory_block_tokens: int = Field(default=0, description="Estimated tokens of the block")
    tools: list[ToolCallRecord] = Field(default_factory=list)
    stored: list[StoredMemory] = Field(default_factory=list)
    timings_ms: dict[str, float] = Field(default_factory=dict)
    model: str | None = None
    extraction: str = Field(
        default="skipped",
        description='"done", "pending", "failed: ...", "skipped (offline)", ...',
    )
    success_score: float | None = Field(
        default=None, description="Score recorded for this turn's tool sequence"
    )
    summary: str = Field(
        default="not needed",
        description='Session summary after trimming: "queued", "waiting for the model", ...',
    )
    error: str | None = None
    saved: bool = Field(
        default=True, description="False when the exchange could not be stored (say so)"
    )
    masked: list[str] = Field(
        default_factory=list,
        description="What was stored as a label instead of as typed ('card number', ...)",
    )
    thinking: str = Field(
        default="", description="A thinking model's thoughts: shown folded, never stored"
    )
    window: WindowReport = Field(
        default_factory=WindowReport, description="The context budget and what the model saw"
    )
    unknown_about_user: bool = Field(
        default=False,
        description="The message asked about the user and no memory about them cleared the "
        "moderate band: the prompt said so (agent.knowing)",
    )
    held_back: list[RecallHit] = Field(
        default_factory=list,
        description="Recalled but kept out of the prompt as too weak (agent.knowing)",
    )
    private: Literal["", "incognito", "re-answer"] = Field(
        default="",
        description="A turn that stored nothing: an incognito chat or a re-answer without "
        "some memories (agent.private)",
    )
    stopped: bool = Field(
        default=False,
        description="The user stopped the answer while it streamed: the partial answer was "
        "kept, nothing was learned from the turn (ui.stopping)",
    )
    limits: list[str] = Field(
        default_factory=list,
        description="Each request of the turn cut by a token cap or a time limit: what was "
        "cut and what to do (shown in the status box)",
    )
    tokens_per_s: float | None = Field(
        default=None, description="How fast the model writes, from its replies (agent.speed)"
    )

    # ---- kept with the assistant message (ChatAgent saves it, the chat page reads it) -----
    def for_storage(self) -> dict[str, Any]:
        """The details as kept beside the answer: never the thoughts, and compact: recalled
        hits keep only the record fields the details show, the recent messages in context
        only their role and time (the session list holds their text), long tool results are
        cut."""
        data = self.model_dump(mode="json", exclude={"thinking"})
        rec = data["recalled"]
        hits = [*rec["episodic"], *rec["semantic"], *data["held_back"]]
        if rec.get("session_summary"):
            hits.append(rec["session_summary"])
        for hit in hits:
            hit["record"] = {k: v for k, v in hit["record"].items() if k in KEPT_RECORD_FIELDS}
        rec["short_term"] = [{**m, "content": "", "metadata": {}} for m in rec["short_term"]]
        for call in data["tools"]:
            raw = json.dumps(call["result"], ensure_ascii=False)
            if len(raw) > STORED_RESULT_CHARS:
                call["result"] = (
                    raw[:STORED_RESULT_CHARS] + f"… (cut: {len(raw):,} characters in all)"
                )
        return data

    @classmethod
    def from_storage(cls, parts: dict[str, dict[str, Any]]) -> TurnResult | None:
        """Back from what `for_storage` and a later "extraction" part kept (None when the
        details are missing or no longer valid); the thoughts were never kept."""
        data = parts.get("")
        if data is None:
            return None
        result = cls.model_validate(data)
        later = parts.get("extraction")
        if later is not None:
            result.apply_extraction(ExtractionOutcome.model_validate(later))
        return result

    def apply_extraction(self, outcome: ExtractionOutcome) -> bool:
        """Show a finished background extraction; False while it is still pending."""
        if outcome.status == "pending":
            return False
        self.extraction = outcome.status + (f": {outcome.detail}" if outcome.detail else "")
        if outcome.limit and outcome.limit not in self.limits:
            self.limits.append(outcome.limit)
        known = {m.id for m in self.stored}
        self.stored = [*self.stored, *(m for m in outcome.stored if m.id not in known)]
        for m in outcome.stored:
            self.masked += [k for k in m.masked if k not in self.masked]
        return True


#: The fields of a recalled memory's record kept in stored details (what the details show).
KEPT_RECORD_FIELDS = frozenset(
    {"event_type", "category", "timestamp", "tags", "pinned", "added_by"}
)
#: A tool result longer than this (JSON characters) is cut in the stored details.
STORED_RESULT_CHARS = 4_000


class ExtractionOutcome(BaseModel):
    """One background (LLM) extraction job."""

    turn_id: str
    user_id: str
    session_id: str
    status: Literal["pending", "done", "failed", "skipped"]
    detail: str = ""
    stored: list[StoredMemory] = Field(default_factory=list)
    duplicates: int = 0
    ungrounded: list[str] = Field(
        default_factory=list,
        description="Memories the model extracted that the message does not support (dropped)",
    )
    limit: str = Field(
        default="", description="What was cut (a token cap, a time limit) and what to do"
    )


# ---- the events of a turn: one class per kind, `TurnEvent` their discriminated union -------
class _Event(BaseModel):
    text: str = Field(default="", description="What a person reads about this event")


class StatusEvent(_Event):
    """Progress: the model's status, a correction learned, a duplicate, the answer's mode."""

    kind: Literal["status"] = "status"
    mode: Literal["llm", "memory-only"] | None = None


class RecallEvent(_Event):
    kind: Literal["recall"] = "recall"
    context: MemoryContext


class PromptEvent(_Event):
    """The memory block of the request about to go to the model (each round: this turn's
    tool results may squeeze it). A stopped answer's details are built from it."""

    kind: Literal["prompt"] = "prompt"
    memory_block: str
    memory_block_tokens: int = 0


class ToolStartEvent(_Event):
    kind: Literal["tool_start"] = "tool_start"
    name: str
    arguments: Any = Field(description="As the model sent them (may be malformed)")


class ToolEndEvent(_Event):
    kind: Literal["tool_end"] = "tool_end"
    record: ToolCallRecord


class ThinkingEvent(_Event):
    """A piece of a thinking model's thoughts (never part of the reply, never stored)."""

    kind: Literal["thinking"] = "thinking"


class TokenEvent(_Event):
    """A piece of the reply, as shown."""

    kind: Literal["token"] = "token"


class StoredEvent(_Event):
    kind: Literal["stored"] = "stored"
    memory: StoredMemory


class DoneEvent(_Event):
    """The last event of every turn."""

    kind: Literal["done"] = "done"
    result: TurnResult


TurnEvent = Annotated[
    StatusEvent
    | RecallEvent
    | PromptEvent
    | ToolStartEvent
    | ToolEndEvent
    | ThinkingEvent
    | TokenEvent
    | StoredEvent
    | DoneEvent,
    Field(discriminator="kind"),
]
