"""Checks for notebook parameters: one clear ``ValueError`` naming the parameter, its value and
what is allowed. Chapters call these right after their ``parameters`` cell, so a papermill run
with a bad value stops at once with a readable message instead of a traceback deep in the model.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence


def choice(name: str, value, allowed: Iterable) -> object:
    """``value`` must be one of ``allowed``."""
    allowed = list(allowed)
    if value not in allowed:
        raise ValueError(f"parameter {name}={value!r} is not allowed; allowed: {', '.join(map(str, allowed))}")
    return value


def number(name: str, value, *, low: float | None = None, high: float | None = None,
           integer: bool = False, low_open: bool = False) -> float:
    """``value`` must be a finite real number in [low, high] (``low_open``: strictly above low)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        kind = "an integer" if integer else "a finite number"
        raise ValueError(f"parameter {name}={value!r} must be {kind}")
    if integer and value != int(value):
        raise ValueError(f"parameter {name}={value!r} must be an integer")
    if low is not None and (value < low or (low_open and value == low)):
        op = ">" if low_open else ">="
        rng = f"{op} {low}" + (f" and <= {high}" if high is not None else "")
        raise ValueError(f"parameter {name}={value!r} is out of range; allowed: {rng}")
    if high is not None and value > high:
        rng = (f">= {low} and " if low is not None else "") + f"<= {high}"
        raise ValueError(f"parameter {name}={value!r} is out of range; allowed: {rng}")
    return value


def probability(name: str, value) -> float:
    """A probability in [0, 1]."""
    return number(name, value, low=0.0, high=1.0)


def names(name: str, value, known: Sequence[str], *, min_len: int = 1) -> list[str]:
    """A non-empty list of names, each in ``known``."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ValueError(f"parameter {name}={value!r} must be a list of names from: {', '.join(known)}")
    if len(value) < min_len:
        raise ValueError(f"parameter {name}={value!r} must name at least {min_len}; known: {', '.join(known)}")
    bad = [v for v in value if v not in known]
    if bad:
        raise ValueError(f"parameter {name} has unknown name(s) {bad}; known: {', '.join(known)}")
    return list(value)
