"""Token counting for context budgets.

The chat models (Qwen 2.5, Llama 3...) ship their tokenizers with Ollama, not here, so counts are
a documented estimate: ceil(characters / 4) per text plus 4 tokens of chat-template overhead per
message. English prose averages ~4 characters per token on these BPE vocabularies; the estimate
errs high on code and numbers-heavy text, which keeps budgets safe.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol, TypeVar

CHARS_PER_TOKEN = 4.0
MESSAGE_OVERHEAD = 4


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def message_tokens(content: str) -> int:
    return estimate_tokens(content) + MESSAGE_OVERHEAD


class _HasContent(Protocol):
    @property
    def content(self) -> str: ...


M = TypeVar("M", bound=_HasContent)


def newest_within_budget(messages: Sequence[M], budget_tokens: int) -> list[M]:
    """The newest messages (in order) whose estimated tokens fit the budget: the oldest are
    trimmed first, and none is skipped (no gaps in a conversation)."""
    kept: list[M] = []
    used = 0
    for m in reversed(messages):
        cost = message_tokens(m.content)
        if used + cost > budget_tokens:
            break
        kept.append(m)
        used += cost
    kept.reverse()
    return kept


def truncate_to_tokens(text: str, budget: int) -> str:
    """Cut `text` to at most `budget` estimated tokens, at a word boundary, marking the cut."""
    if estimate_tokens(text) <= budget:
        return text
    limit = max(0, int(budget * CHARS_PER_TOKEN) - 2)
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + " …"
