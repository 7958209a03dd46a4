"""Monte Carlo intervals of a headline and their text: p5/p50/p95 from :mod:`.uncertainty`, the
assumption that swings the headline most (its tornado), and "p50 (p5 to p95)" for the ledger."""

from __future__ import annotations

import math
from typing import Callable, Mapping

import numpy as np

from intelligence_per_dollar.model import uncertainty
from intelligence_per_dollar.sources import assumptions as assumption_files


def mc(fn: Callable, recs: Mapping[str, assumption_files.Assumption], n: int,
       seed: int) -> tuple[uncertainty.Result, str]:
    """Monte Carlo interval of a vectorised ``fn(values)`` and the name of the assumption that swings it most.

    Ranges spanning a decade or more are sampled log-uniformly (``uncertainty`` ``log_uniform="auto"``).
    """
    r = uncertainty.run(fn, recs, n, seed, log_uniform="auto")
    tor = uncertainty.tornado(fn, recs)
    top = str(tor["name"].iloc[0]) if len(tor) else ""
    return r, top


def mc_interval(fn: Callable, recs: Mapping[str, assumption_files.Assumption], n: int, seed: int) -> dict:
    """``{p5, p50, p95, central, deciding}`` of a vectorised headline ``fn(values)``.

    ``deciding`` is the assumption with the largest tornado swing (:func:`mc`).
    """
    r, top = mc(fn, recs, n, seed)
    return {"p5": r.p5, "p50": r.p50, "p95": r.p95, "central": float(np.asarray(fn(assumption_files.centrals(recs)))),
            "deciding": top}


def fmt(v: float, unit: str = "") -> str:
    """A ledger number: "unbounded" for +inf, "n/a" for NaN, $M for large USD, else 3 significant digits."""
    if v == math.inf:
        return "unbounded"
    if not math.isfinite(v):
        return "n/a"
    a = abs(v)
    if a >= 1e6 and "USD" in unit:
        return f"${v / 1e6:.2f}M"
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:.1f}"
    return f"{v:.3g}"


def interval_text(p5: float, p50: float, p95: float, unit: str = "") -> str:
    """``"p50 (p5 to p95)"`` with :func:`fmt`."""
    return f"{fmt(p50, unit)} ({fmt(p5, unit)} to {fmt(p95, unit)})"
