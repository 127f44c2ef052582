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
    stats: KEY    then each of its sections opened alone in that session (a click's rerun)

For each it prints the wall and the CPU time (the CPU time moves less with the machine's
load), the shares of named parts (cumulative time of the functions that build them, so nested
parts overlap) and the top functions by cumulative time; `--out` keeps the `.prof` files
(`python -m pstats FILE`). cProfile slows many small calls more than a few large ones: read
the shares, and take the seconds from `--plain` (the same steps, timed without the profiler).
`--app-dir` runs another checkout's product code to compare two versions on one machine;
`--imports N --app-dir DIR` times only app.py's imports, N fresh interpreters of each, alternating.
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
import statistics
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


#: The Stats page's lazy sections (their expanders' keys): each is built only when opened.
STATS_SECTIONS = ("stats_more_memories", "stats_recall", "stats_cache", "stats_maintenance")


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
    stats = step("stats", lambda: new("pages/stats.py").run())
    for key in STATS_SECTIONS:  # each opened alone (an expander's state: what a click sets)
        for other in STATS_SECTIONS:
            stats.session_state[other] = other == key
        step(f"stats: {key} opened", stats.run)
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


# --- the imports alone ------------------------------------------------------------------------

#: what app.py imports before it draws anything (its own module-level imports)
APP_IMPORTS = (
    "import streamlit, agent.types, memory.errors, memory.models, ui.answers, ui.details, "
    "ui.errors, ui.format, ui.layout, ui.remembered, ui.stopping; "
    "from ui import demo, private, resources, sessions, state"
)


def import_cpu(root: Path) -> tuple[float, bool]:
    """(CPU seconds a fresh interpreter spends importing what app.py imports from `root`,
    whether pandas came with them)."""
    code = (
        f"import sys, time; sys.path.insert(0, {str(root)!r}); c = time.process_time(); "
        f"{APP_IMPORTS}; print(time.process_time() - c, 'pandas' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    ).stdout.split()
    return float(out[0]), out[1] == "True"


def compare_imports(runs: int, here: Path, other: Path) -> None:
    """`runs` alternating fresh imports of both checkouts (the load falls on both alike)."""
    cpu: dict[Path, list[float]] = {here: [], other: []}
    pandas = {}
    for _ in range(runs):
        for root in (other, here):
            secs, pandas[root] = import_cpu(root)
            cpu[root].append(secs)
    for root, secs in cpu.items():
        print(
            f"{root}: imports {statistics.median(secs):.2f} s CPU (median of {runs}; "
            f"{', '.join(f'{s:.2f}' for s in secs)}), pandas imported: {pandas[root]}"
        )


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
    p.add_argument(
        "--imports",
        type=int,
        metavar="N",
        help="only app.py's imports: N alternating fresh imports of this checkout and --app-dir",
    )
    p.add_argument("--app-dir", type=Path, default=Path(__file__).resolve().parent.parent)
    p.add_argument("--child-user", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.imports:
        print(f"load average at start {os.getloadavg()}")
        compare_imports(args.imports, Path(__file__).resolve().parent.parent, args.app_dir)
        print(f"load average at end {os.getloadavg()}")
        return 0
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
