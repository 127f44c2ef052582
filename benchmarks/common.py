"""What every benchmark command shares (`python -m benchmarks latency|locomo|qa`, the lab's
measurements): a throw-away Redis + coordinator, the options, percentiles,
progress, the stamp, and one run from coordinator to printed result and record (`run_bench`).

By default a benchmark starts its own embedded Redis Stack (free port, temporary data dir,
no persistence) so it never touches the app's data and always starts empty; `--redis-url`
points it at another server instead, where it works in a fresh namespace and removes it after.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import redis

from benchmarks import results  # imported as the process starts: the run's start load
from memory.config import PROJECT_ROOT, Settings
from memory.coordinator import MemoryCoordinator
from memory.embeddings.base import Embedder
from memory.replies import as_str


def percentiles(samples_ms: list[float], ps: tuple[int, ...] = (50, 95, 99)) -> dict[str, float]:
    """{"p50": ..., "p95": ...} in ms, rounded to 0.01 ms; empty input gives zeros."""
    if not samples_ms:
        return {f"p{p}": 0.0 for p in ps}
    arr = np.asarray(samples_ms, dtype=np.float64)
    return {f"p{p}": round(float(np.percentile(arr, p)), 2) for p in ps}


class Progress:
    """One self-overwriting line on stderr (plain lines when stderr is not a terminal)."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self._last = 0.0

    def __call__(self, msg: str, *, force: bool = False) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        if not force and now - self._last < (0.2 if self.tty else 5.0):
            return
        self._last = now
        if self.tty:
            sys.stderr.write("\r\033[K" + msg)
        else:
            sys.stderr.write(msg + "\n")
        sys.stderr.flush()

    def done(self, msg: str) -> None:
        if self.quiet:
            return
        sys.stderr.write(("\r\033[K" if self.tty else "") + msg + "\n")
        sys.stderr.flush()


def git_commit(checkout: Path = PROJECT_ROOT) -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=checkout,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def stamp() -> dict[str, str]:
    """The commit and date a result came from; taken before a run, so the commit is the code
    that ran even if HEAD moves during a long one."""
    return {"commit": git_commit(), "date": datetime.now(UTC).strftime("%Y-%m-%d")}


def run_bench(
    args: argparse.Namespace,
    bench: str,
    measure: Callable[[MemoryCoordinator], dict[str, Any]],
    render: Callable[[dict[str, Any]], str],
    figures: Callable[[dict[str, Any]], dict[str, Any]],
    *,
    prog: str = "python -m benchmarks",
    data: Path | None = None,
    note: str | None = None,
    embedder: Embedder | None = None,
    **coordinator_kwargs: Any,
) -> int:
    """One bench run: `measure` on a private coordinator (with the `--recall` overrides when
    the command takes them), printed as JSON (`--json`) or with `render`; with `--record`, the
    result's `figures` are recorded under `bench` (`measure` puts `stamp()` in its result, so
    the record names the commit that ran). The exit code 0."""
    overrides = "recall" in vars(args)
    results.note_start()
    with bench_coordinator(args.redis_url, embedder, **coordinator_kwargs) as coord:
        weights = apply_recall_overrides(coord, args.recall) if overrides else None
        result = measure(coord)
        embedder_id = coord.embedder.model_id
    if weights is not None:
        result["recall_weights"] = weights
    if data is not None:
        result["data"] = str(data)
    print(json.dumps(result) if args.json else render(result))
    if args.record:
        results.record_run(
            bench,
            figures(result),
            prog=prog,
            commit=result["commit"],
            embedder=embedder_id,
            data=data,
            note=note,
        )
    return 0


def redis_version(client: redis.Redis) -> str:
    info = client.info("server")
    return str(info.get("redis_version", "?"))


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on, kept from other takers for a while.

    Picked by the kernel (bind to port 0), then left in TIME_WAIT by a connection closed from
    its side: for about a minute the kernel hands that port to no other `bind(0)` and no
    outgoing connection (two test workers asking at once get different ports), while a server
    that binds with SO_REUSEADDR (Redis, Streamlit, uvicorn, http.server) can take it at once.
    A connection to it meanwhile is refused, as to any closed port.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = int(listener.getsockname()[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
            accepted, _ = listener.accept()
            accepted.close()  # the port's side closes first: it is the one in TIME_WAIT
            client.recv(1)  # the close reached the client before it closes too
    return port


def drop_namespace(client: redis.Redis, ns: str) -> None:
    """Drop every index and key of one MEMORY_NAMESPACE (tests, benchmarks)."""
    for name in client.execute_command("FT._LIST"):
        name = as_str(name)
        if name.startswith(ns + "_"):
            client.execute_command("FT.DROPINDEX", name)
    batch: list[bytes] = []
    for key in client.scan_iter(match=f"{ns}[:_]*", count=1000):
        batch.append(key)
        if len(batch) >= 1000:
            client.unlink(*batch)
            batch.clear()
    if batch:
        client.unlink(*batch)


@contextmanager
def bench_redis(redis_url: str | None) -> Iterator[tuple[redis.Redis, str]]:
    """(client, namespace): a private embedded server, or a fresh namespace on `redis_url`."""
    if redis_url:
        client = redis.Redis.from_url(redis_url, decode_responses=False)
        ns = "bench" + uuid.uuid4().hex[:8]
        try:
            yield client, ns
        finally:
            drop_namespace(client, ns)
            client.close()
        return
    from memory.runtime.server import EmbeddedRedis

    data_dir = Path(tempfile.mkdtemp(prefix="memory-bench-"))
    server = EmbeddedRedis(data_dir, free_port(), PROJECT_ROOT)
    try:
        url = server.start()
        client = redis.Redis.from_url(url, decode_responses=False)
        try:
            # A benchmark's data is throw-away: no fsync/rewrite work skewing the timings.
            client.config_set("appendonly", "no")
            client.config_set("save", "")
            # `collect_garbage` collects however little there is (the default waits for 100).
            client.execute_command("FT.CONFIG", "SET", "FORK_GC_CLEAN_THRESHOLD", "0")
            yield client, "bench"
        finally:
            client.close()
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


@contextmanager
def bench_coordinator(
    redis_url: str | None, embedder: Embedder | None = None, **kwargs: Any
) -> Iterator[MemoryCoordinator]:
    """A coordinator on a throw-away Redis (`bench_redis`), closed after."""
    with bench_redis(redis_url) as (client, ns):
        coord = make_coordinator(client, ns, embedder, **kwargs)
        try:
            yield coord
        finally:
            coord.close()


def make_coordinator(
    client: redis.Redis,
    ns: str,
    embedder: Embedder | None = None,
    *,
    load_knowledge: bool = False,
    **overrides: Any,
) -> MemoryCoordinator:
    """A coordinator on `client` in namespace `ns`, otherwise configured as the app is."""
    from memory.embeddings import OnnxMiniLMEmbedder

    settings = Settings(memory_namespace=ns, **overrides)
    return MemoryCoordinator(
        client, embedder or OnnxMiniLMEmbedder(), settings, load_knowledge=load_knowledge
    )


def collect_garbage(coord: MemoryCoordinator) -> None:
    """Collect the episodic index's garbage now (before the next question). A recall's access
    counts index the memories it returned again; until Redis Search's collector (every 30 s)
    drops their old entries, those still count in BM25's term statistics, so which memories
    the text query returns would depend on when it last ran, and two runs of the same code
    would differ. On a server that refuses the command (`--redis-url`), its own collector
    runs as it does."""
    # the background writes queued so far (access counts, a vector's refinement) index their
    # memories again: done first, or their garbage lands after this collection (clean-clone CI
    # at c5b1fe8 and 7dfbfec: BM25 scores moved at the next collection)
    coord.bookkeeping.drain()
    try:
        coord.stores.client.execute_command("FT.DEBUG", "GC_FORCEINVOKE", coord.episodic.index.name)
    except redis.ResponseError:
        pass


def table(headers: list[str], rows: list[list[Any]]) -> str:
    """A plain-text table with right-aligned numbers."""
    cells = [[str(h) for h in headers]] + [[_fmt(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for n, r in enumerate(cells):
        lines.append(
            "  ".join(
                c.ljust(w) if (n == 0 or i == 0) else c.rjust(w)
                for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
    return str(value)


def apply_recall_overrides(coord: MemoryCoordinator, overrides: list[str] | None) -> dict[str, Any]:
    """`--recall neighbour=0 --recall time_match=0.2`: change `RecallWeights` fields of this
    coordinator (ablations); returns the weights in force."""
    import dataclasses

    changes: dict[str, Any] = {}
    fields = {f.name: f.type for f in dataclasses.fields(coord.recall.weights)}
    for item in overrides or []:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or name not in fields:
            raise SystemExit(f"--recall takes FIELD=VALUE with FIELD one of {sorted(fields)}")
        current = getattr(coord.recall.weights, name)
        try:
            changes[name] = type(current)(value)
        except ValueError:
            raise SystemExit(
                f"--recall {name}: {value!r} is not a {type(current).__name__}"
            ) from None
    if changes:
        coord.recall.weights = dataclasses.replace(coord.recall.weights, **changes)
    return dataclasses.asdict(coord.recall.weights)


def int_list(text: str) -> list[int]:
    """The argparse type of a comma-separated list of integers ("1,5,10")."""
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"comma-separated integers, got {text!r}") from None


def add_output_args(p: argparse.ArgumentParser) -> None:
    """Options every bench command takes: the server and the output."""
    p.add_argument(
        "--redis-url",
        help="use this Redis Stack (fresh namespace) instead of a private embedded one",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.add_argument(
        "--record",
        action="store_true",
        help="also write this run's headline figures to benchmarks/results/ (benchmarks.results)",
    )


def add_common_args(p: argparse.ArgumentParser) -> None:
    """Options the recall bench commands take: those of every bench, and recall overrides."""
    add_output_args(p)
    p.add_argument(
        "--recall",
        action="append",
        metavar="FIELD=VALUE",
        help="override a RecallWeights field for this run (ablations), repeatable",
    )
