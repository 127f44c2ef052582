"""The app's background maintenance thread: an unexpected error in one run is logged and the
loop goes on. The loop waits on an Event (`wake()` sets it), so no test waits for the interval."""

from __future__ import annotations

import logging
import threading
from typing import cast

import pytest

from memory.maintenance import Maintenance, MaintenanceScheduler

GUARD_S = 30  # only against a hang: a passing test never waits for it


class FailsFirst:
    """Stands in for `Maintenance`: the first run raises a bug, the second one works."""

    def __init__(self) -> None:
        self.calls = 0
        self.first = threading.Event()
        self.second = threading.Event()

    def run(self) -> None:
        self.calls += 1
        if self.calls == 1:
            self.first.set()
            raise KeyError("a bug, not a MemorySystemError")
        self.second.set()


def test_the_thread_survives_an_unexpected_error(caplog: pytest.LogCaptureFixture) -> None:
    fake = FailsFirst()
    caplog.set_level(logging.ERROR, logger="memory.maintenance.background")
    scheduler = MaintenanceScheduler(cast(Maintenance, fake), interval_s=3600).start()
    try:
        scheduler.wake()
        assert fake.first.wait(GUARD_S)
        scheduler.wake()
        assert fake.second.wait(GUARD_S)  # the loop ran again after the error
        assert scheduler.running
    finally:
        scheduler.stop()
    assert not scheduler.running
    assert fake.calls == 2
    assert "maintenance failed unexpectedly" in caplog.text
    assert "KeyError" in caplog.text  # log.exception: the traceback is in the log


def test_stop_ends_the_thread_without_a_run() -> None:
    fake = FailsFirst()
    scheduler = MaintenanceScheduler(cast(Maintenance, fake), interval_s=3600).start()
    scheduler.stop()
    assert not scheduler.running
    assert fake.calls == 0
