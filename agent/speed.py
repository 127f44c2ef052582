"""How fast a model writes, measured from its own replies, and the reply budget that follows.

Every Ollama reply ends with `eval_count` tokens written in `eval_duration` nanoseconds. The
estimate is kept per model in the process (a fact of this machine and its load, not worth
keeping in Redis). Below `SLOW_TOKENS_PER_S` a reply is capped to what the model writes in
`REPLY_SECONDS`, so a turn stays usable (Gemma 3 270M on this CPU: ~20 tokens/s, and a base
model that never stops ran every turn to 768 tokens, 40-48 s).
"""

from __future__ import annotations

import threading

#: Below this a model is slow: its replies are capped and background work waits for them.
SLOW_TOKENS_PER_S = 30.0
#: The longest a slow model's reply should take.
REPLY_SECONDS = 15.0
#: A reply shorter than this says little about speed (the first token carries set-up time).
MIN_SAMPLE_TOKENS = 8
#: The smallest reply budget a cap leaves.
MIN_REPLY_TOKENS = 64


class SpeedMeter:
    """Tokens per second per model: a running average of its replies. Thread-safe."""

    def __init__(self) -> None:
        self._speeds: dict[str, float] = {}
        self._lock = threading.Lock()

    def observe(self, model: str, eval_count: int | None, eval_duration_ns: int | None) -> None:
        if not eval_count or not eval_duration_ns or eval_count < MIN_SAMPLE_TOKENS:
            return
        sample = eval_count / (eval_duration_ns / 1e9)
        with self._lock:
            old = self._speeds.get(model)
            self._speeds[model] = sample if old is None else (old + sample) / 2

    def tokens_per_s(self, model: str) -> float | None:
        with self._lock:
            return self._speeds.get(model)


def is_slow(tokens_per_s: float | None) -> bool:
    return tokens_per_s is not None and tokens_per_s < SLOW_TOKENS_PER_S


def reply_cap(tokens_per_s: float | None, budget: int) -> int:
    """The reply budget: `budget` as configured, or for a slow model what it writes in
    REPLY_SECONDS (never more than `budget`)."""
    if tokens_per_s is None or not is_slow(tokens_per_s):
        return budget
    return max(MIN_REPLY_TOKENS, min(budget, int(tokens_per_s * REPLY_SECONDS)))


def speed_text(tokens_per_s: float) -> str:
    """ "20 tokens/s" (one decimal below 10)."""
    return f"{tokens_per_s:.1f} tokens/s" if tokens_per_s < 10 else f"{tokens_per_s:.0f} tokens/s"
