"""`python -m memory bench pages`: how long a person waits for a usable page, in a real browser.

The app runs as it does for people: `streamlit run app.py` in a subprocess (this package never
imports the app), on the bench's Redis with the demo persona loaded, and Chromium (Playwright)
opens it:

    cold open   a server nobody has opened yet, the chat page of the persona: from the request
                to the page being usable (its title drawn and the script run over), which
                includes building the shared resources (embedding model, agent, Redis)
    warm open   the chat page again in a new browser tab of the same server
    stats       the Stats page of the persona in a new tab: until its run is over and the
                growth chart is drawn

Each figure is measured `--runs` times (a new server for each cold open); the median and the
slowest are reported. Wall-clock on this machine: on a shared, busy machine the figures move
with the load, so say so wherever they are quoted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from memory.bench.common import Progress, bench_redis, git_commit, make_coordinator, table
from memory.config import PROJECT_ROOT

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
USABLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
START_TIMEOUT_S = 90.0


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("pages", help="time to a usable page: cold first open, Stats (browser)")
    p.add_argument("--runs", type=int, default=3, help="measurements per figure (default 3)")
    p.add_argument(
        "--ollama-host",
        default="http://127.0.0.1:9",
        help="Ollama for the app (default: nothing listens: memory-only mode, as offline)",
    )
    p.add_argument("--redis-url", help="use this Redis Stack (fresh namespace)")
    p.add_argument(
        "--app-dir",
        type=Path,
        default=PROJECT_ROOT,
        help="the checkout whose app.py runs (default this one; another one to compare)",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument(
        "--record",
        action="store_true",
        help="also write this run's figures to benchmarks/results/ (memory.bench.results)",
    )
    p.set_defaults(fn=main)


def _redis_url(client: Any) -> str:
    kw = client.connection_pool.connection_kwargs
    return f"redis://{kw.get('host', '127.0.0.1')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"


class _App:
    """One `streamlit run app.py` on a free loopback port, stopped by its own PID."""

    def __init__(self, app_dir: Path, redis_url: str, ns: str, ollama: str, log: Path) -> None:
        from memory.runtime.server import free_port

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "REDIS_URL": redis_url,
            "MEMORY_NAMESPACE": ns,
            "OLLAMA_HOST": ollama,
            "MAINTENANCE_INTERVAL_S": "0",
        }
        cmd = [
            sys.executable, "-m", "streamlit", "run", "app.py",
            "--server.address", "127.0.0.1", "--server.port", str(self.port),
            "--server.headless", "true", "--browser.gatherUsageStats", "false",
            "--server.fileWatcherType", "none",
        ]  # fmt: skip
        self._log = log.open("wb")
        self.proc = subprocess.Popen(cmd, cwd=app_dir, env=env, stdout=self._log, stderr=self._log)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                raise SystemExit(f"streamlit exited ({self.proc.returncode}); log: {log}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=1) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise SystemExit(f"streamlit did not answer in {START_TIMEOUT_S:.0f}s; log: {log}")
            time.sleep(0.05)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self._log.close()


def _time_open(browser: Any, url: str, heading: str, chart: str | None = None) -> float:
    """Seconds from the request to a usable page, in a new tab."""
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    try:
        t0 = time.perf_counter()
        page.goto(url)
        page.get_by_role("heading", name=heading, level=1).wait_for(timeout=60_000)
        page.wait_for_selector(USABLE, timeout=60_000)
        if chart:
            page.locator(".js-plotly-plot .gtitle", has_text=chart).wait_for(timeout=60_000)
        return time.perf_counter() - t0
    finally:
        page.close()


def _summary(samples: list[float]) -> dict[str, Any]:
    return {
        "median_s": round(statistics.median(samples), 3),
        "max_s": round(max(samples), 3),
        "runs_s": [round(s, 3) for s in samples],
    }


def main(args: argparse.Namespace, settings: Any = None) -> int:
    from playwright.sync_api import sync_playwright

    from memory.demo import DEMO_USER, load_demo

    if args.runs < 1:
        raise SystemExit("--runs must be at least 1")
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing: run `make setup-test`")
    say = Progress(args.quiet)
    logs = Path(os.environ.get("TMPDIR", "/tmp"))
    cold: list[float] = []
    warm: list[float] = []
    stats: list[float] = []
    with bench_redis(args.redis_url) as (client, ns):
        say("Loading the demo persona…", force=True)
        coord = make_coordinator(client, ns, load_knowledge=True)
        try:
            load_demo(coord, DEMO_USER)
            coord.bookkeeping.drain()
            embedder = coord.embedder.model_id  # the app's too: it builds the same one
        finally:
            coord.close()
        chat_url = f"?user={DEMO_USER}"
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                for i in range(args.runs):
                    log = logs / f"bench-pages-{i}.log"
                    app = _App(args.app_dir, _redis_url(client), ns, args.ollama_host, log)
                    try:
                        say(f"Run {i + 1}/{args.runs}: cold open…", force=True)
                        cold.append(
                            _time_open(browser, f"{app.url}/{chat_url}", "💬 Chat with memory")
                        )
                        warm.append(
                            _time_open(browser, f"{app.url}/{chat_url}", "💬 Chat with memory")
                        )
                        stats.append(
                            _time_open(
                                browser,
                                f"{app.url}/stats{chat_url}",
                                "📊 Stats",
                                chart="Growth over time",
                            )
                        )
                    finally:
                        app.stop()
            finally:
                browser.close()
    result = {
        "bench": "pages",
        "commit": git_commit(),
        "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "ollama": args.ollama_host,
        "app_dir": str(args.app_dir),
        "cold_open": _summary(cold),
        "warm_open": _summary(warm),
        "stats": _summary(stats),
    }
    if args.record:
        from memory.bench import results

        results.record_run(
            "pages",
            results.pages_figures(result),
            prog="python -m memory",
            commit=result["commit"],
            embedder=embedder,
            note=f"Ollama at {args.ollama_host}",
        )
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    rows = [
        [name, f"{result[key]['median_s']:.2f}", f"{result[key]['max_s']:.2f}"]
        for name, key in (
            ("cold first open (chat)", "cold_open"),
            ("open again (chat)", "warm_open"),
            ("Stats", "stats"),
        )  # fmt: skip
    ]
    print(table(["page", "median s", "slowest s"], rows))
    print(
        f"\n{args.runs} run(s), commit {result['commit']}, load average "
        f"{result['load_average']} on {result['cpus']} CPUs (a busy machine is slower)."
    )
    return 0
