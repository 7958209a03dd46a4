"""Output lengths that vary: what a continuous-batching server holds in flight, and the tail of a finite run.

Synthetic benchmarks (``trtllm-bench`` with ``--output-stdev 0``) give every request the same output
length; real datasets do not. MLPerf's DeepSeek-R1 reasoning outputs run from a few hundred tokens to the
20,000-token cap around a mean of ~3,900, OpenOrca's Llama-2-70B answers from one token to the 1,024 cap.
Two things follow, both modelled here from a length distribution with mean ``OSL``, coefficient of
variation ``cv`` and cap ``max`` (a log-normal, the usual fit to LLM response lengths, clipped at the cap
as generation stops there, its scale set so the clipped mean is ``OSL``):

* **In flight, long requests are over-represented** (renewal theory, the inspection paradox: Feller,
  *An Introduction to Probability Theory and Its Applications* Vol. II, XI.4; a slot of a full batch is
  busy with a request of length ``L`` for ``L`` iterations, so the request it holds at a random iteration
  has the length-biased density ``L f(L) / E[L]``). The mean decode position of a running sequence is
  ``E[L^2] / (2 E[L]) = OSL (1 + cv^2) / 2`` rather than ``OSL / 2`` (:func:`in_flight_position_tokens`), so
  decode attention reads that much more KV cache per sequence, and the expected *final* length of a
  running sequence, the KV cache it comes to hold, is ``E[L^2] / E[L]`` (:func:`in_flight_final_tokens`).
  With one length both reduce to ``OSL / 2`` and ``OSL``.
* **A finite run ends with its longest requests** (:mod:`serving_benchmarks`): the last admitted requests
  with long outputs decode on while the batch drains, at the per-user speed of a small batch. Requests are
  admitted in a fixed, well-mixed order (:func:`admission_order`, a golden-ratio stride through the sorted
  lengths: no random seed, long requests spread evenly over the run), as an engine that cannot know output
  lengths in advance admits them.

**A dataset's own lengths** (``dataset``, a per-request file in ``data/workloads/lengths/``): where a benchmark samples a
public dataset whose lengths are known per request, its empirical distribution replaces the log-normal. ShareGPT as
vLLM's benchmark samples it (``sharegpt-vllm``: mean ~200 output tokens, cv 1.0) has a thinner tail than a log-normal
of the same cv (0.2% of requests at 1,000 tokens or more against ~1%), and the tail sets how long a finite run
drains. The file's lengths are rescaled so that their mean (clipped at ``max``) is ``OSL``: a benchmark counts tokens
with the served model's tokenizer, whose counts differ from the file's by a common factor; the shape is kept.
"""

from __future__ import annotations

import functools
import math
from statistics import NormalDist

import numpy as np

from intelligence_per_dollar.sources import checks, io, workloads

__all__ = ["check_cv", "check_max", "check_dataset", "single_length", "spread", "lengths", "admission_order",
           "in_flight_position_tokens", "in_flight_final_tokens"]

#: Quantiles the in-flight moments are taken over (the distribution is smooth; more changes < 0.1%).
MOMENT_POINTS = 4096
#: Largest coefficient of variation accepted (a log-normal with cv 10 has sigma 2.1: far past any dataset).
MAX_CV = 10.0


def spread(sample, cap: int | None = None) -> tuple[float, float]:
    """(mean, coefficient of variation) of a sample of output lengths, each clipped at ``cap`` (a benchmark's
    maximum output tokens): the ``output_tokens`` and ``output_tokens_cv`` that describe it."""
    x = np.asarray(sample, float)
    if x.ndim != 1 or x.size == 0 or not np.all(np.isfinite(x)) or x.min() < 1:
        raise ValueError(f"sample must be a non-empty 1-D array of lengths >= 1, got shape {x.shape}")
    x = np.minimum(x, cap) if cap is not None else x
    return float(x.mean()), _cv(x)


def check_cv(cv) -> float:
    """``output_tokens_cv``: a number in [0, 10] (0: every request has the same output length)."""
    return checks.number("output_tokens_cv", cv, low=0.0, high=MAX_CV)


def check_max(max_tokens, mean_tokens: int) -> int | None:
    """``output_tokens_max``: None (no cap) or a whole number of tokens at least ``output_tokens``."""
    if max_tokens is None:
        return None
    m = checks.positive_int("output_tokens_max", max_tokens)
    if m < mean_tokens:
        raise ValueError(f"output_tokens_max={m} is below output_tokens={mean_tokens}: the cap cannot be below "
                         f"the mean output length")
    return m


def check_dataset(dataset, cv: float = 0.0) -> str | None:
    """``output_dataset``: None or a dataset with a per-request length file (``data/workloads/lengths/``); its
    lengths fix the spread, so ``output_tokens_cv`` must then be 0."""
    if workloads.check_length_sample(dataset, "output_dataset", optional=True) is None:
        return None
    if cv:
        raise ValueError(f"output_tokens_cv={cv} cannot go with output_dataset={dataset!r}: the dataset's own "
                         f"lengths fix the spread (leave output_tokens_cv at 0)")
    return dataset


def single_length(cv: float, dataset: str | None = None) -> bool:
    """Whether every request has the mean output length: no spread (``cv`` 0) and no dataset's own lengths."""
    return cv == 0.0 and dataset is None


@functools.lru_cache(maxsize=8)
def _dataset_sorted(data_dir: str, dataset: str) -> np.ndarray:
    """The dataset's output lengths, sorted (floats); keyed on the data folder as the file read is."""
    return np.sort(np.asarray(workloads.length_sample(dataset)[1], float))


def _dataset_values(dataset: str, mean: float, cap: float | None, n: int | None) -> np.ndarray:
    """``n`` sorted lengths: mid-quantiles ``(i + 1/2) / n`` of the dataset's empirical distribution, rescaled so
    that the whole file's lengths clipped at ``cap`` average ``mean`` (module docstring), clipped at ``cap``;
    ``n`` None: every request of the file once."""
    x = _dataset_sorted(str(io.data_dir()), dataset)
    n = x.size if n is None else n
    scale = _scale(x, mean, cap)
    q = x[np.minimum(((np.arange(n) + 0.5) / n * x.size).astype(int), x.size - 1)] * scale
    return np.minimum(q, cap) if cap is not None else q


@functools.lru_cache(maxsize=16)
def _normal_quantiles(n: int) -> np.ndarray:
    nd = NormalDist()
    return np.array([nd.inv_cdf((i + 0.5) / n) for i in range(n)])


def _quantiles(n: int, sigma: float) -> np.ndarray:
    """Mid-point quantiles ``(i + 1/2) / n`` of a log-normal with median 1 and shape ``sigma``."""
    return np.exp(sigma * _normal_quantiles(n))


def _scale(q: np.ndarray, mean: float, cap: float | None) -> float:
    """The scale whose values ``scale * q`` clipped at ``cap`` average ``mean`` (bisection: monotone in it)."""
    if cap is None or q[-1] * mean / q.mean() <= cap:
        return mean / q.mean()
    lo, hi = 0.0, mean / q[0]                     # at ``hi`` every value reaches the cap: mean <= cap
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if np.minimum(q * mid, cap).mean() < mean else (lo, mid)
    return hi


def _values(sigma: float, scale: float, cap: float | None, n: int) -> np.ndarray:
    """``n`` sorted values of ``scale x`` log-normal(``sigma``), clipped at ``cap``."""
    x = scale * _quantiles(n, sigma)
    return np.minimum(x, cap) if cap is not None else x


def _cv(x: np.ndarray) -> float:
    return float(x.std() / x.mean())


@functools.lru_cache(maxsize=256)
def _shape(mean: float, cv: float, cap: float | None) -> tuple[float, float]:
    """(sigma, scale) of the clipped log-normal whose clipped mean is ``mean`` and clipped coefficient of
    variation ``cv``, fitted once on :data:`MOMENT_POINTS` quantiles (the log-normal's shape by bisection; a cap
    limits how large a cv can be reached around a mean, and a cv it cannot reach is refused)."""
    q = functools.partial(_quantiles, MOMENT_POINTS)
    lo, hi = 0.0, math.sqrt(math.log1p(MAX_CV ** 2))
    top = _values(hi, _scale(q(hi), mean, cap), cap, MOMENT_POINTS)
    if _cv(top) < cv * (1 - 1e-6):
        raise ValueError(f"output_tokens_cv={cv} cannot be reached with output_tokens={mean:.0f} and "
                         f"output_tokens_max={cap:.0f}: lengths capped there vary by at most cv={_cv(top):.2f}")
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _cv(_values(mid, _scale(q(mid), mean, cap), cap, MOMENT_POINTS)) < cv else (lo, mid)
    return hi, _scale(q(hi), mean, cap)


def _clipped(mean: float, cv: float, cap: float | None, n: int, dataset: str | None = None) -> np.ndarray:
    """``n`` sorted lengths (floats) of the fitted distribution (:func:`_shape`; a dataset's own lengths when
    ``dataset`` is given): the same distribution for every ``n``, fitted once."""
    if dataset is not None:
        return _dataset_values(dataset, mean, cap, n)
    if cv == 0.0:
        return np.full(n, float(mean))
    return _values(*_shape(mean, cv, cap), cap, n)


def lengths(mean_tokens: int, cv: float, max_tokens: int | None, n: int, dataset: str | None = None) -> np.ndarray:
    """``n`` output lengths (whole tokens >= 1, sorted) of the length distribution (module docstring)."""
    n = checks.positive_int("n", n)
    x = _clipped(float(mean_tokens), check_cv(cv), check_max(max_tokens, mean_tokens), n, check_dataset(dataset, cv))
    return np.maximum(np.rint(x), 1.0).astype(int)


def admission_order(n: int) -> np.ndarray:
    """A fixed permutation of ``range(n)`` that spreads sorted lengths evenly: stride ``~ n / phi``
    (golden ratio) made coprime to ``n``, so every stretch of the run sees short and long requests alike."""
    n = checks.positive_int("n", n)
    step = max(int(round(n / ((1 + 5 ** 0.5) / 2))), 1)
    while math.gcd(step, n) != 1:
        step += 1
    return (np.arange(n) * step) % n


@functools.lru_cache(maxsize=256)
def _moments(mean_tokens: int, cv: float, max_tokens: int | None, dataset: str | None = None,
             data_dir: str | None = None) -> tuple[float, float]:
    """(E[L], E[L^2]) of the distribution on :data:`MOMENT_POINTS` quantiles, or over every request of a dataset's
    file (cached, keyed on the data folder for a dataset: the serving model asks for them on every evaluation)."""
    mean, cap = float(mean_tokens), check_max(max_tokens, mean_tokens)
    if check_dataset(dataset, cv) is not None:
        x = _dataset_values(dataset, mean, cap, None)
    else:
        x = _clipped(mean, check_cv(cv), cap, MOMENT_POINTS)
    return float(x.mean()), float((x * x).mean())


def _moments_now(mean_tokens: int, cv: float, max_tokens: int | None, dataset: str | None) -> tuple[float, float]:
    return _moments(mean_tokens, cv, max_tokens, dataset, str(io.data_dir()) if dataset is not None else None)


def in_flight_position_tokens(mean_tokens: int, cv: float = 0.0, max_tokens: int | None = None,
                              dataset: str | None = None) -> float:
    """Mean decode position (tokens generated so far) of a running sequence of a full batch in steady state:
    ``E[L^2] / (2 E[L])``, ``OSL / 2`` with one length (module docstring)."""
    if single_length(cv, dataset):
        return mean_tokens / 2.0
    m1, m2 = _moments_now(mean_tokens, cv, max_tokens, dataset)
    return m2 / (2.0 * m1)


def in_flight_final_tokens(mean_tokens: int, cv: float = 0.0, max_tokens: int | None = None,
                           dataset: str | None = None) -> float:
    """Expected final output length of a running sequence (the KV cache it comes to hold): ``E[L^2] / E[L]``,
    ``OSL`` with one length."""
    if single_length(cv, dataset):
        return float(mean_tokens)
    m1, m2 = _moments_now(mean_tokens, cv, max_tokens, dataset)
    return m2 / m1
