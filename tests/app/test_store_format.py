"""A store of another format than this version reads: the page says so and what to do, with
no advice about starting Redis (it runs)."""

from __future__ import annotations


def test_a_store_of_another_format_is_refused_with_what_to_do(
    app_env, make_app, redis_client, namespace: str
) -> None:
    redis_client.set(f"{namespace}:keys_version", "1")  # before the per-user hash tags
    at = make_app("app.py", user="alice")
    assert not at.exception
    shown = "\n".join(str(e.value) for e in at.error)
    assert "another format" in shown and "MEMORY_NAMESPACE" in shown
    assert "python -m memory export" in shown
    assert not at.info  # no advice to start Redis: it runs
