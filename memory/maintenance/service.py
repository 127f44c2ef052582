"""`Maintenance`: the `maintain` run (summaries, consolidation, retention and decay for one user or
all) and the merges people review, for the CLI, the app's background thread and the Maintenance
tab; built from the coordinator's parts (`Maintenance.of`) with the model's merger, summariser and
judge when there is one; every public method goes through the error boundary."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from memory import activity, admin
from memory.boundary import translate_store_errors
from memory.config import Settings
from memory.embeddings import CachedEmbedder
from memory.maintenance import consolidate, runner, summaries
from memory.maintenance.consolidate import (
    MergeProposal,
    SameFactJudge,
    StaleMergeError,
    TextMerger,
)
from memory.maintenance.records import load_memos
from memory.maintenance.retention import decay_changes, delete_expired, expired, write_decay
from memory.maintenance.runner import MaintenanceReport, UserReport
from memory.maintenance.summaries import Summariser, SummaryOutcome
from memory.models import check_id, now_ms
from memory.replies import as_str
from memory.stores import Stores

if TYPE_CHECKING:
    from memory.coordinator import MemoryCoordinator

log = logging.getLogger(__name__)


@translate_store_errors
@dataclass(eq=False)
class Maintenance:
    _stores: Stores
    _embedder: CachedEmbedder
    settings: Settings
    merger: TextMerger | None = None
    summariser: Summariser | None = None
    #: with a judge, consolidation proposes by meaning (docs/maintenance.md)
    judge: SameFactJudge | None = None

    @classmethod
    def of(
        cls,
        coordinator: MemoryCoordinator,
        merger: TextMerger | None = None,
        summariser: Summariser | None = None,
        judge: SameFactJudge | None = None,
    ) -> Maintenance:
        return cls(
            coordinator.stores,
            coordinator.embedder,
            coordinator.settings,
            merger,
            summariser,
            judge,
        )

    def run(
        self,
        *,
        user_id: str | None = None,
        dry_run: bool = False,
        at_ms: int | None = None,
        progress: Callable[[str, int, int], None] | None = None,
    ) -> MaintenanceReport:
        """Summarise, consolidate, expire and decay (a dry run only lists what it would do, and
        runs without the lock: it writes nothing); MaintenanceBusyError when another run holds
        the lock. Without a summariser, due summaries are marked waiting. `progress` hears
        ("users", done, total) per user."""
        stores = self._stores
        now = at_ms if at_ms is not None else now_ms()
        users = (
            [check_id(user_id)]
            if user_id
            else sorted(as_str(u) for u in stores.client.smembers(stores.keys.users))
        )
        report = MaintenanceReport(at_ms=now, dry_run=dry_run)
        with nullcontext(lambda: None) if dry_run else self._lock() as keep:
            report.active_before = runner.count_active(stores, users)
            for u in users:
                keep()
                report.users.append(self._run_user(u, now, dry_run, keep))
                if progress is not None:
                    progress("users", len(report.users), len(users))
            if not dry_run and not user_id:
                summaries.drop_stale_markers(stores, set(users))
            report.active_after = runner.count_active(stores, users)
            report.summaries_waiting = len(summaries.pending(stores))
            if not dry_run:
                runner.save_report(stores, report)
        log.info("maintenance%s: %s", " (dry run)" if dry_run else "", report.totals())
        return report

    def _run_user(
        self, user_id: str, now: int, dry_run: bool, keep_lock: Callable[[], None]
    ) -> UserReport:
        stores, embedder, settings = self._stores, self._embedder, self.settings
        report = UserReport(user_id=user_id)
        # Summaries first: they are new memories, so the rest of the run sees them.
        for due in summaries.due_sessions(stores, user_id, now, settings.summary_idle_s):
            done = (  # a dry run lists what is due, with no id nor text yet
                SummaryOutcome("pending", messages=due.messages, memory_ids=[""], texts=[""])
                if dry_run
                else summaries.run_due(stores, embedder, user_id, due, self.summariser, now)
            )
            report.summarised += [
                {
                    "id": mid,
                    "session_id": due.session_id,
                    "messages": done.messages,
                    "text": text,
                    "reason": due.reason,
                }
                for mid, text in zip(done.memory_ids, done.texts, strict=True)
            ]
        report.summaries_waiting = len(summaries.pending(stores, user_id))
        memos = load_memos(stores, user_id)
        proposals = consolidate.propose_merges(
            stores,
            user_id,
            settings.consolidation_min_similarity,
            memos,
            judge=self.judge,
            proposal_similarity=settings.consolidation_proposal_similarity,
            remember_apart=not dry_run,
            keep_lock=keep_lock,
        )
        for p in proposals:
            if dry_run:
                report.consolidated.append(p)
                continue
            keep_lock()  # each merge may wait on the model
            try:
                record = self._apply(p, now)
            except StaleMergeError as e:  # edited while the run went on: next run sees the edit
                log.info("merge skipped: %s", e)
                continue
            report.consolidated.append(p.model_copy(update={"canonical_text": record.text_after}))
            report.merge_ids.append(record.id)
        gone = expired(memos, settings, now)
        report.expired = [{"id": m.id, "text": m.text, "kind": m.event_type} for m in gone]
        if not dry_run:
            delete_expired(stores, embedder, user_id, gone)
            activity.record(stores.client, stores.keys, user_id, "expired", len(gone), now)
        # Merged members left recall; canonicals just got a new importance: neither decays now.
        merged = {mid for p in report.consolidated for mid in [p.canonical_id, *p.member_ids]}
        gone_ids = {m.id for m in gone} | merged
        live = [m for m in memos if m.id not in gone_ids]
        changes, state = decay_changes(stores, user_id, live, settings, now)
        report.decayed = [asdict(c) for c in changes]  # id, text, before, after, recalled
        if not dry_run:
            write_decay(stores, user_id, changes, state)
            if report.summarised or report.merge_ids or gone or changes:
                self._noted(user_id)
        return report

    def summarise_session(
        self,
        user_id: str,
        session_id: str,
        summariser: Summariser | None,
        *,
        before_id: str | None = None,
        reason: str = "trimmed",
    ) -> SummaryOutcome:
        """After a turn whose older messages left the prompt: summarise those not summarised
        yet (at least SUMMARY_MIN_MESSAGES, or any when one was waiting); `summariser` None
        (no model now) marks the session waiting."""
        check_id(user_id)
        check_id(session_id, "session id")
        outcome = summaries.summarise_session(
            self._stores,
            self._embedder,
            user_id,
            session_id,
            summariser,
            reason=reason,
            now_ms=now_ms(),
            before_id=before_id,
            min_messages=self.settings.summary_min_messages,
        )
        if outcome.memory_ids:
            self._noted(user_id)
        return outcome

    def summaries_waiting(self, user_id: str | None = None) -> list[dict[str, Any]]:
        """Sessions whose summary waits for the model: user_id, session_id, reason, since_ms."""
        return summaries.pending(self._stores, user_id)

    def accept_merge(self, proposal: dict[str, Any]) -> str:
        """Carry out one proposal of a dry run; the merge id. Raises StaleMergeError (an
        InvalidInputError) when its memories changed since the dry run."""
        p = MergeProposal.model_validate(proposal)
        with self._lock():
            record = self._apply(p, now_ms())
        self._noted(p.user_id)
        return record.id

    def _apply(self, p: MergeProposal, at_ms: int) -> consolidate.MergeRecord:
        return consolidate.apply_merge(
            self._stores,
            self._embedder,
            p,
            at_ms,
            self.merger,
            min_similarity=self.settings.consolidation_min_similarity,
            proposal_similarity=self.settings.consolidation_proposal_similarity,
        )

    def reject_merge(self, proposal: dict[str, Any]) -> None:
        """Never propose this cluster again."""
        with self._lock():
            consolidate.reject_merge(self._stores, MergeProposal.model_validate(proposal))

    def merges(self, user_id: str, limit: int = 50) -> list[dict[str, Any]]:
        check_id(user_id)
        return [
            r.model_dump(mode="json") for r in consolidate.list_merges(self._stores, user_id, limit)
        ]

    def undo_merge(self, user_id: str, merge_id: str) -> dict[str, Any]:
        check_id(user_id)
        with self._lock():
            record = consolidate.undo_merge(self._stores, self._embedder, user_id, merge_id)
        self._noted(user_id)
        return record.model_dump(mode="json")

    def _noted(self, user_id: str) -> None:
        """The user's memories changed: bump their Stats version."""
        admin.note_write(self._stores.client, self._stores.keys, user_id)

    def last_report(self, user_id: str) -> dict[str, Any] | None:
        """The last real run that covered this user (their part of it only)."""
        return runner.last_report(self._stores, user_id)

    def history(self) -> list[dict[str, int]]:
        return runner.report_history(self._stores)

    def _lock(self) -> AbstractContextManager[Callable[[], None]]:
        # Merges, undo and rejection change what a running maintenance is working on.
        return runner.maintenance_lock(self._stores.client, self._stores.keys)
