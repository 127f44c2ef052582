"""A memory that only names a secret says nothing once the secret is masked."""

from __future__ import annotations

import pytest

from memory.writing.content import says_nothing_after_masking


@pytest.mark.parametrize(
    "text",
    [
        "My card for the bike shop",
        "My card number is [card number]",
        "My card number for the bike shop is [card number]",
        "Remember: my card number is [card number]",
        "[card number]",
        "My PIN is [pin]",
        "My password for work is [password]",
        "My IBAN is [bank account number]",
    ],
)
def test_contentless(text: str) -> None:
    assert says_nothing_after_masking(text)


@pytest.mark.parametrize(
    "text",
    [
        "I paid with my card [card number]",
        "My card was stolen",
        "My card for work is expired",
        "My card number is [card number] and my email is [email address]",
        "I am vegetarian",
        "Card games are fun",
        "Train for a half marathon in April",
        "My API key is [api key], it expires in June",
    ],
)
def test_with_content(text: str) -> None:
    assert not says_nothing_after_masking(text)
