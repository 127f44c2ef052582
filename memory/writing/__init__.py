"""Writing memories: the one policy every writer goes through (`policy`), with what it reads of a
text: its kind, slot and #tags (`classify`), trigger phrases (`triggers`), support in what the
user said (`grounding`) and secrets (`secrets`)."""

from memory.writing.classify import (
    FACT_EVENT_TYPE,
    SLOTS,
    classify_event_type,
    detect_slot,
)
from memory.writing.grounding import Grounding, check_grounded, stated
from memory.writing.policy import (
    MemoryCandidate,
    StoredMemory,
    WritePolicy,
    candidate_for,
    write_fact,
)
from memory.writing.secrets import PiiPolicy, found_in, mask_secrets
from memory.writing.triggers import extract_triggers

__all__ = [
    "FACT_EVENT_TYPE",
    "SLOTS",
    "Grounding",
    "MemoryCandidate",
    "PiiPolicy",
    "StoredMemory",
    "WritePolicy",
    "candidate_for",
    "check_grounded",
    "classify_event_type",
    "detect_slot",
    "extract_triggers",
    "found_in",
    "mask_secrets",
    "stated",
    "write_fact",
]
