"""Memory hygiene over months: consolidation of near duplicates, session summaries, retention
by kind, importance decay, and the `maintain` run that does them all (docs/maintenance.md);
`Maintenance` (service.py) is the facade the CLI and the app use."""

from memory.maintenance.background import MaintenanceScheduler
from memory.maintenance.consolidate import (
    SameFactJudge,
    StaleMergeError,
    TextMerger,
)
from memory.maintenance.runner import MaintenanceBusyError, MaintenanceReport
from memory.maintenance.service import Maintenance
from memory.maintenance.similarity import linked, mergeable, same_fact, veto
from memory.maintenance.summaries import Summariser, SummaryOutcome

__all__ = [
    "Maintenance",
    "MaintenanceBusyError",
    "MaintenanceReport",
    "MaintenanceScheduler",
    "SameFactJudge",
    "StaleMergeError",
    "Summariser",
    "SummaryOutcome",
    "TextMerger",
    "linked",
    "mergeable",
    "same_fact",
    "veto",
]
