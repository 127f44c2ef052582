"""Sign-in through a real OpenID Connect provider (oidc-provider-mock, started here on
127.0.0.1) against `streamlit run` with AUTH_MODE=oidc and a secrets file of its own: each
user sees only their own memories; a non-admin cannot change shared facts; an admin can."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator

import oidc_provider_mock
import pytest
import werkzeug.serving
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import AppServer, start_app
from tests.e2e.st import (
    TIMEOUT_MS,
    by_key,
    grid_cell,
    no_exceptions,
    select_grid_row,
    sidebar,
    wait_idle,
)
from tests.fakes.fake_ollama import FakeOllama

ADMIN = "root@example.com"
#: The people of these tests, with emails their provider verified (the app accepts no other).
PEOPLE = ("ana@example.com", "bob@example.com", "carl@example.com", ADMIN)
SAFETY = "Sudden chest pain"


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    """The mock provider on 127.0.0.1 (any client id/secret). PEOPLE have verified emails;
    any other `sub` typed into its form gets an unverified `email` = sub."""
    people = [
        oidc_provider_mock.User(sub=e, claims={"email": e, "email_verified": True}) for e in PEOPLE
    ]
    server = werkzeug.serving.make_server(
        "127.0.0.1",
        0,
        oidc_provider_mock.app(require_nonce=False, user_claims=people),
        threaded=True,
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


@pytest.fixture(scope="module")
def oidc_app(
    provider: str,
    redis_url: str,
    e2e_namespace: str,
    shared_fake_ollama: FakeOllama,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[AppServer]:
    folder = tmp_path_factory.mktemp("oidc-app")
    secrets_file = folder / "secrets.toml"
    # Streamlit fills in `{port}` with the port the server listens on.
    secrets_file.write_text(
        "[auth]\n"
        'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        f'cookie_secret = "{secrets.token_hex(32)}"\n'
        'client_id = "memory-chat-tests"\n'
        'client_secret = "not-checked-by-the-mock"\n'
        f'server_metadata_url = "{provider}/.well-known/openid-configuration"\n',
        encoding="utf-8",
    )
    server = start_app(
        redis_url,
        e2e_namespace,
        shared_fake_ollama.url,
        folder,
        env_extra={"AUTH_MODE": "oidc", "AUTH_ADMINS": ADMIN},
        args_extra=["--secrets.files", str(secrets_file)],
    )
    try:
        yield server
    finally:
        server.stop()


def sign_in(browser: Browser, app: AppServer, email: str) -> Page:
    """A fresh browser (own cookies) signed in as `email` through the provider's form."""
    page = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
    page.goto(app.url)
    page.get_by_role("button", name="Sign in").click()
    page.locator("input[name='sub'][type='text']").fill(email)
    page.get_by_role("button", name="Authorize").click()
    expect(sidebar(page).get_by_text(f"Signed in as {email}")).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    return page


def remember(page: Page, text: str) -> None:
    bar = sidebar(page)
    bar.get_by_label("What should be remembered?").fill(text)
    bar.get_by_role("button", name="Remember").click()
    expect(page.get_by_test_id("stToast").filter(has_text="Remembered")).to_be_visible()
    wait_idle(page)


def test_each_user_sees_only_their_own_memories(browser: Browser, oidc_app: AppServer) -> None:
    ana = sign_in(browser, oidc_app, "ana@example.com")
    remember(ana, "Ana's secret: allergic to penicillin")
    bob = sign_in(browser, oidc_app, "bob@example.com")
    remember(bob, "Bob likes rowing at dawn")

    # bob: no user list, ?user= ignored, only his memory
    expect(sidebar(bob).locator(".st-key-sb_user")).to_have_count(0)
    bob.goto(oidc_app.url + "/memories?user=ana@example.com")
    wait_idle(bob)
    expect(sidebar(bob).get_by_text("Signed in as bob@example.com")).to_be_visible()
    table = by_key(bob, "tbl_episodic")
    expect(grid_cell(table, "Bob likes rowing at dawn")).to_have_count(1)
    expect(bob.get_by_text("penicillin")).to_have_count(0)
    no_exceptions(bob)

    ana.goto(oidc_app.url + "/memories")
    wait_idle(ana)
    expect(grid_cell(by_key(ana, "tbl_episodic"), "penicillin")).to_have_count(1)
    expect(ana.get_by_text("rowing")).to_have_count(0)


def test_a_non_admin_cannot_change_shared_facts_an_admin_can(
    browser: Browser, oidc_app: AppServer, seed
) -> None:
    (fact,) = seed.search("anyone", "chest pain during exercise", "semantic", k=1)
    assert fact.text.startswith(SAFETY)
    for email, allowed in (("carl@example.com", False), (ADMIN, True)):
        page = sign_in(browser, oidc_app, email)
        page.goto(oidc_app.url + "/memories")
        wait_idle(page)
        page.get_by_role("tab", name="General knowledge").click()
        table = by_key(page, "tbl_semantic")
        select_grid_row(page, table, SAFETY)
        form = page.get_by_test_id("stForm").filter(has_text="Save changes")
        save = form.get_by_role("button", name="Save changes")
        if not allowed:
            expect(page.get_by_text("only an admin can change it")).to_be_visible()
            expect(save).to_be_disabled()
            page.get_by_role("button", name="Delete 1 selected").click()
            # tried once the undo window has passed, and refused
            refused = page.get_by_text("only an admin can change or delete it")
            expect(refused).to_be_visible(timeout=TIMEOUT_MS)
            wait_idle(page)
            assert seed.get_memory(email, "semantic", fact.id)["text"] == fact.text
        else:
            expect(save).to_be_enabled()
            form.get_by_label("Context").fill("Reviewed by the admin")
            save.click()
            expect(page.get_by_test_id("stToast").filter(has_text="Saved")).to_be_visible()
            assert seed.get_memory(email, "semantic", fact.id)["context"] == "Reviewed by the admin"
        no_exceptions(page)
        page.context.close()


def test_signed_out_visitors_get_only_the_sign_in_page(page: Page, oidc_app: AppServer) -> None:
    page.goto(oidc_app.url + "/memories?user=ana@example.com")
    expect(page.get_by_role("button", name="Sign in")).to_be_visible(timeout=TIMEOUT_MS)
    wait_idle(page)
    expect(page.get_by_text("penicillin")).to_have_count(0)
    expect(page.get_by_test_id("stDataFrame")).to_have_count(0)
