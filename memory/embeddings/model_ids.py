"""The local embedder's model ids, and which stored vectors another model's queries may search:
never another model's (`memory.stores.schema`), except the same weights at another precision."""

from __future__ import annotations

from memory.embeddings.token_int8 import REWRITE_VERSION

#: the packaged graph as it is (weights dequantized in the graph, fp32 multiplication)
PACKAGED_MODEL_ID = "all-MiniLM-L6-v2-int8-onnx"
#: the same weights, each MatMul's input quantized per token (`memory.embeddings.token_int8`)
TOKEN_INT8_MODEL_ID = f"{PACKAGED_MODEL_ID}-tok8v{REWRITE_VERSION}"

#: Models whose vectors are searched together: the same weights run three ways. A text's vectors
#: from the packaged graph and the first rewrite (v1) have cosine 0.9994 on average (0.998 at
#: worst on the bench's texts, LoCoMo's turns and short texts), and a store written by the
#: packaged graph and searched with v1 recalls as well as one written and searched by either
#: (`python -m lab.quantized_embedder bench`); v2 runs v1's graph without one fusion of ONNX
#: Runtime, and its vectors are closer still to v1's. So no upgrade asks anybody to re-embed;
#: `python -m memory reembed` still can.
#: Named by version on purpose: a new rewrite (REWRITE_VERSION 3) shares no space with stores
#: of these until it is measured and added here.
_MINILM_SPACE = frozenset(
    {PACKAGED_MODEL_ID, f"{PACKAGED_MODEL_ID}-tok8v1", f"{PACKAGED_MODEL_ID}-tok8v2"}
)
#: for each model, the models whose stored vectors its queries may search
SAME_VECTOR_SPACE: dict[str, frozenset[str]] = {m: _MINILM_SPACE - {m} for m in _MINILM_SPACE}


def same_vector_space(stored: str, configured: str) -> bool:
    """True when vectors stored by model `stored` may be searched with `configured`'s."""
    return stored == configured or stored in SAME_VECTOR_SPACE.get(configured, frozenset())
