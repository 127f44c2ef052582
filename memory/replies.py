"""Decoding Redis replies: the one helper every module uses (clients run with bytes replies,
because vectors are binary)."""

from __future__ import annotations

from typing import Any


def as_str(value: Any) -> str:
    """A reply value (bytes or str) as text."""
    return value.decode() if isinstance(value, bytes | bytearray) else str(value)
