"""Input bounded by shape, checked before it is parsed or read: JSON text is measured for nesting
depth before `json.loads` (1.5 KB nested 300 deep passes a size limit, 1,000 levels make the
parser raise `RecursionError`), in linear time; a parsed value is walked with an explicit stack;
a file's size is read from the file system before any byte of it (`/dev/zero` is refused)."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

from memory.errors import InvalidInputError

#: Deepest metadata accepted (the metadata object itself is level 1). Real metadata is a few
#: levels; 20 leaves room for any sensible structure and stays far from every serialiser's limit.
MAX_METADATA_DEPTH = 20
#: An export file: at most 50 MB, and the file's structure around a metadata object (top >
#: "episodic" list > record > metadata) on top of the metadata's own depth.
MAX_IMPORT_BYTES = 50 * 1024 * 1024
MAX_IMPORT_DEPTH = MAX_METADATA_DEPTH + 4

# A string, its closing quote optional: an unterminated one runs to the end of the text (as
# JSON reads it). Possessive, so no match ever backtracks, and every match attempt that starts
# at a quote succeeds: each byte is read once. (A closing quote required made every quote of
# an unterminated run of `\\"` pairs start a scan to the end: quadratic, hours for 1 MB.)
_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"?', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
# Objects and arrays count alike (a `[}` is json.loads's to refuse): one pair to drop per round.
_ONE_KIND = bytes.maketrans(b"{}", b"[]")


def text_depth_exceeds(text: str | bytes, limit: int) -> bool:
    """Whether JSON `text` nests objects/arrays deeper than `limit` (an unclosed bracket
    counts as open). Strings go in one pass, then every other byte but the brackets; then
    each round drops the innermost pairs (at most `limit + 1` rounds): linear in the text,
    never recursing."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    brackets = _STRING.sub(b"", raw).translate(_ONE_KIND, _NOT_BRACKETS)
    for level in range(limit + 1):
        if not brackets:
            return False  # balanced, `level` deep
        before = len(brackets)
        brackets = brackets.replace(b"[]", b"")
        if len(brackets) == before:
            # Unbalanced (json.loads will say where); what is left opens at most this deep.
            return level + brackets.count(b"[") > limit
    return True


def value_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether a parsed value (dicts and lists) nests deeper than `limit`; an explicit stack,
    so a value built in Python 100,000 levels deep is measured without recursing."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list | tuple))
    return False


def safe_to_parse(
    data: str | bytes, max_bytes: int = MAX_IMPORT_BYTES, max_depth: int = MAX_IMPORT_DEPTH
) -> bool:
    """Whether `json.loads` may read `data` (an export file by default): not so big that
    reading it is the harm, not so deep that parsing recurses past Python's limit."""
    return len(data) <= max_bytes and not text_depth_exceeds(data, max_depth)


def check_depth(value: Any, limit: int, what: str) -> None:
    """Refuse JSON text or a parsed value nested deeper than `limit` levels."""
    too_deep = (
        text_depth_exceeds(value, limit)
        if isinstance(value, str | bytes)
        else value_depth_exceeds(value, limit)
    )
    if too_deep:
        raise InvalidInputError(
            f"{what} is nested deeper than {limit} levels (objects or lists inside each "
            "other): flatten it."
        )


def read_bounded(path: Path, max_bytes: int, what: str) -> bytes:
    """The bytes of a file of at most `max_bytes`, its size checked before it is read. A pipe
    (`<(...)`, `/dev/stdin`) is read up to one byte past the limit; a device or a folder is
    refused unread."""
    limit = f"{max_bytes // (1024 * 1024)} MB" if max_bytes >= 1024 * 1024 else f"{max_bytes} B"
    try:
        mode = os.stat(path).st_mode
        if stat.S_ISREG(mode):
            size = os.stat(path).st_size
            if size > max_bytes:
                raise InvalidInputError(
                    f"{what} {path} is {size:,} bytes; the limit is {limit}. Nothing was read."
                )
            return path.read_bytes()
        if stat.S_ISFIFO(mode):
            with path.open("rb") as f:
                data = f.read(max_bytes + 1)
            if len(data) > max_bytes:
                raise InvalidInputError(f"{what} {path} is larger than {limit}.")
            return data
    except OSError as e:
        raise InvalidInputError(f"Cannot read {what.lower()} {path}: {e.strerror}.") from None
    kind = "a folder" if stat.S_ISDIR(mode) else "a device or socket"
    raise InvalidInputError(
        f"{what} {path} is {kind}, not a file; nothing was read. Give the path of a file."
    )
