"""Like-for-like peak figures of one accelerator: pure functions of a catalogue record.

Vendor headline FLOP/s count different things (2:4 sparsity on Hopper and Blackwell, "Transformer
Engine compute" on Rubin), so the book compares *dense* peaks of one precision
(:func:`dense_flop_per_s`), the roofline ridge point (Williams, Waterman & Patterson 2009, Eq. 1)
and dense FLOP/s per watt. Records come from :mod:`intelligence_per_dollar.sources.hardware`.
"""

from __future__ import annotations

import numbers

from intelligence_per_dollar.sources import hardware
from intelligence_per_dollar.sources.hardware import PRECISIONS, Accelerator

__all__ = ["dense_flop_per_s", "headline_to_dense_ratio", "ridge_point_flop_per_byte", "flop_per_s_per_w",
           "flop_per_s_per_usd", "sustained_clock_scale"]


def dense_flop_per_s(acc: Accelerator, precision: str, *, fallback: bool = False) -> float:
    """Dense peak FLOP/s of ``acc`` at ``precision``.

    With ``fallback=True`` a precision the tensor cores lack runs at the next wider one that they
    have (FP4 on Hopper runs as FP8: weights can be stored in 4 bits but the math is FP8). Without
    it, an unsupported precision raises ``ValueError``.
    """
    hardware.check_precision(precision)
    order = PRECISIONS[PRECISIONS.index(precision):] if fallback else (precision,)
    for p in order:
        v = getattr(acc, "fp64_flop_per_s" if p == "fp64" else f"{p}_dense_flop_per_s")
        if v is not None:
            return float(v)
    have = [p for p in PRECISIONS if acc.supports(p)]
    raise ValueError(f"precision={precision!r} has no dense peak for accelerator {acc.id!r}; "
                     f"it supports: {', '.join(have)}")


def headline_to_dense_ratio(acc: Accelerator) -> float | None:
    """The vendor headline figure over the dense peak of the same precision (2.0 = 2:4 sparse)."""
    if acc.headline_flop_per_s is None or acc.headline_precision is None:
        return None
    p = acc.headline_precision.lower()
    if p not in PRECISIONS or not acc.supports(p):
        return None
    return acc.headline_flop_per_s / dense_flop_per_s(acc, p)


def ridge_point_flop_per_byte(acc: Accelerator, precision: str, *, fallback: bool = False) -> float:
    """Roofline ridge point (Williams, Waterman & Patterson 2009, Eq. 1): peak FLOP/s / HBM B/s.

    A kernel whose arithmetic intensity (FLOP per byte moved from HBM) is below this number is
    memory-bound on ``acc``. ``fallback`` as in :func:`dense_flop_per_s`.
    """
    return dense_flop_per_s(acc, precision, fallback=fallback) / acc.hbm_bytes_per_s


def flop_per_s_per_w(acc: Accelerator, precision: str, *, fallback: bool = False) -> float:
    """Dense peak FLOP/s per watt of GPU power (FLOP per joule at the power limit)."""
    return dense_flop_per_s(acc, precision, fallback=fallback) / acc.power_w


def flop_per_s_per_usd(acc: Accelerator, precision: str, price_usd: float) -> float:
    """Dense peak FLOP/s per dollar of purchase price ``price_usd`` (per GPU)."""
    if isinstance(price_usd, bool) or not isinstance(price_usd, (int, float)) or not 0 < price_usd < float("inf"):
        raise ValueError(f"price_usd={price_usd!r} must be a positive finite number")
    return dense_flop_per_s(acc, precision) / price_usd


def sustained_clock_scale(power_cap_w: float, tdp_w: float, static_fraction: float, exponent: float) -> float:
    """Sustained SM clock of a compute-bound kernel at a board power limit ``power_cap_w``, over
    its sustained clock at the rated limit ``tdp_w`` (1 at or above the rated limit).

    DVFS power model: board power ``P(f) = P_s + (P_tdp - P_s) (f / f_tdp)^a``, where ``P_s =
    static_fraction x tdp_w`` is the part that does not follow the SM clock (leakage at the
    lowest voltage, HBM, links, board) and the dynamic part ``C V^2 f`` grows as ``f^a`` because
    the voltage rises with the clock (``a = 3`` for ``V ~ f``, ``a = 1`` at fixed voltage). A
    kernel that holds the GPU at its limit runs at the clock where ``P(f) = power_cap_w``:

        f_cap / f_tdp = ((cap / tdp - s) / (1 - s)) ** (1 / a)

    Ujeniya et al. 2026 (arXiv 2604.11391, "power-capping NVIDIA H100 and H200") measure this
    for DGEMM from 200 to 700 W: the cap sets the SM clock and compute-bound throughput follows
    it, while memory-bound (Triad) throughput barely moves. Raises ``ValueError`` naming the
    parameter for a cap outside ``(static_fraction x tdp_w, tdp_w]`` or parameters out of range.
    """
    for name, v, lo, hi in (("tdp_w", tdp_w, 0.0, 1e5), ("static_fraction", static_fraction, 0.0, 0.9),
                            ("exponent", exponent, 0.5, 4.0)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not lo < v <= hi:
            raise ValueError(f"{name}={v!r} must be a number in ({lo:g}, {hi:g}]")
    floor = static_fraction * tdp_w
    if isinstance(power_cap_w, bool) or not isinstance(power_cap_w, numbers.Real) \
            or not floor < power_cap_w <= tdp_w:
        raise ValueError(f"power_cap_w={power_cap_w!r} must be a number in ({floor:g}, {tdp_w:g}] W "
                         f"(above the static power, at most the rated limit)")
    x = (power_cap_w / tdp_w - static_fraction) / (1.0 - static_fraction)
    return float(x ** (1.0 / exponent))
