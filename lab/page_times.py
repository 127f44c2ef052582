"""How long a person waits for a usable page: in a real browser, and the Stats page's own run.

    python -m lab.page_times browser [--runs 3] [--store demo|busy] [--app-dir DIR] [--question Q]
                                     [--record]
    python -m lab.page_times stats [--runs 7] [--store busy|demo] [--profile]

Both start a private Redis Stack (or a fresh namespace of `--redis-url`) and fill it with one
of two stores: `demo`, the demo persona (`memory.demo`), or `busy`, what a store used for a
while holds: the knowledge file, `--memories` episodic memories of one user, a full latency
stream (`--samples`, the default cap of METRICS_MAX_ENTRIES, spread over the last 24 hours, as
the Stats page's default window shows), counters and a month of maintenance runs. Nothing
listens at the app's Ollama unless `--ollama-host` says otherwise (memory-only mode): the
model plays no part in opening a page.

`browser`: the app runs as it does for people, `streamlit run app.py` in a subprocess
(`tests/e2e/app_process.py`, the browser tests' set-up), and Chromium (Playwright, installed
by `make setup-test`) opens it:

    cold open   a server nobody has opened yet, the chat page of the user: from the request
                to the page being usable (its title drawn and the script run over), which
                includes building the shared resources (agent, Redis; the embedding model
                opens after the page is drawn);
                also the CPU seconds the server used meanwhile (and to the cold answer)
    warm open   the chat page again in a new browser tab of the same server
    stats       the Stats page of the user in a new tab: until its run is over and the
                growth chart is drawn
    answer      a memory-only turn in a new tab of the chat: from the Enter that sends
                `--question` to the page idle with its answer (the turn's run and the rerun
                that shows what it stored), timed inside the page
    cold answer the cold open's tab sends `--question` as soon as it is usable: from the
                request to the page idle with that first answer (what is still loading in
                the background when a person types at once is waited for here)

Each figure is measured `--runs` times (a new server for each cold open); the median and the
slowest are reported, with the load average. `--record` writes the runs to
`benchmarks/results/` (bench "pages"), where BENCHMARKS.md reads them.

`stats`: the Stats page's own code (`pages/stats.py` under Streamlit's AppTest, no browser)
`--runs` times as an admin, each run a new session as a new visitor is (caches emptied), then
once more in the same session as a click does; it prints the median wall times. The first run
also builds the cached resources (embedding model, agent): it is reported apart. `--profile`
prints where one visit and its rerun spend their time (cProfile, cumulative).

Wall-clock on this machine: on a shared, busy machine the figures move with the load, so say
so wherever they are quoted.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis
from redis.typing import EncodableT, FieldT

from benchmarks import results
from benchmarks.common import (
    Progress,
    add_output_args,
    bench_redis,
    git_commit,
    make_coordinator,
    table,
)
from memory.config import PROJECT_ROOT, Settings
from memory.keys import Keys

USABLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
BUSY_USER = "alice"
DAY_MS = 86_400_000
#: One chat turn's samples, as the coordinator records them: (type, op, typical ms, hit?).
TURN = (
    ("embedding", "embed_query", 4.0, None),
    ("episodic", "recall", 3.0, True),
    ("semantic", "recall", 2.5, True),
    ("procedural", "recall", 1.0, False),
    ("short_term", "recall", 0.6, None),
    ("all", "retrieve_all_context", 9.0, True),
    ("short_term", "add", 0.8, None),
    ("episodic", "store_interaction", 5.0, None),
    ("episodic", "search", 6.0, True),
)


# --- the stores -------------------------------------------------------------------------------


def load_store(client: redis.Redis, ns: str, args: argparse.Namespace) -> tuple[str, str]:
    """Fill namespace `ns` with `--store`; (the user whose pages open, the embedder's id)."""
    coord = make_coordinator(client, ns, load_knowledge=True)
    try:
        if args.store == "demo":
            from memory.demo import DEMO_USER, load_demo

            load_demo(coord, DEMO_USER)
            user = DEMO_USER
        else:
            add_memories(coord, args.memories)
            user = BUSY_USER
        coord.bookkeeping.drain()
        embedder = coord.embedder.model_id  # the app's too: it builds the same one
    finally:
        coord.close()
    if args.store == "busy":
        add_metrics_history(client, Keys(ns), args.samples)
    return user, embedder


def add_memories(coord: Any, memories: int) -> None:
    rng = random.Random(7)
    topics = ("running", "sleep", "diet", "work", "family", "travel", "reading", "music")
    for i in range(memories):
        topic = topics[i % len(topics)]
        coord.add_episodic(
            BUSY_USER,
            f"Note {i} about {topic}: the user mentioned {topic} detail {rng.randint(1, 999)}",
            event_type="preference" if i % 3 == 0 else "interaction",
            tags=[topic],
        )


def add_metrics_history(client: redis.Redis, keys: Keys, samples: int) -> None:
    """A day of latency samples, counters and a month of maintenance runs, written raw."""
    rng = random.Random(7)
    now = int(time.time() * 1000)
    start = now - DAY_MS + 60_000
    step = (now - start) / max(samples, 1)
    client.delete(keys.metrics_latency)  # the seeding's own samples are newer than the history
    pipe = client.pipeline(transaction=False)
    for i in range(samples):
        ts = int(start + i * step)
        mtype, op, ms, hit = TURN[i % len(TURN)]
        fields: dict[FieldT, EncodableT] = {
            "ts": ts,
            "type": mtype,
            "op": op,
            "ms": round(rng.lognormvariate(0, 0.5) * ms, 3),
            "hit": "" if hit is None else ("1" if rng.random() < 0.8 else "0"),
        }
        pipe.xadd(keys.metrics_latency, fields, id=f"{ts}-{i}")
        if i % 5000 == 4999:
            pipe.execute()
    pipe.hset(
        keys.metrics_counters,
        mapping={
            "embed_cache_local_hit": 800,
            "embed_cache_redis_hit": 300,
            "embed_cache_miss": 500,
            "extraction_stored": 120,
            "extraction_duplicate": 40,
        },
    )
    for d in range(30):
        entry = {"at_ms": now - d * DAY_MS, "consolidated": d % 4, "expired": d % 3}
        pipe.lpush(keys.maintenance_history, json.dumps({**entry, "active_before": 300}))
    pipe.execute()


def redis_url(client: redis.Redis) -> str:
    kw = client.connection_pool.connection_kwargs
    return f"redis://{kw.get('host', '127.0.0.1')}:{kw.get('port', 6379)}/{kw.get('db', 0)}"


# --- browser ----------------------------------------------------------------------------------


def time_open(browser: Any, url: str, heading: str, chart: str | None = None) -> float:
    """Seconds from the request to a usable page, in a new tab."""
    return time_open_and_ask(browser, url, heading, chart)[0]


def cpu_seconds(pid: int) -> float:
    """CPU seconds the process has used (user + system, from /proc): the work a page costs the
    server, which the machine's load moves far less than the wall time."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def time_open_and_ask(
    browser: Any,
    url: str,
    heading: str,
    chart: str | None = None,
    question: str | None = None,
    server_cpu: list[float] | None = None,
    pid: int = 0,
) -> tuple[float, float | None]:
    """Seconds from the request to a usable page, in a new tab; with `question`, sent as soon
    as the page is usable, also the seconds from the request to the page idle with its answer
    (the page's own clock, which starts at the request). `server_cpu`: gets the CPU seconds
    process `pid` used from the request to the usable page, and to the answer."""
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    cpu0 = cpu_seconds(pid) if server_cpu is not None else 0.0
    try:
        t0 = time.perf_counter()
        page.goto(url)
        page.get_by_role("heading", name=heading, level=1).wait_for(timeout=60_000)
        page.wait_for_selector(USABLE, timeout=60_000)
        if chart:
            page.locator(".js-plotly-plot .gtitle", has_text=chart).wait_for(timeout=60_000)
        usable = time.perf_counter() - t0
        if server_cpu is not None:
            server_cpu.append(cpu_seconds(pid) - cpu0)
        if question is None:
            return usable, None
        before = page.get_by_test_id("stChatMessage").count()
        page.evaluate(WATCH_RUNS)
        box = page.get_by_test_id("stChatInputTextArea")
        box.fill(question)
        box.press("Enter")
        page.wait_for_function(SETTLED, arg=[before, SETTLE_MS], timeout=60_000, polling=50)
        if server_cpu is not None:
            server_cpu.append(cpu_seconds(pid) - cpu0)
        return usable, page.evaluate("window.__runStates.at(-1)[0]") / 1000
    finally:
        page.close()


#: Notes, inside the page, when Enter is pressed and each change of the script's run state.
WATCH_RUNS = """() => {
  window.__enterAt = null; window.__runStates = [];
  document.addEventListener('keydown', e => {
    if (e.key === 'Enter' && window.__enterAt === null) window.__enterAt = performance.now();
  }, true);
  const app = document.querySelector("[data-testid='stApp']");
  new MutationObserver(() => window.__runStates.push(
    [performance.now(), app.getAttribute('data-test-script-state')]
  )).observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""
#: Resolves once the run state has been `notRunning` for `settle` ms since the answer was drawn
#: (a turn that stored something reruns the page: a few ms of `notRunning` between the runs).
SETTLED = """([before, settle]) => {
  const states = window.__runStates, last = states[states.length - 1];
  const answers = document.querySelectorAll("[data-testid='stChatMessage']").length;
  return answers >= before + 2 && last && last[1] === 'notRunning'
    && performance.now() - last[0] >= settle;
}"""
#: How long the page must stay idle to count as settled (far longer than the gap between the
#: turn's run and its rerun, which the server starts at once).
SETTLE_MS = 500


def time_answer(browser: Any, url: str, question: str) -> float:
    """Seconds from the Enter that sends `question` to the page idle with its answer, timed
    with the page's own clock (the wait for it to stay idle is not counted)."""
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    try:
        page.goto(url)
        page.get_by_role("heading", name="💬 Chat with memory", level=1).wait_for(timeout=60_000)
        page.wait_for_selector(USABLE, timeout=60_000)
        before = page.get_by_test_id("stChatMessage").count()
        page.evaluate(WATCH_RUNS)
        box = page.get_by_test_id("stChatInputTextArea")
        box.fill(question)
        box.press("Enter")
        page.wait_for_function(SETTLED, arg=[before, SETTLE_MS], timeout=60_000, polling=50)
        enter, settled = page.evaluate("[window.__enterAt, window.__runStates.at(-1)[0]]")
        return (settled - enter) / 1000
    finally:
        page.close()


def summary(samples: list[float]) -> dict[str, Any]:
    if not samples:  # not measured (`--question ""`)
        return {"median_s": float("nan"), "max_s": float("nan"), "runs_s": []}
    return {
        "median_s": round(statistics.median(samples), 3),
        "max_s": round(max(samples), 3),
        "runs_s": [round(s, 3) for s in samples],
    }


def figures(result: dict[str, Any]) -> dict[str, Any]:
    """The record's figures: seconds to a usable page, one value per run (the report takes
    their median), and the machine's load while they ran (a busy machine is slower)."""
    return {
        "cold_open_s": result["cold_open"]["runs_s"],
        "warm_open_s": result["warm_open"]["runs_s"],
        "stats_s": result["stats"]["runs_s"],
        "answer_s": result["answer"]["runs_s"],
        "cold_answer_s": result["cold_answer"]["runs_s"],
        "load_average_1m": result["load_average"][0],
    }


def browser_main(args: argparse.Namespace) -> int:
    from playwright.sync_api import sync_playwright

    from tests.e2e.app_process import CHROMIUM, CHROMIUM_ARGS, start_app

    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing: run `make setup-test`")
    say = Progress(args.quiet)
    logs = Path(os.environ.get("TMPDIR", "/tmp"))
    cold: list[float] = []
    warm: list[float] = []
    stats: list[float] = []
    answers: list[float] = []
    cold_answers: list[float] = []
    cold_cpu: list[float] = []  # the server's CPU seconds: the load moves them less
    cold_answer_cpu: list[float] = []
    commit = git_commit(args.app_dir)  # the app measured, not this checkout
    with bench_redis(args.redis_url) as (client, ns):
        say(f"Loading the {args.store} store…", force=True)
        user, embedder = load_store(client, ns, args)
        results.note_start()  # the record's load at the start: of the measurement, not the set-up
        chat, stats_page = f"?user={user}", f"stats?user={user}"
        ask = args.question or None  # `--question ""`: the pages only, no turn
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                for i in range(args.runs):
                    app = start_app(
                        redis_url(client),
                        ns,
                        args.ollama_host,
                        logs,
                        env_extra={"MAINTENANCE_INTERVAL_S": "0"},
                        app_dir=args.app_dir,
                    )
                    try:
                        say(f"Run {i + 1}/{args.runs}: cold open…", force=True)
                        cpu: list[float] = []
                        usable, answered = time_open_and_ask(
                            browser,
                            f"{app.url}/{chat}",
                            "💬 Chat with memory",
                            None,
                            ask,
                            server_cpu=cpu,
                            pid=app.process.pid,
                        )
                        cold.append(usable)
                        cold_cpu.append(cpu[0])
                        cold_answers += [answered or 0.0] if ask else []
                        cold_answer_cpu += [cpu[-1]] if ask else []
                        warm.append(time_open(browser, f"{app.url}/{chat}", "💬 Chat with memory"))
                        stats.append(
                            time_open(
                                browser, f"{app.url}/{stats_page}", "📊 Stats", "Growth over time"
                            )
                        )
                        # last: its write would have Stats read the user's memories again
                        answers += [time_answer(browser, f"{app.url}/{chat}", ask)] if ask else []
                    finally:
                        app.stop()
            finally:
                browser.close()
    result = {
        "bench": "pages",
        "commit": commit,
        "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "store": args.store,
        "ollama": args.ollama_host,
        "app_dir": str(args.app_dir),
        "cold_open": summary(cold),
        "warm_open": summary(warm),
        "stats": summary(stats),
        "answer": summary(answers),
        "cold_answer": summary(cold_answers),
        "cold_open_server_cpu": summary(cold_cpu),
        "cold_answer_server_cpu": summary(cold_answer_cpu),
    }
    if args.record:
        results.record_run(
            "pages",
            figures(result),
            prog="python -m lab.page_times",
            commit=commit,
            embedder=embedder,
            note=f"{args.store} store, Ollama at {args.ollama_host}; load average "
            f"{result['load_average']} on {result['cpus']} CPUs at the end of the runs",
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
            ("a memory-only turn, Enter to answer", "answer"),
            ("cold first open + its first answer (sent at once)", "cold_answer"),
            ("the server's CPU s: cold first open", "cold_open_server_cpu"),
            ("the server's CPU s: cold first open + its first answer", "cold_answer_server_cpu"),
        )  # fmt: skip
    ]
    print(table(["page", "median s", "slowest s"], rows))
    print(
        f"\n{args.runs} run(s), {args.store} store, commit {commit}, load average "
        f"{result['load_average']} on {result['cpus']} CPUs (a busy machine is slower)."
    )
    return 0


# --- the Stats page's own run (AppTest) ------------------------------------------------------


def server_commands(client: redis.Redis) -> int:
    """Commands the Redis server has run (INFO commandstats): a count the load does not move."""
    return sum(int(v["calls"]) for v in client.info("commandstats").values())


def run_stats_page(user: str, client: redis.Redis) -> tuple[float, float, float, float, int, int]:
    """(a visit in a new session, a rerun of the same session: what opening a section or
    changing a filter costs), in wall seconds, CPU seconds of this process (which the machine's
    load moves less), then the Redis commands each ran (the page's and its sidebar's).
    `st.cache_data` is emptied first, so a visit never finds the previous visit's data; what
    the server-wide caches keep (`ui.resources`) stays, as in a running app."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    at = AppTest.from_file(str(PROJECT_ROOT / "pages" / "stats.py"), default_timeout=120)
    at.session_state["user_id"] = user
    at.session_state["session_id"] = "s-load"
    times, cpu, commands = [], [], []
    for _ in range(2):
        t0, c0, n0 = time.perf_counter(), time.process_time(), server_commands(client)
        at.run()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        commands.append(server_commands(client) - n0 - 1)  # less the INFO of n0
        if at.exception:
            raise SystemExit(f"The page failed: {at.exception[0].value}")
    return times[0], times[1], cpu[0], cpu[1], commands[0], commands[1]


def profile_stats_page(user: str, client: redis.Redis) -> None:
    """Profile the page's own code: AppTest runs it in a thread of its own, through
    `exec_func_with_error_handling`, so the profiler wraps that call."""
    from streamlit.runtime.scriptrunner import script_runner

    prof = cProfile.Profile()
    original = script_runner.exec_func_with_error_handling

    def profiled(func: Callable[[], Any], ctx: Any) -> Any:
        return prof.runcall(original, func, ctx)

    script_runner.exec_func_with_error_handling = profiled
    try:
        run_stats_page(user, client)
    finally:
        script_runner.exec_func_with_error_handling = original
    pstats.Stats(prof).sort_stats("cumulative").print_stats(45)


def stats_main(args: argparse.Namespace) -> int:
    import streamlit as st

    with bench_redis(args.redis_url) as (client, ns):
        user, _ = load_store(client, ns, args)
        os.environ.update(
            REDIS_URL=redis_url(client),
            MEMORY_NAMESPACE=ns,
            OLLAMA_HOST=args.ollama_host,
            MAINTENANCE_INTERVAL_S="0",
        )
        Settings()  # fail here, not inside the page, if the environment is wrong
        try:
            cold = run_stats_page(user, client)[0]
            runs = [run_stats_page(user, client) for _ in range(args.runs)]
            visits, reruns = [r[0] for r in runs], [r[1] for r in runs]
            print(
                f"Stats page, {args.store} store ({args.memories} memories, {args.samples} "
                f"latency samples when busy), {args.runs} runs: a visit median "
                f"{statistics.median(visits):.2f} s (min {min(visits):.2f}, max "
                f"{max(visits):.2f}), a rerun (a click) median {statistics.median(reruns):.2f} s;"
                f" first visit with resources {cold:.2f} s; CPU: a visit median "
                f"{statistics.median(r[2] for r in runs):.2f} s, a rerun "
                f"{statistics.median(r[3] for r in runs):.2f} s; Redis commands: a visit median "
                f"{statistics.median(r[4] for r in runs)}, a rerun "
                f"{statistics.median(r[5] for r in runs)}; load average {os.getloadavg()}"
            )
            if args.profile:
                profile_stats_page(user, client)
        finally:
            st.cache_resource.clear()  # closes the coordinator and agent (on_release)
    return 0


# --- command line -----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m lab.page_times",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="how", required=True)
    browser = sub.add_parser(
        "browser", help="cold first open, open again, Stats, a memory-only turn: in Chromium"
    )
    browser.add_argument("--runs", type=int, default=3, help="measurements per figure")
    browser.add_argument(
        "--question",
        default="What do you remember about me?",
        help="what the timed turn asks (answered from memory: nothing listens at Ollama); "
        '"" times the pages only',
    )
    browser.add_argument(
        "--app-dir",
        type=Path,
        default=PROJECT_ROOT,
        help="the checkout whose app.py runs (default this one; another one to compare)",
    )
    add_output_args(browser)
    stats = sub.add_parser("stats", help="the Stats page's own run (AppTest), median of N")
    stats.add_argument("--runs", type=int, default=7, help="visits measured")
    stats.add_argument("--profile", action="store_true", help="print where one visit goes")
    stats.add_argument("--redis-url", help="use this Redis Stack (fresh namespace)")
    for cmd, store in ((browser, "demo"), (stats, "busy")):
        cmd.add_argument(
            "--store", choices=("demo", "busy"), default=store, help=f"default {store}"
        )
        cmd.add_argument("--memories", type=int, default=300, help="busy store: memories")
        cmd.add_argument("--samples", type=int, default=50_000, help="busy store: latency samples")
        cmd.add_argument(
            "--ollama-host",
            default="http://127.0.0.1:9",
            help="Ollama for the app (default: nothing listens: memory-only mode, as offline)",
        )
    args = p.parse_args(argv)
    if args.runs < 1:
        raise SystemExit("--runs must be at least 1")
    return browser_main(args) if args.how == "browser" else stats_main(args)


if __name__ == "__main__":
    raise SystemExit(main())
