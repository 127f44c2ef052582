"""What a phone-width screen needs that Streamlit does not do for this app's own page links.

Streamlit closes the sidebar after a page is picked in its own page list, but the app draws
its links with `st.page_link` (labelled, with icons, keeping the user and chat in the address;
`client.showSidebarNavigation = false`), and a page link leaves the sidebar open over 300 of
390 px. So on a narrow screen a click on one of the sidebar's page links also presses the
sidebar's own collapse button. The script is inline and loads nothing; it is installed once
per browser tab (a rerun draws it again, the flag keeps one listener).
"""

from __future__ import annotations

import streamlit as st

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


def close_sidebar_after_navigation() -> None:
    """Install the listener (module docstring); draws nothing."""
    st.html(_CLOSE_ON_NAVIGATION, unsafe_allow_javascript=True)
