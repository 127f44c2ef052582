"""Exceptions of the memory package, one class per thing the caller does next (each message says
what). Driver errors (redis-py, onnxruntime, ollama) are translated at the I/O boundary."""

from __future__ import annotations


class MemorySystemError(Exception):
    """Base class of every error raised by the memory package."""


class InvalidInputError(MemorySystemError, ValueError):
    """The caller passed something the memory system cannot accept."""


class ImportFileError(InvalidInputError):
    """An import file failed validation; nothing was written."""


class NotFoundError(MemorySystemError, LookupError):
    """The requested memory does not exist, or belongs to another user."""


class NotAllowedError(MemorySystemError, PermissionError):
    """The caller may not make this change (shared facts change only with admin rights)."""


class StoreUnavailableError(MemorySystemError, ConnectionError):
    """Redis could not be reached or lacks the search/JSON modules."""


class StoreReplacedError(StoreUnavailableError):
    """The Redis at the configured address is not the one the memories were on (restarted on
    another data folder, emptied, or REDIS_URL changed). What was missing has been recreated
    on it; the call that found out wrote nothing and can be repeated."""


class StoreFormatError(MemorySystemError):
    """The namespace holds a store of another format (`memory.stores.store_format`)."""


class EmbeddingModelMismatchError(MemorySystemError):
    """An index was built with another embedding model or dimension."""


class EmbedderError(MemorySystemError):
    """The embedding model could not be loaded or failed to embed."""


class DataFileError(MemorySystemError):
    """A data file shipped with the package (`memory/data`) is missing or malformed."""
