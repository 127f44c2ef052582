"""A user id, a search query or an import file's keys that hold markdown are shown as text on
the Memories page (Maintenance tab, search caption, import preview): no image markup reaches
the page, so the browser has nothing to fetch."""

from __future__ import annotations

import json

from streamlit.testing.v1 import AppTest

from tests.app.conftest import no_errors

IMAGE = "![x](http://127.0.0.1:9/leak.png)"
HOSTILE_USER = f"eve{IMAGE}"


def rendered(at: AppTest) -> str:
    """Everything the page renders as markdown (markdown, captions, callouts)."""
    parts = []
    for kind in ("markdown", "caption", "info", "success", "warning", "error", "toast"):
        parts += [str(getattr(e, "value", "")) for e in at.get(kind)]
    return "\n".join(parts)


def test_a_hostile_user_id_is_text_on_the_maintenance_tab(app_env, coordinator, make_app) -> None:
    coordinator.add_episodic(HOSTILE_USER, "I prefer morning workouts")
    at = make_app("pages/memories.py", user=HOSTILE_USER)
    at.button(key="mt_run").click().run()
    no_errors(at)
    page = rendered(at)
    assert "eve" in page  # the name is shown ...
    assert IMAGE not in page and "](http" not in page  # ... as text, not as an image


def test_a_hostile_query_and_import_file_keys_are_text(app_env, coordinator, make_app) -> None:
    coordinator.add_episodic("alice", "I prefer morning workouts")
    at = make_app("pages/memories.py")
    at.text_input(key="s_query").set_value(f"workouts {IMAGE}")
    at.slider(key="s_min").set_value(0.0)  # whatever the floor: the result and its caption
    at.button(key="s_go").click().run()
    no_errors(at)
    assert "result" in rendered(at)  # the search ran and its caption is shown
    assert IMAGE not in rendered(at)

    export = coordinator.export_user("alice")
    export[IMAGE] = []  # a crafted file: its keys are someone else's text
    upload = json.dumps(export).encode()
    from ui import manage

    preview = manage._preview(upload, "alice")
    assert "alice" in preview and IMAGE not in preview and "](http" not in preview
