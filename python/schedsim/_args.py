"""Checks of the public functions' arguments, so that every type or range error names the argument: the core's
own conversions say only "can't convert negative int to unsigned" or "argument 'seed': ..." under the core's
names, which are not always the caller's."""

from __future__ import annotations

import operator
from typing import Any

U64_MAX = 2**64 - 1


def whole(name: str, value: Any, low: int = 0, high: int = U64_MAX) -> int | None:
    """``value`` as an int when it is None or a whole number in ``low..high``; else TypeError or ValueError
    naming ``name``. Anything with ``__index__`` (a NumPy integer) counts; a bool or a float does not."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise TypeError(f"{name}: expected a whole number, not a bool ({value!r})")
    try:
        n = operator.index(value)
    except TypeError:
        raise TypeError(f"{name}: expected a whole number, not {type(value).__name__} {value!r}") from None
    if not low <= n <= high:
        raise ValueError(f"{name}: {n} is out of range (a whole number from {low} to {high})")
    return n


def list_of_str(value: Any, what: str) -> list[str] | None:
    """``value`` as a list of strings, refusing a bare string (which would be taken a character at a time)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)):
        raise TypeError(f"{what}: expected a list of strings, not a string (write [{value!r}])")
    try:
        out = list(value)
    except TypeError:
        raise TypeError(f"{what}: expected a list of strings, not {type(value).__name__} {value!r}") from None
    for v in out:
        if not isinstance(v, str):
            raise TypeError(f"{what}: expected strings, got {type(v).__name__} {v!r}")
    return out


def optional_str(value: Any, what: str) -> str | None:
    """``value`` when it is None or a string; else TypeError naming ``what``."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{what}: expected a string, not {type(value).__name__} {value!r}")
    return value
