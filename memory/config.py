"""Settings of the memory layer (Redis, embeddings, recall, maintenance), read once from the
environment and `.env` at the edge and passed down through constructors; the agent's are in
`agent/config.py`, sign-in's in `ui/config.py`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from memory import defaults

PROJECT_ROOT = Path(__file__).resolve().parent.parent

#: A share, weight or probability (0 to 1), and a count or length that must be positive.
Share = Annotated[float, Field(ge=0, le=1)]
Positive = Annotated[int, Field(gt=0)]


class Settings(BaseSettings):
    """Every setting of the project; each one is also listed in `.env.example`."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    # --- Redis ---------------------------------------------------------------------------
    redis_url: str | None = Field(
        default=None,
        description="Connect to this Redis Stack (7.4 or newer, or Redis 8: FLOAT16 vectors and "
        "per-field expiry need it; an older server is refused at connect) instead of starting "
        "the embedded one. Unset: start or reuse the embedded server.",
    )
    redis_data_dir: Path = Field(
        default=PROJECT_ROOT / "data" / "redis",
        description="Where the embedded Redis keeps its append-only file, pidfile and log.",
    )
    redis_port: int = Field(default=6379, description="Port of the embedded Redis (127.0.0.1).")
    redis_timeout_s: float = Field(
        default=5.0,
        gt=0,
        description="Seconds one Redis command may take before it fails. Interactive calls are "
        "short; bulk work (import, purge) is written in chunks that each fit well within it.",
    )
    import_chunk_records: int = Field(
        default=1000,
        ge=1,
        description="Records an import writes per transaction (each commits in well under a "
        "second); an import cut off between two is reported by the next command.",
    )
    memory_namespace: str = Field(
        default="cm",
        pattern=r"^[A-Za-z0-9_]{1,32}$",
        description="Prefix of every Redis key and index name of this project.",
    )

    # --- Embeddings ----------------------------------------------------------------------
    embedding_provider: Literal["onnx", "ollama"] = Field(
        default="onnx", description="onnx: local all-MiniLM-L6-v2; ollama: OLLAMA_EMBED_MODEL."
    )
    ollama_embed_model: str = Field(
        default="nomic-embed-text",
        description="Ollama embedding model used when EMBEDDING_PROVIDER=ollama (e.g. "
        "nomic-embed-text, mxbai-embed-large).",
    )
    embedding_cache_ttl_s: int = Field(
        default=7 * 24 * 3600,
        ge=0,
        description="Seconds computed query embeddings stay cached in Redis (0 = no expiry).",
    )

    # --- LLM -----------------------------------------------------------------------------
    ollama_host: str = Field(
        default="http://127.0.0.1:11434",
        description="Ollama's address: the Ollama embedder's (EMBEDDING_PROVIDER=ollama) and, "
        "composed at the edges, the chat model's (agent/config.py holds the model).",
    )
    short_term_recall_tokens: Positive = Field(
        default=6_000,
        description="Most recent conversation recall returns, in estimated tokens; the agent "
        "then fits it, with everything else, into the model's window (AGENT_NUM_CTX).",
    )
    memory_prompt_tokens: Positive = Field(
        default=1_500,
        description="Token budget of the recalled-memory block in prompts (less on a small "
        "window: at most half of what the conversation has).",
    )
    recall_prompt_k: int = Field(
        default=10,
        ge=1,
        le=50,
        description="Episodic memories recall offers a prompt (best first, above "
        "RECALL_MIN_SCORE); the memory block keeps those that fit MEMORY_PROMPT_TOKENS.",
    )

    # --- Memory behaviour ----------------------------------------------------------------
    dedup_threshold: float = Field(
        default=0.95,
        ge=0.5,
        le=1.0,
        description="Cosine similarity at or above which a new memory of the same event type "
        "is a near-duplicate and not stored (conservative: different facts stay apart); "
        "every writer (memory.writing).",
    )
    pii_policy: Literal["keep", "mask", "refuse"] = Field(
        default="keep",
        description="Emails and phone numbers in what is stored: keep them, mask them as "
        "[email address]/[phone number], or refuse the write. Card and bank account numbers, "
        "government ids and passwords/API keys are always masked (memory/writing/secrets.py).",
    )
    vector_algorithm: Literal["flat", "hnsw"] = Field(
        default="flat",
        description="Vector index algorithm of the long-term memory indexes: flat (exact) or "
        "hnsw (approximate).",
    )
    short_term_max_messages: Positive = Field(
        default=200, description="Messages kept per session in short-term memory."
    )
    short_term_ttl_s: Positive = Field(
        default=30 * 24 * 3600,
        description="Seconds an idle session's short-term memory (and its answers' details) lives.",
    )
    procedural_recommend_threshold: Share = Field(
        default=0.7,
        description='Confidence at or above which a learned tool sequence is "recommended" to '
        "the agent.",
    )
    recall_min_score: Share = Field(
        default=defaults.MIN_SCORE,
        description="Hits whose final score (probability of relevance) is below this are "
        "dropped (the default comes from the fit's reliability table).",
    )
    recall_recency_weight: Share = Field(
        default=defaults.W_RECENCY,
        description="Log-odds recall adds for a fresh memory (a nudge, not fitted).",
    )
    recall_importance_weight: Share = Field(
        default=defaults.W_IMPORTANCE,
        description="Log-odds recall adds per unit of importance above 0.5 (pinned counts as "
        "1; a nudge, not fitted).",
    )
    recency_half_life_days: float = Field(
        default=30.0, gt=0, description="Days after which a memory's recency part halves."
    )
    metrics_max_entries: Positive = Field(
        default=50_000,
        description="Latency samples kept in Redis for the Stats page (older ones are trimmed).",
    )
    # --- Maintenance (docs/maintenance.md) ------------------------------------------------
    maintenance_interval_s: int = Field(
        default=6 * 3600,
        ge=0,
        description="Seconds between background maintenance runs in the app; 0 = never.",
    )
    consolidation_min_similarity: float = Field(
        default=0.85,
        ge=0.5,
        le=1,
        description="Cosine at which two same-kind memories may merge (a lexical check too).",
    )
    consolidation_proposal_similarity: float = Field(
        default=0.70,
        ge=0.5,
        le=1,
        description="With a model: cosine at which it is asked whether two memories are one "
        "fact (a lexical guard too; examples in memory/maintenance/similarity.py).",
    )
    retention_days: dict[str, int] = Field(
        default_factory=lambda: {"interaction": 210},
        description='Days after which memories of a kind expire, e.g. {"interaction": 210}; '
        "kinds not listed never expire.",
    )
    retention_keep_importance: Share = Field(
        default=0.7, description="Memories at least this important never expire."
    )
    decay_half_life_days: float = Field(
        default=90.0, gt=0, description="Importance of never-recalled memories halves this often."
    )
    decay_floor: Share = Field(
        default=0.1,
        description="Decay stops here (an important memory stops at 0.7, so decay never makes "
        "it expire).",
    )
    recall_boost: Share = Field(
        default=0.1, description="Each recall closes this share of the gap to 1."
    )
    summary_idle_s: int = Field(
        default=6 * 3600,
        ge=0,
        description="Seconds without a message after which a session's not-yet-summarised "
        "turns are summarised by the maintenance run; 0 = only when trimming drops turns.",
    )
    summary_min_messages: int = Field(
        default=6,
        ge=2,
        description="Messages trimmed out of the prompt, not yet summarised, that make a summary.",
    )
    knowledge_file: Path = Field(
        default=PROJECT_ROOT / "memory" / "data" / "knowledge.json",
        description="JSON file of built-in facts loaded into semantic memory (shared by every "
        "user).",
    )
