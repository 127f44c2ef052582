"""The local embedder's model ids, and which stored vectors another model's queries may search:
never another model's (`memory.stores.schema`), except the same weights at another precision."""

from __future__ import annotations

from memory.embeddings.token_int8 import REWRITE_VERSION

#: the packaged graph as it is (weights dequantized in the graph, fp32 multiplication)
PACKAGED_MODEL_ID = "all-MiniLM-L6-v2-int8-onnx"
#: the same weights, each MatMul's input quantized per token (`memory.embeddings.token_int8`)
TOKEN_INT8_MODEL_ID = f"{PACKAGED_MODEL_ID}-tok8v{REWRITE_VERSION}"

#: Models whose vectors are searched together: the same weights run three ways, as measured in
#: docs/performance.md. Named by version on purpose: a new rewrite shares no space with these
#: stores until it is measured and added here.
_MINILM_SPACE = frozenset(
    {PACKAGED_MODEL_ID, f"{PACKAGED_MODEL_ID}-tok8v1", f"{PACKAGED_MODEL_ID}-tok8v2"}
)
#: for each model, the models whose stored vectors its queries may search
SAME_VECTOR_SPACE: dict[str, frozenset[str]] = {m: _MINILM_SPACE - {m} for m in _MINILM_SPACE}


def same_vector_space(stored: str, configured: str) -> bool:
    """True when vectors stored by model `stored` may be searched with `configured`'s."""
    return stored == configured or stored in SAME_VECTOR_SPACE.get(configured, frozenset())
