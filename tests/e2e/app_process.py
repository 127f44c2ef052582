"""One `streamlit run app.py` process and the Chromium that opens it: the browser tests'
set-up, also used by the lab's page timings (`lab/page_times.py`), so both run the app alike.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import free_port
from memory.config import PROJECT_ROOT

#: Debian's Chromium (`make setup-test` installs it), headless, without background traffic
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0


@dataclass
class AppServer:
    """One `streamlit run app.py` process."""

    url: str
    namespace: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """Stop our own process by its PID: SIGTERM, then SIGKILL if it hangs."""
        if self.process.poll() is not None:
            return
        os.kill(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(STOP_TIMEOUT_S)


def start_app(
    redis_url: str,
    namespace: str,
    ollama_url: str,
    log_dir: Path,
    *,
    env_extra: dict[str, str] | None = None,
    args_extra: list[str] | None = None,
    app_dir: Path = PROJECT_ROOT,
) -> AppServer:
    """`env_extra`/`args_extra`: e.g. AUTH_MODE=oidc and `--secrets.files` of the test's own
    secrets file (tests/e2e/test_sign_in.py); `app_dir`: the checkout whose app.py runs."""
    port = free_port()
    log_path = log_dir / f"streamlit-{port}.log"
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "MEMORY_NAMESPACE": namespace,
        "OLLAMA_HOST": ollama_url,
        "PYTHONUNBUFFERED": "1",
        **(env_extra or {}),
    }
    cmd = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.address", "127.0.0.1",
        "--server.port", str(port),
        "--server.headless", "true",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
        *(args_extra or []),
    ]  # fmt: skip
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, cwd=app_dir, env=env, stdout=log, stderr=log)
    server = AppServer(f"http://127.0.0.1:{port}", namespace, proc, log_path)
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(f"{server.url}/_stcore/health", timeout=1) as r:
                if r.status == 200:
                    return server
        except OSError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(
                f"streamlit did not answer in {START_TIMEOUT_S}s:\n{server.log_tail()}"
            )
        time.sleep(0.1)
