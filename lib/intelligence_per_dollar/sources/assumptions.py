"""Ranged assumptions: ``low``/``central``/``high`` files read into frozen, validated records.

Every assumption file of the book (``data/assumptions/*.csv``, ``data/prices/prices.csv``) has
one row per value with a low, central and high figure and its provenance. :func:`parse_ranges`
reads one such file; :func:`assumptions`, :func:`task_assumptions` and :func:`prices` load (once)
the files the chapters use; :func:`book_assumptions` joins chapter 4's inputs. The records are
immutable: :func:`with_overrides` returns a changed copy, and :func:`centrals` the central values
that the model functions take.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from intelligence_per_dollar.sources import io

_ASSUMPTION_COLUMNS = ("name", "unit", "low", "central", "high", "source_url", "date_read", "kind", "note")

__all__ = ["Assumption", "parse_ranges", "assumptions", "task_assumptions", "prices", "centrals",
           "book_assumptions", "with_overrides"]


@dataclass(frozen=True)
class Assumption:
    """One ranged assumption: low <= central <= high, in ``unit``, with where it comes from."""

    name: str
    unit: str
    low: float
    central: float
    high: float
    provenance: io.Provenance
    row: int = 0


def _key(path: Path, row: int, rec: Mapping[str, str], id_columns: tuple[str, ...]) -> str:
    parts = []
    for col in id_columns:
        v = rec.get(col, "")
        if not v:
            raise io.DataError(f"{path}, row {row}, column '{col}': empty")
        parts.append(v)
    return ".".join(parts)


def _ordered_values(path: Path, row: int, rec: Mapping[str, str]) -> dict[str, float]:
    vals = {c: io.parse_float(path, row, c, rec[c]) for c in ("low", "central", "high")}
    if vals["low"] > vals["central"]:
        raise io.DataError(f"{path}, row {row}, column 'low': low {vals['low']!r} > central "
                           f"{vals['central']!r}; expected low <= central <= high")
    if vals["central"] > vals["high"]:
        raise io.DataError(f"{path}, row {row}, column 'high': high {vals['high']!r} < central "
                           f"{vals['central']!r}; expected low <= central <= high")
    return vals


def parse_ranges(path: Path, id_columns: tuple[str, ...] = ("name",)) -> Mapping[str, Assumption]:
    """Read and validate a low/central/high file; keys join ``id_columns`` with '.'.

    Files with a ``used`` column (sources that disagree, as in ``data/prices/prices.csv``) keep
    every source as a row; only the ``used=true`` row of each key is returned, and a key with two
    used rows is an error (reported as a duplicate).

    Each problem raises :class:`io.DataError` naming the file, row and column: a missing column,
    an empty or duplicate name, a value that is not a finite number, low > central or
    central > high, or bad provenance.
    """
    path = Path(path)
    required = tuple(id_columns) + tuple(c for c in _ASSUMPTION_COLUMNS if c not in ("name", "unit"))
    out: dict[str, Assumption] = {}
    for row, rec in io.read_rows(path, required):
        name = _key(path, row, rec, tuple(id_columns))
        if "used" in rec and not io.parse_bool(path, row, "used", rec["used"]):
            continue  # an alternative source kept for the record; the used row is the book's value
        if name in out:
            raise io.DataError(f"{path}, row {row}, column '{id_columns[0]}': duplicate name '{name}' "
                               f"(first at row {out[name].row})")
        vals = _ordered_values(path, row, rec)
        prov = io.check_provenance(path, row, rec)
        out[name] = Assumption(name, rec.get("unit", ""), vals["low"], vals["central"], vals["high"], prov, row)
    return MappingProxyType(out)


@functools.lru_cache(maxsize=16)
def _cached(data_dir: str, parts: tuple[str, ...], id_columns: tuple[str, ...]) -> Mapping[str, Assumption]:
    return parse_ranges(io.data_path(*parts), id_columns)


def assumptions(filename: str = "economics.csv") -> Mapping[str, Assumption]:
    """The assumptions in ``data/assumptions/<filename>`` as frozen records keyed by name."""
    return _cached(str(io.data_dir()), ("assumptions", filename), ("name",))


def task_assumptions() -> Mapping[str, Assumption]:
    """``data/assumptions/tasks.csv``: per-step reliability, steps, tokens, retries, lifetime tasks."""
    return assumptions("tasks.csv")


def prices() -> Mapping[str, Assumption]:
    """``data/prices/prices.csv`` as records keyed ``"<item>.<field>"`` (e.g. rack capex, rental)."""
    return _cached(str(io.data_dir()), ("prices", "prices.csv"), ("item", "field"))


def centrals(records: Mapping[str, Assumption]) -> dict[str, float]:
    """``{name: central}`` for a set of records (the deterministic, central case)."""
    return {k: a.central for k, a in records.items()}


def book_assumptions() -> dict[str, Assumption]:
    """Every ranged input of chapter 4 in one mapping: economics, tasks and the used prices."""
    return {**assumptions(), **task_assumptions(), **prices()}


def _override_number(name: str, value) -> float:
    """One override value as a finite float, else ``ValueError`` naming the assumption."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"parameter assumption_overrides[{name!r}]={value!r} must be a number or an array "
                         f"of numbers") from None
    if not math.isfinite(v):
        raise ValueError(f"parameter assumption_overrides[{name!r}]={v!r} is not allowed; "
                         f"expected a finite number")
    return v


def _override_range(name: str, value) -> tuple[float, float, float]:
    if isinstance(value, (tuple, list)):
        if len(value) != 3:
            raise ValueError(f"parameter assumption_overrides[{name!r}]={value!r} must be a number or "
                             f"a (low, central, high) triple")
        lo, c, hi = (_override_number(name, x) for x in value)
    else:
        lo = c = hi = _override_number(name, value)
    if not lo <= c <= hi:
        raise ValueError(f"parameter assumption_overrides[{name!r}]={value!r} is not allowed; "
                         f"expected low <= central <= high")
    return lo, c, hi


def with_overrides(records: Mapping[str, Assumption],
                   overrides: Mapping[str, object] | None) -> dict[str, Assumption]:
    """A copy of ``records`` with some assumptions replaced.

    Each override is a number (the assumption becomes that fixed value: low = central = high),
    a ``(low, central, high)`` triple, or an :class:`Assumption`. Unknown names and triples that
    are not ordered raise ``ValueError``.
    """
    out = dict(records)
    for name, v in dict(overrides or {}).items():
        if name not in out:
            raise ValueError(f"parameter assumption_overrides names unknown assumption {name!r}; "
                             f"known: {', '.join(sorted(out))}")
        if isinstance(v, Assumption):
            out[name] = v
            continue
        a = out[name]
        lo, c, hi = _override_range(name, v)
        out[name] = Assumption(name, a.unit, lo, c, hi,
                               io.Provenance(a.provenance.source_url, a.provenance.date_read, a.provenance.kind,
                                             "overridden by the caller"), a.row)
    return out
