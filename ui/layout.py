"""`page_setup`: the first call of every page (chat, Memories, Stats), so a page opened by URL
needs nothing from `app.py` (docs/app.md, "How the pages are built")."""

from __future__ import annotations

__all__ = ["PageContext", "page_header", "page_setup", "show_flashes"]

import logging
from collections.abc import Callable
from typing import Any

import streamlit as st
from pydantic import ValidationError
from streamlit import delta_generator

from memory.errors import MemorySystemError, StoreFormatError
from ui import resources, state, stopping, undo
from ui.auth import current_viewer, refuse_open_listening
from ui.config import AppSettings
from ui.context import PageContext
from ui.errors import message_for
from ui.format import no_images
from ui.sidebar import render_nav, render_sidebar

log = logging.getLogger(__name__)

# Streamlit's once-per-process check for a REPL reads the source of every frame on the stack
# (7.6 % of the cold open: docs/performance.md); under `streamlit run` the answer is
# no. A private flag: were it gone from Streamlit, this would only set an unused name.
delta_generator._use_warning_has_been_displayed = True

APP_NAME = "Memory Chat"


def page_setup(title: str, icon: str, *, layout: str = "wide", sidebar: bool = True) -> PageContext:
    """Configure the page and return its context; on a fatal problem show how to fix it and
    stop the run (no traceback on screen). `sidebar=False`: the page draws the sidebar itself
    (`render_sidebar`), later in its run."""
    st.set_page_config(page_title=f"{title} · {APP_NAME}", page_icon=icon, layout=layout)  # type: ignore[arg-type]

    try:
        settings = resources.get_settings()
    except ValidationError as e:
        _fatal(
            "A setting is invalid",
            f"{e.errors()[0].get('loc', ['?'])[0]}: {e.errors()[0].get('msg', e)}",
            "Fix it in `.env` or the environment, then restart the app.",
        )
    app_settings = AppSettings()  # sign-in: read on every run, cheap
    refuse_open_listening(app_settings)
    viewer = current_viewer(app_settings)  # oidc: the sign-in page until signed in
    try:
        coordinator = resources.get_coordinator()
    except StoreFormatError as e:  # Redis is fine: its sentence says what to do instead
        _fatal("The memories are in another format", str(e), "")
    except MemorySystemError as e:
        _fatal(
            "The memory store is not available",
            str(e),
            "Start Redis with `make redis-start` (or `python -m memory redis start`), or point "
            "REDIS_URL at a Redis Stack server, then press Retry.",
        )
    except Exception as e:  # noqa: BLE001
        log.exception("Could not open the memory coordinator")
        _fatal("The memory store could not be opened", message_for(e, "Opening memory"), "")

    state.init_state(coordinator.short_term.sessions, signed_in_as=viewer.user_id)
    if viewer.user_id is not None and not viewer.may_switch_users:
        state.keep_user(viewer.user_id, coordinator.short_term.sessions)
    state.sync_url()  # a reload, a bookmark or a second tab opens this user and chat

    ctx = PageContext(
        settings=settings,
        coordinator=coordinator,
        writer=resources.get_writer(),
        agent=None,
        viewer=viewer,
    )
    try:
        ctx.agent = resources.get_agent()
        resources.start_maintenance()
    except Exception as e:  # noqa: BLE001
        log.exception("Could not build the chat agent")
        ctx.agent_error = message_for(e, "Starting the chat agent")
    if ctx.agent is not None:
        agent = ctx.agent
        ctx.llm_status = _safe(lambda: agent.status(model=st.session_state.model))
        ctx.models = list(_safe(lambda: agent.status().models) or [])

    stopping.wait_for_stopped_turn()  # a turn this click stopped stores its partial answer
    undo.settle(coordinator)  # a delete whose Undo was offered is carried out now
    if sidebar:
        render_sidebar(ctx)
    show_flashes()
    return ctx


#: How a flash (a message a callback left) shows, by its kind: a toast unless it is a problem
#: (a notice shows in its place on the page: `state.show_notice`).
FLASH_AS: dict[str, tuple[Callable[..., Any], str]] = {
    "error": (st.error, "⚠️"),
    "warning": (st.warning, "✋"),
    "info": (st.toast, "ℹ️"),
    "success": (st.toast, "✅"),
}


def show_flashes() -> None:
    for kind, raw in state.pop_flashes():
        show, icon = FLASH_AS.get(kind, FLASH_AS["success"])
        show(no_images(raw), icon=icon)  # flashes quote memory texts and user names


def page_header(title: str, icon: str, caption: str) -> None:
    st.title(f"{icon} {title}")
    st.caption(caption)


def _safe(fn: Any) -> Any:
    try:
        return fn()
    except Exception:  # noqa: BLE001 - status checks must never break a page
        log.exception("%s failed", getattr(fn, "__name__", fn))
        return None


def _fatal(headline: str, detail: str, fix: str) -> None:
    with st.sidebar:
        render_nav()
    st.error(f"**{headline}.** {detail}", icon="🚫")
    if fix:
        st.info(fix, icon="🛠️")
    st.button("Retry", key="fatal_retry", icon="🔄")
    st.stop()
