"""Text for a terminal: what the CLIs print (`python -m memory`, `python -m agent`). A memory
text, a reply or an argument can hold ANSI escapes that recolour or clear the operator's terminal:
`for_terminal` shows each control character as a visible escape (JSON escapes them itself)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memory.config import Settings
    from memory.coordinator import MemoryCoordinator

# C0 and C1 controls, DEL, and the bidirectional marks and overrides that reorder text on screen.
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_SINGLE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")
_MULTI_LINE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")  # keeps \t and \n


_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(m: re.Match[str]) -> str:
    if m.group() in _NAMED:
        return _NAMED[m.group()]
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(text: str, *, multiline: bool = False) -> str:
    """`text` with every control character shown as an escape; `multiline` keeps `\\n` and
    `\\t` (a transcript's own layout), otherwise they are escaped too (one value, one line)."""
    pattern = _MULTI_LINE if multiline else _SINGLE_LINE
    return pattern.sub(_escape, text)


def invalid_utf8_argument(argv: Sequence[str] | None = None) -> str | None:
    """An error message when a command-line argument is not valid UTF-8, else None.

    Python hands such bytes over as lone surrogates (`\\udcff`), which fail later, deep in
    hashing or the tokenizer; saying so up front names the argument instead."""
    for arg in sys.argv[1:] if argv is None else argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            shown = arg.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            return (
                f"the argument '{for_terminal(shown)}' is not valid UTF-8 text (shown with "
                "\ufffd for the bad bytes): pass it as UTF-8 (check the terminal's or the "
                "script's encoding, e.g. LANG=C.UTF-8)."
            )
    return None


class ProgressLines:
    """A long operation's counts on stderr (`what: stage done/total`), about every 5% of each
    stage: a 100,000-record import shows that it works, `--json` output on stdout stays clean."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._shown: dict[str, int] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        step = max(1, total // 20)
        if done < total and done - self._shown.get(stage, 0) < step:
            return
        self._shown[stage] = done
        print(f"{self._what}: {stage} {done:,}/{total:,}", file=sys.stderr, flush=True)


# --- the commands' output (`python -m memory` and its sub-commands) -----------------------


def print_result(args: argparse.Namespace, payload: Any, text: str) -> None:
    """The command's answer on stdout: JSON with `--json`, else the text made safe to print."""
    if getattr(args, "json", False):
        print(json.dumps(payload, ensure_ascii=False, default=str))
    else:
        # Memory texts inside `text` are escaped one by one (a newline in one must not start
        # a line of its own); this catches whatever else reaches the terminal.
        print(for_terminal(text, multiline=True))


@contextmanager
def open_coordinator(settings: Settings) -> Iterator[MemoryCoordinator]:
    """The coordinator of a command, closed after it; what its opening finished is said on
    stderr."""
    from memory.coordinator import MemoryCoordinator

    coord = MemoryCoordinator.from_settings(settings)
    for line in coord.recovered:  # on stderr: --json keeps stdout to the command's answer
        print(f"note: {for_terminal(line)}", file=sys.stderr)
    try:
        yield coord
    finally:
        coord.close()
