"""Operations on the stored memories beyond recall and writes: the editor (list, read,
change, delete), purges, forgetting a topic, export/import, counts, health and re-embedding.
Each gets the stores and the embedder it uses, never the coordinator."""

from memory.admin.editing import (
    apply_update,
    delete_memory,
    list_memories,
    plan_episodic_update,
    queue_episodic_write,
    read_memory,
)
from memory.admin.followups import finish_pending
from memory.admin.health import check_health
from memory.admin.knowledge import load_knowledge
from memory.admin.purge import clear_session, purge_user
from memory.admin.stats import memory_stats, note_write, writes_version
from memory.admin.transfer import export_user, import_user, interrupted_imports

__all__ = [
    "apply_update",
    "check_health",
    "clear_session",
    "delete_memory",
    "export_user",
    "finish_pending",
    "import_user",
    "interrupted_imports",
    "load_knowledge",
    "list_memories",
    "memory_stats",
    "note_write",
    "writes_version",
    "plan_episodic_update",
    "purge_user",
    "queue_episodic_write",
    "read_memory",
]
