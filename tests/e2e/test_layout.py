"""Layout at a laptop's and a phone's width (1440 and 390 px): Stats' date axes whose tick
labels never overlap, every chart title whole, the time-per-step chart's legend under its plot
(beside it, it took 60 % of a phone's width), the sidebar's profile folded to its first lines
with "Show all", the memory editor within two phone screens, the chat's ✏️ and ➕ beside the
chat box, and the sidebar's Recent list newest first with its tags."""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.e2e.conftest import LAPTOP, PHONE
from tests.e2e.st import (
    TIMEOUT_MS,
    by_key,
    no_exceptions,
    open_page,
    screenshot,
    settled,
    wait_idle,
)
from tests.e2e.st import sidebar as sidebar_of

BOTH_WIDTHS = pytest.mark.parametrize(
    "screen", [pytest.param(LAPTOP, id="1440"), pytest.param(PHONE, id="390")], indirect=True
)
CHAT = "💬 Chat with memory"
DAY_MS = 86_400_000


def width_of(page: Page) -> int:
    return (page.viewport_size or LAPTOP)["width"]


def open_sidebar(page: Page) -> Locator:
    """The sidebar, opened by its button on a phone (where it starts closed)."""
    bar = sidebar_of(page)
    if bar.get_attribute("data-collapsed") == "true":
        page.get_by_test_id("stExpandSidebarButton").click()
        expect(bar).not_to_have_attribute("data-collapsed", "true")
    return bar


@pytest.fixture(scope="module")
def persona(seed) -> str:  # type: ignore[no-untyped-def]
    from memory.demo import load_demo

    user = "l" + uuid.uuid4().hex[:6]
    load_demo(seed, user)
    seed.bookkeeping.drain()
    return user


#: Per chart: its x tick labels' texts and boxes, whether they are dates, and whether they
#: stay apart (the same test as `overlapping`)
DATE_AXES_JS = r"""() => [...document.querySelectorAll('.js-plotly-plot')].map(plot => {
  const labels = [...plot.querySelectorAll('.xaxislayer-above .xtick text')];
  const texts = labels.map(t => t.textContent);
  const boxes = labels.map(t => t.getBoundingClientRect())
    .map(b => ({x: b.x, y: b.y, width: b.width, height: b.height}));
  const hit = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width
    && a.y < b.y + b.height && b.y < a.y + a.height;
  const apart = boxes.every((a, i) => boxes.slice(i + 1).every(b => !hit(a, b)));
  const r = plot.getBoundingClientRect();
  return {
    texts, boxes, apart, chart: {x: r.x, width: r.width},
    dated: texts.some(t => /\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b/.test(t)),
  };
})"""


#: One chart's parts: its box, the plot area, the legend, the title and the x tick labels
CHART_PARTS_JS = r"""plot => {
  const box = e => {
    if (!e) return null;
    const b = e.getBoundingClientRect();
    return {x: b.x, y: b.y, width: b.width, height: b.height};
  };
  return {
    chart: box(plot), area: box(plot.querySelector('.nsewdrag')),
    legend: box(plot.querySelector('.legend')), title: box(plot.querySelector('.gtitle')),
    ticks: [...plot.querySelectorAll('.xaxislayer-above .xtick text')].map(box),
    texts: [...plot.querySelectorAll('.xaxislayer-above .xtick text')].map(t => t.textContent),
  };
}"""
#: The tiles' values wider than their box (Streamlit cuts them with "…")
TILES_CUT_JS = r"""() => [...document.querySelectorAll(
  '[data-testid=stMetricValue], [data-testid=stMetricValue] *')]
  .filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.textContent)"""
#: Every chart's title box against the chart's own box (a title longer than the chart is cut)
TITLES_JS = r"""() => [...document.querySelectorAll('.js-plotly-plot')].map(plot => {
  const t = plot.querySelector('.gtitle'), r = plot.getBoundingClientRect();
  const b = t ? t.getBoundingClientRect() : null;
  return {text: t ? t.textContent : '', left: b ? b.left : 0, right: b ? b.right : 0,
          chartLeft: r.left, chartRight: r.right};
})"""


def overlapping(boxes: list[dict[str, float]]) -> list[tuple[int, int]]:
    """Pairs of boxes that intersect (touching edges do not count)."""
    return [
        (i, j)
        for i, a in enumerate(boxes)
        for j, b in enumerate(boxes[i + 1 :], start=i + 1)
        if a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    ]


@BOTH_WIDTHS
def test_date_labels_of_every_stats_chart_stay_apart(
    screen: Page, app_server, seed, persona: str, screenshots_dir
) -> None:
    page = screen
    for _ in range(40):  # recalls of 12 ms, the typical time the walk saw (a tile's longest words)
        seed.metrics.record("all", "retrieve_all_context", 12.0)
    seed.metrics.flush()
    open_page(page, f"{app_server.url}/stats?user={persona}", "📊 Stats")
    # every tile's value whole: the walk saw "under a tenth of …" cut at both widths
    expect(page.get_by_test_id("stMetricValue").nth(2)).to_contain_text("second")
    cut = page.evaluate(TILES_CUT_JS)
    assert cut == [], f"tile values cut: {cut}"
    more = page.get_by_test_id("stExpander").filter(has_text="Memories per type and per day")
    more.locator("summary").click()
    wait_idle(page)
    expect(by_key(page, "chart_growth_day")).to_be_visible(timeout=TIMEOUT_MS)
    settled(page)
    # one snapshot of every chart's x tick labels, taken in the page at once (a chart that
    # redraws between two calls from here would mix two layouts); awaited until the date
    # axes are drawn, and a redraw under way has ended
    page.wait_for_function(f"() => ({DATE_AXES_JS})().filter(a => a.dated).length >= 3")
    try:
        page.wait_for_function(f"() => ({DATE_AXES_JS})().every(a => !a.dated || a.apart)")
    except PlaywrightTimeoutError:
        pass  # the assertions below say which labels overlap
    axes = [a for a in page.evaluate(DATE_AXES_JS) if a["dated"]]
    assert len(axes) >= 3, "growth, activity and growth per day have date axes"
    for axis in axes:
        boxes = axis["boxes"]
        assert len(boxes) >= 2, axis["texts"]
        assert not overlapping(boxes), axis
        chart = axis["chart"]
        assert all(chart["x"] <= b["x"] <= chart["x"] + chart["width"] for b in boxes), axis
    print(width_of(page), "date ticks:", [a["texts"] for a in axes])

    # the time per step: its legend in rows under the plot, its time labels apart
    detail = page.get_by_test_id("stExpander").filter(has_text="Recall in detail")
    detail.locator("summary").click()
    wait_idle(page)
    chart = by_key(page, "chart_latency_time").locator(".js-plotly-plot")
    expect(chart).to_be_visible(timeout=TIMEOUT_MS)
    settled(page)
    parts = chart.evaluate(CHART_PARTS_JS)
    area, legend, whole = parts["area"], parts["legend"], parts["chart"]
    assert legend and area, parts
    assert legend["y"] >= area["y"] + area["height"], f"the legend is not under the plot: {parts}"
    # beside the plot, the legend left it 40 %; the value axis and its title take ~70 px
    assert area["width"] >= 0.6 * whole["width"], f"the plot is squeezed: {parts}"
    assert len(parts["ticks"]) >= 2 and not overlapping(parts["ticks"]), parts
    print(width_of(page), "time per step ticks:", parts["texts"])

    # every chart's title whole, inside its chart
    titles = page.evaluate(TITLES_JS)
    assert len(titles) >= 5, titles
    for t in titles:
        assert t["text"], t
        assert t["chartLeft"] <= t["left"] and t["right"] <= t["chartRight"], t
    no_exceptions(page)
    screenshot(page, screenshots_dir / f"layout-stats-{width_of(page)}.png", height=3200)


@pytest.fixture
def long_profile(seed) -> tuple[str, list[str]]:  # type: ignore[no-untyped-def]
    """A user with a twelve-line profile (the walk's), oldest first."""
    user = "p" + uuid.uuid4().hex[:6]
    texts = [f"I like recipe number {i} with rice" for i in range(11)]
    for text in texts:
        seed.add_episodic(user, text, event_type="preference", importance=0.9)
    texts.append("I'm allergic to peanuts and tree nuts")
    seed.add_episodic(user, texts[-1], event_type="fact", importance=0.5)
    seed.bookkeeping.drain()
    return user, texts


def profile_rows(bar: Locator) -> Locator:
    return by_key(bar, "sb_profile").locator("[class*='st-key-sb_line_']")


def profile_lines(bar: Locator) -> list[str]:
    rows = profile_rows(bar)
    return [
        r.get_by_test_id("stMarkdownContainer").first.inner_text().split("\n")[0]
        for r in rows.all()
    ]


@BOTH_WIDTHS
def test_the_sidebar_profile_is_folded_and_the_editor_is_in_reach(
    screen: Page, app_server, long_profile: tuple[str, list[str]], screenshots_dir
) -> None:
    page = screen
    user, texts = long_profile
    open_page(page, f"{app_server.url}/?user={user}", CHAT)
    bar = open_sidebar(page)
    expect(profile_rows(bar)).to_have_count(3)
    folded = profile_lines(bar)
    assert len(folded) == 3, folded
    assert folded[0] == "I'm allergic to peanuts and tree nuts"  # health first, as sent
    show_all = by_key(bar, "sb_profile_more").get_by_role("button")
    expect(show_all).to_contain_text("Show all")

    # the editor's first field within two screens of the sidebar's top
    content = bar.get_by_test_id("stSidebarContent")
    top = content.evaluate("e => e.getBoundingClientRect().top")
    editor = bar.get_by_role("heading", name="🧠 Memory editor")
    below = editor.evaluate("(e, top) => e.getBoundingClientRect().top - top", top)
    height = (page.viewport_size or LAPTOP)["height"]
    assert below < 2 * height - 200, f"the editor starts {below:.0f} px down"
    # Rename and New chat share one row under the chat box, not lines of their own
    rename = by_key(bar, "sb_rename").bounding_box()
    new_chat = by_key(bar, "sb_new_session").bounding_box()
    assert rename and new_chat
    assert abs(rename["y"] - new_chat["y"]) < 10, (rename, new_chat)
    screenshot(page, screenshots_dir / f"layout-sidebar-{width_of(page)}.png", height=1800)

    show_all.click()
    expect(by_key(bar, "sb_profile_fewer")).to_be_visible()
    wait_idle(page)
    shown = profile_lines(bar)
    assert len(shown) > 3 and shown[:3] == folded
    assert set(shown) <= set(texts)
    expect(by_key(bar, "sb_profile_left_out")).to_contain_text("do not fit")
    by_key(bar, "sb_profile_fewer").get_by_role("button").click()
    expect(profile_rows(bar)).to_have_count(3)
    assert profile_lines(bar) == folded
    no_exceptions(page)


def test_recent_lists_the_newest_first_with_its_tags(page: Page, app_server, seed) -> None:
    user = "r" + uuid.uuid4().hex[:6]
    now = seed.add_episodic(user, "Bought new trail shoes", event_type="milestone").timestamp
    # written after it, but dated earlier (a story told later): the list goes by the date shown
    seed.add_episodic(user, "Ran the Lyon 10k in 52 minutes", event_type="milestone",
                      timestamp_ms=now - 9 * DAY_MS)  # fmt: skip
    seed.add_semantic("Oats are rich in fibre", category="nutrition", added_by=user)
    seed.add_episodic(user, "I am lactose intolerant", event_type="health_event",
                      tags=["food", "dairy"], timestamp_ms=now - 3 * DAY_MS)  # fmt: skip
    open_page(page, f"{app_server.url}/?user={user}", CHAT)
    bar = sidebar_of(page)
    bar.get_by_role("tab", name="🕒 Recent").click()
    recent = bar.get_by_role("tabpanel", name="🕒 Recent")
    rows = recent.get_by_test_id("stMarkdownContainer").filter(has_text="·")
    expect(rows.first).to_be_visible()
    firsts = [t.split("\n")[0] for t in rows.all_inner_texts()]
    assert firsts == [
        "Oats are rich in fibre",
        "Bought new trail shoes",
        "I am lactose intolerant",
        "Ran the Lyon 10k in 52 minutes",
    ], firsts
    expect(rows.nth(2)).to_contain_text("tags: food, dairy")
    no_exceptions(page)
