"""What a phone-width screen needs that Streamlit does not do for this app: a sidebar page link
also collapses the sidebar, and the Memories tables also read as rows of text below
`NARROW_PX` (docs/app.md, "How the pages are built")."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from ui.format import fmt_ms_time, md_text

if TYPE_CHECKING:  # the tables bring pandas: the chat's first page does without it
    import pandas as pd

#: Streamlit lays the sidebar over the page (instead of beside it) below this width
NARROW_PX = 768

_CLOSE_ON_NAVIGATION = f"""
<script>
(() => {{
  if (window.memoryChatClosesSidebar) return;
  window.memoryChatClosesSidebar = true;
  document.addEventListener("click", (event) => {{
    const link = event.target.closest(
      '[data-testid="stSidebar"] a[data-testid="stPageLink-NavLink"]');
    if (!link || !window.matchMedia("(max-width: {NARROW_PX - 1}px)").matches) return;
    const close = document.querySelector('[data-testid="stSidebarCollapseButton"] button');
    if (close) close.click();
  }}, true);
}})();
</script>
"""


_ROWS_ONLY_WHEN_NARROW = f"""
<style>
@media (min-width: {NARROW_PX}px) {{ div[class*="st-key-rows_"] {{ display: none; }} }}
</style>
"""
#: A row of tabs wider than a phone scrolls, and the tabs past its edge are never seen: below
#: NARROW_PX they wrap onto more rows, the chosen one underlined itself (the sliding underline
#: follows one row only)
_TABS_WRAP_WHEN_NARROW = f"""
<style>
@media (max-width: {NARROW_PX - 1}px) {{
  [data-testid="stMain"] [role="tablist"] {{ flex-wrap: wrap; row-gap: 0.25rem; }}
  [data-testid="stMain"] [data-baseweb="tab-highlight"] {{ display: none; }}
  [data-testid="stMain"] [role="tab"][aria-selected="true"] {{
    box-shadow: inset 0 -2px 0 currentColor;
  }}
}}
</style>
"""
#: columns a row's text leaves out: ids and the pin (shown as a 📌 before the text)
_NOT_SHOWN = {"id", "📌"}
#: columns said in words rather than as their number (the grid draws a bar for it)
_IN_WORDS = {c: lambda v: f"{int(v)}%" for c in ("Confidence", "How well it worked")}


def _value(v: Any) -> str:
    """A cell as text ("" for an empty one)."""
    import pandas as pd  # imported already: its table is a DataFrame

    if isinstance(v, pd.Timestamp):
        return "" if pd.isna(v) else fmt_ms_time(v)
    if isinstance(v, list | tuple):
        return ", ".join(map(str, v))
    if isinstance(v, float):
        return "" if pd.isna(v) else f"{v:.2f}"
    return "" if v is None or (not isinstance(v, str) and pd.isna(v)) else str(v)


def readable_rows(df: pd.DataFrame, key: str) -> None:
    """The table's rows as text, shown on a narrow screen only (module docstring); the first
    column other than the pin is a row's text."""
    st.html(_ROWS_ONLY_WHEN_NARROW)
    columns = [c for c in df.columns if c not in _NOT_SHOWN]
    if not columns:
        return
    text, rest = columns[0], columns[1:]
    with st.container(key=f"rows_{key}"):
        for _, row in df.iterrows():
            pin = "📌 " if _value(row.get("📌")) else ""
            meta = " · ".join(
                f"{c}: {_IN_WORDS[c](row[c]) if c in _IN_WORDS else _value(row[c])}"
                for c in rest
                if _value(row[c])
            )
            st.markdown(f"{pin}{md_text(_value(row[text]))}  \n:gray[{md_text(meta)}]")
        st.caption("Tick a row in the table below to edit it.")


def tabs_wrap_when_narrow() -> None:
    """Every tab of the page in sight on a phone (`_TABS_WRAP_WHEN_NARROW`); draws nothing."""
    st.html(_TABS_WRAP_WHEN_NARROW)


def close_sidebar_after_navigation() -> None:
    """Install the listener (module docstring); draws nothing."""
    st.html(_CLOSE_ON_NAVIGATION, unsafe_allow_javascript=True)
