"""The app's background maintenance: one daemon thread per process, never on the answer path; the
first run comes one interval after start, and `runner`'s lock keeps processes from running twice."""

from __future__ import annotations

import logging
import threading

from memory.errors import MemorySystemError
from memory.maintenance.runner import MaintenanceBusyError
from memory.maintenance.service import Maintenance

log = logging.getLogger(__name__)


class MaintenanceScheduler:
    def __init__(self, maintenance: Maintenance, interval_s: float) -> None:
        self._maintenance = maintenance
        self._interval_s = interval_s
        self._stop = threading.Event()
        # What the loop waits on: the interval's timeout, or `wake()` / `stop()` at once.
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="memory-maintenance", daemon=True)

    def start(self) -> MaintenanceScheduler:
        if self._interval_s > 0:
            self._thread.start()
        return self

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join()

    def wake(self) -> None:
        """Run now instead of at the end of the interval (the next one starts after it)."""
        self._wake.set()

    def run_once(self) -> None:
        """One run, errors logged: the thread must outlive a Redis restart, and a bug in one
        run (a bad record, a model reply) must not end maintenance until the app restarts."""
        try:
            self._maintenance.run()
        except MaintenanceBusyError:
            log.info("maintenance skipped: another process is running it")
        except MemorySystemError as e:
            log.warning("maintenance failed: %s", e)
        except Exception:
            log.exception("maintenance failed unexpectedly; the next run is still scheduled")

    def _loop(self) -> None:
        while True:
            self._wake.wait(self._interval_s)
            self._wake.clear()  # before the run: a wake() during it means one more run
            if self._stop.is_set():
                return
            self.run_once()
