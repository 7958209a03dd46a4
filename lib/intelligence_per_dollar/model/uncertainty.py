"""Uncertainty: seeded, vectorised Monte Carlo over assumption ranges, intervals and tornado.

Each assumption is a low/central/high record (:class:`sources.assumptions.Assumption`). :func:`sample`
draws ``n`` values of each from a PERT (default) or triangular distribution over
[low, high] with mode ``central``, or log-uniformly over [low, high] for ranges spanning orders
of magnitude. Model functions are vectorised, so :func:`run` evaluates one on all samples in a
single call; :func:`intervals` reduces the result to the 5th/50th/95th percentiles;
:func:`tornado` swings each assumption from low to high with the others at central.

Determinism: every assumption draws from its own generator seeded by
``SeedSequence([seed, crc32(name)])``, so the same seed gives identical numbers on every run and
machine (numpy's PCG64), and adding or removing one assumption does not change the draws of the
others. Sampling is independent across assumptions (no correlations are modelled).

Distributions (Vose, *Risk Analysis: A Quantitative Guide*, 3rd ed., ch. 9):

* triangular(a, c, b);
* PERT: a + (b - a) Beta(1 + 4 (c - a)/(b - a), 1 + 4 (b - c)/(b - a)), mean (a + 4c + b)/6;
* log-uniform: exp(U(ln a, ln b)), needs a > 0.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from statistics import NormalDist
from typing import Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from intelligence_per_dollar.sources import checks
from intelligence_per_dollar.sources.assumptions import Assumption

DISTRIBUTIONS = ("pert", "triangular")
#: Most draws per assumption (ten million float64 values: 80 MB).
MAX_SAMPLES = 10**7
#: With ``log_uniform="auto"``, ranges with high/low at least this wide are sampled log-uniformly.
AUTO_LOG_RATIO = 10.0
#: Percentiles reported by :func:`intervals`.
PERCENTILES = (5.0, 50.0, 95.0)


def _records(assumptions) -> dict[str, Assumption]:
    if isinstance(assumptions, Mapping):
        recs = dict(assumptions)
    else:
        recs = {a.name: a for a in assumptions}
    for k, a in recs.items():
        if not isinstance(a, Assumption):
            raise ValueError(f"parameter assumptions[{k!r}]={a!r} is not an Assumption record")
    return recs


def _generator(seed: int, name: str) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, zlib.crc32(name.encode())])))


def _check_n_seed(n, seed) -> tuple[int, int]:
    return checks.integer("n", n, low=1, high=MAX_SAMPLES), checks.non_negative_int("seed", seed)


def _log_names(recs: Mapping[str, Assumption], log_uniform) -> set[str]:
    if log_uniform == "auto":
        return {k for k, a in recs.items() if a.low > 0 and a.high / a.low >= AUTO_LOG_RATIO}
    names = set(log_uniform or ())
    unknown = names - set(recs)
    if unknown:
        raise ValueError(f"parameter log_uniform names unknown assumption(s) {sorted(unknown)}")
    bad = sorted(k for k in names if recs[k].low <= 0)
    if bad:
        raise ValueError(f"parameter log_uniform={bad} is not allowed: log-uniform needs low > 0")
    return names


def sample_one(a: Assumption, n: int, seed: int, distribution: str = "pert",
               log_uniform: bool = False) -> np.ndarray:
    """``n`` draws of one assumption (see the module docstring for the distributions)."""
    n, seed = _check_n_seed(n, seed)
    checks.choice("distribution", distribution, DISTRIBUTIONS)
    checks.boolean("log_uniform", log_uniform)
    lo, c, hi = a.low, a.central, a.high
    if not lo <= c <= hi:
        raise ValueError(f"assumption {a.name}: low={lo}, central={c}, high={hi}; expected low <= central <= high")
    if hi == lo:
        return np.full(n, float(c))
    rng = _generator(seed, a.name)
    if log_uniform:
        if lo <= 0:
            raise ValueError(f"assumption {a.name}: low={lo} is not allowed for log-uniform; expected > 0")
        return np.exp(rng.uniform(np.log(lo), np.log(hi), n))
    if distribution == "triangular":
        return rng.triangular(lo, c, hi, n)
    alpha = 1.0 + 4.0 * (c - lo) / (hi - lo)
    beta = 1.0 + 4.0 * (hi - c) / (hi - lo)
    return lo + (hi - lo) * rng.beta(alpha, beta, n)


def sample(assumptions, n: int, seed: int, distribution: str = "pert",
           log_uniform: Iterable[str] | str = ()) -> dict[str, np.ndarray]:
    """``{name: array of n draws}`` for every assumption; same seed -> identical arrays.

    ``assumptions``: a mapping name -> :class:`Assumption` (e.g. :func:`sources.assumptions.assumptions`)
    or an iterable of records. ``log_uniform``: names to sample log-uniformly, or ``"auto"`` for
    every range with high/low >= :data:`AUTO_LOG_RATIO`.
    """
    n, seed = _check_n_seed(n, seed)
    recs = _records(assumptions)
    logs = _log_names(recs, log_uniform)
    return {k: sample_one(a, n, seed, distribution, k in logs) for k, a in recs.items()}


def intervals(values, axis: int = 0) -> tuple:
    """(p5, p50, p95) of ``values`` along ``axis``; floats for 1-d input.

    NaN is refused (a valid model never returns it); +inf is allowed and sorts last.
    """
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        raise ValueError("parameter values is empty; expected at least one value")
    if np.any(np.isnan(v)):
        raise ValueError("parameter values contains NaN; expected numbers (a model returned NaN)")
    p = np.percentile(v, PERCENTILES, axis=axis)
    if p.ndim == 1:
        return tuple(float(x) for x in p)
    return tuple(p)


@dataclass(frozen=True)
class Result:
    """A Monte Carlo run: every sampled output, its (p5, p50, p95) and how it was made."""

    values: np.ndarray
    p5: float
    p50: float
    p95: float
    n: int
    seed: int

    @property
    def interval(self) -> tuple[float, float, float]:
        return (self.p5, self.p50, self.p95)


def run(fn: Callable[[Mapping[str, np.ndarray]], np.ndarray], assumptions, n: int, seed: int,
        fixed: Mapping[str, object] | None = None, distribution: str = "pert",
        log_uniform: Iterable[str] | str = ()) -> Result:
    """Evaluate a vectorised ``fn(values)`` on ``n`` seeded samples of ``assumptions``.

    ``fn`` receives one mapping ``{name: array of n draws}`` (plus ``fixed`` values, which are not
    sampled and override samples of the same name) and returns an array of n outputs.
    """
    values = sample(assumptions, n, seed, distribution, log_uniform)
    values.update(dict(fixed or {}))
    out = np.broadcast_to(np.asarray(fn(values), dtype=float), (n,))
    p5, p50, p95 = intervals(out)
    return Result(np.array(out), p5, p50, p95, n, seed)


def tornado(fn: Callable[[Mapping[str, np.ndarray]], np.ndarray], assumptions,
            names: Iterable[str] | None = None, fixed: Mapping[str, object] | None = None) -> pd.DataFrame:
    """Swing each assumption from low to high with all others at central; rank by swing.

    One vectorised call of ``fn``: row 0 is all-central, then a low and a high row per swung
    assumption. Returns a DataFrame (name, unit, low, central, high, output_at_low,
    output_at_high, output_central, swing = |output_at_high - output_at_low|) sorted by swing,
    largest first. Assumptions with low == high are skipped.
    """
    recs = _records(assumptions)
    names = list(recs) if names is None else list(names)
    unknown = [k for k in names if k not in recs]
    if unknown:
        raise ValueError(f"parameter names has unknown assumption(s) {unknown}")
    swung = [k for k in names if recs[k].high > recs[k].low]
    m = 1 + 2 * len(swung)
    values: dict[str, object] = {k: np.full(m, a.central) for k, a in recs.items()}
    for i, k in enumerate(swung):
        values[k][1 + 2 * i] = recs[k].low
        values[k][2 + 2 * i] = recs[k].high
    values.update(dict(fixed or {}))
    out = np.broadcast_to(np.asarray(fn(values), dtype=float), (m,))
    rows = []
    for i, k in enumerate(swung):
        a = recs[k]
        lo_v, hi_v = float(out[1 + 2 * i]), float(out[2 + 2 * i])
        rows.append({"name": k, "unit": a.unit, "low": a.low, "central": a.central, "high": a.high,
                     "output_at_low": lo_v, "output_at_high": hi_v, "output_central": float(out[0]),
                     "swing": abs(hi_v - lo_v)})
    cols = ["name", "unit", "low", "central", "high", "output_at_low", "output_at_high",
            "output_central", "swing"]
    df = pd.DataFrame(rows, columns=cols)
    return df.sort_values("swing", ascending=False, kind="stable").reset_index(drop=True)


__all__ = ["DISTRIBUTIONS", "PERCENTILES", "Result", "sample", "sample_one", "intervals", "run", "tornado",
           "TUKEY_FENCE_Z", "MAX_DRAWS", "expected_max_standard_normal"]


#: Tukey's inner fence of a normal sample in standard deviations, ``Q3 + 1.5 IQR = 4 Phi^-1(0.75) = 2.698``: where a
#: box plot's whisker stops; points beyond it are the outliers it draws apart.
TUKEY_FENCE_Z = 4.0 * NormalDist().inv_cdf(0.75)
#: Most draws :func:`expected_max_standard_normal` takes (its quantile stays below 1 in float64).
MAX_DRAWS = 10**15


def expected_max_standard_normal(n, bound: float | None = None):
    """Expected largest of ``n`` independent standard normal draws, by Blom's approximation to the normal order
    statistic (Blom 1958, *Statistical Estimates and Transformed Beta-Variables*): the ``(n - 0.375) / (n + 0.25)``
    quantile. 0 for one draw; 1.05, 1.43, 2.34 and 3.23 for 4, 8, 64 and 1,024 draws (exact: 1.03, 1.42, 2.34,
    3.25, by numerical integration of ``x n phi(x) Phi(x)^(n-1)``). ``bound``: draws from the normal truncated to
    ``[-bound, bound]`` (the same quantile of the truncated distribution, ``Phi^-1(Phi(-b) + q (Phi(b) - Phi(-b)))``;
    within 0.05 of the integral), so the maximum never passes ``bound``: 1.41, 2.22 and 2.64 for 8, 64 and 1,024
    draws within :data:`TUKEY_FENCE_Z`. ``n``: a whole number, or an array of them, from 1 to :data:`MAX_DRAWS`;
    ``ValueError`` otherwise."""
    bad = isinstance(n, (bool, np.bool_, str, bytes))
    try:
        arr = np.asarray(n, dtype=float) if not bad else np.empty(0)
    except (TypeError, ValueError):
        arr = np.empty(0)
    if bad or np.asarray(n).dtype == bool or arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 1) \
            or np.any(arr > MAX_DRAWS) or np.any(arr != np.round(arr)):
        raise ValueError(f"n={n!r} must be a whole number (or array of them) from 1 to {MAX_DRAWS:.0e}")
    q = (arr - 0.375) / (arr + 0.25)
    nd = NormalDist()
    if bound is not None:
        if isinstance(bound, bool) or not isinstance(bound, (int, float, np.integer, np.floating)) \
                or not np.isfinite(bound) or bound <= 0:
            raise ValueError(f"bound={bound!r} must be None or a finite number > 0 (standard deviations)")
        lo, hi = nd.cdf(-float(bound)), nd.cdf(float(bound))
        q = lo + q * (hi - lo)
    z = np.vectorize(nd.inv_cdf, otypes=[float])(q)
    return float(z) if np.ndim(n) == 0 else z
