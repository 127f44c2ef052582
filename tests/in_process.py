"""Run a CLI's `main(argv)` inside the test process, seen from outside as a subprocess run.

A `python -m memory` subprocess costs ~3.6 s of interpreter and import start-up; the same call
in-process costs what the command does. The environment, the working folder, stdin (empty, not a
terminal), stdout and stderr are those the subprocess would have had, and `main`'s own logging
set-up runs, so the tests read the same exit code and output. What only a real process shows
(argv bytes from the OS, the import path, `python -m`) stays with a few subprocess tests per CLI.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path


@contextlib.contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _fresh_root_logger() -> Iterator[None]:
    """No handlers on the root logger, as in a new process, so `main`'s basicConfig applies."""
    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    root.handlers.clear()
    try:
        yield
    finally:
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)


def run_main(
    main: Callable[[list[str]], int],
    args: list[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    prog: str,
) -> subprocess.CompletedProcess[str]:
    """`main(args)` with `env` as the whole environment and `cwd` as the working folder;
    returns what `subprocess.run([..prog, *args], capture_output=True, text=True)` would."""
    out, err = io.StringIO(), io.StringIO()
    with (
        _environment(env),
        contextlib.chdir(cwd),
        _fresh_root_logger(),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        contextlib.ExitStack() as stack,
    ):
        stack.callback(setattr, sys, "stdin", sys.stdin)
        sys.stdin = io.StringIO("")  # empty and not a terminal, like stdin=DEVNULL
        try:
            code = main(list(args))
        except SystemExit as e:  # argparse's usage errors, `sys.exit(...)` in a command
            if e.code is None or isinstance(e.code, int):
                code = e.code or 0
            else:
                print(e.code, file=sys.stderr)
                code = 1
    return subprocess.CompletedProcess([prog, *args], code, out.getvalue(), err.getvalue())
