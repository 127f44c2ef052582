"""Sign-in and privacy in the app: AUTH_MODE=none says there is no sign-in and refuses a
non-loopback address; AUTH_MODE=oidc takes the user from the identity (AppTest seeds `st.user`;
the real sign-in flow is in tests/e2e/test_sign_in.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from streamlit import config
from streamlit.testing.v1 import AppTest

from tests.app.conftest import TIMEOUT_S, no_errors, texts
from tests.app.test_memories import select_rows

AUTH_SECRETS = {
    "redirect_uri": "http://127.0.0.1:8501/oauth2callback",
    "cookie_secret": "x" * 40,
    "client_id": "app",
    "client_secret": "secret",
    "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
}


@pytest.fixture
def listen_on() -> Iterator[Any]:
    """Set `server.address` as `--server.address` would; restored afterwards."""
    before = config.get_option("server.address")

    def set_address(address: str | None) -> None:
        config.set_option("server.address", address)

    yield set_address
    config.set_option("server.address", before)


@pytest.fixture
def oidc_env(app_env: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTH_MODE", "oidc")
    monkeypatch.setenv("AUTH_ADMINS", "root@example.com")


def _signed_in(script: str, email: str | None, **query: str) -> AppTest:
    at = AppTest.from_file(f"../../{script}", default_timeout=TIMEOUT_S)
    at.secrets["auth"] = AUTH_SECRETS
    claims = {"email": email, "email_verified": True} if email else {}
    at.user = {"is_logged_in": email is not None, **claims}
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def test_none_mode_says_there_is_no_sign_in(app_env, make_app) -> None:
    at = make_app("app.py")
    no_errors(at)
    notice = [c.value for c in at.sidebar.caption if "No sign-in" in c.value]
    assert len(notice) == 1 and "every user's memories" in notice[0]
    assert not at.sidebar.info  # one quiet line, not a box
    assert "Each user has private memories" not in at.sidebar.selectbox(key="sb_user").help


@pytest.mark.parametrize("address", ["0.0.0.0", "192.168.1.20", "::", None])
def test_none_mode_refuses_a_non_loopback_address(app_env, listen_on, address) -> None:
    listen_on(address)
    at = AppTest.from_file("../../app.py", default_timeout=TIMEOUT_S).run()
    assert not at.exception
    assert "Refusing to serve without sign-in" in at.error[0].value
    assert not at.chat_input  # nothing of the app is served
    assert "ALLOW_UNAUTHENTICATED_REMOTE=true" in at.info[0].value


@pytest.mark.parametrize("address", ["127.0.0.1", "localhost", "::1"])
def test_none_mode_serves_loopback(app_env, listen_on, address) -> None:
    listen_on(address)
    at = AppTest.from_file("../../app.py", default_timeout=TIMEOUT_S).run()
    no_errors(at)
    assert at.chat_input


def test_the_operator_can_allow_an_open_address(app_env, listen_on, monkeypatch) -> None:
    monkeypatch.setenv("ALLOW_UNAUTHENTICATED_REMOTE", "true")
    listen_on("0.0.0.0")
    at = AppTest.from_file("../../app.py", default_timeout=TIMEOUT_S).run()
    no_errors(at)
    assert at.chat_input


def test_oidc_shows_only_a_sign_in_page_until_signed_in(oidc_env) -> None:
    at = _signed_in("pages/memories.py", None, user="bob")
    no_errors(at)
    assert at.button(key="auth_login").label == "Sign in"
    assert not at.dataframe and not at.sidebar.selectbox


def test_oidc_without_auth_secrets_says_how_to_configure(oidc_env) -> None:
    at = AppTest.from_file("../../app.py", default_timeout=TIMEOUT_S)
    at.user = {"is_logged_in": True, "email": "ana@example.com", "email_verified": True}
    at.run()
    assert "Sign-in is not configured" in at.error[0].value


def test_oidc_user_is_the_identity_not_a_picker_or_query(oidc_env, coordinator) -> None:
    coordinator.add_episodic("bob@example.com", "Bob's secret: allergic to penicillin")
    at = _signed_in("pages/memories.py", "ana@example.com", user="bob@example.com")
    no_errors(at)
    assert at.session_state["user_id"] == "ana@example.com"
    assert at.query_params["user"] == "ana@example.com"  # the address says who it really is
    assert not [s for s in at.sidebar.selectbox if s.key == "sb_user"]  # no user list
    assert "Signed in as ana@example.com" in texts(at.sidebar, "text")
    shown = " ".join(str(d.value.to_dict()) for d in at.dataframe) + texts(at) + texts(at.sidebar)
    assert "penicillin" not in shown
    assert [m.value for m in at.metric][0] == "0"  # ana's episodic count, not bob's


def test_oidc_admin_can_open_any_user(oidc_env, coordinator) -> None:
    coordinator.add_episodic("bob@example.com", "Bob prefers evening runs")
    at = _signed_in("pages/memories.py", "root@example.com")
    no_errors(at)
    assert "(admin)" in texts(at.sidebar, "text")
    at.sidebar.selectbox(key="sb_user").set_value("bob@example.com").run()
    no_errors(at)
    assert "Bob prefers evening runs" in set(at.dataframe(key="tbl_episodic").value["Memory"])


def _row_of(at: AppTest, table_key: str, words: str) -> int:
    facts = list(at.dataframe(key=table_key).value["Fact"])
    return next(i for i, t in enumerate(facts) if words in t.lower())


def test_oidc_non_admin_cannot_delete_the_safety_fact(oidc_env, coordinator) -> None:
    (hit,) = coordinator.search("x", "chest pain during exercise", "semantic", k=1)
    at = _signed_in("pages/memories.py", "ana@example.com")
    assert any("chest pain" in t.lower() for t in at.dataframe(key="tbl_semantic").value["Fact"])
    at = select_rows(at, "tbl_semantic", [_row_of(at, "tbl_semantic", "chest pain")])
    at.button(key="delete_sel_semantic").click().run()
    at.run()  # the next interaction carries the delete out
    assert any("only an admin" in e.value for e in at.error), [e.value for e in at.error]
    assert coordinator.get_memory("ana@example.com", "semantic", hit.id)["text"] == hit.text


def test_oidc_refuses_an_unverified_email_even_an_admins(oidc_env, coordinator) -> None:
    """Some providers let people type any address: an unverified email is no identity, or
    anyone could sign in as the admin."""
    coordinator.add_episodic("root@example.com", "The admin's own note")
    at = AppTest.from_file("../../pages/memories.py", default_timeout=TIMEOUT_S)
    at.secrets["auth"] = AUTH_SECRETS
    at.user = {"is_logged_in": True, "email": "root@example.com", "email_verified": False}
    at.run()
    assert "must be verified" in at.error[0].value
    assert not at.dataframe


def test_oidc_a_shared_fact_does_not_name_its_author_to_others(oidc_env, coordinator) -> None:
    fact = coordinator.add_semantic("Stretch after every run.", added_by="bob@example.com")
    coordinator.update_memory("bob@example.com", "semantic", fact.id, shared=True, as_admin=True)
    coordinator.add_semantic("Ana keeps a food diary.", added_by="ana@example.com")
    at = _signed_in("pages/memories.py", "ana@example.com")
    no_errors(at)
    table = at.dataframe(key="tbl_semantic").value
    by_fact = dict(zip(table["Fact"], table["Added by"], strict=True))
    assert by_fact["Stretch after every run."] == "shared"
    assert by_fact["Ana keeps a food diary."] == "you"
    assert "bob@example.com" not in str(table.to_dict())


def test_oidc_an_email_claim_is_trimmed_and_lower_cased_for_the_user_and_admins(
    oidc_env, coordinator, monkeypatch
) -> None:
    """Providers treat addresses case-insensitively: the same address in another case (or
    with spaces around it) is the same person, also on the admin list."""
    coordinator.add_episodic("ana@example.com", "Ana runs on Sundays")
    at = _signed_in("pages/memories.py", "  Ana@Example.COM ")
    no_errors(at)
    assert at.session_state["user_id"] == "ana@example.com"
    assert "Ana runs on Sundays" in set(at.dataframe(key="tbl_episodic").value["Memory"])
    assert "(admin)" not in texts(at.sidebar, "text")

    monkeypatch.setenv("AUTH_ADMINS", " Root@Example.com , other@example.com")
    at = _signed_in("pages/memories.py", "ROOT@example.com")
    no_errors(at)
    assert at.session_state["user_id"] == "root@example.com"
    assert "(admin)" in texts(at.sidebar, "text")


def test_oidc_another_claim_is_taken_exactly(oidc_env, coordinator, monkeypatch) -> None:
    """A `sub` is the provider's opaque id: values differing in case are different people."""
    monkeypatch.setenv("AUTH_USER_CLAIM", "sub")
    monkeypatch.setenv("AUTH_ADMINS", "AbC123")
    coordinator.add_episodic("AbC123", "The admin's own note")
    seen = {}
    for sub in ("abc123", "AbC123"):
        at = AppTest.from_file("../../pages/memories.py", default_timeout=TIMEOUT_S)
        at.secrets["auth"] = AUTH_SECRETS
        at.user = {"is_logged_in": True, "sub": sub}
        at.run()
        no_errors(at)
        episodic = [m.value for m in at.metric][0]  # the episodic count of the page's user
        seen[sub] = (at.session_state["user_id"], "(admin)" in texts(at.sidebar, "text"), episodic)
    assert seen["abc123"] == ("abc123", False, "0")
    assert seen["AbC123"] == ("AbC123", True, "1")


def test_a_non_admin_sees_their_own_stats_not_the_stores(oidc_env, coordinator) -> None:
    """Latency, hit rates, cache, extraction and maintenance figures cover every user of the
    store: a signed-in non-admin gets their own memories only; an admin gets everything."""
    coordinator.add_episodic("ana@example.com", "I swim on Fridays")
    coordinator.search("bob@example.com", "what does bob like", "episodic")  # another's op
    coordinator.metrics.flush()

    at = _signed_in("pages/stats.py", "ana@example.com")
    no_errors(at)
    labels = [m.label for m in at.metric]
    assert labels == ["Things I remember about you"]
    assert any("shown to admins only" in i.value for i in at.info)
    assert not at.get("plotly_chart") or all(
        "latency" not in str(c.proto.spec).lower() for c in at.get("plotly_chart")
    )

    admin = _signed_in("pages/stats.py", "root@example.com")
    no_errors(admin)
    assert {"Answers that used memory", "Typical recall time"} <= {m.label for m in admin.metric}
