"""Memories page, *Maintenance* tab: the last report, a dry run whose merge proposals are
accepted or rejected one by one, a run for this user, and undo of past merges. Memory texts
are shown with `st.text` and in dataframes only, never as markdown."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from ui import resources, state
from ui.errors import guard, run_action
from ui.format import event_label, fmt_ms_time, importance_word, md_text, plain_text
from ui.sessions import label as chat_label
from ui.sessions import titles_of

if TYPE_CHECKING:
    from memory import Maintenance
    from ui.context import PageContext

DRY_KEY = "mt_dry_run"  # session: the dry run's part for a user (UserReport) and its at_ms
MERGES_SHOWN = 20
#: The report's counts (memory.maintenance.runner.UserReport) as a tile and a sentence say them;
#: "importance adjusted", not "decayed": a recalled memory's importance goes up
COUNTS = {
    "consolidated": ("Merged", "memory merged", "memories merged"),
    "expired": ("Expired", "memory expired", "memories expired"),
    "decayed": (
        "Importance adjusted",
        "memory's importance adjusted",
        "memories' importance adjusted",
    ),
    "summarised": ("Chats summarised", "chat summarised", "chats summarised"),
}
#: Why a chat is summarised (memory.maintenance.summaries) and how a merge kept its text
WHY = {"idle": "the chat went quiet", "trimmed": "older messages left the prompt"}
MERGED_HOW = {"best_worded": "kept the best-worded one", "llm": "reworded by the model"}


def counted(n: int, one: str, many: str) -> str:
    """`1 memory merged`, `38 memories' importance adjusted`."""
    return f"{n} {one if n == 1 else many}"


def maintenance_tab(ctx: PageContext) -> None:
    maint: Maintenance | None = None
    with guard("Opening maintenance"):
        maint = resources.get_maintenance(ctx.agent)
    if maint is None:
        return
    st.caption(
        f"Keeps **{md_text(ctx.user_id)}**'s memories clean: paraphrases of one fact are "
        "merged (the others stay as history), logged exchanges expire, importance decays "
        "when a memory is never recalled, long or idle chats get a summary. The app also "
        "runs this in the background."
    )
    c1, c2, _ = st.columns([1, 1, 4])
    c1.button(
        "Preview",
        key="mt_dry",
        icon="🔍",
        help="List what a run would do for this user; nothing changes.",
        on_click=_dry_run,
        args=(maint, ctx.user_id),
        width="stretch",
    )
    c2.button(
        "Run now",
        key="mt_run",
        icon="🧹",
        type="primary",
        help="Merge, expire and decay this user's memories now.",
        on_click=_run_now,
        args=(maint, ctx.user_id),
        width="stretch",
    )
    with guard("Counting waiting summaries"):
        # fell due while the model was unavailable: said until they run
        if waiting := maint.summaries_waiting(ctx.user_id):
            st.warning(
                f"Summaries waiting: {len(waiting)} (the model was not available). They run "
                "when it is back: at the next maintenance run or the next long turn of that chat.",
                icon="⏳",
            )
    titles = titles_of(ctx.coordinator, ctx.user_id)  # chats by their names, as the sidebar
    _proposals(maint, ctx.user_id, titles)
    with guard("Loading the last maintenance report"):
        _last_report(maint.last_report(ctx.user_id), ctx.user_id, titles)
    with guard("Loading past merges"):
        _past_merges(maint, ctx.user_id)


# --- actions (widget callbacks) ------------------------------------------------------------


def _dry_run(maint: Maintenance, user_id: str) -> None:
    ok, report = run_action("The dry run", maint.run, user_id=user_id, dry_run=True)
    if not ok:
        return
    mine = _user_part(report.model_dump(mode="json"), user_id) or {}
    st.session_state[DRY_KEY] = {**mine, "user_id": user_id, "at_ms": report.at_ms}


def _run_now(maint: Maintenance, user_id: str) -> None:
    ok, report = run_action("Running maintenance", maint.run, user_id=user_id)
    if not ok:
        return
    st.session_state.pop(DRY_KEY, None)  # its proposals may have just been carried out
    totals = report.totals()
    state.flash(
        f"Maintenance ran for {md_text(user_id)}: "
        + ", ".join(counted(totals[k], one, many) for k, (_, one, many) in COUNTS.items())
        + "."
    )


def _accept(maint: Maintenance, proposal: dict[str, Any]) -> None:
    # A proposal whose memories changed since the dry run is refused with a message saying so
    # (run_action shows it); the proposal stays listed until the next dry run.
    ok, _ = run_action("Accepting the merge", maint.accept_merge, proposal)
    if not ok:
        return
    _drop_proposal(proposal)
    n = len(proposal["member_ids"]) + 1
    state.flash(f"Merged {n} memories into one. Undo is under Past merges.")


def _reject(maint: Maintenance, proposal: dict[str, Any]) -> None:
    ok, _ = run_action("Rejecting the merge", maint.reject_merge, proposal)
    if ok:
        _drop_proposal(proposal)
        state.flash("Rejected: these memories will not be proposed together again.", "info")


def _undo(maint: Maintenance, user_id: str, merge_id: str) -> None:
    ok, record = run_action("Undoing the merge", maint.undo_merge, user_id, merge_id)
    if ok:
        n = len(record.get("member_ids", [])) + 1
        state.flash(f"Merge undone: {n} memories are active again.")


def _drop_proposal(proposal: dict[str, Any]) -> None:
    dry = st.session_state.get(DRY_KEY)
    if dry:
        cid = proposal["canonical_id"]
        dry["consolidated"] = [p for p in dry["consolidated"] if p["canonical_id"] != cid]


# --- sections ------------------------------------------------------------------------------


def _proposals(maint: Maintenance, user_id: str, titles: dict[str, str]) -> None:
    dry = st.session_state.get(DRY_KEY)
    if not dry or dry.get("user_id") != user_id:
        return  # no dry run yet, or one of another user (the sidebar can switch users)
    st.markdown("##### 🔍 Preview: what a run would do")
    proposals, expired = dry.get("consolidated", []), dry.get("expired", [])
    st.caption(
        f"At {fmt_ms_time(dry['at_ms'])}: {counted(len(proposals), 'merge', 'merges')} to "
        f"review, {counted(len(expired), 'memory', 'memories')} to expire, "
        f"the importance of {counted(len(dry.get('decayed', [])), 'memory', 'memories')} "
        "to adjust. "
        "Nothing has changed yet."
    )
    if not proposals:
        st.info("No near-duplicate memories to merge.", icon="✨")
    for p in proposals:
        cid = p["canonical_id"]
        with st.container(border=True):
            st.caption(
                f"{event_label(p['event_type'])} · {len(p['member_ids']) + 1} memories · "
                f"lowest similarity {p['similarity']:.2f}"
            )
            st.dataframe(_proposal_frame(p), hide_index=True, key=f"mt_proposal_{cid}")
            b1, b2, _ = st.columns([1, 1, 4])
            b1.button(
                "Accept",
                key=f"mt_accept_{cid}",
                icon="✅",
                help="Merge now: the kept memory stays, the others become its history. "
                "With a model, the kept text may be reworded to cover all of them.",
                on_click=_accept,
                args=(maint, p),
                width="stretch",
            )
            b2.button(
                "Reject",
                key=f"mt_reject_{cid}",
                icon="🚫",
                help="Keep them apart and never propose this merge again.",
                on_click=_reject,
                args=(maint, p),
                width="stretch",
            )
    if expired:
        st.caption("Would expire:")
        st.dataframe(_expired_frame(expired), hide_index=True, key="mt_dry_expired")
    if due := dry.get("summarised"):  # not written yet: said, not a table of empty texts
        chats = "; ".join(
            f"{chat_label(str(d['session_id']), titles)} ({d['messages']} messages: "
            f"{WHY.get(str(d['reason']), str(d['reason']))})"
            for d in due
        )
        st.caption(f"Would summarise {counted(len(due), 'chat', 'chats')}: {md_text(chats)}")


def _last_report(report: dict[str, Any] | None, user_id: str, titles: dict[str, str]) -> None:
    st.markdown("##### 🧾 Last run")
    if not report:
        st.info("Maintenance has not run yet. Press **Run now**, or wait for the background run.")
        return
    mine = _user_part(report, user_id)
    when = fmt_ms_time(report.get("at_ms"))
    if mine is None:
        st.info(f"The last run ({when}) did not cover {md_text(user_id)}.", icon="🧾")
        return
    st.caption(f"At {when}, for {md_text(user_id)}:")
    for col, (name, (tile, _, _)) in zip(st.columns(len(COUNTS)), COUNTS.items(), strict=True):
        items = mine.get(name, [])
        # consolidated counts the memories that became history, as the report totals do
        n = sum(len(p["member_ids"]) for p in items) if name == "consolidated" else len(items)
        col.metric(tile, n, border=True)
    if mine.get("consolidated"):
        st.dataframe(_merged_frame(mine["consolidated"]), hide_index=True, key="mt_last_merged")
    if mine.get("expired"):
        st.dataframe(_expired_frame(mine["expired"]), hide_index=True, key="mt_last_expired")
    if mine.get("summarised"):
        st.dataframe(
            _summary_frame(mine["summarised"], titles), hide_index=True, key="mt_last_summ"
        )
    if mine.get("decayed"):
        with st.expander(f"Importance changes ({len(mine['decayed'])})"):
            changes = importance_changes_frame(mine["decayed"])
            st.dataframe(changes, hide_index=True, key="mt_last_decay")


def _past_merges(maint: Maintenance, user_id: str) -> None:
    st.markdown("##### ↩️ Past merges")
    merges = maint.merges(user_id, limit=MERGES_SHOWN)
    if not merges:
        st.caption("No merges yet.")
        return
    for m in merges:
        with st.container(border=True):
            left, right = st.columns([5, 1], vertical_alignment="center")
            left.text(f"Kept: {m['text_after']}")
            for text in m["member_texts"]:
                left.text(f"Merged: {text}")
            status = "undone" if m["undone"] else "active"
            how = MERGED_HOW.get(m["how"], m["how"])
            left.caption(md_text(f"{fmt_ms_time(m['at_ms'])} · {how} · {status}"))
            if not m["undone"]:
                right.button(
                    "Undo",
                    key=f"mt_undo_{m['id']}",
                    icon="↩️",
                    help="Make the merged memories active again and restore the kept one.",
                    on_click=_undo,
                    args=(maint, user_id, m["id"]),
                    width="stretch",
                )
    if len(merges) == MERGES_SHOWN:
        st.caption(f"The {MERGES_SHOWN} most recent merges.")


# --- tables --------------------------------------------------------------------------------


def _user_part(report: dict[str, Any], user_id: str) -> dict[str, Any] | None:
    return next((u for u in report.get("users", []) if u.get("user_id") == user_id), None)


def _proposal_frame(p: dict[str, Any]) -> pd.DataFrame:
    rows = [{"Role": "kept", "Memory": plain_text(p["canonical_text"])}]
    rows += [{"Role": "merged into it", "Memory": plain_text(text)} for text in p["member_texts"]]
    return pd.DataFrame(rows)


# The report's lists as tables (each drawn only when it has items, so its rows name the columns)
def _merged_frame(proposals: list[dict[str, Any]]) -> pd.DataFrame:
    kept = [plain_text(p["canonical_text"]) for p in proposals]
    merged = [" | ".join(map(plain_text, p["member_texts"])) for p in proposals]
    return pd.DataFrame({"Kept": kept, "Merged": merged})


def _expired_frame(items: list[dict[str, Any]]) -> pd.DataFrame:
    texts, kinds = [plain_text(e.get("text")) for e in items], [e.get("kind", "") for e in items]
    return pd.DataFrame({"Memory": texts, "Kind": list(map(event_label, kinds))})


def _summary_frame(items: list[dict[str, Any]], titles: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "Summary": plain_text(d.get("text")) or "(not written yet)",
            "Chat": chat_label(str(d.get("session_id", "")), titles),
            "Messages": d.get("messages"),
            "Why": WHY.get(str(d.get("reason")), str(d.get("reason") or "")),
        }
        for d in items
    )


def importance_changes_frame(items: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "Memory": plain_text(d.get("text")),
            # the word a person picks, and the number: `low (30%)`
            **{
                k.capitalize(): f"{importance_word(d[k])} ({d[k]:.0%})" for k in ("before", "after")
            },
            "Recalled": counted(n, "time", "times") if (n := int(d["recalled"] or 0)) else "never",
        }
        for d in items
    )
