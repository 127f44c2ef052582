"""Who is using the app and what they may do: `AUTH_MODE=none` (no sign-in: every user
visible, loopback only unless ALLOW_UNAUTHENTICATED_REMOTE) or `oidc` (Streamlit's `st.login`:
a user sees their own memories, AUTH_ADMINS any user; docs/configuration.md)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

import streamlit as st

from memory.models import check_id
from ui.config import AppSettings


@dataclass(frozen=True)
class Viewer:
    """The person at the browser. In `none` mode nobody signs in and everyone may do what
    the operator may (today's behaviour); in `oidc` mode rights follow the identity."""

    mode: str
    # No default: a viewer built without saying so must not fail open to admin rights.
    is_admin: bool
    user_id: str | None = None  # the signed-in identity (oidc), None in `none` mode

    @property
    def signed_in(self) -> bool:
        return self.user_id is not None

    @property
    def may_switch_users(self) -> bool:
        return self.is_admin


def is_loopback(address: str | None) -> bool:
    """Whether the server only listens on this machine. Unset means every interface."""
    host = (address or "").strip().strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # "", "0.0.0.0" is valid and not loopback; a host name we cannot judge
        return False


def refuse_open_listening(settings: AppSettings) -> None:
    """Stop the page when `none` mode listens beyond this machine without the operator's
    explicit consent: anyone reaching it could read and change every user's memories."""
    if settings.auth_mode != "none" or settings.allow_unauthenticated_remote:
        return
    address = st.get_option("server.address")
    if is_loopback(address):
        return
    st.error(
        f"**Refusing to serve without sign-in on {address or 'every network interface'}.** "
        "With AUTH_MODE=none there is no sign-in: anyone who can open this page sees and "
        "changes every user's memories.",
        icon="🔒",
    )
    st.info(
        "Start the app on 127.0.0.1 (`make run` does), or set AUTH_MODE=oidc to require "
        "sign-in (see docs/sharing.md), or, knowing the above, set "
        "ALLOW_UNAUTHENTICATED_REMOTE=true.",
        icon="🛠️",
    )
    st.stop()


def current_viewer(settings: AppSettings) -> Viewer:
    """The viewer of this run; in `oidc` mode shows the sign-in page and stops the run until
    the browser has signed in."""
    if settings.auth_mode == "none":
        return Viewer(mode="none", is_admin=True)  # no sign-in: the operator's own machine
    if not _auth_configured():
        st.error(
            "**Sign-in is not configured.** AUTH_MODE=oidc needs an `[auth]` section in "
            "`.streamlit/secrets.toml` (redirect_uri, cookie_secret, client_id, "
            "client_secret, server_metadata_url): see docs/sharing.md.",
            icon="🔒",
        )
        st.stop()
    if not st.user.is_logged_in:
        st.title("🔒 Sign in")
        st.write("This app keeps private memories per person: sign in to see yours.")
        st.button("Sign in", key="auth_login", type="primary", icon="🔑", on_click=st.login)
        st.stop()
    claim = settings.auth_user_claim
    raw = st.user.get(claim)
    if claim == "email" and st.user.get("email_verified") is not True:
        # Some providers let people set any address: an unverified one could name someone
        # else (or an admin). Only a verified email is an identity.
        raw = None
    try:
        user_id = check_id(user_id_of_claim(claim, str(raw or "")), "user id")
    except ValueError:
        st.error(
            f"Your sign-in did not provide a usable `{claim}` claim (an email must be "
            "verified by the provider), which this app uses as your user id. Ask the "
            "operator to check AUTH_USER_CLAIM.",
            icon="🚫",
        )
        st.button("Sign out", key="auth_logout_bad", on_click=st.logout)
        st.stop()
    admins = {user_id_of_claim(claim, a) for a in settings.admins}
    return Viewer(mode="oidc", user_id=user_id, is_admin=user_id in admins)


def user_id_of_claim(claim: str, value: str) -> str:
    """The user id a claim's value stands for, the same for a sign-in and for AUTH_ADMINS: an
    email trimmed with only A-Z lower-cased, any other claim exactly (why: docs/sharing.md)."""
    if claim == "email":
        return value.strip().translate(_ASCII_LOWER)
    return value


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _auth_configured() -> bool:
    try:
        return "auth" in st.secrets
    except Exception:  # noqa: BLE001 - no secrets file at all: not configured
        return False
