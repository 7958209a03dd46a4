"""A sweep's samples: one row per call of its function (:func:`draw`).

``random`` sweeps draw each parameter from its own generator seeded by ``(seed, crc32(name))``
(:mod:`intelligence_per_dollar.model.uncertainty`, whose PERT, triangular and log-uniform draws
are reused here), so the same spec gives the same samples on every machine, and adding a
parameter leaves the others' draws unchanged. Parameters are independent (no correlations are
modelled). ``grid`` sweeps take the Cartesian product of the parameters' values, the first
parameter varying slowest.
"""

from __future__ import annotations

import itertools
import zlib

import numpy as np
import pandas as pd

from intelligence_per_dollar.analysis.sweeps.spec import Parameter, SweepSpec
from intelligence_per_dollar.model import uncertainty
from intelligence_per_dollar.sources import io
from intelligence_per_dollar.sources.assumptions import Assumption

SAMPLE = "sample"


def _generator(seed: int, name: str) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, zlib.crc32(name.encode())])))


def draw_parameter(p: Parameter, n: int, seed: int) -> np.ndarray:
    """``n`` draws of one random-sweep parameter."""
    if p.distribution in ("pert", "triangular", "loguniform"):
        a = Assumption(p.name, p.unit, p.low, p.central, p.high, io.Provenance(p.source, "", "assumption"))
        dist = "pert" if p.distribution == "loguniform" else p.distribution
        return uncertainty.sample_one(a, n, seed, dist, log_uniform=p.distribution == "loguniform")
    rng = _generator(seed, p.name)
    if p.distribution == "uniform":
        return rng.uniform(p.low, p.high, n)
    if p.distribution == "lognormal":
        return p.median * np.exp(p.sigma * rng.standard_normal(n))
    if p.distribution == "choice":
        idx = rng.choice(len(p.values), size=n, p=np.asarray(p.weights, float))
        return np.array([p.values[i] for i in idx], dtype=object)
    raise ValueError(f"parameter {p.name}: distribution={p.distribution!r} cannot be drawn in a random sweep")


def _column(values) -> pd.Series:
    s = pd.Series(list(values))
    return s.astype(float) if all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
                                  for v in s) else s


def draw(spec: SweepSpec) -> pd.DataFrame:
    """The samples: column ``sample`` (0..n-1), then one column per parameter in spec order."""
    if spec.method == "grid":
        rows = list(itertools.product(*(p.values for p in spec.parameters.values())))
        cols = {k: _column(r[i] for r in rows) for i, k in enumerate(spec.parameters)}
        return pd.DataFrame({SAMPLE: np.arange(len(rows)), **cols})
    cols = {k: _column(draw_parameter(p, spec.samples, spec.seed)) for k, p in spec.parameters.items()}
    return pd.DataFrame({SAMPLE: np.arange(spec.samples), **cols})
