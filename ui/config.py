"""Settings of the app (sign-in), read from the environment and `.env`: the CLIs have no
sign-in, so these live with the app, not in memory/config.py or agent/config.py."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class AppSettings(BaseSettings):
    """Sign-in: AUTH_MODE, AUTH_USER_CLAIM, AUTH_ADMINS, ALLOW_UNAUTHENTICATED_REMOTE."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    auth_mode: Literal["none", "oidc"] = Field(
        default="none",
        description="none: no sign-in, every user visible (one person, own machine); "
        "oidc: sign in with st.login, each user sees only their own memories.",
    )
    auth_user_claim: str = Field(
        default="email", min_length=1, description="Identity claim used as the user id."
    )
    auth_admins: str = Field(
        default="",
        description="Comma-separated user ids (values of AUTH_USER_CLAIM) with admin rights: "
        "see any user, manage the shared knowledge base.",
    )
    allow_unauthenticated_remote: bool = Field(
        default=False,
        description="Let AUTH_MODE=none listen on a non-loopback address (anyone who can "
        "reach it sees and changes every user's memories).",
    )

    @property
    def admins(self) -> frozenset[str]:
        return frozenset(a.strip() for a in self.auth_admins.split(",") if a.strip())
