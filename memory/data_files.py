"""The package's data files (`memory/data/*.toml`): read once, validated by a pydantic model.

A malformed file fails at load with one sentence that names the file and the field.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Annotated, TypeVar

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationError

from memory.errors import DataFileError

DATA_DIR = Path(__file__).resolve().parent / "data"

M = TypeVar("M", bound=BaseModel)


def _lower_case(value: str) -> str:
    if value != value.lower():
        raise ValueError("words are written in lower case (texts are compared so)")
    return value


#: Words in a data file that texts are compared with, case-folded: written in lower case.
LowerCase = Annotated[str, AfterValidator(_lower_case)]


def _words(value: object) -> frozenset[str]:
    if not isinstance(value, str) or not value.split():
        raise ValueError("expected words separated by spaces")
    return frozenset(_lower_case(value).split())


#: A list of words in a data file: one string, words separated by spaces, lower case.
Words = Annotated[frozenset[str], BeforeValidator(_words)]


class DataModel(BaseModel):
    """A data file's model, or a part of one: no field it does not know, read-only."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def load_data_file(name: str, model: type[M], folder: Path = DATA_DIR) -> M:
    """`folder/name` parsed as TOML and validated as `model`."""
    path = folder / name
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise DataFileError(f"The data file {path} cannot be read: {e.strerror}.") from e
    except tomllib.TOMLDecodeError as e:
        raise DataFileError(f"The data file {path} is not valid TOML: {e}.") from e
    try:
        return model.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "(the whole file)"
        message = first["msg"].removeprefix("Value error, ")
        raise DataFileError(
            f"The data file {path} is invalid at the field {field}: {message}."
        ) from e
