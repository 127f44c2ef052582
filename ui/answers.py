"""How an answer's text is shown, wherever it is (the chat, *Answer without a memory*): line
breaks kept, images only as links, and the offline notice a memory-only answer was stored with
never shown as news: left out while the banner says so, said in the past once the model is back."""

from __future__ import annotations

from agent.prompt import MEMORY_ONLY_MARK
from agent.replies import md_literal, without_offline_notice
from ui.context import PageContext
from ui.format import no_images

#: What an earlier memory-only answer says once the model is back (its notice told what to run)
OFFLINE_THEN = "*Answered from memory alone: the model was offline then.*"


def hard_breaks(text: str) -> str:
    """Keep the model's single line breaks (Markdown would join the lines)."""
    return text.replace("\n", "  \n")


def shown(text: str) -> str:
    """A chat message as markdown: line breaks kept, images only as links (the text comes
    from a person or a model, and an image would make every viewer's browser fetch it)."""
    return no_images(hard_breaks(text))


def said_by_user(text: str) -> str:
    """A person's own message as markdown that reads as typed: each line literal (no heading,
    link or styling of theirs is rendered), its line breaks kept."""
    return "  \n".join(md_literal(line) for line in text.split("\n"))


def answer_text(ctx: PageContext, text: str, *, memory_only: bool = False) -> str:
    """An answer as shown: no offline notice while the banner is up, and one in the past
    tense once the model answers again. `memory_only`: a stored memory-only answer, which the
    history keeps as it was shown, without its notice (agent.replies.without_offline_notice)."""
    status = ctx.llm_status
    model_up = status is not None and status.ok
    if memory_only and model_up and MEMORY_ONLY_MARK not in text:
        return f"{OFFLINE_THEN}\n\n{text}"
    return without_offline_notice(text, OFFLINE_THEN if model_up else "")
