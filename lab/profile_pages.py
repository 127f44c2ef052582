"""Where the time goes when a person opens the chat, asks, and opens Stats (research).

    python -m lab.profile_pages [--store demo|busy] [--top 25] [--out DIR] [--app-dir DIR]

Fills a private Redis Stack with `lab.page_times`' store, then runs the pages in a fresh
Python process (so the project's imports are part of the cold open, as in a new server)
under Streamlit's AppTest, each step under cProfile:

    cold open     app.py's first run in the process: the project's imports, the shared
                  resources (Redis, indexes, the embedding model, the agent) and the page
    open again    app.py in a new session of the same process (what a second tab costs)
    turn          a memory-only turn (nothing listens at Ollama), Enter to the answer
    stats         pages/stats.py in a new session: its first visit

For each it prints the wall and the CPU time (the CPU time moves less with the machine's
load), the shares of named parts (cumulative time of the functions that build them, so nested
parts overlap) and the top functions by cumulative time; `--out` keeps the `.prof` files
(`python -m pstats FILE`). cProfile slows many small calls more than a few large ones: read
the shares, and take the seconds from `--plain` (the same steps, timed without the profiler).
`--app-dir` runs another checkout's product code to compare two versions on one machine.
AppTest runs the script without a browser or websocket: Streamlit's server start and the
browser's drawing are not in these figures (`lab.page_times browser` has them). Say the load
with every figure.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

#: Named parts of a page's time: (label, substring of "file:line(function)" in the profile).
PARTS = (
    ("imports (all)", "<frozen importlib._bootstrap>:1165(_find_and_load)"),
    ("embedding model load", "onnx_minilm.py"),
    ("memory coordinator built", "coordinator.py", "from_settings"),
    ("chat agent built", "resources.py", "_agent"),
    ("Streamlit's REPL check", "streamlit/env_util.py", "is_repl"),
    ("tool specs (JSON schema)", "agent/tools/registry.py", "build_spec"),
    ("HTTP clients' TLS set-up", "httpx/_config.py", "create_ssl_context"),
    ("model status checks", "agent/", "status"),
    ("model list", "agent/", "list_models"),
    ("sidebar", "ui/sidebar.py", "render_sidebar"),
    ("chat history", "app.py", "history"),
    ("the turn (agent)", "agent/loop.py", "run_turn"),
    ("recall", "memory/coordinator.py", "retrieve_all_context"),
    ("stats page sections", "pages/stats.py", "<module>"),
    ("charts (figures)", "ui/charts.py", ""),
    ("plotly", "plotly/", ""),
    ("pandas", "pandas/", ""),
    ("redis commands", "redis/client.py", "execute_command"),
    ("redis pipelines", "redis/client.py", "execute"),
)


def part_times(stats: pstats.Stats) -> list[tuple[str, float]]:
    """The cumulative seconds of each named part: the largest cumulative time among the
    functions that match it (a part's outermost function holds the nested ones)."""
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    out = []
    for label, where, *func in PARTS:
        best = 0.0
        for (filename, line, name), (_cc, _nc, _tt, ct, _callers) in raw.items():
            key = f"{filename}:{line}({name})"
            if where in key and (not func or func[0] in name):
                best = max(best, ct)
        out.append((label, best))
    return out


# --- the child: a fresh process that runs the pages ----------------------------------------


def child(out_dir: Path, user: str, top: int, root: Path, plain: bool) -> None:
    sys.path.insert(0, str(root))  # the product code of the checkout profiled
    t_start = time.perf_counter()
    from streamlit.runtime.scriptrunner import script_runner
    from streamlit.testing.v1 import AppTest

    t_streamlit = time.perf_counter() - t_start
    profiles: dict[str, cProfile.Profile] = {}
    current: list[str] = []
    original = script_runner.exec_func_with_error_handling

    def profiled(func: Any, ctx: Any) -> Any:
        if plain:
            return original(func, ctx)
        return profiles[current[0]].runcall(original, func, ctx)

    script_runner.exec_func_with_error_handling = profiled
    walls: dict[str, float] = {}
    cpus: dict[str, float] = {}

    def step(name: str, run: Any) -> Any:
        profiles[name] = cProfile.Profile()
        current[:] = [name]
        t0, c0 = time.perf_counter(), time.process_time()
        at = run()
        walls[name] = time.perf_counter() - t0
        cpus[name] = time.process_time() - c0
        if at.exception:
            raise SystemExit(f"{name}: the page failed: {at.exception[0].value}")
        return at

    def new(script: str) -> Any:
        at = AppTest.from_file(str(root / script), default_timeout=300)
        at.session_state["user_id"] = user
        at.session_state["session_id"] = f"profile-{time.monotonic_ns()}"
        return at

    step("cold open", lambda: new("app.py").run())
    chat = step("open again", lambda: new("app.py").run())
    step(
        "turn",
        lambda: chat.chat_input(key="chat_input").set_value("What do I eat before a run?").run(),
    )
    step("stats", lambda: new("pages/stats.py").run())
    script_runner.exec_func_with_error_handling = original

    print(f"streamlit + AppTest import before the first run: {t_streamlit:.2f} s")
    for name, prof in profiles.items():
        print(f"\n=== {name}: {walls[name]:.2f} s wall, {cpus[name]:.2f} s CPU ({root}) ===")
        if plain:
            continue
        prof.dump_stats(str(out_dir / f"{name.replace(' ', '_')}.prof"))
        stats = pstats.Stats(prof)
        for label, secs in part_times(stats):
            if secs >= 0.005:
                print(f"  {label:28s} {secs:7.3f} s  {100 * secs / walls[name]:5.1f} %")
        stats.sort_stats("cumulative").print_stats(top)


# --- the parent: the store, then the child ---------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m lab.profile_pages",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--store", choices=("demo", "busy"), default="demo")
    p.add_argument("--memories", type=int, default=300, help="busy store: memories")
    p.add_argument("--samples", type=int, default=50_000, help="busy store: latency samples")
    p.add_argument("--top", type=int, default=25, help="functions listed per step")
    p.add_argument("--out", type=Path, help="keep the .prof files here")
    p.add_argument("--plain", action="store_true", help="times only, without cProfile")
    p.add_argument("--app-dir", type=Path, default=Path(__file__).resolve().parent.parent)
    p.add_argument("--child-user", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    out_dir = args.out or Path(tempfile.mkdtemp(prefix="profile-pages-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.child_user:
        child(out_dir, args.child_user, args.top, args.app_dir.resolve(), args.plain)
        return 0

    from benchmarks.common import bench_redis
    from lab.page_times import load_store, redis_url

    args.ollama_host = "http://127.0.0.1:9"
    print(f"load average at start {os.getloadavg()}", flush=True)
    with bench_redis(None) as (client, ns):
        user, _ = load_store(client, ns, args)
        env = dict(
            os.environ,
            REDIS_URL=redis_url(client),
            MEMORY_NAMESPACE=ns,
            OLLAMA_HOST=args.ollama_host,
            MAINTENANCE_INTERVAL_S="0",
        )
        # run by its path, so that `--app-dir`'s packages come first on sys.path (`child`)
        cmd = [sys.executable, str(Path(__file__).resolve()), "--child-user", user]
        cmd += ["--top", str(args.top), "--out", str(out_dir), "--app-dir", str(args.app_dir)]
        cmd += ["--plain"] if args.plain else []
        code = subprocess.call(cmd, env=env)
    print(f"\nload average at end {json.dumps(os.getloadavg())}; profiles in {out_dir}")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
