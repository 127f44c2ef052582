"""How an answer's text is shown, wherever it is (the chat, *Answer without a memory*): line
breaks kept, images only as links, and the offline notice a memory-only answer was stored with
never shown as news: left out while the banner says so, said in the past once the model is back."""

from __future__ import annotations

from agent.prompt import MEMORY_ONLY_MARK
from ui.context import PageContext
from ui.format import no_images

OFFLINE_NOTICE = "The language model is offline"
#: What an earlier memory-only answer says once the model is back (its notice told what to run)
OFFLINE_THEN = "*Answered from memory alone: the model was offline then.*"


def hard_breaks(text: str) -> str:
    """Keep the model's single line breaks (Markdown would join the lines)."""
    return text.replace("\n", "  \n")


def shown(text: str) -> str:
    """A chat message as markdown: line breaks kept, images only as links (the text comes
    from a person or a model, and an image would make every viewer's browser fetch it)."""
    return no_images(hard_breaks(text))


def without_offline_notice(text: str, instead: str = "") -> str:
    """A memory-only answer without its own notice (that line and the one saying what to run):
    while the page's banner says the model is offline it would repeat the banner under every
    answer; once the model is back it would be untrue, so `instead` says it in the past. A
    server that failed keeps its notice: that is news."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(OFFLINE_NOTICE) and line.endswith(MEMORY_ONLY_MARK):
            return "\n".join(lines[:i] + ([instead] if instead else []) + lines[i + 2 :]).strip()
    return text


def answer_text(ctx: PageContext, text: str) -> str:
    """An answer as shown: no offline notice while the banner is up, and one in the past
    tense once the model answers again."""
    status = ctx.llm_status
    model_up = status is not None and status.ok
    return without_offline_notice(text, OFFLINE_THEN if model_up else "")
