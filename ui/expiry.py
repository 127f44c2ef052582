"""A memory's expiry as a person sets it: "Never expires" and a date, outside any form (inside
one, ticking the box would not disable the date until submit)."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import streamlit as st

from ui.format import day_end_ms, to_datetime


def expiry_inputs(prefix: str, expires_at: Any = None) -> None:
    """The checkbox and the date input (keys `<prefix>_never`, `<prefix>_expires`)."""
    current = to_datetime(expires_at)
    never = st.checkbox("Never expires", value=current is None, key=f"{prefix}_never")
    st.date_input(
        "Expires on",
        value=(current.date() if current else date.today() + timedelta(days=30)),
        key=f"{prefix}_expires",
        disabled=never,
        help="Untick 'Never expires' to choose a date.",
    )


def expiry_value(prefix: str) -> int | None:
    """The chosen expiry (end of the chosen day, ms), or None for never."""
    if st.session_state.get(f"{prefix}_never", True):
        return None
    return day_end_ms(st.session_state[f"{prefix}_expires"])
