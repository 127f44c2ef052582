"""The agent's public data types: what the UI and the CLI receive from `ChatAgent`.

LLMStatus         is the model server up, is the model pulled, what to run if not
ToolCallRecord    one tool call made during a turn
StoredMemory      one memory written because of a turn (trigger, LLM extraction, ...)
TurnEvent         streamed while a turn runs (status, recall, tool_*, token, stored, done)
TurnResult        the whole turn, carried by the final `done` event
ExtractionOutcome one background extraction job, as listed by `extraction_log()`
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from memory.models import MemoryContext

__all__ = [
    "ExtractionOutcome",
    "LLMStatus",
    "StoredMemory",
    "ToolCallRecord",
    "TurnEvent",
    "TurnResult",
]


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


class ToolCallRecord(BaseModel):
    """One tool call: what the model asked for and what it got back."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    error: str | None = Field(default=None, description="Set when the tool failed")
    ms: float = 0.0
    empty: bool = Field(default=False, description="The tool ran but found nothing")


class StoredMemory(BaseModel):
    """A memory written as a consequence of a turn."""

    id: str
    memory_type: str = Field(description="episodic | semantic | procedural | short_term")
    text: str
    event_type: str | None = None
    how: Literal["trigger", "llm", "interaction", "procedural", "tool"] = Field(
        description="trigger phrase/#tag, LLM extraction, the turn itself, tool sequence, "
        "or the model's remember_information tool"
    )
    superseded_id: str | None = Field(
        default=None, description="Id of the older memory this one replaced for recall"
    )
    tags: list[str] = Field(default_factory=list)


class TurnEvent(BaseModel):
    """Streamed by `ChatAgent.run_turn` as the turn progresses.

    kind      text                       data
    status    human-readable progress    {"stage": ..., "mode": ...}
    recall    summary of what was found  {"context": MemoryContext, "block": str}
    tool_start tool name                 {"name", "arguments"}
    tool_end  tool name                  {"record": ToolCallRecord}
    token     a piece of the reply       {}
    stored    memory text                {"memory": StoredMemory}
    done      the full reply             {"result": TurnResult}
    """

    kind: Literal["status", "recall", "tool_start", "tool_end", "token", "stored", "done"]
    text: str = ""
    data: dict[str, Any] = Field(default_factory=dict)


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


class ExtractionOutcome(BaseModel):
    """One background (LLM) extraction job."""

    turn_id: str
    user_id: str
    session_id: str
    status: Literal["pending", "done", "failed", "skipped"]
    detail: str = ""
    stored: list[StoredMemory] = Field(default_factory=list)
    duplicates: int = 0
    attempts: int = 0
    started_at: float = 0.0
    finished_at: float | None = None
