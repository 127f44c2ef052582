"""One context budget per request: everything the model must read fits the window it is sent.

Ollama never says when a prompt did not fit, so each request is planned and trimmed here
(the order of the parts: docs/agent.md, "Small, thinking and tool-less models")."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from agent.types import TEMPLATE_TOKENS, BudgetSplit
from memory.block import MemoryBlock
from memory.errors import InvalidInputError
from memory.models import ChatMessage
from memory.tokens import estimate_tokens, message_tokens, newest_within_budget, raw_tokens

#: What a template wraps around tool schemas (qwen2.5's "# Tools ... <tools></tools> ... return
#: a json object within <tool_call></tool_call>" is ~100 tokens; some say more).
TOOLS_TEMPLATE_TOKENS = 140
#: Per tool, the line break and wrapping a template adds around its JSON.
PER_TOOL_TOKENS = 4
#: All tool schemas are offered when they take at most this share of the window (the default
#: eight, ~2,300 estimated tokens, from an 8,192-token window up); on a smaller window only the
#: tools this message may need, so the memories keep room.
TOOLS_SHARE = 0.3
#: Share of the room left for memories + history (after rules, tools, reply) that memories may
#: take; the history gets the rest (a summary covers what leaves it).
MEMORY_SHARE = 0.5
#: The reply reserve never takes more than this share of the window (a small window with a
#: thinking reserve would otherwise leave nothing for the prompt).
REPLY_SHARE = 0.25
#: Tokens `message_fits` keeps beyond the plan, for the notes a turn's memory block may carry
#: ("(N more memories omitted ...)"), so a turn never refuses what the check let through.
SLACK = 32


class MessageTooLongError(InvalidInputError):
    """The user's message cannot fit the model's window even with no memories and no history."""


class ContextFullError(Exception):
    """This turn's tool results no longer fit the window (the agent answers without more tools)."""


def tools_tokens(schemas: Sequence[dict[str, Any]]) -> int:
    """The schemas as a template renders them (one JSON line each), without the estimate's
    safety factor: its count of JSON punctuation is already ~1.4x a BPE count."""
    if not schemas:
        return 0
    return TOOLS_TEMPLATE_TOKENS + sum(
        raw_tokens(json.dumps(s, ensure_ascii=False)) + PER_TOOL_TOKENS for s in schemas
    )


def tool_name(schema: dict[str, Any]) -> str:
    return str(schema["function"]["name"])


def offered_tools(
    num_ctx: int, schemas: Sequence[dict[str, Any]], needed: Collection[str], scale: float = 1.0
) -> list[dict[str, Any]]:
    """The tool schemas a request offers: all of them when they take at most `TOOLS_SHARE` of
    the window (planned `scale` times larger, as `fit_request` plans), else those named in
    `needed`. Eight schemas took 56 % of a 4,096-token window and left the memories ~240."""
    if tools_tokens(schemas) <= TOOLS_SHARE * num_ctx / max(1.0, scale):
        return list(schemas)
    return [s for s in schemas if tool_name(s) in needed]


def messages_tokens(messages: Sequence[dict[str, Any]]) -> int:
    """Chat messages as a template renders them: content, tool calls, role markers."""
    total = 0
    for m in messages:
        total += message_tokens(str(m.get("content") or ""))
        if m.get("tool_calls"):
            total += estimate_tokens(json.dumps(m["tool_calls"], ensure_ascii=False, default=str))
    return total


def too_long_text(message_tokens_: int, room: int, num_ctx: int) -> str:
    return (
        f"Not sent: your message is about {message_tokens_:,} tokens, and the model's window "
        f"({num_ctx:,} tokens, AGENT_NUM_CTX capped at the model's context length) leaves room "
        f"for about {max(room, 0):,} after the rules, tools and the reply. Shorten it or split "
        "it into several messages (or raise AGENT_NUM_CTX if the model and memory allow)."
    )


@dataclass
class Fit:
    """One request's planned content: what is sent, as planned."""

    block: MemoryBlock
    window: list[ChatMessage]
    split: BudgetSplit
    #: the system texts without the memory block (it follows the first one)
    system: list[str]
    #: the tool schemas the request offers
    tools: list[dict[str, Any]]


def fit_request(
    *,
    num_ctx: int,
    reply_reserve: int,
    memory_cap: int,
    system_messages: Sequence[str],
    tool_schemas: Sequence[dict[str, Any]],
    message: str,
    exchange: Sequence[dict[str, Any]],
    history: Sequence[ChatMessage],
    render_block: Callable[[int], MemoryBlock],
    profile_tokens: int = 0,
    scale: float = 1.0,
    slack: int = 0,
    tools_left_out: int = 0,
    read_tokens: int | None = None,
) -> Fit:
    """Plan one chat request (the system texts without the memory block). Raises
    MessageTooLongError when the message cannot fit alone, ContextFullError when this turn's tool
    exchange filled the window. `scale`: how much larger than estimated this model's prompts were;
    `read_tokens`: what a slow model reads in time (history and memories are planned for it)."""
    rules = sum(message_tokens(s) for s in system_messages)
    tools = tools_tokens(tool_schemas)
    msg = message_tokens(message)
    done = messages_tokens(exchange)
    reply = min(reply_reserve, int(num_ctx * REPLY_SHARE))
    room_for_prompt = int((num_ctx - reply) / max(1.0, scale)) - slack
    fixed = rules + tools + done + TEMPLATE_TOKENS
    base = room_for_prompt - fixed
    empty = render_block(0)  # the fence and its note are sent even with no memory in it
    room = base - msg
    if room < empty.tokens:
        if exchange:
            raise ContextFullError(f"{done} tokens of tool results fill the window")
        raise MessageTooLongError(too_long_text(msg, base - empty.tokens, num_ctx))
    target = max(empty.tokens, min(memory_cap, int((base - empty.tokens) * MEMORY_SHARE)))
    target += profile_tokens
    read_cap: int | None = None
    if read_tokens is not None:
        # The history gives way first, then the weakest memories; never the message, the
        # fence and the profile (its health lines included).
        least = msg + empty.tokens + profile_tokens
        read_base = max(least, read_tokens - fixed)
        if read_base < base:
            room, read_cap = read_base - msg, read_tokens
    block = render_block(min(target, room))
    while read_cap is not None and block.profile_tokens < profile_tokens and room < base - msg:
        # the block counts each line on its own, a few tokens above the profile's estimate
        room = min(base - msg, room + 4)
        block = render_block(min(target, room))
    if block.tokens > room:  # cannot happen with render_block's own budget; be sure
        block = empty
    window = newest_within_budget(list(history), room - block.tokens)
    if block.omitted == 0 and len(window) == len(history):
        read_cap = None  # all of it fitted the shorter room: nothing was left out for speed
    split = BudgetSplit(
        num_ctx=num_ctx,
        rules=rules,
        tools=tools,
        memories=block.tokens - block.profile_tokens,
        profile=block.profile_tokens,
        history=sum(message_tokens(m.content) for m in window),
        message=msg,
        tool_results=done,
        reply=reply,
        history_dropped=len(history) - len(window),
        memories_omitted=block.omitted,
        tools_left_out=tools_left_out,
        scale=round(max(1.0, scale), 3),
        read_cap=read_cap,
    )
    return Fit(
        block=block,
        window=window,
        split=split,
        system=list(system_messages),
        tools=list(tool_schemas),
    )
