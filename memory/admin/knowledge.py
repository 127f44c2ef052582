"""The shipped knowledge file, loaded into semantic memory once per fact (idempotent)."""

from __future__ import annotations

import logging
from pathlib import Path

from memory.embeddings import CachedEmbedder
from memory.stores import Stores
from memory.stores.semantic import SemanticStore

log = logging.getLogger(__name__)


def load_knowledge(stores: Stores, embedder: CachedEmbedder, path: Path) -> int:
    """Load the facts of the file not loaded before; returns how many were added."""
    if not path.exists():
        log.warning("Knowledge file %s not found; semantic memory starts empty.", path)
        return 0
    facts = stores.semantic.missing_from_store(SemanticStore.read_knowledge_file(path))
    if not facts:
        return 0
    vecs = embedder.embed_many([f.fact for f in facts])
    # Each fact is a key of its own slot: no transaction over them (a sharded Redis refuses
    # one). Facts first, then the record that they are loaded: a failure in between loads
    # them again next time, under the same ids (a digest of the text), replacing themselves.
    pipe = stores.client.pipeline(transaction=False)
    for f, v in zip(facts, vecs, strict=True):
        stores.semantic.write(pipe, f, v)
    pipe.execute()
    pipe = stores.client.pipeline(transaction=False)
    stores.semantic.mark_loaded(pipe, facts)
    pipe.execute()
    log.info("Loaded %d facts from %s", len(facts), path)
    return len(facts)
