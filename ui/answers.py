"""How an answer's text is shown, wherever it is (the chat, *Answer without a memory*): line
breaks kept, images only as links, and without the offline notice while the page's banner
says the model is offline."""

from __future__ import annotations

from agent.prompt import MEMORY_ONLY_MARK
from ui.context import PageContext
from ui.format import no_images

OFFLINE_NOTICE = "The language model is offline"


def hard_breaks(text: str) -> str:
    """Keep the model's single line breaks (Markdown would join the lines)."""
    return text.replace("\n", "  \n")


def shown(text: str) -> str:
    """A chat message as markdown: line breaks kept, images only as links (the text comes
    from a person or a model, and an image would make every viewer's browser fetch it)."""
    return no_images(hard_breaks(text))


def without_offline_notice(text: str) -> str:
    """A memory-only answer while the page's banner says the model is offline: the answer's
    own notice (that line and the one saying what to run) would repeat the banner under every
    answer, so it is left out. A server that failed keeps its notice: that is news."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(OFFLINE_NOTICE) and line.endswith(MEMORY_ONLY_MARK):
            return "\n".join(lines[:i] + lines[i + 2 :]).strip()
    return text


def answer_text(ctx: PageContext, text: str) -> str:
    """An answer as shown: without the offline notice while the banner is up."""
    status = ctx.llm_status
    return text if status is not None and status.ok else without_offline_notice(text)
