"""Settings for the whole project, read once from the environment and `.env`.

Built at the edge (the CLI entry, the app's cached resource factory) and passed down through
constructors; nothing below reads the environment itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from memory import scoring

PROJECT_ROOT = Path(__file__).resolve().parent.parent


class Settings(BaseSettings):
    """Every setting of the project; each one is also listed in `.env.example`."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    # --- Redis ---------------------------------------------------------------------------
    redis_url: str | None = Field(
        default=None,
        description="Connect to this Redis Stack instead of starting the embedded one.",
    )
    redis_data_dir: Path = Field(
        default=PROJECT_ROOT / "data" / "redis",
        description="Where the embedded Redis keeps its AOF/RDB files.",
    )
    redis_port: int = Field(default=6379, description="Port of the embedded Redis (127.0.0.1).")
    memory_namespace: str = Field(
        default="cm",
        pattern=r"^[A-Za-z0-9_]{1,32}$",
        description="Prefix of every Redis key and index name of this project.",
    )

    # --- Embeddings ----------------------------------------------------------------------
    embedding_provider: Literal["onnx", "ollama"] = Field(
        default="onnx", description="onnx: local all-MiniLM-L6-v2; ollama: OLLAMA_EMBED_MODEL."
    )
    ollama_embed_model: str = Field(default="nomic-embed-text")
    embedding_cache_ttl_s: int = Field(default=7 * 24 * 3600, ge=0)

    # --- LLM -----------------------------------------------------------------------------
    ollama_host: str = Field(default="http://127.0.0.1:11434")
    ollama_model: str = Field(default="qwen2.5:7b")
    ollama_timeout_s: float = Field(default=120.0, gt=0)
    context_window_tokens: int = Field(default=24_000, gt=0)
    short_term_budget_ratio: float = Field(default=0.8, gt=0, le=1)
    memory_prompt_tokens: int = Field(
        default=1_500, gt=0, description="Token budget of the recalled-memory block in prompts."
    )

    # --- Memory behaviour ----------------------------------------------------------------
    vector_algorithm: Literal["flat", "hnsw"] = Field(default="flat")
    short_term_max_messages: int = Field(default=200, gt=0)
    short_term_ttl_s: int = Field(default=30 * 24 * 3600, gt=0)
    procedural_recommend_threshold: float = Field(default=0.7, ge=0, le=1)
    recall_min_score: float = Field(
        default=scoring.MIN_SCORE,
        ge=0,
        le=1,
        description="Hits whose final score (probability of relevance) is below this are dropped.",
    )
    recall_recency_weight: float = Field(
        default=scoring.W_RECENCY, ge=0, le=1, description="Log-odds added for a fresh memory."
    )
    recall_importance_weight: float = Field(
        default=scoring.W_IMPORTANCE,
        ge=0,
        le=1,
        description="Log-odds per unit of importance above 0.5 (pinned counts as 1).",
    )
    recency_half_life_days: float = Field(default=30.0, gt=0)
    metrics_max_entries: int = Field(default=50_000, gt=0)
    knowledge_file: Path = Field(default=PROJECT_ROOT / "memory" / "data" / "knowledge.json")
