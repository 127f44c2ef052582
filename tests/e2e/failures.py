"""Every page a browser test opens is watched for a failure shown to the person: Streamlit's
exception box (`stException`) or one of the app's "… failed unexpectedly" messages (a toast
lasts seconds, so each page reports them itself as they appear, not only at the test's end).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Error, Page

REPORT = "__reportShownFailure"
#: what one check of the page finds ("" when nothing); the observer runs it on every change
FIND = """() => {
  const box = document.querySelector('[data-testid="stException"]');
  if (box) return 'exception box: ' + box.innerText.slice(0, 300);
  const text = document.body ? document.body.innerText : '';
  const at = text.indexOf('failed unexpectedly');
  return at < 0 ? '' : 'message: ' + text.slice(Math.max(0, at - 200), at + 200);
}"""
WATCH = f"""(() => {{
  const find = {FIND};
  const seen = new Set();
  let queued = false;
  const check = () => {{
    queued = false;
    const found = find();
    if (found && !seen.has(found)) {{ seen.add(found); window.{REPORT}(found); }}
  }};
  new MutationObserver(() => {{
    if (!queued) {{ queued = true; requestAnimationFrame(check); }}
  }}).observe(document, {{ childList: true, subtree: true, characterData: true }});
}})();"""


class FailureWatch:
    """Failures seen on the pages of every context created while it is installed."""

    def __init__(self) -> None:
        self.found: list[str] = []
        self.contexts: list[BrowserContext] = []

    def watch(self, context: BrowserContext) -> BrowserContext:
        context.expose_binding(REPORT, self._report)
        context.add_init_script(WATCH)
        self.contexts.append(context)
        return context

    def _report(self, source: dict[str, Any], found: str) -> None:
        page = source.get("page")
        self.found.append(f"{getattr(page, 'url', '?')}: {found}")

    def still_shown(self) -> list[str]:
        """A last look at the pages still open (a failure drawn just before the test ended)."""
        shown = []
        for context in self.contexts:
            for page in context.pages:
                found = _find(page)
                if found:
                    shown.append(f"{page.url}: {found}")
        return shown

    def failures(self) -> list[str]:
        return list(dict.fromkeys([*self.found, *self.still_shown()]))


def _find(page: Page) -> str:
    try:
        return str(page.evaluate(FIND) or "")
    except Error:  # closed or navigating: its reports came through the binding
        return ""


def install(browser_class: type[Browser], watch: FailureWatch, patch: Callable[..., None]) -> None:
    """Wrap `Browser.new_context` and `Browser.new_page` (which makes its own context) so each
    context a test creates is watched; `patch` is monkeypatch.setattr (undone after the test)."""
    new_context, new_page = browser_class.new_context, browser_class.new_page

    def watched_context(self: Browser, *args: Any, **kwargs: Any) -> BrowserContext:
        return watch.watch(new_context(self, *args, **kwargs))

    def watched_page(self: Browser, *args: Any, **kwargs: Any) -> Page:
        page = new_page(self, *args, **kwargs)
        watch.watch(page.context)  # its script runs from the test's first `goto` on
        return page

    patch(browser_class, "new_context", watched_context)
    patch(browser_class, "new_page", watched_page)
