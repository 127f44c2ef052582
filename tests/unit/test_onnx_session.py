"""The ONNX embedder's session settings (issue 19 item 5: bulk ingest)."""

from __future__ import annotations

from memory.embeddings import OnnxMiniLMEmbedder


def test_idle_onnx_threads_sleep_instead_of_spinning() -> None:
    """Spinning threads took the cores the other processes of a 2-core machine needed: bulk
    ingest ran 1.6-1.8x slower with them (same vectors)."""
    session = OnnxMiniLMEmbedder()._session
    options = session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
