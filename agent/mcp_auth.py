"""Bearer tokens of the MCP server's HTTP mode: the tokens file ({"<token>": "<user id>"}),
checked once at start, behind the SDK's `TokenVerifier`; tools read the user with `token_user()`."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver.exceptions import ToolError

from agent.errors import ServerConfigError
from memory.errors import InvalidInputError
from memory.models import check_id
from memory.shape import check_depth, read_bounded

MIN_TOKEN_CHARS = 16
#: A tokens file is a flat object; anything far bigger or deeper is not one.
MAX_TOKENS_FILE_BYTES = 1024 * 1024


def load_tokens(path: Path) -> dict[str, str]:
    """{token: user id} from a JSON file; ServerConfigError saying what to fix otherwise.
    Messages never quote a token."""
    try:
        raw = read_bounded(path, MAX_TOKENS_FILE_BYTES, "The tokens file").decode("utf-8")
        check_depth(raw, 2, "The tokens file")
    except UnicodeDecodeError as e:
        raise ServerConfigError(f"Cannot read the tokens file {path}: {e}.") from e
    except InvalidInputError as e:
        raise ServerConfigError(f'{e} It must hold an object {{"<token>": "<user id>"}}.') from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as e:
        raise ServerConfigError(
            f"The tokens file {path} is not valid JSON ({e.msg} at line {e.lineno}); it must "
            'hold an object {"<token>": "<user id>", ...}.'
        ) from None
    if not isinstance(data, dict) or not data:
        raise ServerConfigError(
            f'The tokens file {path} must hold a non-empty JSON object {{"<token>": "<user id>"}}.'
        )
    for n, (token, user) in enumerate(data.items(), start=1):
        if not isinstance(user, str):
            raise ServerConfigError(f"Entry {n} of {path}: the user id must be a string.")
        try:
            check_id(user)
        except InvalidInputError as e:
            raise ServerConfigError(f"Entry {n} of {path}: {e}") from None
        if len(token) < MIN_TOKEN_CHARS:
            raise ServerConfigError(
                f"Entry {n} of {path} (user {user!r}): the token is shorter than "
                f"{MIN_TOKEN_CHARS} characters. Make one with "
                '`python -c "import secrets; print(secrets.token_urlsafe(32))"`.'
            )
    return dict(data)


class StaticTokenVerifier:
    """The SDK's TokenVerifier over the tokens file. Each known token is compared, in constant
    time, against digests of equal length, and the loop never stops early: the answer time says
    nothing about which token (or how much of one) matched."""

    def __init__(self, tokens: dict[str, str]) -> None:
        self._known = [(self._digest(t), user) for t, user in tokens.items()]

    @staticmethod
    def _digest(token: str) -> bytes:
        return hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()

    def __len__(self) -> int:
        return len(self._known)

    def user_for(self, token: str) -> str | None:
        got = self._digest(token)
        user: str | None = None
        for known, uid in self._known:
            if hmac.compare_digest(got, known):
                user = uid
        return user

    async def verify_token(self, token: str) -> AccessToken | None:
        user = self.user_for(token)
        if user is None:
            return None
        # subject = the user: the SDK binds each HTTP session to it, and tools read it back.
        return AccessToken(token=token, client_id=user, scopes=[], subject=user)


def token_user() -> str:
    token = get_access_token()
    if token is None or not token.subject:  # the SDK's middleware answered 401 before this
        raise ToolError("Not authenticated: send `Authorization: Bearer <token>`.")
    return token.subject
