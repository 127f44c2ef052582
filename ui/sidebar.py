"""The sidebar on every page: navigation, who is chatting, the model, what I know, and the
memory editor (docs/app.md, "Sidebar")."""

from __future__ import annotations

from typing import Any

import streamlit as st
from streamlit.errors import StreamlitAPIException

from memory import ListQuery
from memory.models import check_id, is_blank, shown_hits
from memory.service import MemoryService
from ui import demo, phone, state, undo
from ui import sessions as sessions_ui
from ui.add import add_form
from ui.context import PageContext
from ui.errors import guard, run_action
from ui.format import (
    NO_MORE_RELEVANT,
    REMEMBERED_KINDS,
    TYPE_HELP,
    about_words,
    band_badge,
    event_label,
    fmt_duration,
    fmt_ms_time,
    md_text,
    no_images,
    own_date_ms,
    snippet,
    tags_text,
    type_label,
)
from ui.row_actions import row_controls
from ui.user_profile import TITLE as PROFILE_TITLE
from ui.user_profile import user_profile_panel

PAGES = (
    ("app.py", "Chat", "💬"),
    ("pages/memories.py", "Memories", "🗂️"),
    ("pages/stats.py", "Stats", "📊"),
)
RECENT_N = 6


def render_sidebar(ctx: PageContext) -> None:
    with st.sidebar:
        render_nav()
        _who(ctx)
        _model(ctx)
        with st.expander(f"🪪 {PROFILE_TITLE}", expanded=True):
            user_profile_panel(ctx, "sb")
        _editor(ctx)


def render_nav() -> None:
    """Our own page links, labelled and with icons, when the default page list is hidden
    (`client.showSidebarNavigation = false`); otherwise Streamlit's list is already there."""
    if st.get_option("client.showSidebarNavigation") is not False:
        return
    try:
        for path, label, icon in PAGES:  # the user and chat go along (the address keeps them)
            st.page_link(path, label=label, icon=icon, query_params=state.url_params() or None)
    except StreamlitAPIException:  # run without app.py as entry point (a test of one page)
        return
    phone.close_sidebar_after_navigation()
    st.divider()


# --- who is chatting -------------------------------------------------------------------


def _identity(ctx: PageContext) -> None:
    """Say plainly who is signed in, or that nobody is (names shown as text, not markdown)."""
    viewer = ctx.viewer
    if not viewer.signed_in:
        # One quiet line, not a box: the mode is the operator's choice, not a fault, and the
        # notice is on every page.
        st.caption(
            "🔓 No sign-in: anyone here can change every user's memories.",
            help="Fine for one person on their own machine. To share the app, turn sign-in "
            "on first (the docs' “Sharing the app” says how).",
        )
        return
    role = " (admin)" if viewer.is_admin else ""
    st.text(f"🔑 Signed in as {viewer.user_id}{role}")
    st.button("Sign out", key="sb_logout", icon=":material/logout:", on_click=st.logout)


def _who(ctx: PageContext) -> None:
    ss = st.session_state
    coord = ctx.coordinator
    _identity(ctx)
    sessions: list[str] = []
    with guard("Listing your chats"):
        sessions = list(coord.short_term.sessions(ss.user_id) or [])
    session_options = list(dict.fromkeys([ss.session_id, *sessions]))
    titles = sessions_ui.titles_of(coord, ss.user_id)
    named = dict(titles)
    if ss.session_id not in sessions and ss.session_id not in titles:
        named[ss.session_id] = "New chat"  # no message yet
    labels = sessions_ui.distinct({s: sessions_ui.picker_label(s, named) for s in session_options})

    if ctx.viewer.may_switch_users:  # no user list for a signed-in non-admin
        users: list[str] = []
        with guard("Listing users"):
            users = list(coord.list_users() or [])
        ss["sb_user"] = ss.user_id
        st.selectbox(
            "👤 User",
            sorted(set(users) | {ss.user_id}),
            key="sb_user",
            accept_new_options=True,
            on_change=_on_user,
            args=(coord,),
            help="Every user is listed here: "
            + ("you are an admin." if ctx.viewer.signed_in else "there is no sign-in.")
            + " Type a new name to add a user.",
        )
    ss["sb_session"] = ss.session_id
    # The picker has the sidebar's whole width (beside ✏️ and ➕ it showed "Plan my ru");
    # Rename and New chat share one row under it at every width (columns would stack).
    st.selectbox(
        "Chat",
        session_options,
        key="sb_session",
        # plain text options: titles come from people's messages
        format_func=lambda s: labels.get(s, s),
        on_change=_on_session,
        help="The recent messages belong to one chat; long-term memories are shared by all "
        "the chats of the user. A chat is named after its first message (a long name is "
        "shortened here; the chat page shows it whole): Rename changes it.",
    )
    row = st.container(
        horizontal=True, wrap=False, vertical_alignment="center", gap="small", key="sb_session_row"
    )
    with row.popover(
        "Rename", icon=":material/edit:", type="tertiary", help="Rename this chat", key="sb_rename"
    ):
        # One box per chat: a box's value, sent late by the browser, renames its own chat only
        # (one shared box once renamed the next new chat with the last one's title).
        title_key = f"sb_title_{ss.session_id}"
        ss[title_key] = titles.get(ss.session_id, "")
        st.text_input(
            "Title of this chat",
            key=title_key,
            max_chars=sessions_ui.MAX_TITLE_CHARS,
            placeholder="e.g. Marathon training",
            on_change=_on_title,
            args=(coord, ss.session_id, title_key),
        )
        st.caption("Press Enter to save.")
    row.button(
        "New chat",
        key="sb_new_session",
        icon=":material/add:",
        type="tertiary",
        help="Start a new chat",
        on_click=_on_new_session,
    )
    if demo.available(ctx):
        demo.load_button(ctx, "sb_demo", compact=True)


def _on_user(coord: MemoryService) -> None:
    value = str(st.session_state.get("sb_user") or "").strip()
    if is_blank(value):
        state.flash("Type a user name first.", "warning")
        return
    try:
        check_id(value, "user id")
    except ValueError as e:
        state.flash(str(e), "error")
        return
    state.switch_user(value, coord.short_term.sessions)


def _on_session() -> None:
    state.switch_session(st.session_state.sb_session)


def _on_title(coord: MemoryService, session_id: str, title_key: str) -> None:
    ss = st.session_state
    title = str(ss.get(title_key) or "").strip()
    if is_blank(title):
        state.flash("A chat title cannot be empty.", "warning")
        return
    ok, _ = run_action("Renaming the chat", coord.set_session_title, ss.user_id, session_id, title)
    if ok:
        state.flash(f"Renamed the chat: {snippet(title, 60)}", "success")


def _on_new_session() -> None:
    state.switch_session(state.new_session_id())
    state.flash("Started a new chat. Long-term memories carry over.", "info")


# --- model and recall --------------------------------------------------------------------


def _model(ctx: PageContext) -> None:
    ss = st.session_state
    agent = ctx.agent
    with st.expander("🤖 Model & auto-recall", expanded=False):
        if agent is None:
            st.caption("The chat agent could not start; see the message on the page.")
        else:
            with guard("Checking Ollama"):
                status = ctx.llm_status
                models = list(ctx.models)
                if status is not None and status.ok:
                    st.markdown(f"🟢 **{md_text(status.model)}** ready at {md_text(status.host)}")
                elif status is not None and status.reachable:
                    st.markdown(f"🟠 **{md_text(status.model)}** is not pulled")
                    st.caption(no_images(status.message))
                else:
                    st.markdown("🔴 **Ollama offline**: memory-only mode")
                    if status is not None and status.message:
                        st.caption(no_images(status.message))
                if models:
                    current = ss.model or (status.model if status else models[0])
                    options = list(dict.fromkeys([current, *models]))
                    ss["sb_model"] = current
                    st.selectbox("Chat model", options, key="sb_model", on_change=_on_model)
                if status is not None and status.ok:
                    _profile(agent, ss.model or status.model)
        st.caption("Recalled automatically before each answer:")
        for mtype, label in state.RECALL_TYPES.items():
            ss[f"sb_recall_{mtype}"] = bool(ss.recall.get(mtype, True))
            st.toggle(
                label,
                key=f"sb_recall_{mtype}",
                on_change=_on_recall,
                args=(mtype,),
                help=TYPE_HELP[mtype],
            )


#: What a model can do (Ollama's capabilities), in words
CAPABILITY_WORDS = {
    "tools": "uses tools",
    "thinking": "thinks before answering",
    "vision": "reads images",
    "insert": "fills in text",
    "embedding": "measures meaning",
}
#: What each probe of the model check tries (agent/check.py), in words
CHECK_WORDS = {
    "context_length": "How much it reads at once",
    "chat_template": "Chat format",
    "json_extraction": "Picks out what to remember",
    "remember_tool_call": "Saves a memory when asked",
    "no_tool_on_small_talk": "Answers small talk without tools",
    "uses_recalled_memory": "Uses what it remembers",
    "uses_earlier_answer": "Uses its earlier answers",
    "thinking": "Thinks before answering",
}


def _profile(agent: Any, model: str) -> None:
    """What the model can do, the window the agent plans for, and the model check."""
    profile = agent.llm.profile(model)
    if profile is not None:
        bits = [b for b in (profile.family, profile.parameter_size, profile.quantization) if b]
        can = [CAPABILITY_WORDS.get(c, c) for c in profile.capabilities if c != "completion"]
        st.caption(md_text(" · ".join([*bits, *(can or ["uses no tools"])])))
    could = profile.context_length if profile is not None else 0
    st.caption(
        f"The agent sends this model up to about {about_words(agent.llm.window(model)):,} words "
        "at a time" + (f" (it could take about {about_words(could):,})." if could else ".")
    )
    if st.button("🩺 Check this model", key="sb_check_model", width="stretch"):
        with st.spinner(f"Probing {model}…"):
            st.session_state["model_check"] = agent.check_model(model).model_dump(mode="json")
    report = st.session_state.get("model_check")
    if report and report.get("model") == model:
        for p in report["probes"]:
            mark = "✅" if p["passed"] else "❌"
            st.markdown(
                f"{mark} **{md_text(CHECK_WORDS.get(p['name'], p['name']))}** · "
                f"{fmt_duration(p['ms'])}  \n:gray[{no_images(p['detail'])}]"
            )
        for r in report.get("recommendations") or []:
            st.caption(f"→ {no_images(r)}")


def _on_model() -> None:
    st.session_state.model = st.session_state.sb_model


def _on_recall(mtype: str) -> None:
    st.session_state.recall[mtype] = bool(st.session_state[f"sb_recall_{mtype}"])


# --- memory editor -----------------------------------------------------------------------


def _editor(ctx: PageContext) -> None:
    st.markdown("#### 🧠 Memory editor")
    undo.notice_slot(ctx.coordinator, "sidebar")  # above the tabs: for a search hit's too
    add_tab, search_tab, recent_tab = st.tabs(["➕ Add", "🔎 Search", "🕒 Recent"])
    with add_tab:
        add_form(ctx, "sb_add")
    with search_tab:
        _search(ctx)
    with recent_tab:
        _recent(ctx)


def _search(ctx: PageContext) -> None:
    q = st.text_input("Search memories", key="sb_search", placeholder="e.g. running")
    if not q.strip():
        st.caption(
            "Finds memories by meaning and by their words: what is remembered about you and "
            "general knowledge."
        )
        return
    hits: list[Any] = []
    with guard("Searching"):
        for mtype, k in (("episodic", 5), ("semantic", 3)):
            hits.extend(ctx.coordinator.search(ctx.user_id, q, mtype, k=k) or [])
    hits, weaker = shown_hits(hits)
    if not hits:
        st.caption("No relevant memories. Try other words, or add the memory in ➕ Add.")
        return
    for h in hits:
        mtype = getattr(h.memory_type, "value", h.memory_type)
        if h.id in undo.pending_ids():
            continue
        st.markdown(
            f"{md_text(snippet(h.text, 90))}  \n:gray[{type_label(mtype)} · {band_badge(h.band)}]"
        )
        row = {**h.record, "id": h.id, "text": h.text}
        if mtype == "episodic" or row.get("added_by") == ctx.user_id:  # theirs to change
            row_controls(ctx, mtype, row, f"sb_hit_{h.id}")
    if weaker:
        st.caption(NO_MORE_RELEVANT)


def recent_memories(coord: MemoryService, user_id: str, n: int = RECENT_N) -> list[dict[str, Any]]:
    """The user's newest episodic memories and the facts they added, newest first by each
    one's own date (the date the list shows: when it happened or was said)."""
    rows: list[dict[str, Any]] = []
    # Logged exchanges ("interaction" episodes) are the chat itself: not listed here.
    ep, _ = coord.list_memories(
        user_id,
        "episodic",
        ListQuery(page_size=n, include_superseded=False, event_types=REMEMBERED_KINDS),
    )
    rows.extend({**r, "_type": "episodic"} for r in ep)
    sem, _ = coord.list_memories(user_id, "semantic", ListQuery(page_size=n, added_by=user_id))
    rows.extend({**r, "_type": "semantic"} for r in sem)
    rows.sort(key=own_date_ms, reverse=True)
    return rows[:n]


def _recent(ctx: PageContext) -> None:
    rows: list[dict[str, Any]] = []
    with guard("Listing recent memories"):
        rows = recent_memories(ctx.coordinator, ctx.user_id)
    rows = [r for r in rows if r["id"] not in undo.pending_ids()]  # deleted, Undo offered
    if not rows:
        st.caption(
            "No memories yet for this user. Add one in ➕ Add, or tell the agent something "
            "like “remember that I'm vegetarian”."
        )
        return
    for r in rows:
        # the memory's own date (a loaded persona's are stored at once, dated as it happened)
        when = fmt_ms_time(own_date_ms(r))
        kind = event_label(r["event_type"]) if r.get("event_type") else r.get("category") or ""
        pin = "📌 " if r.get("pinned") else ""
        about = [type_label(r["_type"]), md_text(kind), when]
        if tags := tags_text(r.get("tags")):
            about.append(md_text(tags))
        if r.get("paused"):
            about.append("⏸ paused")
        st.markdown(f"{pin}{md_text(snippet(r.get('text'), 70))}  \n:gray[{' · '.join(about)}]")
        row_controls(ctx, r["_type"], r, f"sb_row_{r['id']}")
