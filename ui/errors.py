"""Errors become messages on the page, never tracebacks: `guard("Loading memories")` shows an
expected error's own message, logs anything else; `st.stop`/`st.rerun` pass through."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import streamlit as st

from memory.errors import (
    InvalidInputError,
    MemorySystemError,
    NotAllowedError,
    NotFoundError,
    StoreReplacedError,
)
from ui.format import no_images

log = logging.getLogger(__name__)


def message_for(exc: Exception, what: str) -> str:
    # Error messages quote input (a memory text, a name), and are shown as markdown.
    return no_images(_message(exc, what))


def _message(exc: Exception, what: str) -> str:
    # A replaced Redis is not a failure of the section that found out: its message says it all.
    if isinstance(exc, InvalidInputError | NotFoundError | NotAllowedError | StoreReplacedError):
        return str(exc)
    if isinstance(exc, MemorySystemError):
        return f"{what} failed: {exc}"
    if isinstance(exc, NotImplementedError):
        return f"{what} is not available in this version of the memory core yet."
    return (
        f"{what} failed unexpectedly ({type(exc).__name__}: {exc}). "
        "The full error is in the app's log."
    )


@contextmanager
def guard(what: str) -> Iterator[None]:
    """Run a page section; turn any exception into an `st.error` and carry on."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 - the point is that nothing escapes to the page
        if not isinstance(exc, MemorySystemError):
            log.exception("%s failed", what)
        st.error(message_for(exc, what), icon="⚠️")


def run_action(what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[bool, Any]:
    """Call `fn` from a widget callback: (True, result), or (False, None) after queueing the
    error message for the next run (callbacks cannot draw on the page)."""
    from ui.state import flash

    try:
        return True, fn(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001
        if not isinstance(exc, MemorySystemError):
            log.exception("%s failed", what)
        flash(message_for(exc, what), "error")
        return False, None
