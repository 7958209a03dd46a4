"""Argument checks shared by the model functions: each returns the checked value or raises one
``ValueError`` that names the parameter, shows its value (cut to :data:`MAX_VALUE_CHARS`
characters) and says what is allowed.

The rules are the same everywhere:

* a boolean is never a number (``True`` is not a sequence length) and a number never a boolean
  (``1`` or ``"yes"`` is not ``True``);
* NumPy scalars count as the Python type they stand for (``np.int64(8)`` is an integer,
  ``np.float32(0.5)`` a number, ``np.bool_(True)`` a boolean);
* NaN and infinity are refused unless a check says it allows infinity;
* integers are whole numbers of an integer type (``8``, ``np.int64(8)``); ``8.0`` passes only
  where a check allows whole floats (values read from a CSV file).
"""

from __future__ import annotations

import math
import numbers
from typing import Iterable

import numpy as np

__all__ = ["MAX_VALUE_CHARS", "short", "is_number", "number", "positive_number", "non_negative_number",
           "fraction", "integer", "positive_int", "non_negative_int", "boolean", "choice", "array",
           "array_at_least"]

#: Longest shown value in a message: a 300,000-item list is not repeated back.
MAX_VALUE_CHARS = 80


def short(value, n: int = MAX_VALUE_CHARS) -> str:
    """``repr(value)`` cut to ``n`` characters (``...`` marks the cut)."""
    r = repr(value)
    return r if len(r) <= n else r[: n - 3] + "..."


def is_number(value) -> bool:
    """A real number of a numeric type (Python or NumPy), not a boolean."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _bound(v) -> str:
    return f"{v:,}" if isinstance(v, int) else f"{v:g}"


def _range(low, high, low_open: bool, high_open: bool) -> str:
    parts = []
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {_bound(low)}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {_bound(high)}")
    return " and ".join(parts)


def number(name: str, value, *, low: float | None = None, high: float | None = None, low_open: bool = False,
           high_open: bool = False, allow_inf: bool = False) -> float:
    """``value`` as a float: a real number (never NaN; +-inf only if ``allow_inf``) in the range
    ``[low, high]`` (``low_open`` / ``high_open``: the bound itself excluded)."""
    kind = "a number" if allow_inf else "a finite number"
    rng = _range(low, high, low_open, high_open)
    try:
        v = float(value) if is_number(value) else math.nan
    except OverflowError:  # an int beyond float64
        v = math.nan
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name}={short(value)} is not allowed; allowed: {kind}" + (f" {rng}" if rng else ""))
    if (low is not None and (v < low or (low_open and v == low))) or \
            (high is not None and (v > high or (high_open and v == high))):
        raise ValueError(f"{name}={short(value)} is out of range; allowed: {rng}")
    return v


def positive_number(name: str, value, *, allow_inf: bool = False) -> float:
    """A number > 0."""
    return number(name, value, low=0.0, low_open=True, allow_inf=allow_inf)


def non_negative_number(name: str, value) -> float:
    """A finite number >= 0."""
    return number(name, value, low=0.0)


def fraction(name: str, value, *, low_open: bool = False) -> float:
    """A number in [0, 1] (``low_open``: in (0, 1])."""
    return number(name, value, low=0.0, high=1.0, low_open=low_open)


def integer(name: str, value, *, low: int | None = None, high: int | None = None, whole_floats: bool = False) -> int:
    """``value`` as an int: an integer (Python or NumPy; with ``whole_floats`` also a finite float
    with no fractional part) in ``[low, high]``."""
    rng = _range(low, high, False, False)
    ok = isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))
    if not ok and whole_floats and is_number(value) and math.isfinite(value) and float(value).is_integer():
        ok = True
    if not ok:
        raise ValueError(f"{name}={short(value)} is not allowed; allowed: an integer" + (f" {rng}" if rng else ""))
    v = int(value)
    if (low is not None and v < low) or (high is not None and v > high):
        raise ValueError(f"{name}={short(value)} is out of range; allowed: an integer {rng}")
    return v


def positive_int(name: str, value, *, whole_floats: bool = False) -> int:
    """An integer >= 1."""
    return integer(name, value, low=1, whole_floats=whole_floats)


def non_negative_int(name: str, value, *, whole_floats: bool = False) -> int:
    """An integer >= 0."""
    return integer(name, value, low=0, whole_floats=whole_floats)


def boolean(name: str, value) -> bool:
    """``True`` or ``False`` (or a NumPy boolean); ``1``, ``"yes"`` and ``None`` are refused."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name}={short(value)} is not allowed; allowed: True or False")
    return bool(value)


def _same(value, option) -> bool:
    """Equal and of the same kind: ``True`` is not ``1``, ``"1"`` is not ``1``."""
    if isinstance(option, str) or isinstance(value, str):
        return isinstance(option, str) and isinstance(value, str) and value == option
    if isinstance(option, bool) or isinstance(value, (bool, np.bool_)):
        return isinstance(value, (bool, np.bool_)) and isinstance(option, bool) and bool(value) == option
    if is_number(option) or is_number(value):
        return is_number(option) and is_number(value) and value == option
    return value is option or (option is not None and value is not None and type(value) is type(option)
                               and value == option)


def choice(name: str, value, allowed: Iterable):
    """``value`` must be one of ``allowed`` (same kind and equal); returns it."""
    allowed = tuple(allowed)
    if not any(_same(value, a) for a in allowed):
        shown = ", ".join(map(str, allowed))
        raise ValueError(f"{name}={short(value)} is not allowed; allowed: {shown}")
    return value


def array(name: str, value, *, low: float | None = None, high: float | None = None, low_open: bool = False,
          integer: bool = False, allow_inf: bool = False) -> np.ndarray:
    """``value`` (a number or an array-like of numbers) as a float64 array, every element a real
    number (never NaN; +inf only if ``allow_inf``; whole if ``integer``) in the range; else one
    ``ValueError`` naming the parameter, the first bad element and what is allowed. Booleans and
    strings are not numbers."""
    parts = [_range(low, high, low_open, False)] if low is not None or high is not None else []
    allowed = (("a " if allow_inf else "a finite ") + ("integer" if integer else "number")
               + (" " + parts[0] if parts else "") + " (or an array of them)")
    raw = np.asarray(value) if not isinstance(value, (bool, np.bool_, str, bytes)) else None
    shallow_bool = isinstance(value, (list, tuple)) and any(isinstance(v, (bool, np.bool_)) for v in value)
    if raw is None or raw.dtype.kind not in "iuf" or shallow_bool:
        raise ValueError(f"{name}={short(value)} is not allowed; allowed: {allowed}")
    a = raw.astype(float)
    bad = np.isnan(a) | (a == -np.inf) | ((a == np.inf) & (not allow_inf))
    if low is not None:
        bad |= (a <= low) if low_open else (a < low)
    if high is not None:
        bad |= a > high
    if integer:
        bad |= np.isfinite(a) & (a != np.round(a))
    if np.any(bad):
        raise ValueError(f"{name}={float(a[bad].flat[0])!r} is not allowed; allowed: {allowed}")
    return a


def array_at_least(name: str, value, low: float = 0.0) -> np.ndarray:
    """A float array whose elements are all finite and >= ``low``: one vectorised test, for the
    model's inner loops; only when it fails does :func:`array` look closer and name the value."""
    raw = np.asarray(value)
    if raw.dtype.kind in "iuf":
        a = raw.astype(float, copy=False)
        if np.all(np.isfinite(a) & (a >= low)):
            return a
    return array(name, value, low=low)
