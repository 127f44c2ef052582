"""Input bounded by shape: nesting depth measured before parsing, file size before reading, NUL
refused; e-mail claims folded without merging look-alikes; a timeout is not "unreachable"."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import redis

from agent.errors import ServerConfigError
from agent.mcp_auth import load_tokens
from memory.boundary import store_error
from memory.errors import InvalidInputError
from memory.models import check_metadata, check_text, check_unicode
from memory.shape import read_bounded, text_depth_exceeds, value_depth_exceeds
from ui.auth import user_id_of_claim


def nested(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


@pytest.mark.parametrize("levels", [21, 300, 1_000, 100_000])
def test_deep_metadata_text_is_refused_in_words(levels: int) -> None:
    with pytest.raises(InvalidInputError, match="nested deeper than 20 levels"):
        check_metadata(nested(levels))


def test_deep_metadata_built_in_python_is_refused_without_recursing() -> None:
    deep: dict = {}
    inner = deep
    for _ in range(sys.getrecursionlimit() * 2):
        inner["a"] = {}
        inner = inner["a"]
    with pytest.raises(InvalidInputError, match="nested deeper than 20 levels"):
        check_metadata(deep)


def test_metadata_of_twenty_levels_is_accepted() -> None:
    assert check_metadata(nested(19)) == json.loads(nested(19))  # the object itself is level 1
    assert check_metadata(json.loads(nested(19)))


def test_depth_scan_ignores_brackets_inside_strings() -> None:
    text = json.dumps({"a": "{" * 500 + "[" * 500, "b": ['"]]]\\"[[[']})
    assert not text_depth_exceeds(text, 3)
    assert text_depth_exceeds(json.dumps({"a": [[[1]]]}), 3)
    assert not text_depth_exceeds(json.dumps({"a": [[1]]}), 3)
    assert text_depth_exceeds("[" * 10, 3)  # unclosed counts as open
    assert value_depth_exceeds({"a": [[{"b": 1}]]}, 3)
    assert not value_depth_exceeds({"a": [[1]]}, 3)


def test_dev_zero_is_refused_without_being_read() -> None:
    with pytest.raises(InvalidInputError, match="device"):
        read_bounded(Path("/dev/zero"), 50 * 1024 * 1024, "The import file")


def test_a_file_over_the_limit_is_refused_by_its_size(tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as f:
        f.truncate(60 * 1024 * 1024)  # sparse: the size is known without any byte written
    with pytest.raises(InvalidInputError, match="62,914,560 bytes; the limit is 50 MB"):
        read_bounded(big, 50 * 1024 * 1024, "The import file")
    with pytest.raises(InvalidInputError, match="folder"):
        read_bounded(tmp_path, 1024, "The import file")


@pytest.mark.parametrize("text", ["I run\x00 daily", "\x00", "ok\x00"])
def test_nul_is_refused_in_texts_with_a_sentence(text: str) -> None:
    with pytest.raises(InvalidInputError, match="NUL character"):
        check_text(text, "Message")
    with pytest.raises(InvalidInputError, match="NUL character"):
        check_unicode(text, "title")


def test_mcp_tokens_file_nested_1000_deep_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(nested(1_000))
    with pytest.raises(ServerConfigError, match="nested deeper"):
        load_tokens(path)
    with pytest.raises(ServerConfigError, match="device"):
        load_tokens(Path("/dev/zero"))


def test_email_claims_fold_ascii_case_but_keep_look_alikes_apart() -> None:
    assert user_id_of_claim("email", " Ana@Example.COM ") == "ana@example.com"
    kelvin = "\u212aate@example.com"  # KELVIN SIGN, looks like K
    assert user_id_of_claim("email", kelvin) != "kate@example.com"
    assert user_id_of_claim("email", kelvin) != user_id_of_claim("email", "Kate@example.com")
    # the long s and the dotted capital I fold to ASCII letters under str.lower/casefold
    assert user_id_of_claim("email", "\u017fam@example.com") != "sam@example.com"
    assert user_id_of_claim("email", "\u0130an@example.com") != user_id_of_claim(
        "email", "ian@example.com"
    )


def test_a_timeout_is_not_called_unreachable() -> None:
    err = store_error(redis.TimeoutError("Timeout reading from socket"))
    assert "not reachable" not in str(err)
    assert "did not answer within" in str(err)
    assert "not reachable" in str(store_error(redis.ConnectionError("Connection refused")))
