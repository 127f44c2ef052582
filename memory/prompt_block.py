"""The prompt-ready text of a MemoryContext, within a token budget.

Sections in priority order (episodic, procedural, semantic); each line carries its relevance
band so the model (and a person reading the prompt) sees how sure the recall was. Short-term
messages are not repeated here: the agent sends them as chat history. When the budget runs out,
lower-ranked lines are dropped whole and the block says how many were left out.
"""

from __future__ import annotations

from datetime import UTC, datetime

from memory.models import MemoryContext
from memory.tokens import estimate_tokens


def _date(ms: int | None) -> str:
    if not ms:
        return "undated"
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d")


def render_prompt_block(ctx: MemoryContext, budget_tokens: int) -> tuple[str, int]:
    lines: list[tuple[str, str]] = []  # (section, line)
    for h in ctx.episodic:
        rec = h.record
        kind = str(rec.get("event_type", "memory")).upper()
        extra = f" (context: {rec['context']})" if rec.get("context") else ""
        lines.append(
            (
                "Personal memories of this user",
                f"- [{_date(rec.get('timestamp'))}] {kind} ({h.band} relevance): {h.text}{extra}",
            )
        )
    if ctx.procedural is not None:
        p = ctx.procedural
        verdict = "recommended" if p.recommended else "not yet recommended"
        lines.append(
            (
                "Learned procedure",
                f"- For questions like {p.query_pattern!r}, the tool sequence "
                f"{' -> '.join(p.tool_sequence)} worked before (confidence "
                f"{p.confidence:.2f}, {p.executions} runs, {verdict}).",
            )
        )
    for h in ctx.semantic:
        rec = h.record
        lines.append(
            (
                "General knowledge",
                f"- [{str(rec.get('category', 'general')).upper()}] ({h.band} relevance) {h.text}",
            )
        )
    out: list[str] = []
    section = None
    dropped = 0
    # Room for the "left out" note, so the whole block stays within the budget.
    reserve = estimate_tokens(_left_out(len(lines)))
    for sec, line in lines:
        trial = out + ([f"{sec}:"] if sec != section else []) + [line]
        if estimate_tokens("\n".join(trial)) + reserve > budget_tokens:
            dropped += 1
            continue
        out = trial
        section = sec
    if dropped and estimate_tokens("\n".join([*out, _left_out(dropped)])) <= budget_tokens:
        out.append(_left_out(dropped))
    text = "\n".join(out)
    return text, estimate_tokens(text)


def _left_out(n: int) -> str:
    return f"({n} more recalled item(s) left out to fit the memory budget)"
