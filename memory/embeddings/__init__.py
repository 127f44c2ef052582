"""Embedders: the interface, the local ONNX default, Ollama, and the query cache."""

from __future__ import annotations

from memory.config import Settings
from memory.embeddings.base import Embedder, l2_normalise
from memory.embeddings.cache import CachedEmbedder
from memory.embeddings.ollama_embedder import OllamaEmbedder
from memory.embeddings.onnx_minilm import OnnxMiniLMEmbedder

__all__ = [
    "CachedEmbedder",
    "Embedder",
    "OnnxMiniLMEmbedder",
    "build_embedder",
    "l2_normalise",
]


def build_embedder(settings: Settings) -> Embedder:
    """The embedder chosen by EMBEDDING_PROVIDER."""
    if settings.embedding_provider == "ollama":
        return OllamaEmbedder(settings.ollama_embed_model, settings.ollama_host)
    return OnnxMiniLMEmbedder()
