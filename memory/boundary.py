"""The one place where driver errors become memory errors: `translate_store_errors` wraps every
public method of a class, so a redis-py or RedisVL error below reaches callers as
`StoreUnavailableError` saying what to do, with no gap when a method is added; an instance may
explain one better (`_explain_store_error`: the coordinator asks `memory.identity`)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import redis
from redisvl.exceptions import RedisVLError

from memory.errors import MemorySystemError, StoreUnavailableError

P = ParamSpec("P")
R = TypeVar("R")
C = TypeVar("C", bound=type)

START_HINT = "Start it with `python -m memory redis start` or check REDIS_URL."


def unreachable_message(error: BaseException) -> str:
    return f"Redis is not reachable ({error}). {START_HINT}"


def timeout_message(error: BaseException) -> str:
    return (
        f"Redis did not answer within the time allowed ({error}): the server is reachable, but "
        "it was busy or this operation took longer (what it was doing may have been done). "
        "Look at what is stored, then try again; a long bulk job can be run again safely."
    )


def store_error(error: BaseException) -> StoreUnavailableError:
    """The memory error for a driver error (RedisVL wraps redis-py's in its own)."""
    cause = error.__cause__ if isinstance(error, RedisVLError) and error.__cause__ else error
    if isinstance(cause, redis.BusyLoadingError):
        return StoreUnavailableError(
            "Redis is still loading its data from disk; try again in a few seconds."
        )
    if isinstance(cause, redis.TimeoutError):
        # It answered before (the connection was open): "not reachable" would send the user
        # to start a server that runs, and hide that the work may have reached it.
        return StoreUnavailableError(timeout_message(cause))
    if isinstance(cause, redis.ConnectionError | ConnectionError):
        return StoreUnavailableError(unreachable_message(cause))
    if isinstance(cause, redis.ResponseError):
        return StoreUnavailableError(f"Redis refused the operation: {cause}")
    return StoreUnavailableError(f"Redis failed: {cause}. {START_HINT}")


def translate(fn: Callable[P, R], explain: bool = False) -> Callable[P, R]:
    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except MemorySystemError:
            raise
        except (redis.RedisError, RedisVLError) as e:
            hook = getattr(args[0], "_explain_store_error", None) if explain and args else None
            raise ((hook(e) if hook is not None else None) or store_error(e)) from e

    return wrapper


def translate_store_errors(cls: C) -> C:
    """Class decorator: `__init__` and every public method and classmethod translate driver
    errors."""
    for name, attr in list(vars(cls).items()):
        if name.startswith("_") and name != "__init__":
            continue
        if isinstance(attr, classmethod):
            setattr(cls, name, classmethod(translate(attr.__func__)))
        elif isinstance(attr, staticmethod):
            setattr(cls, name, staticmethod(translate(attr.__func__)))
        elif inspect.isfunction(attr):
            # (not while `__init__` runs: there is no store yet to compare with)
            setattr(cls, name, translate(attr, explain=name != "__init__"))
    return cls
