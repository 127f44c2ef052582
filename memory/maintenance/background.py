"""The app's background maintenance: one daemon thread per process, never on the answer path.

The first run comes one interval after start (an app restart must not trigger a run); the lock
in `runner` keeps several processes (or several app servers) from running at once.
"""

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
        if self._thread.is_alive():
            self._thread.join()

    def run_once(self) -> None:
        """One run, errors logged (the thread must outlive a Redis restart)."""
        try:
            self._maintenance.run()
        except MaintenanceBusyError:
            log.info("maintenance skipped: another process is running it")
        except MemorySystemError as e:
            log.warning("maintenance failed: %s", e)

    def _loop(self) -> None:
        # Event.wait is the interval timer and lets stop() end the thread at once.
        while not self._stop.wait(self._interval_s):
            self.run_once()
