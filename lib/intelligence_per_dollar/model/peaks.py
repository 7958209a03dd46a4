"""Like-for-like peak figures of one accelerator: pure functions of a catalogue record.

Vendor headline FLOP/s count different things (2:4 sparsity on Hopper and Blackwell, "Transformer
Engine compute" on Rubin), so the book compares *dense* peaks of one precision
(:func:`dense_flop_per_s`), the roofline ridge point (Williams, Waterman & Patterson 2009, Eq. 1)
and dense FLOP/s per watt. Records come from :mod:`intelligence_per_dollar.sources.hardware`.
"""

from __future__ import annotations

from intelligence_per_dollar.sources import hardware
from intelligence_per_dollar.sources.hardware import PRECISIONS, Accelerator

__all__ = ["dense_flop_per_s", "headline_to_dense_ratio", "ridge_point_flop_per_byte", "flop_per_s_per_w",
           "flop_per_s_per_usd"]


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
