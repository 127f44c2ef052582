"""`make run`'s guard: refuse to start AUTH_MODE=none on a non-loopback address unless the
operator set ALLOW_UNAUTHENTICATED_REMOTE=true (the app refuses such pages too)."""

from __future__ import annotations

import sys

from ui.auth import is_loopback
from ui.config import AppSettings


def main(address: str) -> int:
    settings = AppSettings()
    if settings.auth_mode == "none" and not settings.allow_unauthenticated_remote:
        if not is_loopback(address):
            print(
                f"Refusing to start on {address}: AUTH_MODE=none has no sign-in, so anyone "
                "who can reach it sees and changes every user's memories. Use HOST=127.0.0.1, "
                "or AUTH_MODE=oidc (docs/sharing.md), or "
                "ALLOW_UNAUTHENTICATED_REMOTE=true.",
                file=sys.stderr,
            )
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ""))
