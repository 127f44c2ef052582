"""Input bounded by shape: nesting depth measured before parsing, file size before reading, NUL
refused; e-mail claims folded without merging look-alikes; a timeout is not "unreachable"."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from agent.errors import ServerConfigError
from agent.mcp_auth import load_tokens
from memory.boundary import store_error
from memory.errors import InvalidInputError
from memory.models import MAX_METADATA_BYTES, check_metadata, check_text, check_unicode
from memory.shape import read_bounded, text_depth_exceeds, value_depth_exceeds
from ui.auth import user_id_of_claim


def nested(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


@pytest.mark.parametrize("levels", [21, 300, 1_000])
def test_deep_metadata_text_is_refused_in_words(levels: int) -> None:
    with pytest.raises(InvalidInputError, match="nested deeper than 20 levels"):
        check_metadata(nested(levels))


def test_metadata_text_is_sized_before_its_depth_is_measured() -> None:
    # 100,000 levels is 600 KB: refused for its size, by a check that reads no bracket
    with pytest.raises(InvalidInputError, match=f"600001 bytes; the limit is {MAX_METADATA_BYTES}"):
        check_metadata(nested(100_000))


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


# --- the depth scan is linear in the text, whatever its shape (the probe's inputs) ----------

MB = 1024 * 1024
#: The probe's hostile shapes: an unterminated string of `\\"` pairs (a quadratic scan took
#: 8 s for 40 KB and about 1.5 h for 1 MB), deep nesting of objects and of arrays, and text
#: that is all brackets and short strings (the most work per byte for the scan).
HOSTILE: dict[str, Callable[[int], bytes]] = {
    "unterminated escaped quotes": lambda n: b'"' + b'\\"' * (n // 2),
    "objects nested deep": lambda n: b'{"a":' * (n // 5),
    "arrays nested deep": lambda n: b"[" * n,
    "flat empty pairs": lambda n: b"[]" * (n // 2),
    "short strings": lambda n: b'["a",' + b'"a",' * (n // 4) + b'"a"]',
}


def _cpu_seconds(text: bytes) -> float:
    """The best of three runs of the scan, in this process's CPU time (other processes on a
    shared machine do not count)."""
    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        text_depth_exceeds(text, 24)
        best = min(best, time.process_time() - start)
    return best


@pytest.mark.parametrize("shape", list(HOSTILE))
def test_the_depth_scan_grows_linearly_on_hostile_shapes(shape: str) -> None:
    """8 times the text costs about 8 times the time: the ratio, not a time, is asserted
    (a quadratic scan makes it 64). 2.5 times the linear ratio is left for noise."""
    small, large = HOSTILE[shape](MB), HOSTILE[shape](8 * MB)
    ratio = _cpu_seconds(large) / max(_cpu_seconds(small), 1e-4)
    assert ratio < 8 * 2.5, f"{shape}: 8 MB took {ratio:.1f} times as long as 1 MB"


def test_the_scan_still_measures_what_it_did() -> None:
    assert text_depth_exceeds(HOSTILE["arrays nested deep"](MB), 24)
    assert text_depth_exceeds(HOSTILE["objects nested deep"](MB), 24)
    assert not text_depth_exceeds(HOSTILE["unterminated escaped quotes"](MB), 24)
    assert not text_depth_exceeds(HOSTILE["flat empty pairs"](MB), 1)
    assert text_depth_exceeds(b"{[]}", 1) and not text_depth_exceeds(b"{[]}", 2)
    assert text_depth_exceeds(b'[{"a": [{}]}]', 3) and not text_depth_exceeds(b'[{"a": [{}]}]', 4)
    # a string that never ends hides every bracket after its quote, as it does from JSON
    assert not text_depth_exceeds(b'["' + b"[" * 100, 1)
    assert text_depth_exceeds(b'["\\\\"' + b"[" * 100, 24)  # an escaped backslash ends it
