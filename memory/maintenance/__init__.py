"""Memory hygiene over months: consolidation of near duplicates, session summaries, retention
by kind, importance decay, and the `maintain` run that does them all (docs/maintenance.md).

    similarity.py   when two memories are the same fact (cosine + lexical rule, or the
                    model's candidates and the lexical guard that vetoes them)
    consolidate.py  merge proposals (judged by the model when there is one), merges (kept
                    as history), undo, rejections
    summaries.py    session summaries of trimmed or idle turns (waiting without a model)
    retention.py    expiry by kind, importance decay and growth
    runner.py       one run under a Redis lock, the stored report
    service.py      `Maintenance`, the facade the CLI and the app use
    background.py   the app's daemon thread
"""

from memory.maintenance.background import MaintenanceScheduler
from memory.maintenance.consolidate import (
    MergeProposal,
    MergeRecord,
    SameFactJudge,
    StaleMergeError,
    TextMerger,
)
from memory.maintenance.runner import MaintenanceBusyError, MaintenanceReport, UserReport
from memory.maintenance.service import Maintenance
from memory.maintenance.similarity import linked, mergeable, same_fact, veto
from memory.maintenance.summaries import Summariser, SummaryOutcome

__all__ = [
    "Maintenance",
    "MaintenanceBusyError",
    "MaintenanceReport",
    "MaintenanceScheduler",
    "MergeProposal",
    "MergeRecord",
    "SameFactJudge",
    "StaleMergeError",
    "Summariser",
    "SummaryOutcome",
    "TextMerger",
    "UserReport",
    "linked",
    "mergeable",
    "same_fact",
    "veto",
]
