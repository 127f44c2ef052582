"""`Maintenance`: what the CLI, the app's background thread and the Maintenance tab call, built
from the coordinator's parts (`Maintenance.of`) with the model's merger, summariser and judge
when there is one; every public method goes through the error boundary."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory import admin
from memory.boundary import translate_store_errors
from memory.config import Settings
from memory.embeddings import CachedEmbedder
from memory.maintenance import consolidate, runner, summaries
from memory.maintenance.consolidate import MergeProposal, SameFactJudge, TextMerger
from memory.maintenance.runner import MaintenanceReport
from memory.maintenance.summaries import Summariser, SummaryOutcome
from memory.models import check_id, now_ms
from memory.stores import Stores

if TYPE_CHECKING:
    from memory.coordinator import MemoryCoordinator


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
        """Summarise, consolidate, expire and decay (a dry run only lists what it would do).
        Without a summariser, due summaries are marked waiting. `progress`: counts per user."""
        return runner.run_maintenance(
            self._stores,
            self._embedder,
            self.settings,
            now_ms=at_ms if at_ms is not None else now_ms(),
            user_id=user_id,
            dry_run=dry_run,
            merger=self.merger,
            summariser=self.summariser,
            judge=self.judge,
            progress=progress,
        )

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

    def accept_merge(self, proposal: dict[str, Any], at_ms: int | None = None) -> str:
        """Carry out one proposal of a dry run; the merge id. Raises StaleMergeError (an
        InvalidInputError) when its memories changed since the dry run."""
        p = MergeProposal.model_validate(proposal)
        with self._lock():
            record = consolidate.apply_merge(
                self._stores,
                self._embedder,
                p,
                at_ms if at_ms is not None else now_ms(),
                self.merger,
                min_similarity=self.settings.consolidation_min_similarity,
                proposal_similarity=self.settings.consolidation_proposal_similarity,
            )
        self._noted(p.user_id)
        return record.id

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
        return runner.maintenance_lock(
            self._stores.client,
            self._stores.keys.maintenance_lock,
            holder_key=self._stores.keys.maintenance_lock_holder,
        )
