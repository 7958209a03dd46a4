"""Checks for notebook parameters: one clear ``ValueError`` naming the parameter, its value and
what is allowed. Chapters call these right after their ``parameters`` cell, so a papermill run
with a bad value stops at once with a readable message instead of a traceback deep in the model.
The rules are the model's (:mod:`intelligence_per_dollar.sources.checks`); messages start with
``parameter NAME=``.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from intelligence_per_dollar.sources import checks


def choice(name: str, value, allowed: Iterable) -> object:
    """``value`` must be one of ``allowed`` (same kind: ``True`` is not ``1``)."""
    return checks.choice(f"parameter {name}", value, allowed)


def number(name: str, value, *, low: float | None = None, high: float | None = None,
           integer: bool = False, low_open: bool = False) -> float:
    """``value`` must be a finite real number in [low, high] (``low_open``: strictly above low);
    ``integer``: a whole one (``8`` or ``8.0``). Returns ``value`` unchanged."""
    if integer:
        checks.integer(f"parameter {name}", value, whole_floats=True)
    checks.number(f"parameter {name}", value, low=low, high=high, low_open=low_open)
    return value


def probability(name: str, value) -> float:
    """A probability in [0, 1]."""
    return number(name, value, low=0.0, high=1.0)


def names(name: str, value, known: Sequence[str], *, min_len: int = 1) -> list[str]:
    """A non-empty list of names, each in ``known``."""
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise ValueError(f"parameter {name}={checks.short(value)} must be a list of names from: {', '.join(known)}")
    if len(value) < min_len:
        raise ValueError(f"parameter {name}={checks.short(value)} must name at least {min_len}; "
                         f"known: {', '.join(known)}")
    bad = [v for v in value if v not in known]
    if bad:
        raise ValueError(f"parameter {name} has unknown name(s) {checks.short(bad)}; known: {', '.join(known)}")
    return list(value)
