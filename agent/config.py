"""Settings of the agent and its chat model, prefixed `AGENT_`, except Ollama's own names
(`OLLAMA_MODEL`, `OLLAMA_TIMEOUT_S`; `OLLAMA_HOST` is the memory's, shared with its embedder)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from memory.config import PROJECT_ROOT


class AgentSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="AGENT_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
    )

    ollama_model: str = Field(
        default="qwen2.5:7b",
        validation_alias=AliasChoices("OLLAMA_MODEL", "ollama_model"),
        description="The chat model (pull it with `ollama pull`).",
    )
    ollama_timeout_s: float = Field(
        default=120.0,
        gt=0,
        validation_alias=AliasChoices("OLLAMA_TIMEOUT_S", "ollama_timeout_s"),
        description="Seconds to wait for one Ollama reply before giving up.",
    )

    max_tool_iterations: int = Field(
        default=5, ge=1, le=20, description="Model rounds that may call tools in one turn"
    )
    status_cache_s: float = Field(
        default=3.0, ge=0, description="How long an LLM status check is reused by status()"
    )
    status_timeout_s: float = Field(
        default=2.0, gt=0, description="Timeout of the reachability check (GET /api/tags)"
    )
    temperature: float = Field(
        default=0.2, ge=0, le=2, description="Sampling temperature of answers (extraction uses 0)"
    )
    num_ctx: int = Field(
        default=8192,
        ge=1024,
        le=1_048_576,
        description="The context window every request sends (options.num_ctx), in tokens; "
        "capped at the model's own context length. Prompts are planned to fit it.",
    )
    reply_tokens: int = Field(
        default=768,
        ge=64,
        description="Tokens kept free in the window for the answer (sent as num_predict)",
    )
    reply_seconds: float = Field(
        default=15.0,
        gt=0,
        description="The longest a reply should take, reading the prompt included: a model "
        "measured slower gets fewer reply tokens (AGENT_REPLY_TOKENS stays the most), one that "
        "reads too slowly for its whole prompt gets fewer older messages and weaker memories "
        "(never the profile's health lines or the message), and one never measured is stopped "
        "after this long",
    )
    speed_file: Path | None = Field(
        default=PROJECT_ROOT / "data" / "model-speeds.json",
        description="Where each model's measured speed is kept (reading, writing, overhead), so "
        "a restart does not forget it: slow models' replies fit AGENT_REPLY_SECONDS from the "
        "first one. Empty: measured anew in each process.",
    )
    think: bool = Field(
        default=True,
        description="Let thinking models (qwen3, deepseek-r1, gpt-oss...) think before a chat "
        "answer. JSON calls (extraction, summaries, merges, checks) never think.",
    )
    think_tokens: int = Field(
        default=1024,
        ge=0,
        description="Extra tokens kept free for a thinking model's thoughts (they share the "
        "window and num_predict with the answer)",
    )
    llm_extraction: Literal["auto", "always", "off"] = Field(
        default="auto",
        description="Background LLM extraction: auto = only for messages that talk about the "
        "user (first person); always; off (trigger phrases and #tags still work).",
    )
    store_episodes: bool = Field(
        default=True,
        description="Also store every exchange as an 'interaction' episodic memory (skipped "
        "when the message already became an explicit memory)",
    )
    wellness_seed: int = Field(default=42, description="Seed of the synthetic wellness data")
    wellness_days: int = Field(
        default=180, ge=14, le=3650, description="Days of synthetic wellness history, up to today"
    )
    extraction_log_size: int = Field(
        default=200, gt=0, description="Background extraction outcomes kept in the process"
    )

    @field_validator("speed_file", mode="before")
    @classmethod
    def _empty_is_none(cls, value: object) -> object:
        """AGENT_SPEED_FILE= (empty): keep the speeds in the process only."""
        return None if value == "" else value
