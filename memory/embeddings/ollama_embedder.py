"""Embeddings from a local Ollama server (e.g. nomic-embed-text), created lazily: nothing talks to
Ollama until the first embedding, whose answer gives the dimension."""

from __future__ import annotations

from typing import Any

import numpy as np

from memory.embeddings.base import l2_normalise
from memory.errors import EmbedderError

KNOWN_DIMS = {"nomic-embed-text": 768, "mxbai-embed-large": 1024, "all-minilm": 384}


class OllamaEmbedder:
    def __init__(self, model: str, host: str, timeout_s: float = 60.0) -> None:
        self._model = model
        self._host = host
        self._timeout = timeout_s
        self._client: Any = None
        self._dims: int | None = KNOWN_DIMS.get(model.split(":")[0])

    @property
    def model_id(self) -> str:
        return f"ollama:{self._model}"

    @property
    def dims(self) -> int:
        if self._dims is None:
            self._dims = int(self.embed("dimension probe").shape[0])
        return self._dims

    def _get_client(self) -> Any:
        if self._client is None:
            import ollama

            self._client = ollama.Client(host=self._host, timeout=self._timeout)
        return self._client

    def embed(self, text: str) -> np.ndarray:
        return self.embed_many([text])[0]

    def embed_many(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dims or 0), dtype=np.float32)
        import ollama

        try:
            resp = self._get_client().embed(model=self._model, input=texts)
        except ollama.ResponseError as e:
            if e.status_code == 404:
                raise EmbedderError(
                    f"Embedding model {self._model!r} is not pulled: "
                    f"run `ollama pull {self._model}`."
                ) from e
            raise EmbedderError(f"Ollama embedding failed: {e.error}") from e
        except (ConnectionError, OSError) as e:
            raise EmbedderError(
                f"Ollama is not reachable at {self._host}: start it with `ollama serve`, "
                "or set EMBEDDING_PROVIDER=onnx."
            ) from e
        matrix = l2_normalise(np.asarray(resp.embeddings, dtype=np.float32))
        if self._dims is None:
            self._dims = matrix.shape[1]
        elif matrix.shape[1] != self._dims:
            raise EmbedderError(
                f"Ollama model {self._model!r} returned {matrix.shape[1]} dimensions, "
                f"expected {self._dims}."
            )
        return matrix
