"""People's words where the browser walk (tests/e2e/test_plain_words.py) does not look: every
help text (a tooltip, shown only on hover), label, option, placeholder, field value, chart text
and table header (the grid draws them on a canvas) of the demo persona's pages, an answer's
details included, read from what the page sent. Fails on any word of tests/not_words.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from memory import DEMO_USER, ListQuery, load_demo
from tests.app.conftest import no_errors
from tests.app.test_memories import select_rows
from tests.fakes.fake_ollama import FakeOllama
from tests.not_words import internal_words

#: The fields of an element a person reads (its key, id and form id are not shown)
READ = ("help", "label", "placeholder", "body", "options", "default", "caption", "text")
#: The lazy sections of Stats, all opened
STATS_SECTIONS = ("stats_more_memories", "stats_recall", "stats_cache", "stats_maintenance")


def chart_texts(spec: str) -> Iterator[str]:
    """A plotly figure's title, axis titles, legend names and hover texts."""
    fig = json.loads(spec)
    layout = fig.get("layout", {})
    yield str(layout.get("title", {}).get("text", ""))
    for name, axis in layout.items():
        if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            yield str((axis.get("title") or {}).get("text", ""))
    for a in layout.get("annotations", []):
        yield str(a.get("text", ""))
    for trace in fig.get("data", []):
        yield str(trace.get("name", ""))
        yield str(trace.get("hovertemplate", "")).replace("<extra></extra>", "")
        labels = trace.get("labels") or []  # a donut's slices
        yield from (str(x) for x in labels if isinstance(x, str))


def headers(node: Any) -> Iterator[str]:
    """A table's column headers as shown: each column's label, or its name; hidden ones not."""
    config = json.loads(node.proto.columns or "{}")
    for name in list(node.proto.column_order) or [str(c) for c in node.value.columns]:
        column = config.get(name) or {}
        if not column.get("hidden"):
            yield str(column.get("label") or name)


def read(node: Any) -> Iterator[str]:
    """Every text a person can read in the element tree under `node`."""
    proto = getattr(node, "proto", None)
    if type(node).__name__ == "Json":  # a tool call's arguments and result: data as sent
        return
    if type(node).__name__ == "Dataframe":
        yield from headers(node)
    if proto is not None:
        if getattr(proto, "spec", None):
            yield from chart_texts(proto.spec)
        for field, value in proto.ListFields():
            if field.name in READ:
                repeated = isinstance(value, list | tuple) or hasattr(value, "extend")
                yield from (str(v) for v in (value if repeated else [value]) if isinstance(v, str))
    for child in getattr(node, "children", {}).values():
        yield from read(child)


def findings(at: Any) -> list[str]:
    return sorted({bad for text in read(at._tree) for bad in internal_words(text)})


@pytest.fixture
def maya(app_env, coordinator) -> str:  # type: ignore[no-untyped-def]
    load_demo(coordinator, DEMO_USER, replace=True)
    coordinator.bookkeeping.drain()
    chats = coordinator.short_term.sessions(DEMO_USER)
    return max(chats, key=lambda s: len(coordinator.recent_messages(DEMO_USER, s, n=200)))


def test_help_texts_and_fields_of_the_demo_read_in_words(
    make_app, maya: str, coordinator, shared_fake_ollama: FakeOllama
) -> None:
    found: dict[str, list[str]] = {}

    at = make_app("app.py", user=DEMO_USER, session=maya)
    no_errors(at)
    found["chat"] = findings(at)

    at = make_app("pages/stats.py", user=DEMO_USER, session=maya)
    for section in STATS_SECTIONS:
        at.session_state[section] = True
    at.run()
    no_errors(at)
    assert at.get("plotly_chart"), "Stats drew its charts"
    found["Stats"] = findings(at)

    # the memory editor of one of the persona's memories (the sidebar's too)
    at = make_app("pages/memories.py", user=DEMO_USER, session=maya)
    rows, _ = coordinator.list_memories(DEMO_USER, "episodic", ListQuery(page_size=1))
    assert rows
    at = select_rows(at, "tbl_episodic", [0])
    no_errors(at)
    assert at.button(key=f"ed_ep_{at.dataframe(key='tbl_episodic').value['id'][0]}_save")
    found["Memories, one memory open"] = findings(at)

    # last (its recall times reach Stats' charts): an answer with two tools, its details' every
    # tab (the Prompt tab's list above the block as sent, the Advanced tab's tables)
    shared_fake_ollama.queue_tool_calls(
        [("search_workouts", {"days": 14}), ("compare_periods", {"metric": "steps"})]
    )
    shared_fake_ollama.queue_reply("Three easy runs this week, the long one on Sunday.")
    at = make_app("app.py", user=DEMO_USER, session=maya)
    at.chat_input(key="chat_input").set_value("Plan my running this week").run()
    no_errors(at)
    assert any(t.label == "⚙️ Advanced" for t in at.tabs), "the answer's details are drawn"
    found["chat, an answer's details"] = findings(at)

    found = {where: bad for where, bad in found.items() if bad}
    assert found == {}, "internal words on screen:\n" + "\n".join(
        f"{where}: {', '.join(bad)}" for where, bad in found.items()
    )
