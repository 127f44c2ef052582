"""The store's format version, checked when the stores open: data of another layout is refused
with what to do, never read as this one (docs/architecture.md, "One store format"). The next
change of layout raises `FORMAT` and adds its upgrade as the step from the previous number."""

from __future__ import annotations

import redis

from memory.errors import StoreFormatError
from memory.keys import Keys
from memory.replies import as_str
from memory.stores.schema import VECTOR_DTYPE

FORMAT = 2


def markers(keys: Keys) -> dict[str, str]:
    """The marker keys of the current format and their values (as b72d341 wrote them)."""
    return {keys.version: str(FORMAT), keys.vector_dtype: VECTOR_DTYPE, keys.live_tags: "1"}


def check_format(client: redis.Redis, keys: Keys, index_names: list[str]) -> None:
    """Pass on a store of the current format; mark a namespace with no store yet (no marker,
    none of its indexes) as one; refuse anything else."""
    expected = markers(keys)
    pipe = client.pipeline(transaction=False)  # one key per command: shared slots differ
    for key in expected:
        pipe.get(key)
    found = dict(zip(expected, (as_str(v) if v else None for v in pipe.execute()), strict=True))
    if found == expected:
        return
    if found[keys.version] is None and not _has_index(client, index_names):
        for key, value in expected.items():
            client.set(key, value, nx=True)
        return
    raise StoreFormatError(
        f"The memories in namespace {keys.ns!r} on this Redis are in another store format than "
        f"this version reads (format {FORMAT}): export them with the version that wrote them "
        "(`python -m memory export`) and import the files into a new namespace, or set "
        "MEMORY_NAMESPACE to start a new one."
    )


def _has_index(client: redis.Redis, index_names: list[str]) -> bool:
    listed = {as_str(name) for name in client.execute_command("FT._LIST")}
    return any(name in listed for name in index_names)
